"""
The packing bounds (`models/hvx_bounds.py`): exact on blocks whose best packing is known
by hand, and never above what a packer reaches on random blocks.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_opt.dialects.vliw.dependences import DependenceGraph
from mobile_opt.dialects.vliw.packets import packet_time, slot_names
from mobile_opt.dialects.hvx import ops
from mobile_opt.models.hvx_bounds import PackingBound, packing_bound
from mobile_opt.transforms.hvx_regalloc import allocate_registers
from mobile_opt.transforms.vliw_pack.schedulers import list_schedule, sda

from test_hvx_packing import RandomBlock


@pytest.mark.parametrize("names, bound", [
    # two multiply units: two vrmpy a packet, each packet read + 2 + write
    (["hvx.vrmpy_acc"] * 4, PackingBound(2, 8)),
    # one vector load port
    (["hvx.vmem_load"] * 3, PackingBound(3, 12)),
    # the adds ride along with the loads
    (["hvx.vmem_load"] * 3 + ["hvx.vadd_w"] * 2, PackingBound(3, 12)),
    # four slots
    (["hvx.addi"] * 5, PackingBound(2, 6)),
    # an unaligned vector load keeps slot 1 to itself: two scalars fit beside it
    (["hvx.vmemu_load"] + ["hvx.addi"] * 3, PackingBound(2, 8)),
    # an extender word takes a packet word but no slot
    (["hvx.tfri", "extender"] * 3, PackingBound(2, 6)),
    # the slow multiplies share one packet with two adds, the other adds go alone
    (["hvx.vrmpy_acc"] * 2 + ["hvx.vadd_w"] * 4, PackingBound(2, 7)),
    # a call sits alone
    (["hvx.call", "hvx.addi"], PackingBound(2, 6)),
    # views take nothing
    (["hvx.lo", "hvx.hi"], PackingBound(0, 0)),
])
def test_bound_of_known_blocks(names, bound):
    assert packing_bound(names) == bound


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31))
def test_no_packer_beats_the_bound(seed):
    func = RandomBlock("block", "out", seed, 40).b.func
    allocate_registers(func)
    instructions = [op for op in func.body.block.ops if isinstance(op, ops.Instruction)]
    bound = packing_bound([name for inst in instructions for name in slot_names(inst)])
    graph = DependenceGraph(instructions)
    for packets in (sda(graph), sda(graph, soft="hard"), sda(graph, 0.9, 0.0, "none"),
                    list_schedule(graph)):
        assert bound.packets <= len(packets)
        members = [[graph.instructions[i] for i in packet] for packet in packets]
        assert bound.cycles <= sum(map(packet_time, members))
