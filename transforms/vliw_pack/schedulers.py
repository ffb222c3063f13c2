"""
Packet schedulers over a dependence graph: each returns the packets of a run, as lists
of instruction indices in issue order.

- `sda`: GCD²'s Soft Dependencies Aware packing (Algorithm 1). It builds packets from
  the end of the run: each packet is seeded with the last instruction of a critical
  path of what is left (its deepest sink), then filled with the best *free*
  instruction (every successor already packed, or in this packet through a soft or
  order edge) that fits, scored
  `(order + pred)·w − |hi_lat − lat|·(1−w)`, less `p` times the cycles a soft
  dependence packed in it adds to the packet (`p = inf`: none that adds any).
- the ablations: `soft="hard"` makes every soft dependence hard (GCD²'s *soft to hard*),
  `soft="none"` packs soft dependences without the penalty (*soft to none*).
- `list_schedule`: a classic top-down list scheduler: one packet at a time, the ready
  instructions by critical-path height; it knows no forwarding, so every read after
  write goes to a later packet.
"""

from __future__ import annotations

import math

from mobile_opt.dialects.vliw import machine
from mobile_opt.dialects.vliw.dependences import Dependence, DependenceGraph
from mobile_opt.dialects.vliw.packets import forwarded_reads, forwarding_stall, packet_problem

Packets = list[list[int]]
SOFT_MODES = ("aware", "hard", "none")


class _PacketChecks:
    """Legality and forwarding stall of candidate packets, remembered per graph."""

    def __init__(self, graph: DependenceGraph):
        self.graph = graph
        self.cache: dict[tuple[int, ...], tuple[bool, int]] = {}

    def _check(self, members: list[int]) -> tuple[bool, int]:
        key = tuple(sorted(members))
        if key not in self.cache:
            insts = [self.graph.instructions[i] for i in key]
            reads = forwarded_reads(insts)
            ok = packet_problem(insts, reads) is None
            self.cache[key] = (ok, forwarding_stall(insts, reads) if ok else 0)
        return self.cache[key]

    def legal(self, members: list[int]) -> bool:
        return self._check(members)[0]

    def stall(self, members: list[int]) -> int:
        return self._check(members)[1]


def _checks(graph: DependenceGraph) -> _PacketChecks:
    checks = getattr(graph, "_packet_checks", None)
    if checks is None:
        checks = _PacketChecks(graph)
        graph._packet_checks = checks  # type: ignore[attr-defined]
    return checks


def sda(graph: DependenceGraph, w: float = 0.5, p: float = 1.0, soft: str = "aware") -> Packets:
    assert soft in SOFT_MODES, soft
    if soft == "hard":
        graph = graph.soft_as_hard()
    penalty = 0.0 if soft == "none" else p
    checks = _checks(graph)
    latency = [machine.latency(inst.name) for inst in graph.instructions]
    order, pred = graph.order, graph.ancestors
    alive = set(range(len(graph)))
    waiting = [len(graph.succs[i]) for i in range(len(graph))]
    """Successors of each instruction not packed yet."""
    free = {i for i in alive if waiting[i] == 0}
    """Live instructions whose successors are all packed: the sinks of what is left."""
    depth = graph.depths
    packets: Packets = []

    def take(i: int) -> None:
        alive.discard(i)
        free.discard(i)
        for s in graph.preds[i]:
            waiting[s] -= 1
            if waiting[s] == 0:
                free.add(s)

    while alive:
        # the end of a critical path of what is left: its deepest sink (what is left is
        # closed under predecessors, so depths never change)
        seed = max(free, key=lambda i: (depth[i], -i))
        packet = [seed]
        take(seed)
        while len(packet) < 4:
            hi_lat = max(latency[i] for i in packet)
            stall = checks.stall(packet)
            best, best_score = None, 0.0
            for i in sorted(free):
                if any(graph.succs[i][d].kind is Dependence.HARD
                       for d in packet if d in graph.succs[i]):
                    continue
                if not checks.legal(packet + [i]):
                    continue
                score = (order[i] + pred[i]) * w - abs(hi_lat - latency[i]) * (1 - w)
                added = checks.stall(packet + [i]) - stall
                if added and penalty == math.inf:
                    continue  # an infinite penalty: no soft dependence that costs a stall
                if added:
                    score -= penalty * added
                if best is None or score > best_score:
                    best, best_score = i, score
            if best is None:
                break
            packet.append(best)
            take(best)
        packets.append(sorted(packet))
    packets.reverse()
    return packets


def list_schedule(graph: DependenceGraph) -> Packets:
    graph = graph.soft_as_hard()
    legal = _checks(graph).legal
    height = graph.heights()
    where: dict[int, int] = {}
    remaining = set(range(len(graph)))
    packets: Packets = []
    while remaining:
        t = len(packets)
        packet: list[int] = []

        def ready(i: int) -> bool:
            for s, edge in graph.preds[i].items():
                if s in packet and edge.kind is Dependence.ORDER:
                    continue
                if s not in where or where[s] >= t:
                    return False
            return True

        while len(packet) < 4:
            candidates = [i for i in remaining if ready(i) and legal(packet + [i])]
            if not candidates:
                break
            best = min(candidates, key=lambda i: (-height[i], i))
            packet.append(best)
            remaining.discard(best)
        for i in packet:
            where[i] = t
        packets.append(sorted(packet))
    return packets


def check_schedule(graph: DependenceGraph, packets: Packets) -> str | None:
    """Why these packets break the graph (every instruction once, edges kept, legal packets)."""
    where = {i: t for t, packet in enumerate(packets) for i in packet}
    if sorted(where) != list(range(len(graph))) or sum(map(len, packets)) != len(graph):
        return "the packets do not hold every instruction exactly once"
    for edges in graph.succs:
        for e in edges.values():
            gap = where[e.dst] - where[e.src]
            if gap < 0 or (gap == 0 and e.kind is Dependence.HARD):
                return f"instructions {e.src} and {e.dst} break a {e.kind.value} dependence"
    for packet in packets:
        if not _checks(graph).legal(packet):
            return f"packet {packet} is not legal"
    return None
