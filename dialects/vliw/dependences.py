"""
The instruction dependence graph (GCD²'s IDG) of a straight-line run of allocated
`hvx` instructions.

An edge `src → dst` (src first in program order) says how far apart their packets must
be (`machine.Dependence`):
- a read after a write of a register is *soft* where the machine can forward the value
  inside a packet (`machine.forwarding`) and *hard* otherwise; either way the consumer
  reads without stalling `latency` packets after the producer;
- a write after a write is hard;
- a write after a read may share the reader's packet (*order*);
- memory: a store before an access it may alias is hard, a load before a store may
  share its packet (a packet's loads see memory as it was before it);
- calls and system calls order everything around them.

Alias facts come from the lowering: accesses tagged with different buffer `region`s
never overlap, nor do accesses off the same base value whose byte ranges are disjoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from mobile_opt.dialects.vliw import machine
from mobile_opt.dialects.vliw.packets import (
    is_scalar_result,
    operands,
    producers,
    register_units,
)
from mobile_opt.dialects.hvx import ops

Dependence = machine.Dependence


@dataclass
class Edge:
    src: int
    dst: int
    kind: Dependence
    latency: int
    """Packets after `src`'s at which `dst` runs without a stall."""

    def harden(self, kind: Dependence, latency: int) -> None:
        order = [Dependence.ORDER, Dependence.SOFT, Dependence.HARD]
        self.kind = max(self.kind, kind, key=order.index)
        self.latency = max(self.latency, latency)


def _region(op: ops.Instruction) -> str | None:
    region = op.properties.get("region")
    return region.data if region is not None else None  # type: ignore[union-attr]


def _byte_range(op: ops.Instruction) -> tuple[int, int] | None:
    """The bytes an access touches relative to its base, where the op says."""
    offset = op.properties.get("offset")
    if offset is None:
        return None
    start = offset.value.data  # type: ignore[union-attr]
    if isinstance(op, ops.VectorMemory):
        return start * 128, start * 128 + 128
    width = 8 if isinstance(op, ops.LoadDoubleWordPostIncOp) else 4
    return start, start + width


def may_alias(a: ops.Instruction, b: ops.Instruction) -> bool:
    ra, rb = _region(a), _region(b)
    if ra is not None and rb is not None and ra != rb:
        return False
    base_a, base_b = getattr(a, "base", None), getattr(b, "base", None)
    range_a, range_b = _byte_range(a), _byte_range(b)
    if base_a is not None and base_a is base_b and range_a and range_b:
        return range_a[0] < range_b[1] and range_b[0] < range_a[1]
    return True


class DependenceGraph:
    def __init__(self, instructions: Sequence[ops.Instruction]):
        self.instructions = list(instructions)
        n = len(self.instructions)
        self.succs: list[dict[int, Edge]] = [{} for _ in range(n)]
        self.preds: list[dict[int, Edge]] = [{} for _ in range(n)]
        self._build()

    def _edge(self, src: int, dst: int, kind: Dependence, latency: int) -> None:
        if src == dst:
            return
        edge = self.succs[src].get(dst)
        if edge is None:
            edge = Edge(src, dst, kind, latency)
            self.succs[src][dst] = edge
            self.preds[dst][src] = edge
        else:
            edge.harden(kind, latency)

    def _build(self) -> None:
        index = {inst: i for i, inst in enumerate(self.instructions)}
        last_write: dict[tuple[str, int], int] = {}
        readers: dict[tuple[str, int], list[int]] = {}
        memory: list[int] = []
        barrier: int | None = None
        for j, inst in enumerate(self.instructions):
            is_barrier = inst.name in machine.BARRIERS
            if barrier is not None:
                self._edge(barrier, j, Dependence.HARD, 1)
            if is_barrier:
                for i in range(j):
                    self._edge(i, j, Dependence.HARD, 1)
            for operand, value in operands(inst):
                sources = {index[p]: r for p, r in producers(value) if p in index}
                for unit in register_units([value]):
                    readers.setdefault(unit, []).append(j)
                    i = last_write.get(unit)
                    if i is None:
                        continue
                    result = sources.get(i)
                    soft = result is not None and machine.forwarding(
                        self.instructions[i].name, inst.name, operand, is_scalar_result(result),
                        result.index == 0,
                    ) is not None
                    self._edge(i, j, Dependence.SOFT if soft else Dependence.HARD,
                               machine.latency(self.instructions[i].name))
            for unit in register_units(inst.results):
                if unit in last_write:
                    self._edge(last_write[unit], j, Dependence.HARD, 1)
                for r in readers.pop(unit, []):
                    self._edge(r, j, Dependence.ORDER, 0)
                last_write[unit] = j
            if inst.MEMORY is not None:
                for i in memory:
                    other = self.instructions[i]
                    if "store" not in (inst.MEMORY, other.MEMORY) or not may_alias(other, inst):
                        continue
                    hard = other.MEMORY == "store"
                    self._edge(i, j, Dependence.HARD if hard else Dependence.ORDER, int(hard))
                memory.append(j)
            if is_barrier:
                barrier = j

    def __len__(self) -> int:
        return len(self.instructions)

    def soft_as_hard(self) -> DependenceGraph:
        """The same graph with every soft dependence made hard (the soft-to-hard ablation)."""
        other = object.__new__(DependenceGraph)
        other.instructions = self.instructions
        other._packet_checks = getattr(self, "_packet_checks", None)  # same instructions
        other.succs = [{} for _ in self.instructions]
        other.preds = [{} for _ in self.instructions]
        for edges in self.succs:
            for e in edges.values():
                kind = Dependence.HARD if e.kind is Dependence.SOFT else e.kind
                other._edge(e.src, e.dst, kind, e.latency)
        return other

    # ------------------------------------------------------------------ measures

    @staticmethod
    def edge_length(edge: Edge) -> int:
        """The length of an edge on a critical path: a hard one at least a packet."""
        return max(edge.latency, 1) if edge.kind is Dependence.HARD else edge.latency

    def heights(self) -> list[int]:
        """Longest latency path from each instruction to the end of the run, inclusive."""
        height = [0] * len(self)
        for i in reversed(range(len(self))):
            height[i] = max(
                (self.edge_length(e) + height[d] for d, e in self.succs[i].items()), default=0
            ) + 1
        return height

    @cached_property
    def depths(self) -> list[int]:
        """Longest latency path from the start of the run to each instruction, inclusive:
        the mirror of `heights`, and the same on every prefix closed under predecessors."""
        depth = [0] * len(self)
        for j in range(len(self)):
            depth[j] = max((depth[i] + self.edge_length(e) for i, e in self.preds[j].items()),
                           default=0) + 1
        return depth

    @cached_property
    def order(self) -> list[int]:
        """Rank: the most edges on a path from the entry (GCD²'s `order`)."""
        rank = [0] * len(self)
        for j in range(len(self)):
            rank[j] = max((rank[i] + 1 for i in self.preds[j]), default=0)
        return rank

    @cached_property
    def ancestors(self) -> list[int]:
        """How many instructions each one depends on, directly or not (GCD²'s `pred`)."""
        sets: list[set[int]] = []
        for j in range(len(self)):
            s: set[int] = set()
            for i in self.preds[j]:
                s.add(i)
                s |= sets[i]
            sets.append(s)
        return [len(s) for s in sets]

