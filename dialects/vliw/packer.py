"""
The packets of a straight run of allocated `hvx` code.

Code that `vliw-pack` packed is already `vliw.packet`s. Loose instructions get a simple
legal packet former: each, in program order, goes into the earliest packet after
everything it depends on (`dependences.py`, soft dependences taken as hard, so nothing
forwards) where the machine description says it fits — or, with `one_per_packet`, a
packet of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation

from mobile_opt.dialects.vliw.dependences import Dependence, DependenceGraph
from mobile_opt.dialects.vliw.packets import packet_problem
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.vliw import PacketOp

Packet = list[ops.Instruction]


def pack(instructions: Sequence[ops.Instruction], one_per_packet: bool = False) -> list[Packet]:
    if one_per_packet:
        return [[inst] for inst in instructions]
    graph = DependenceGraph(instructions)
    packets: list[Packet] = []
    where: list[int] = []
    for j, inst in enumerate(instructions):
        earliest = max(
            (where[i] + (e.kind is not Dependence.ORDER) for i, e in graph.preds[j].items()),
            default=0,
        )
        at = earliest
        while at < len(packets) and packet_problem(packets[at] + [inst]) is not None:
            at += 1
        if at == len(packets):
            packets.append([])
        packets[at].append(inst)
        where.append(at)
    return packets


def run_packets(run: Sequence[Operation], one_per_packet: bool = False) -> list[Packet]:
    """The packets of a run: `vliw.packet`s as they are, loose instructions packed here."""
    packets: list[Packet] = []
    loose: list[ops.Instruction] = []
    for op in run:
        if isinstance(op, PacketOp):
            packets += pack(loose, one_per_packet)
            loose = []
            packets.append(op.instructions())
        elif isinstance(op, ops.Instruction):
            loose.append(op)
    return packets + pack(loose, one_per_packet)
