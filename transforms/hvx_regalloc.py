"""
`hvx-regalloc`: give every virtual register of an `hvx.func` a Hexagon register.

A linear scan over live intervals on the structured code. Values that must share a
register form one class: an accumulating or post-incrementing instruction's tied
operand and result, and a loop's init, body argument, yielded value and result. A pair
view (`hvx.lo`/`hvx.hi`) is part of its pair's class, so the pair stays live while the
view is. A value used inside a loop it was defined outside of lives to the loop's end.
Pairs go to an aligned even/odd couple. There is no spilling: a kernel that needs more
registers than the machine has is a lowering error, reported as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import RESERVED_SCALARS, HexagonRegisterType


class RegisterAllocationError(DiagnosticException):
    pass


NODE_ATTRIBUTE = "hvx.node"
"""The ONNX node a lowered kernel computes (`node 'name' (Op)`), for diagnostics."""


def describe_kernel(func: ops.FuncOp) -> str:
    """The kernel as a diagnostic names it: its ONNX node where the lowering recorded it."""
    node = func.attributes.get(NODE_ATTRIBUTE)
    name = func.sym_name.data
    return f"{node.data}, kernel {name}" if node is not None else name  # type: ignore[union-attr]


LOW_LIMIT = 8
"""`Rt8` operands name r0..r7 only."""


@dataclass
class _Class:
    values: list[SSAValue] = field(default_factory=list)
    start: float = float("inf")
    end: float = float("-inf")
    register: HexagonRegisterType | None = None
    parts: list[tuple[_Class, int]] = field(default_factory=list)
    low: bool = False
    """Some use encodes it as `Rt8`: it must be one of r0..r7."""


class _UnionFind:
    def __init__(self):
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, v: SSAValue) -> SSAValue:
        self.parent.setdefault(v, v)
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: SSAValue, b: SSAValue) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[rb] = ra


def _pool(reg: HexagonRegisterType) -> tuple[str, int]:
    return reg.register_pool_key(), reg.POOL_SIZE


class FunctionAllocator:
    def __init__(self, func: ops.FuncOp):
        self.func = func
        self.position: dict[Operation, int] = {}
        self.loop_end: dict[ops.LoopOp, int] = {}
        self.counter = 0
        self._number(func.body.block)

    def _number(self, block: Block) -> None:
        for op in block.ops:
            self.position[op] = self.counter
            self.counter += 1
            if isinstance(op, ops.LoopOp):
                self._number(op.body.block)
                self.loop_end[op] = self.counter
                self.counter += 1

    def _enclosing_loops(self, op: Operation) -> list[ops.LoopOp]:
        loops = []
        parent = op.parent_op()
        while parent is not None and parent is not self.func:
            if isinstance(parent, ops.LoopOp):
                loops.append(parent)
            parent = parent.parent_op()
        return loops

    def _def_position(self, value: SSAValue) -> tuple[int, list[ops.LoopOp]]:
        owner = value.owner
        if isinstance(owner, Block):
            loop = owner.parent_op()
            assert isinstance(loop, ops.LoopOp)
            return self.position[loop], [loop, *self._enclosing_loops(loop)]
        if isinstance(owner, ops.LoopOp):
            return self.loop_end[owner], self._enclosing_loops(owner)
        return self.position[owner], self._enclosing_loops(owner)

    def _interval(self, value: SSAValue) -> tuple[float, float]:
        start, def_loops = self._def_position(value)
        end = start + 1
        for use in value.uses:
            user = use.operation
            where = self.position[user]
            for loop in self._enclosing_loops(user):
                if loop not in def_loops:
                    where = max(where, self.loop_end[loop])
            end = max(end, where)
        return start, end

    def _all_values(self) -> list[SSAValue]:
        values: list[SSAValue] = []
        for op in self.func.body.walk():
            if isinstance(op, ops.LoopOp):
                values.extend(op.body.block.args)
            values.extend(op.results)
        return [v for v in values if isinstance(v.type, HexagonRegisterType)]

    def _check_tie(self, inst: Operation, operand: SSAValue) -> None:
        _, def_loops = self._def_position(operand)
        if any(loop not in def_loops for loop in self._enclosing_loops(inst)):
            raise RegisterAllocationError(
                f"{describe_kernel(self.func)}: {inst.name} overwrites, on every loop "
                "iteration, a value defined outside the loop"
            )
        here = self.position[inst]
        for use in operand.uses:
            if use.operation is not inst and self.position[use.operation] > here:
                raise RegisterAllocationError(
                    f"{describe_kernel(self.func)}: {inst.name} overwrites a value that is "
                    f"still read later by {use.operation.name}"
                )

    def classes(self) -> list[_Class]:
        uf = _UnionFind()
        values = self._all_values()
        views: dict[SSAValue, tuple[SSAValue, int]] = {}
        for op in self.func.body.walk():
            if isinstance(op, ops.Instruction):
                for operand, result in op.tied_values():
                    self._check_tie(op, operand)
                    uf.union(operand, result)
            elif isinstance(op, ops.LoopOp):
                yielded = op.body.block.last_op
                assert isinstance(yielded, ops.YieldOp)
                if len(set(yielded.values)) != len(yielded.values):
                    raise RegisterAllocationError(
                        f"{describe_kernel(self.func)}: a loop yields one value twice"
                    )
                for init, arg, out, result in zip(
                    op.inits, op.body.block.args, yielded.values, op.results
                ):
                    self._check_tie(op, init)
                    for other in (arg, out, result):
                        uf.union(init, other)
            elif isinstance(op, ops.PAIR_VIEWS):
                views[op.d] = (op.pair, op.HALF)
            elif isinstance(op, ops.PairOp):
                for offset, half in enumerate((op.lo, op.hi)):
                    if half in views:
                        raise RegisterAllocationError(
                            f"{describe_kernel(self.func)}: a vector joins two pairs"
                        )
                    views[half] = (op.d, offset)
        by_root: dict[SSAValue, _Class] = {}
        for value in values:
            cls = by_root.setdefault(uf.find(value), _Class())
            cls.values.append(value)
            start, end = self._interval(value)
            cls.start, cls.end = min(cls.start, start), max(cls.end, end)
        for op in self.func.body.walk():
            if isinstance(op, ops.Instruction):
                for name in op.LOW_SCALARS:
                    by_root[uf.find(getattr(op, name))].low = True
        for view, (pair, offset) in views.items():
            pair_class = by_root[uf.find(pair)]
            view_class = by_root[uf.find(view)]
            if len(view_class.values) != 1:
                raise RegisterAllocationError(
                    f"{describe_kernel(self.func)}: a pair view cannot be overwritten in place"
                )
            pair_class.parts.append((view_class, offset))
            pair_class.start = min(pair_class.start, view_class.start)
            pair_class.end = max(pair_class.end, view_class.end)
        return list(by_root.values())

    def allocate(self) -> None:
        classes = self.classes()
        part_classes = {id(part) for c in classes for part, _ in c.parts}
        occupied: dict[tuple[str, int], list[tuple[float, float]]] = {}

        def free(pool: str, unit: int, start: float, end: float) -> bool:
            return all(e <= start or end <= s for s, e in occupied.get((pool, unit), []))

        def take(pool: str, units: tuple[int, ...], start: float, end: float) -> None:
            for unit in units:
                occupied.setdefault((pool, unit), []).append((start, end))

        todo = [c for c in classes if id(c) not in part_classes]
        for cls in todo:  # registers the input already names are fixed
            reg = cls.values[0].type
            assert isinstance(reg, HexagonRegisterType)
            named = {v.type for v in cls.values if v.type.is_allocated}  # type: ignore[union-attr]
            if len(named) > 1:
                raise RegisterAllocationError(
                    f"{describe_kernel(self.func)}: tied values are fixed to different registers"
                )
            if named:
                cls.register = named.pop()  # type: ignore[assignment]
                take(reg.register_pool_key(), cls.register.units, cls.start, cls.end)
        for cls in sorted(todo, key=lambda c: (c.start, c.end)):
            if cls.register is not None:
                continue
            reg_type = type(cls.values[0].type)
            pool, size = _pool(cls.values[0].type)  # type: ignore[arg-type]
            width = reg_type.WIDTH
            candidates = list(range(size // width))
            if pool == "hexagon.scalar":
                # r0..r7 are the only registers some operands can name: keep them for those
                candidates = [i for i in candidates if i * width < LOW_LIMIT] if cls.low else (
                    [i for i in candidates if i * width >= LOW_LIMIT]
                    + [i for i in candidates if i * width < LOW_LIMIT]
                )
            def freed_at(index: int) -> float:
                ends = [e for u in range(index * width, index * width + width)
                        for _, e in occupied.get((pool, u), []) if e <= cls.start]
                return max(ends, default=float("-inf"))

            # the register free for longest: fewer false dependences for the packer; among
            # those, a single fills a half-used couple first, to keep whole couples for pairs
            candidates.sort(key=lambda i: (
                freed_at(i), width == 1 and free(pool, i ^ 1, cls.start, cls.end)))
            for index in candidates:
                units = tuple(range(index * width, index * width + width))
                if pool == "hexagon.scalar" and RESERVED_SCALARS & set(units):
                    continue
                if all(free(pool, u, cls.start, cls.end) for u in units):
                    cls.register = reg_type.from_index(index)
                    take(pool, units, cls.start, cls.end)
                    break
            else:
                raise RegisterAllocationError(
                    f"{describe_kernel(self.func)}: kernel needs more {reg_type.name} "
                    f"registers than the machine has"
                )
        for cls in todo:
            for part, offset in cls.parts:
                unit = cls.register.units[offset]  # type: ignore[union-attr]
                part.register = type(part.values[0].type).from_index(unit)  # type: ignore[union-attr]
        for cls in classes:
            for value in cls.values:
                if value.type != cls.register:
                    Rewriter.replace_value_with_new_type(value, cls.register)  # type: ignore[arg-type]


def allocate_registers(func: ops.FuncOp) -> None:
    FunctionAllocator(func).allocate()


def has_virtual_registers(func: ops.FuncOp) -> bool:
    return any(isinstance(v.type, HexagonRegisterType) and not v.type.is_allocated
               for op in func.walk() for v in op.results)


@dataclass(frozen=True)
class HvxRegisterAllocationPass(ModulePass):
    """
    `hvx-regalloc`: allocate the registers of every `hvx.func` that has virtual ones; one
    already allocated (read from assembly, say, or packed) stays as it is.
    """

    name = "hvx-regalloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, ops.FuncOp) and has_virtual_registers(func):
                allocate_registers(func)
