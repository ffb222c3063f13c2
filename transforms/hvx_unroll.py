"""
`hvx-unroll{factor=N}`: unroll the innermost loops of `hvx` kernels before register
allocation, so the packer sees longer basic blocks (GCD² §IV.C, "Impact of Unrolling").

A loop of `trip` iterations becomes `trip / u` iterations of `u` copies of its body,
each copy reading the previous one's yielded values; `u` divides the trip count (a
loop left with one iteration is inlined). A counted loop's counter steps down once
per copy, so the branch still falls through after the last copy.

`factor=0` (the default) picks `u` by the kernel's output shape, as GCD² does for GEMM:
the kernel generator records it (`hvx.output = [M, N]`: output pixels × channels).
- *skinny* (M ≥ 4·N) and *near-square* outputs unroll the reduction loop four times:
  their few channel tiles leave the packer little independent work per iteration;
- *fat* outputs (N ≥ 4·M) twice: their many channel tiles already keep the multiply
  slots busy, so more copies buy little (1–3% in the cycle model) for the code.
(`bench/sda.py` compares this choice with the best of 1, 2 and 4 by the cycle model.)
A body already long enough to keep the packer busy (`max-body` instructions, default
1024, e.g. a requantiser applying a hundred corrections) is copied only as far as that
bound, which only costs compile time. If the unrolled kernel does not fit the
registers, the next smaller bound is used.
The unrolled bodies' pointer steps then fold into offsets (`hvx_addresses.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import HexagonRegisterType
from mobile_opt.transforms.hvx_addresses import fold_addresses

OUTPUT_ATTRIBUTE = "hvx.output"
FACTORS = {"skinny": 4, "square": 4, "fat": 2}
MAX_BODY = 1024
"""Instructions an unrolled innermost body grows to at most, under factor=0."""


def output_class(pixels: int, channels: int) -> str:
    if pixels >= 4 * channels:
        return "skinny"
    if channels >= 4 * pixels:
        return "fat"
    return "square"


def heuristic_factor(func: ops.FuncOp) -> int:
    shape = func.attributes.get(OUTPUT_ATTRIBUTE)
    if not isinstance(shape, ArrayAttr):
        return 1
    pixels, channels = (a.value.data for a in shape.data)  # type: ignore[union-attr]
    return FACTORS[output_class(pixels, channels)]


def record_output_shape(func: ops.FuncOp, pixels: int, channels: int) -> None:
    """What the lowering knows of a kernel's output, for the unroll heuristic."""
    func.attributes[OUTPUT_ATTRIBUTE] = ArrayAttr(
        [IntegerAttr(pixels, i64), IntegerAttr(channels, i64)]
    )


def innermost_loops(block: Block) -> list[ops.LoopOp]:
    found = []
    for op in block.walk():
        if isinstance(op, ops.LoopOp) and not any(
            isinstance(inner, ops.LoopOp) for inner in op.body.block.ops
        ):
            found.append(op)
    return found


def unroll_loop(loop: ops.LoopOp, factor: int) -> None:
    """Unroll `loop` by `factor`, which divides its trip count."""
    trip = loop.trip.value.data
    assert trip % factor == 0, (trip, factor)
    if factor == 1:
        return
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, ops.YieldOp)
    originals = [op for op in body.ops if op is not yielded]
    current: list[SSAValue] = list(yielded.values)
    for _ in range(factor - 1):
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, current))
        for op in originals:
            copy = op.clone(value_mapper=mapping)
            body.insert_op_before(copy, yielded)
        current = [mapping.get(v, v) for v in yielded.values]
    yielded.operands = current  # type: ignore[assignment]
    loop.trip = IntegerAttr(trip // factor, i64)
    if loop.trip.value.data == 1:
        _inline(loop)


def _inline(loop: ops.LoopOp) -> None:
    """A loop that runs once: its body in its place."""
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, ops.YieldOp)
    for arg, init in zip(body.args, loop.inits):
        arg.replace_all_uses_with(init)
    for result, value in zip(loop.results, yielded.values):
        result.replace_all_uses_with(value)
    parent = loop.parent_block()
    assert parent is not None
    for op in list(body.ops):
        if op is yielded:
            continue
        op.detach()
        parent.insert_op_before(op, loop)
    loop.detach()
    loop.erase()


def _fits_registers(func: ops.FuncOp) -> bool:
    from mobile_opt.transforms.hvx_regalloc import RegisterAllocationError, allocate_registers

    try:
        allocate_registers(func.clone())
    except RegisterAllocationError:
        return False
    return True


def _unroll_all(func: ops.FuncOp, most: int) -> None:
    for loop in innermost_loops(func.body.block):
        trip = loop.trip.value.data
        unroll_loop(loop, max(d for d in range(1, most + 1) if trip % d == 0))
    for loop in innermost_loops(func.body.block):
        fold_addresses(loop.body.block)


def unroll_function(func: ops.FuncOp, factor: int, max_body: int = MAX_BODY) -> int:
    """
    Unroll `func`'s innermost loops by at most `factor` (0: the heuristic's, within
    `max_body` instructions), each by the largest divisor of its trip count within
    that; the bound that fit.
    """
    most = heuristic_factor(func) if factor == 0 else factor
    if factor == 0:
        longest = max((len(list(loop.body.block.ops)) for loop in innermost_loops(
            func.body.block)), default=1)
        most = max(1, min(most, max_body // max(longest, 1)))
    while most > 1:
        trial = func.clone()
        _unroll_all(trial, most)
        if _fits_registers(trial):
            break
        most -= 1
    _unroll_all(func, most)
    return most


@dataclass(frozen=True)
class HvxUnrollPass(ModulePass):
    name = "hvx-unroll"

    factor: int = 0
    """Copies of each innermost loop body; 0 chooses by the kernel's output shape."""
    max_body: int = MAX_BODY
    """With factor 0: instructions an unrolled body grows to at most."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.factor < 0:
            raise DiagnosticException(f"hvx-unroll: factor must be 0 (auto) or more, not {self.factor}")
        for func in op.walk():
            if not isinstance(func, ops.FuncOp):
                continue
            registers = [v.type for inner in func.walk() for v in inner.results
                         if isinstance(v.type, HexagonRegisterType)]
            if registers and all(r.is_allocated for r in registers):
                if not innermost_loops(func.body.block):
                    continue  # nothing to unroll (an entry whose registers are all pinned)
                raise DiagnosticException(
                    f"hvx-unroll: @{func.sym_name.data} is already allocated (unroll before hvx-regalloc)"
                )
            unroll_function(func, self.factor, self.max_body)
