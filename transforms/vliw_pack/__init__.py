"""
`vliw-pack{algorithm=sda|soft-to-hard|soft-to-none|list w=... p=... tune=...}`: form
the allocated `hvx` code of every function into `vliw.packet`s, one basic block (a
straight run between loops) at a time.

`sda` is GCD²'s soft-dependency-aware packer; `soft-to-hard` and `soft-to-none` are
its two ablations; `list` a classic critical-path list scheduler. With `tune`, SDA
tries a small grid of `w` and `p` on each block (the given pair included) and keeps the
schedule the cycle model (`models/hvx_cycles.py`) finds fastest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects.vliw.dependences import DependenceGraph
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import require_allocated
from mobile_opt.models.hvx_cycles import packet_cycles

from .rewrite import apply_packets, straight_runs
from .schedulers import Packets, list_schedule, sda

ALGORITHMS = ("sda", "soft-to-hard", "soft-to-none", "list")
TUNING_GRID = [(w, p) for w in (0.25, 0.5, 0.9) for p in (0.0, 1.0, math.inf)]


def schedule(graph: DependenceGraph, algorithm: str, w: float, p: float, tune: bool) -> Packets:
    """The packets (instruction indices) `algorithm` gives a run's graph."""
    if algorithm == "list":
        return list_schedule(graph)
    soft = {"sda": "aware", "soft-to-hard": "hard", "soft-to-none": "none"}[algorithm]
    settings = [(w, p)] + (TUNING_GRID if tune else [])
    best, best_key = None, None
    for sw, sp in dict.fromkeys(settings):
        packets = sda(graph, sw, sp, soft)
        key = (packet_cycles(_instructions(graph, packets)), len(packets))
        if best_key is None or key < best_key:
            best, best_key = packets, key
    assert best is not None
    return best


def _instructions(graph: DependenceGraph, packets: Packets):
    return [[graph.instructions[i] for i in packet] for packet in packets]


@dataclass(frozen=True)
class VliwPackPass(ModulePass):
    name = "vliw-pack"

    algorithm: str = "sda"
    w: float = 0.5
    """SDA's weight of dependence depth against latency similarity."""
    p: float = 1.0
    """SDA's penalty per stall cycle of a soft dependence packed together."""
    tune: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.algorithm not in ALGORITHMS:
            raise DiagnosticException(
                f"vliw-pack: algorithm must be one of {', '.join(ALGORITHMS)}, not {self.algorithm}"
            )
        if not 0 <= self.w <= 1:
            raise DiagnosticException(f"vliw-pack: w must be within [0, 1], not {self.w}")
        for func in op.walk():
            if isinstance(func, ops.FuncOp):
                require_allocated(func, "vliw-pack")
                self.pack_block(func.body.block)

    def pack_block(self, block: Block) -> None:
        for run in list(straight_runs(block)):
            instructions = [op for op in run if isinstance(op, ops.Instruction)]
            if not instructions:
                continue
            graph = DependenceGraph(instructions)
            packets = schedule(graph, self.algorithm, self.w, self.p, self.tune)
            apply_packets(run, _instructions(graph, packets))
        for inner in block.ops:
            if isinstance(inner, ops.LoopOp):
                self.pack_block(inner.body.block)
