"""
A simple legal packet former for allocated `hvx` code: each instruction, in program
order, goes into the earliest packet after everything it depends on where the machine
description says it fits. The SDA packer (a later pass) replaces it; this one only has
to be legal and deterministic, and it is what the cycle model counts.

Dependences (see `machine.py`): a read after a write, a write after a write, and
memory order between a store and any access to a buffer it may alias go to a later
packet; a write after a read may share the reader's packet. Call and syscall
instructions stand alone and order everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from mobile_opt.backends.hexagon import machine
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import HexagonRegisterType

RegisterUnit = tuple[str, int]


def register_units(values: Iterable[SSAValue]) -> set[RegisterUnit]:
    units: set[RegisterUnit] = set()
    for value in values:
        reg = value.type
        assert isinstance(reg, HexagonRegisterType) and reg.is_allocated, (
            f"packing needs allocated registers, got {reg}"
        )
        units.update((reg.register_pool_key(), u) for u in reg.units)
    return units


def _region(op: ops.Instruction) -> str | None:
    region = op.properties.get("region")
    return region.data if region is not None else None  # type: ignore[union-attr]


def may_alias(a: ops.Instruction, b: ops.Instruction) -> bool:
    """Memory accesses to differently named regions never overlap; unnamed ones may."""
    ra, rb = _region(a), _region(b)
    return ra is None or rb is None or ra == rb


@dataclass
class Packet:
    instructions: list[ops.Instruction] = field(default_factory=list)

    def names(self) -> tuple[str, ...]:
        return tuple(name for i in self.instructions for name in slot_names(i))


def slot_names(inst: ops.Instruction) -> tuple[str, ...]:
    """The machine-description names an instruction's words take in a packet."""
    return (inst.name, machine.EXTENDER) if inst.needs_extender() else (inst.name,)


def instructions_of(block_ops: Sequence[Operation]) -> list[ops.Instruction]:
    """The instructions of a straight-line run of ops (pair views print nothing)."""
    return [op for op in block_ops if isinstance(op, ops.Instruction)]


def pack(instructions: Sequence[ops.Instruction], one_per_packet: bool = False) -> list[Packet]:
    packets: list[Packet] = []
    last_write: dict[RegisterUnit, int] = {}
    last_read: dict[RegisterUnit, int] = {}
    memory: list[tuple[ops.Instruction, int]] = []
    barrier = -1
    for inst in instructions:
        reads = register_units(inst.operands)
        writes = register_units(inst.results)
        earliest = barrier + 1
        for unit in reads:
            if unit in last_write:
                earliest = max(earliest, last_write[unit] + 1)
        for unit in writes:
            if unit in last_write:
                earliest = max(earliest, last_write[unit] + 1)
            if unit in last_read:
                earliest = max(earliest, last_read[unit])
        if inst.MEMORY is not None:
            for other, where in memory:
                if "store" in (inst.MEMORY, other.MEMORY) and may_alias(inst, other):
                    earliest = max(earliest, where + 1)
        is_barrier = inst.name in machine.BARRIERS
        if is_barrier:
            earliest = len(packets)
        if one_per_packet:
            earliest = len(packets)
        where = earliest
        while where < len(packets) and not machine.fits(packets[where].names() + slot_names(inst)):
            where += 1
        if where == len(packets):
            packets.append(Packet())
        packets[where].instructions.append(inst)
        for unit in writes:
            last_write[unit] = where
        for unit in reads:
            last_read[unit] = max(last_read.get(unit, -1), where)
        if inst.MEMORY is not None:
            memory.append((inst, where))
        if is_barrier:
            barrier = where
    return packets


def cycles(packets: Sequence[Packet]) -> int:
    """
    Cycles to issue the packets in order, one per cycle, a packet waiting until every
    register it reads is ready (`machine.stall`).
    """
    ready: dict[RegisterUnit, int] = {}
    cycle = -1
    for packet in packets:
        issue = cycle + 1
        for inst in packet.instructions:
            for unit in register_units(inst.operands):
                issue = max(issue, ready.get(unit, 0))
        for inst in packet.instructions:
            latency = machine.instr_class(inst.name).latency
            for unit in register_units(inst.results):
                ready[unit] = issue + latency
        cycle = issue
    return cycle + 1
