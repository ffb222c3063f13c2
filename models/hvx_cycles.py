"""
The HVX cycle model: a static count of an allocated kernel's packets and cycles.

Kernels have static control flow, so the count follows the code the assembly printer
emits: every straight-line run of instructions is formed into packets by the same
packer, a loop costs its body times its trip count, a hardware loop one setup packet,
a counted loop one compare-and-branch packet per iteration, a function one return
packet. Cycles add the stalls the machine description's latencies cause inside each
run (`packer.cycles`); stalls across loop back-edges are not modelled.

    packets(kernel) = Σ_runs executions(run) · packets(run) + loop and return overhead
    cycles(kernel)  = Σ_runs executions(run) · cycles(run)  + the same overhead
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block

from mobile_opt.backends.hexagon.packer import cycles, instructions_of, pack
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


def _run_cost(run: list) -> KernelCost:
    packets = pack(instructions_of(run))
    return KernelCost(len(packets), cycles(packets))


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
        return (body + KernelCost(1, 1)).times(trip)
    if body.packets == 0:
        body = KernelCost(1, 1)  # the printer's `nop` that carries :endloop
    return KernelCost(1, 1) + body.times(trip)


def kernel_cost(func: ops.FuncOp) -> KernelCost:
    """Packets and cycles of one call of an allocated kernel, its return included."""
    return block_cost(func.body.block) + KernelCost(1, 1)
