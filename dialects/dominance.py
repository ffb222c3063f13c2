"""
SSA dominance: every value is defined before it is used.

xDSL's verifier checks each op on its own and leaves dominance out, so a parsed module
may use a value above its definition (`%t = onnx.Add %x, %t`), which shape rules that
walk operands would follow forever. The tools run this check on every module they parse,
before the verifier.
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.utils.exceptions import VerifyException


def verify_dominance(root: Operation) -> None:
    """
    A VerifyException naming an operand in `root` that its definition does not
    dominate. A value is usable after its op in the same block, in the blocks of its
    region that its block dominates, and in the regions nested in either.
    """
    order = _BlockOrder()
    for op in root.walk():
        for index, operand in enumerate(op.operands):
            if not order.dominates(operand, op):
                raise VerifyException(_used_before_defined(op, index, operand))


class _BlockOrder:
    """Positions of ops in their blocks and dominance of blocks, computed once each."""

    def __init__(self) -> None:
        self.positions: dict[Block, dict[Operation, int]] = {}
        self.regions: dict[Region, DominanceInfo] = {}

    def dominates(self, value: SSAValue, user: Operation) -> bool:
        if isinstance(value, BlockArgument):
            block, definer = value.block, None
        else:
            definer = value.owner
            assert isinstance(definer, Operation)
            block = definer.parent_block()
        if block is None or block.parent is None:
            return False
        # the ancestor of `user` (or `user`) in the region that defines the value
        here: Operation | None = user
        while here is not None and not _in_region(here, block.parent):
            here = here.parent_op()
        if here is None:
            return False
        where = here.parent_block()
        assert where is not None
        if where is not block:
            dominance = self.regions.get(block.parent)
            if dominance is None:
                dominance = self.regions[block.parent] = DominanceInfo(block.parent)
            return dominance.strictly_dominates(block, where)
        if definer is None:
            return True
        position = self.positions.get(block)
        if position is None:
            position = self.positions[block] = {op: i for i, op in enumerate(block.ops)}
        return position[definer] < position[here]


def _in_region(op: Operation, region: Region) -> bool:
    block = op.parent_block()
    return block is not None and block.parent is region


def _used_before_defined(op: Operation, index: int, operand: SSAValue) -> str:
    what = f"%{operand.name_hint}" if operand.name_hint else f"operand #{index}"
    return f"{what} is used before it is defined ({op.name})"
