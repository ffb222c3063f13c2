"""
`ace`: Romou's address-calculation elimination (Algorithm 1) on `ocl` kernels.

Image coordinates are integer arithmetic on work-item ids, loop counters and constants
(`x·stride − pad + kw`, clamps, bounds checks). Inside a loop, the part of such an
expression that does not depend on the loop is recomputed on every iteration, which a
mobile OpenCL compiler may not notice. The pass moves every integer or boolean `arith`
operation whose operands are all defined outside its loop (or its branch of an `if`)
to just before it, innermost first so an expression climbs as far as it can, then merges equal
expressions (common-subexpression elimination): each common address expression is
computed once, where its inputs are first known — Algorithm 1's new variables declared
before the loop.

Integer arithmetic cannot fault, except division: a division or remainder moves only
by a nonzero constant, so a hoisted branch's arithmetic is merely computed when not
needed. Float arithmetic stays where it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from mobile_opt.dialects import ocl

_DIVISIONS = (arith.DivSIOp, arith.DivUIOp, arith.RemSIOp, arith.RemUIOp, arith.FloorDivSIOp,
              arith.CeilDivSIOp)


def _is_address_arithmetic(op: Operation) -> bool:
    if op.dialect_name() != "arith" or op.regions or not op.results:
        return False
    if not all(isinstance(r.type, IntegerType | IndexType) for r in op.results):
        return False
    if isinstance(op, _DIVISIONS):
        divisor = op.operands[1].owner
        return (isinstance(divisor, arith.ConstantOp) and isinstance(divisor.value, IntegerAttr)
                and divisor.value.value.data != 0)
    return True


def _hoist_from(region_op: scf.ForOp | scf.IfOp) -> int:
    """Move the invariant address arithmetic of the op's blocks before it; how many moved."""
    moved = 0
    for region in region_op.regions:
        for block in region.blocks:
            for op in list(block.ops):
                if _is_address_arithmetic(op) and not any(
                    _defined_in(v, region_op) for v in op.operands
                ):
                    op.detach()
                    region_op.parent_block().insert_op_before(op, region_op)  # type: ignore[union-attr]
                    moved += 1
    return moved


def _defined_in(value, region_op: Operation) -> bool:
    """Whether `value` is defined inside `region_op` (a block argument of it included)."""
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    while op is not None:
        if op is region_op:
            return True
        op = op.parent_op()
    return False


def eliminate_address_calculation(kernel: ocl.KernelOp) -> int:
    """Hoist out of loops and conditionals, innermost first, so expressions climb every level."""
    nests = [op for op in kernel.walk() if isinstance(op, scf.ForOp | scf.IfOp)]
    return sum(_hoist_from(op) for op in reversed(nests))  # walk lists outer ones first


@dataclass(frozen=True)
class AddressCalculationEliminationPass(ModulePass):
    """`ace`: hoist and merge the address arithmetic of every `ocl.kernel`'s loops."""

    name = "ace"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, ocl.KernelOp)]:
            eliminate_address_calculation(kernel)
        CommonSubexpressionElimination().apply(ctx, op)
