"""
SSA dominance: every value is defined before it is used.

xDSL's verifier checks each op on its own and leaves dominance out, so a parsed module
may use a value above its definition (`%t = onnx.Add %x, %t`), which shape rules that
walk operands would follow forever. The tools run this check on every module they parse,
before the verifier.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.utils.exceptions import VerifyException


def verify_dominance(root: Operation) -> None:
    """
    A VerifyException naming the first operand of an op in `root` that its definition
    does not dominate: a value is usable after its op in the same block, in every block
    of its region that its block dominates, and in the regions nested there.
    """
    for region in root.regions:
        _verify_region(region, frozenset())


def _verify_region(region: Region, outer: frozenset[SSAValue]) -> None:
    blocks = list(region.blocks)
    dominance = DominanceInfo(region) if len(blocks) > 1 else None
    defined = {block: _defined_in(block) for block in blocks}
    for block in blocks:
        visible = set(outer)
        if dominance is not None:
            for other in blocks:
                if dominance.strictly_dominates(other, block):
                    visible |= defined[other]
        visible.update(block.args)
        for op in block.ops:
            for index, operand in enumerate(op.operands):
                if operand not in visible:
                    raise VerifyException(_used_before_defined(op, index, operand))
            if op.regions:
                inner = frozenset(visible)
                for nested in op.regions:
                    _verify_region(nested, inner)
            visible.update(op.results)


def _defined_in(block: Block) -> set[SSAValue]:
    values: set[SSAValue] = set(block.args)
    for op in block.ops:
        values.update(op.results)
    return values


def _used_before_defined(op: Operation, index: int, operand: SSAValue) -> str:
    what = f"%{operand.name_hint}" if operand.name_hint else f"operand #{index}"
    return f"{what} is used before it is defined ({op.name})"
