"""
Turn a scheduled run of instructions into `vliw.packet` ops, in place.

A run is a maximal straight-line stretch of a block (between loops). Its pair views go
into the packet of the last value they view (or before the first packet when they
view values from outside the run); later uses of a value made in a packet read the
packet's result instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.ir import Block, Operation

from mobile_opt.dialects.vliw import machine
from mobile_opt.dialects.vliw.packets import packet_names
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.vliw import PacketOp


def straight_runs(block: Block) -> Iterator[list[Operation]]:
    """The maximal runs of instructions and views between the block's loops and packets."""
    run: list[Operation] = []
    for op in block.ops:
        if isinstance(op, (ops.LoopOp, ops.YieldOp, PacketOp)):
            if run:
                yield run
            run = []
        else:
            run.append(op)
    if run:
        yield run


def apply_packets(run: Sequence[Operation], packets: Sequence[Sequence[ops.Instruction]]) -> None:
    block = run[0].parent_block()
    assert block is not None
    anchor = run[-1].next_op
    position = {op: k for k, op in enumerate(run)}
    where: dict[Operation, int] = {inst: t for t, packet in enumerate(packets) for inst in packet}
    for op in run:
        if op not in where:  # a view: with the last value it views
            where[op] = max(
                (where[o.owner] for o in op.operands if o.owner in where), default=-1
            )
    for op in run:
        op.detach()

    def insert(op: Operation) -> None:
        if anchor is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, anchor)

    for op in run:
        if where[op] == -1:
            insert(op)
    for t, packet in enumerate(packets):
        members = sorted((op for op in run if where[op] == t), key=position.__getitem__)
        slots = machine.assign_slots(packet_names(packet))
        assert slots is not None, f"packet {[i.name for i in packet]} does not fit"
        packet_op = PacketOp(members, slots)
        insert(packet_op)
        for value, result in zip(packet_op.inner_values(), packet_op.outs):
            value.replace_uses_with_if(result, lambda use: use.operation.parent_op() is not packet_op)
