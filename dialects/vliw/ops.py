"""
The `vliw` dialect: a packet of up to four allocated `hvx` instructions that issue
together, each in the slot the packet names for it.

Inside a packet every instruction reads registers as they were before the packet,
except where its operand is defined by another instruction of the same packet: that
read forwards the new value (`.cur` loads, `.new` stores) and is legal only where the
Hexagon machine description allows it. Pair views (`hvx.lo`, `hvx.pair`, ...) may sit
in a packet; they take no slot. The packet's results are the results of its ops, in
order (`vliw.end` yields them all), so later code reads what the packet wrote.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, DenseArrayBase, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

from mobile_opt.dialects.hvx import ops as hvx
from mobile_opt.dialects.hvx.registers import HexagonRegisterType


@irdl_op_definition
class PacketOp(IRDLOperation):
    """
    `{ i0; i1; ... }`: instructions that issue in one cycle, `slots[k]` the slot of
    the k-th instruction (pair views and constant-extender words take none).
    """

    name = "vliw.packet"
    slots = prop_def(DenseArrayBase[I64])
    body = region_def("single_block")
    outs = var_result_def(HexagonRegisterType)
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "`slots` $slots $body attr-dict (`:` type($outs)^)?"

    def __init__(self, members: Sequence[Operation], slots: Sequence[int]):
        """A packet of `members` (detached ops in order); uses outside are not rewired."""
        block = Block()
        for op in members:
            block.add_op(op)
        values = [r for op in members for r in op.results]
        block.add_op(EndOp(*values))
        super().__init__(
            result_types=[[v.type for v in values]],
            properties={"slots": DenseArrayBase.from_list(i64, list(slots))},
            regions=[Region(block)],
        )

    def ops_inside(self) -> list[Operation]:
        return [op for op in self.body.block.ops if not isinstance(op, EndOp)]

    def instructions(self) -> list[hvx.Instruction]:
        return [op for op in self.ops_inside() if isinstance(op, hvx.Instruction)]

    def inner_values(self) -> list[SSAValue]:
        return [r for op in self.ops_inside() for r in op.results]

    def verify_(self) -> None:
        from mobile_opt.dialects.vliw import machine
        from mobile_opt.dialects.vliw.packets import packet_names, packet_problem

        inside = self.ops_inside()
        for op in inside:
            if not isinstance(op, (hvx.Instruction, *hvx.PAIR_VIEWS, hvx.PairOp)):
                raise VerifyException(f"vliw.packet: {op.name} is not an instruction")
            if op.regions:
                raise VerifyException(f"vliw.packet: {op.name} has regions")
        defined: set[SSAValue] = set()
        inner = set(self.inner_values())
        for op in inside:  # program order: the forwarding rules and the cycle model rely on it
            if any(v in inner and v not in defined for v in op.operands):
                raise VerifyException(
                    f"vliw.packet: {op.name} reads a value the packet defines after it"
                )
            defined.update(op.results)
        terminator = self.body.block.last_op
        if not isinstance(terminator, EndOp):
            raise VerifyException("vliw.packet: the body must end with vliw.end")
        if list(terminator.values) != self.inner_values():
            raise VerifyException("vliw.packet: vliw.end must give every inner result, in order")
        if [v.type for v in self.outs] != [v.type for v in terminator.values]:
            raise VerifyException("vliw.packet: result types differ from the inner results")
        members = self.instructions()
        problem = packet_problem(members)
        if problem is not None:
            raise VerifyException(f"vliw.packet: {problem}")
        slots = tuple(self.slots.get_values())
        if not machine.slots_valid(packet_names(members), slots):
            raise VerifyException(
                f"vliw.packet: slots {list(slots)} are not a legal assignment for "
                f"{', '.join(op.name for op in members)}"
            )


@irdl_op_definition
class EndOp(IRDLOperation):
    """Ends a packet, giving every result its ops made, in order."""

    name = "vliw.end"
    values = var_operand_def(HexagonRegisterType)
    traits = traits_def(IsTerminator(), HasParent(PacketOp))

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])
