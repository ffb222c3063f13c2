"""
What may share a packet, decided on allocated `hvx` instructions in SSA form.

Inside a packet every instruction reads its registers as they were before the packet,
unless it forwards: SSA says which, because an operand defined by another instruction
of the same packet (directly or through a pair view) is a read of the new value. Such a
read is legal only where the machine description allows forwarding (`.cur` loads,
`.new` stores); it then prints with its mark and costs a stall. Everything else a
packet needs (slots, HVX resources, one write per register, the `.cur` and new-value
store restrictions) is checked here too, so the `vliw` verifier, the packers, the
printer and the cycle model agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.ir import Operation, SSAValue

from mobile_opt.dialects.vliw import machine
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import HexagonRegisterType, RegType

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


def slot_names(inst: ops.Instruction) -> tuple[str, ...]:
    """The machine-description names an instruction's words take in a packet."""
    return (inst.name, machine.EXTENDER) if inst.needs_extender() else (inst.name,)


def packet_names(members: Iterable[ops.Instruction]) -> tuple[str, ...]:
    return tuple(name for inst in members for name in slot_names(inst))


def producers(value: SSAValue) -> list[tuple[Operation, SSAValue]]:
    """The instructions (and their results) a value comes from, looking through pair views."""
    owner = value.owner
    if isinstance(owner, (*ops.PAIR_VIEWS, ops.PairOp)):
        return [p for operand in owner.operands for p in producers(operand)]
    if isinstance(owner, ops.Instruction):
        return [(owner, value)]
    return []


@dataclass(frozen=True)
class ForwardedRead:
    producer: ops.Instruction
    consumer: ops.Instruction
    operand: str
    kind: machine.Forwarding | None
    """None: the machine has no way to forward this read."""


@cache
def _operand_names(op_type: type[ops.Instruction]) -> tuple[str, ...]:
    return tuple(name for name, _ in op_type.get_irdl_definition().operands)


def operands(inst: ops.Instruction) -> list[tuple[str, SSAValue]]:
    """(operand name, value) of every operand, variadic groups flattened."""
    named = []
    for name in _operand_names(type(inst)):
        value = getattr(inst, name)
        if isinstance(value, SSAValue):
            named.append((name, value))
        else:
            named.extend((name, v) for v in value)
    return named


def is_scalar_result(result: SSAValue) -> bool:
    """A single scalar register that is an instruction's own result (not a new base)."""
    return isinstance(result.type, RegType) and result.index == 0


def forwarded_reads(members: Sequence[ops.Instruction]) -> list[ForwardedRead]:
    """Every read of a value that another member of the packet writes."""
    inside = set(members)
    reads = []
    for consumer in members:
        for operand, value in operands(consumer):
            for producer, result in producers(value):
                if producer in inside and producer is not consumer:
                    kind = machine.forwarding(
                        producer.name, consumer.name, operand, is_scalar_result(result),
                        result.index == 0,
                    )
                    reads.append(ForwardedRead(producer, consumer, operand, kind))
    return reads


def current_loads(reads: Iterable[ForwardedRead]) -> set[ops.Instruction]:
    """Loads that print `.cur`: some member reads their vector in the packet."""
    return {r.producer for r in reads if r.kind is machine.Forwarding.CURRENT}


def new_operands(reads: Iterable[ForwardedRead], consumer: ops.Instruction) -> set[str]:
    """The consumer's operands that print `.new`."""
    return {r.operand for r in reads if r.consumer is consumer and r.kind is machine.Forwarding.NEW}


def packet_problem(
    members: Sequence[ops.Instruction], reads: list[ForwardedRead] | None = None
) -> str | None:
    """Why these instructions (in program order) cannot form one packet, or None."""
    if not members:
        return "a packet holds at least one instruction"
    if not machine.fits(packet_names(members)):
        return "the instructions do not fit the slots and HVX resources of one packet"
    written: set[RegisterUnit] = set()
    for inst in members:
        units = register_units(inst.results)
        if units & written:
            return f"{inst.name} writes a register another instruction of the packet writes"
        written |= units
    reads = forwarded_reads(members) if reads is None else reads
    for read in reads:
        if read.kind is None:
            return (
                f"{read.consumer.name} reads the result of {read.producer.name} in the same "
                "packet, which the machine cannot forward"
            )
    for load in current_loads(reads):
        loaded = register_units(load.results[:1])
        for inst in members:
            for _, value in operands(inst):
                if register_units([value]) & loaded and load not in (p for p, _ in producers(value)):
                    return (
                        f"{inst.name} reads the old value of a register that a .cur load "
                        "of the same packet overwrites"
                    )
    scalar_new = [
        r.consumer for r in reads
        if r.kind is machine.Forwarding.NEW and machine.scalar_new_store_alone(r.consumer.name)
    ]
    if scalar_new and sum(inst.MEMORY == "store" for inst in members) > 1:
        return "a scalar new-value store shares its packet with another store"
    return None


def execute_cycles(
    members: Sequence[ops.Instruction], reads: list[ForwardedRead] | None = None
) -> int:
    """
    The packet's execute stage: its longest chain of instructions, a consumer that
    forwards starting when its producer finishes (GCD² Fig. 4).
    """
    reads = forwarded_reads(members) if reads is None else reads
    reads = [r for r in reads if r.kind is not None]
    finish: dict[ops.Instruction, int] = {}
    for inst in members:  # program order: producers before consumers
        start = max((finish[r.producer] for r in reads if r.consumer is inst), default=0)
        finish[inst] = start + machine.latency(inst.name)
    return max(finish.values(), default=0)


def forwarding_stall(
    members: Sequence[ops.Instruction], reads: list[ForwardedRead] | None = None
) -> int:
    """Cycles forwarding adds to the packet's execute stage."""
    longest = max((machine.latency(inst.name) for inst in members), default=0)
    return execute_cycles(members, reads) - longest


def packet_time(members: Sequence[ops.Instruction]) -> int:
    """Cycles of one packet: read, execute, write back."""
    return machine.READ_WRITE_STAGES + execute_cycles(members)
