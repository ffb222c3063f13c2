"""
The HVX cycle model: a static count of an allocated kernel's packets and cycles.

Kernels have static control flow, so the count follows the code the assembly printer
emits: a straight run of code is its packets (`vliw.packet`s, or what the greedy packer
makes of loose instructions), a loop costs its body times its trip count, a hardware
loop one setup packet, a counted loop one compare-and-branch packet per iteration, a
function one return packet.

Cycles follow GCD²'s pipeline (§IV.C, Fig. 4; `machine.py`): a thread's packets run
one after another, each reading, executing and writing back; its execute stage is its
longest chain of instructions, where a consumer that forwards (a soft dependence packed
together) starts when its producer finishes.

    packets(kernel) = Σ_runs executions(run) · packets(run) + loop and return overhead
    cycles(packet)  = READ_WRITE_STAGES + longest latency chain through forwarded reads
    cycles(kernel)  = Σ over executed packets, overhead packets at READ_WRITE_STAGES + 1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Block, Operation

from mobile_opt.dialects.vliw import machine
from mobile_opt.dialects.vliw.packer import Packet, run_packets
from mobile_opt.dialects.vliw.packets import packet_time
from mobile_opt.dialects.hvx import ops


@dataclass(frozen=True)
class KernelCost:
    packets: int
    cycles: int

    def __add__(self, other: KernelCost) -> KernelCost:
        return KernelCost(self.packets + other.packets, self.cycles + other.cycles)

    def times(self, n: int) -> KernelCost:
        return KernelCost(self.packets * n, self.cycles * n)


ZERO = KernelCost(0, 0)


def packet_cycles(packets: Sequence[Packet]) -> int:
    return sum(map(packet_time, packets))


OVERHEAD = KernelCost(1, machine.READ_WRITE_STAGES + 1)
"""A loop-setup, branch or return packet: one single-cycle instruction."""


def _run_cost(run: list[Operation]) -> KernelCost:
    packets = run_packets(run)
    return KernelCost(len(packets), packet_cycles(packets))


def block_cost(block: Block) -> KernelCost:
    total, run = ZERO, []
    for op in block.ops:
        if isinstance(op, ops.LoopOp):
            total += _run_cost(run)
            run = []
            total += loop_cost(op)
        elif not isinstance(op, ops.YieldOp):
            run.append(op)
    return total + _run_cost(run)


def loop_cost(loop: ops.LoopOp) -> KernelCost:
    trip = loop.trip.value.data
    body = block_cost(loop.body.block)
    if loop.kind.data == "counted":
        return (body + OVERHEAD).times(trip)
    if body.packets == 0:
        body = OVERHEAD  # the printer's `nop` that carries :endloop
    return OVERHEAD + body.times(trip)


def kernel_cost(func: ops.FuncOp) -> KernelCost:
    """Packets and cycles of one call of an allocated kernel, its return included."""
    return block_cost(func.body.block) + OVERHEAD


class HvxCycleModel:
    """The cycle model as a `CostModel` of allocated `hvx.func` kernels."""

    name = "hvx-cycles"
    unit = "cycles"

    def cost(self, candidate: ops.FuncOp) -> float:
        return kernel_cost(candidate).cycles
