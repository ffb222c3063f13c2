"""
A small builder for kernel bodies: Python arithmetic on `Val` wrappers emits
upstream `arith`/`math`/`vector`/`scf` ops plus `ocl`/`texture` ops, with
constants folded as they are built, so kernel generators read like the kernels
they generate.

Integers are i32 (OpenCL `int`), scalars f32, pixels vector<4xf32>. A Python int
or float mixed with a `Val` becomes a constant of the `Val`'s kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.builder import Builder
from xdsl.dialects import arith, math, scf, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from mobile_opt.dialects import ocl, texture

FLOAT4 = ocl.FLOAT4


class Val:
    """An SSA value in a kernel under construction, with its constant value if known."""

    def __init__(self, kb: KernelBuilder, value: SSAValue, const: int | float | None = None):
        self.kb = kb
        self.value = value
        self.const = const

    @property
    def type(self) -> Attribute:
        return self.value.type

    @property
    def is_int(self) -> bool:
        return isinstance(self.type, IntegerType)

    @property
    def is_vector(self) -> bool:
        return isinstance(self.type, VectorType)

    def named(self, hint: str) -> Val:
        if self.const is None and self.value.name_hint is None:
            self.value.name_hint = hint
        return self

    # integer and float arithmetic -------------------------------------------------
    def __add__(self, other):
        return self.kb.binary("add", self, other)

    def __radd__(self, other):
        return self.kb.binary("add", other, self)

    def __sub__(self, other):
        return self.kb.binary("sub", self, other)

    def __rsub__(self, other):
        return self.kb.binary("sub", other, self)

    def __mul__(self, other):
        return self.kb.binary("mul", self, other)

    def __rmul__(self, other):
        return self.kb.binary("mul", other, self)

    def __truediv__(self, other):
        return self.kb.binary("div", self, other)

    def __rtruediv__(self, other):
        return self.kb.binary("div", other, self)

    def __floordiv__(self, other):
        return self.kb.binary("div", self, other)

    def __mod__(self, other):
        return self.kb.binary("rem", self, other)

    def __neg__(self):
        return self.kb.binary("sub", 0, self) if self.is_int else self.kb.unary(arith.NegfOp, self)

    def __lt__(self, other):
        return self.kb.compare("lt", self, other)

    def __le__(self, other):
        return self.kb.compare("le", self, other)

    def __gt__(self, other):
        return self.kb.compare("gt", self, other)

    def __ge__(self, other):
        return self.kb.compare("ge", self, other)

    def eq(self, other):
        return self.kb.compare("eq", self, other)

    def __and__(self, other):
        return self.kb.logic(arith.AndIOp, self, other)

    def __or__(self, other):
        return self.kb.logic(arith.OrIOp, self, other)

    def lane(self, k: int | Val) -> Val:
        """Lane k of a pixel."""
        return self.kb.lane(self, k)


Operand = Val | int | float

_INT_OPS = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp,
            "div": arith.DivSIOp, "rem": arith.RemSIOp}
_FLOAT_OPS = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp,
              "div": arith.DivfOp}
_FOLD = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}
_INT_PREDICATES = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq"}
_FLOAT_PREDICATES = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq"}


class KernelBuilder:
    """Builds one `ocl.kernel` whose arguments are pixel storage."""

    def __init__(self, name: str, args: Sequence[tuple[str, texture.PixelStorageType]]):
        self.kernel = ocl.KernelOp(name, [t for _, t in args])
        block = self.kernel.body.block
        for arg, (hint, _) in zip(block.args, args, strict=True):
            arg.name_hint = hint
        self._builder = Builder(InsertPoint.at_end(block))
        self.args = [Val(self, a) for a in block.args]
        self._pure: dict[tuple, Val] = {}
        self._scopes = [block]
        """The blocks being built into, outermost first: each one's ops so far dominate
        the rest."""

    def add_arg(self, hint: str, storage_type: Attribute) -> Val:
        """A new kernel argument (the signature is fixed up in `finish`)."""
        block = self.kernel.body.block
        arg = block.insert_arg(storage_type, len(block.args))
        arg.name_hint = hint
        return Val(self, arg)

    def finish(self) -> ocl.KernelOp:
        from xdsl.dialects.builtin import FunctionType

        self._builder.insert(ocl.ReturnOp())
        arg_types = self.kernel.body.block.arg_types
        self.kernel.function_type = FunctionType.from_lists(arg_types, [])
        return self.kernel

    def insert(self, op: Operation) -> Operation:
        return self._builder.insert(op)

    def emit(self, op: Operation) -> Val:
        self.insert(op)
        return Val(self, op.results[0])

    @contextmanager
    def at_end(self, block: Block) -> Iterator[None]:
        outer = self._builder
        self._builder = Builder(InsertPoint.at_end(block))
        self._scopes.append(block)
        try:
            yield
        finally:
            self._scopes.pop()
            self._builder = outer

    # constants ----------------------------------------------------------------------
    def int(self, n: int) -> Val:
        return self.constant("i32", int(n), lambda: arith.ConstantOp(IntegerAttr(int(n), i32)))

    def float(self, x: float) -> Val:
        return self.constant("f32", float(x), lambda: arith.ConstantOp(FloatAttr(float(x), f32)))

    def float4(self, x: float) -> Val:
        if x in (float("inf"), float("-inf")) or x != x:
            # a broadcast scalar: xDSL parses the hex literal of a dense non-finite float
            # (-inf prints as dense<0xff800000>) as an integer, so the IR would not round-trip
            return self.constant("float4", float(x), lambda: vector.BroadcastOp(
                self.float(x).value, FLOAT4))
        return self.constant("float4", float(x), lambda: arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(FLOAT4, [float(x)]), FLOAT4))

    def constant(self, kind: str, value: int | float, make: Callable[[], Operation]) -> Val:
        """The constant `value` of `kind` (`pure`)."""
        return self.pure((kind, repr(value)), make, value)

    def pure(self, key: tuple, make: Callable[[], Operation],
             value: int | float | None = None) -> Val:
        """The side-effect-free op that `key` names: the one made already in this block or
        one around it, else the one `make` makes here. The lowering asks for the same
        constants and index sums thousands of times, and each copy would cost every later
        pass until `cse` removed it (as it removes what this reuses)."""
        for block in reversed(self._scopes):
            if (found := self._pure.get((block, *key))) is not None:
                return found
        op = make()
        self.insert(op)
        made = self._pure[(self._scopes[-1], *key)] = Val(self, op.results[0], value)
        return made

    def like(self, x: Operand, ref: Val) -> Val:
        """`x` as a value of `ref`'s kind (int, float or float4)."""
        if isinstance(x, Val):
            if ref.is_vector and not x.is_vector:
                return self.splat(x)
            return x
        if ref.is_int:
            return self.int(x)
        return self.float4(x) if ref.is_vector else self.float(x)

    # arithmetic ---------------------------------------------------------------------
    def _pair(self, a: Operand, b: Operand) -> tuple[Val, Val]:
        ref = a if isinstance(a, Val) else b
        assert isinstance(ref, Val)
        if isinstance(a, Val) and isinstance(b, Val) and b.is_vector and not a.is_vector:
            ref = b
        return self.like(a, ref), self.like(b, ref)

    def binary(self, kind: str, a: Operand, b: Operand) -> Val:
        a, b = self._pair(a, b)
        if a.is_int:
            if a.const is not None and b.const is not None:
                if kind in _FOLD:
                    return self.int(_FOLD[kind](a.const, b.const))
                if b.const > 0 and a.const >= 0:
                    return self.int(a.const // b.const if kind == "div" else a.const % b.const)
            if kind in ("add", "sub") and b.const == 0:
                return a
            if kind == "add" and a.const == 0:
                return b
            if kind in ("mul", "div") and b.const == 1:
                return a
            if kind == "mul" and a.const == 1:
                return b
            if kind == "mul" and 0 in (a.const, b.const):
                return self.int(0)
            if kind == "rem" and b.const == 1:
                return self.int(0)
            return self.pure(("int", kind, a.value, b.value),
                             lambda: _INT_OPS[kind](a.value, b.value))
        if kind == "rem":
            raise ValueError("no float remainder")
        if kind == "mul" and (b.const == 1.0):
            return a
        if kind == "add" and b.const == 0.0:
            return a
        return self.pure(("float", kind, a.value, b.value),
                         lambda: _FLOAT_OPS[kind](a.value, b.value))

    def compare(self, kind: str, a: Operand, b: Operand) -> Val:
        a, b = self._pair(a, b)
        if a.is_int:
            if a.const is not None and b.const is not None:
                result = {"lt": a.const < b.const, "le": a.const <= b.const,
                          "gt": a.const > b.const, "ge": a.const >= b.const,
                          "eq": a.const == b.const}[kind]
                return self.bool(result)
            return self.emit(arith.CmpiOp(a.value, b.value, _INT_PREDICATES[kind]))
        return self.emit(arith.CmpfOp(a.value, b.value, _FLOAT_PREDICATES[kind]))

    def bool(self, value: bool) -> Val:
        return self.constant("i1", int(value), lambda: arith.ConstantOp(
            IntegerAttr(int(value), i1)))

    def logic(self, op: type[Operation], a: Val, b: Val) -> Val:
        if a.const is not None and b.const is not None:
            fn = (lambda p, q: p & q) if op is arith.AndIOp else (lambda p, q: p | q)
            return self.bool(bool(fn(a.const, b.const)))
        if op is arith.AndIOp:
            if a.const == 1:
                return b
            if b.const == 1:
                return a
        return self.emit(op(a.value, b.value))

    def all(self, conditions: Sequence[Val]) -> Val:
        result = self.bool(True)
        for c in conditions:
            result = result & c
        return result

    def min(self, a: Operand, b: Operand) -> Val:
        return self._extremum(a, b, min, arith.MinSIOp, arith.MinimumfOp)

    def max(self, a: Operand, b: Operand) -> Val:
        """The larger; of floats NaN if either is (`arith.maximumf`)."""
        return self._extremum(a, b, max, arith.MaxSIOp, arith.MaximumfOp)

    def maxnum(self, a: Operand, b: Operand) -> Val:
        """The larger float, the other operand of a NaN (`arith.maxnumf`, OpenCL's fmax)."""
        return self._extremum(a, b, max, arith.MaxSIOp, arith.MaxnumfOp)

    def nans(self, x: Val) -> Val:
        """NaN where `x` is NaN, else 0 (infinities too): added to a value, it makes it NaN
        where `x` is. min(|x|, 0), as `max` does without a comparison of pixels."""
        return self.min(self.math("fabs", x), 0.0)

    def _extremum(self, a: Operand, b: Operand, fold, int_op, float_op) -> Val:
        a, b = self._pair(a, b)
        if a.is_int:
            if a.const is not None and b.const is not None:
                return self.int(fold(a.const, b.const))
            return self.emit(int_op(a.value, b.value))
        return self.emit(float_op(a.value, b.value))

    def select(self, cond: Val, a: Operand, b: Operand) -> Val:
        a, b = self._pair(a, b)
        if cond.const is not None:
            return a if cond.const else b
        return self.emit(arith.SelectOp(cond.value, a.value, b.value))

    def fma(self, a: Operand, b: Operand, c: Operand) -> Val:
        ref = next(v for v in (a, b, c) if isinstance(v, Val) and v.is_vector) if any(
            isinstance(v, Val) and v.is_vector for v in (a, b, c)
        ) else next(v for v in (a, b, c) if isinstance(v, Val))
        a, b, c = (self.like(v, ref) for v in (a, b, c))
        return self.emit(math.FmaOp(a.value, b.value, c.value))

    def unary(self, op: type[Operation], x: Val) -> Val:
        return self.emit(op(x.value))

    def math(self, name: str, x: Val) -> Val:
        """A `math` dialect unary op by its OpenCL name (exp, log, tanh, erf, sqrt, ...)."""
        ops = {"exp": math.ExpOp, "log": math.LogOp, "tanh": math.TanhOp, "erf": math.ErfOp,
               "sqrt": math.SqrtOp, "rsqrt": math.RsqrtOp, "fabs": math.AbsFOp,
               "floor": math.FloorOp, "ceil": math.CeilOp, "sin": math.SinOp,
               "cos": math.CosOp, "round": math.RoundOp, "trunc": math.TruncOp}
        return self.unary(ops[name], x)

    def copysign(self, x: Val, sign: Val) -> Val:
        """|x| with the sign of `sign`."""
        x, sign = self._pair(x, sign)
        return self.emit(math.CopySignOp(x.value, sign.value))

    def pow(self, x: Val, y: Operand) -> Val:
        x, y = self._pair(x, y)
        return self.emit(math.PowFOp(x.value, y.value))

    def to_float(self, x: Val) -> Val:
        if x.const is not None:
            return self.float(float(x.const))
        return self.emit(arith.SIToFPOp(x.value, f32))

    def to_int(self, x: Val) -> Val:
        return self.emit(arith.FPToSIOp(x.value, i32))

    # pixels --------------------------------------------------------------------------
    def splat(self, x: Operand) -> Val:
        if not isinstance(x, Val):
            return self.float4(x)
        if x.is_vector:
            return x
        if x.const is not None:
            return self.float4(x.const)
        return self.emit(vector.BroadcastOp(x.value, FLOAT4))

    def vec4(self, lanes: Sequence[Operand]) -> Val:
        vals = [self.like(v, self.float(0.0)) if not isinstance(v, Val) else v for v in lanes]
        if all(v.const is not None for v in vals) and len({v.const for v in vals}) == 1:
            return self.float4(vals[0].const)
        return self.emit(ocl.Vec4Op([v.value for v in vals]))

    def vec16(self, pixels: Sequence[Val]) -> Val:
        """Four float4 pixels as one float16."""
        return self.emit(ocl.Vec16Op([self.splat(p).value for p in pixels]))

    def part4(self, v: Val, k: int) -> Val:
        """Pixel `k` of a float16."""
        return self.emit(ocl.Part4Op(v.value, k))

    def splat16(self, x: Val) -> Val:
        """A scalar in all sixteen lanes."""
        return self.emit(vector.BroadcastOp(x.value, ocl.FLOAT16))

    def lane(self, v: Val, k: int | Val) -> Val:
        if isinstance(k, Val) and k.const is not None:
            k = k.const
        if isinstance(k, int):
            if v.const is not None:
                return self.float(v.const)
            return self.emit(vector.ExtractOp(v.value, [k], f32))
        return self.emit(ocl.LaneOp(v.value, k.value))

    def lanes(self, v: Val) -> list[Val]:
        return [self.lane(v, k) for k in range(4)]

    def map_lanes(self, v: Val, fn: Callable[[Val], Val]) -> Val:
        return self.vec4([fn(x) for x in self.lanes(v)])

    def read(self, storage: Val, x: Val, y: Val) -> Val:
        return self.emit(texture.ReadOp(storage.value, x.value, y.value))

    def read16(self, storage: Val, x: Val, y: Val) -> Val:
        """Pixels (x..x+3, y) as a float16."""
        return self.emit(texture.Read16Op(storage.value, x.value, y.value))

    def write(self, storage: Val, x: Val, y: Val, value: Val) -> None:
        self.insert(texture.WriteOp(self.splat(value).value, storage.value, x.value, y.value))

    def global_id(self, dim: int) -> Val:
        return self.emit(ocl.GlobalIdOp(dim)).named("gx" if dim == 0 else "gy")

    def local_id(self, dim: int) -> Val:
        return self.emit(ocl.LocalIdOp(dim)).named("lx" if dim == 0 else "ly")

    def group_id(self, dim: int) -> Val:
        return self.emit(ocl.GroupIdOp(dim)).named("wx" if dim == 0 else "wy")

    def require_group(self, size: Sequence[int]) -> None:
        """The kernel runs only in work groups of `size` (its launch must say so)."""
        self.kernel.group_size = DenseArrayBase.from_list(i64, size)

    # local memory --------------------------------------------------------------------
    def local_array(self, size: int, hint: str) -> Val:
        """A work group's array of `size` float4s, declared at the top of the kernel."""
        block = self.kernel.body.block
        op = ocl.LocalArrayOp(size)
        block.insert_op_before(op, block.first_op) if block.first_op else block.add_op(op)
        return Val(self, op.result).named(hint)

    def local_load(self, array: Val, index: Operand) -> Val:
        return self.emit(ocl.LocalLoadOp(array.value, self.like(index, self.int(0)).value))

    def local_store(self, array: Val, index: Operand, value: Val) -> None:
        self.insert(ocl.LocalStoreOp(value.value, array.value, self.like(index, self.int(0)).value))

    def barrier(self) -> None:
        self.insert(ocl.BarrierOp())

    # control flow --------------------------------------------------------------------
    def loop(
        self,
        lo: Operand,
        hi: Operand,
        body: Callable[..., Sequence[Val]],
        init: Sequence[Val] = (),
        step: int = 1,
        name: str = "i",
    ) -> list[Val]:
        """`for (i = lo; i < hi; i += step)` carrying `init`; body(i, *carried) -> next."""
        lo_v, hi_v, step_v = (self.like(v, self.int(0)) for v in (lo, hi, step))
        if lo_v.const is not None and hi_v.const is not None and lo_v.const >= hi_v.const:
            return list(init)
        if (
            lo_v.const is not None and hi_v.const is not None
            and hi_v.const - lo_v.const <= step
        ):
            return list(body(lo_v, *init))
        body_block = Block(arg_types=[i32, *(v.type for v in init)])
        body_block.args[0].name_hint = name
        loop = scf.ForOp(lo_v.value, hi_v.value, step_v.value, [v.value for v in init], body_block)
        self.insert(loop)
        with self.at_end(body_block):
            carried = [Val(self, a) for a in body_block.args[1:]]
            for a, v in zip(body_block.args[1:], init, strict=True):
                a.name_hint = v.value.name_hint
            results = body(Val(self, body_block.args[0]), *carried)
            self.insert(scf.YieldOp(*[r.value for r in results]))
        for r, v in zip(loop.results, init, strict=True):
            r.name_hint = v.value.name_hint
        return [Val(self, r) for r in loop.results]

    def if_(
        self,
        cond: Val,
        then: Callable[[], Sequence[Val]],
        otherwise: Callable[[], Sequence[Val]] | None = None,
    ) -> list[Val]:
        """`cond ? then() : otherwise()`; with no `otherwise`, `then` yields nothing."""
        if cond.const is not None:
            if cond.const:
                return list(then())
            return list(otherwise()) if otherwise else []
        then_block = Block()
        else_block = Block()
        with self.at_end(then_block):
            then_values = list(then())
            self.insert(scf.YieldOp(*[self.splat(v).value if v.is_vector else v.value for v in then_values]))
        with self.at_end(else_block):
            else_values = list(otherwise()) if otherwise else []
            self.insert(scf.YieldOp(*[v.value for v in else_values]))
        types = [v.type for v in then_values]
        op = scf.IfOp(cond.value, types, [then_block], [else_block] if otherwise or types else None)
        self.insert(op)
        return [Val(self, r) for r in op.results]
