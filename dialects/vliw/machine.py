"""
The Hexagon V66 (HVX 128-byte) machine description: the one place that says which
slots, HVX resources and latency each `hvx` instruction has, and which dependencies
between instructions are hard or soft.

A packet holds up to four instructions, each in one of the slots 0..3 its class
allows. HVX instructions also claim HVX resources: a vector ALU op (CVI_VA) takes any
one of the four HVX units, a double-vector ALU op two of them in a legal couple, a
multiply one (CVI_VX) or both (CVI_VX_DV) multiply units, a shift the shift unit, a
permute the cross-lane unit; vector loads and stores take the load or store port.
(Facts from the slot and type annotations of LLVM's Hexagon intrinsics and QEMU's
instruction attributes; the tables below are ours.)

Timing follows GCD²'s pipeline (§IV.C, Fig. 4): a packet reads its registers, executes
and writes them back, one stage after another, and a thread's packets do not overlap,
so every result is ready for the next packet. `latency` is an instruction's execute
stage in cycles; a packet takes `READ_WRITE_STAGES` plus its longest execute stage.
A consumer in the producer's packet reads the old value, unless it forwards: a `.cur`
vector load feeds every HVX instruction of its packet, and a store may take a value
made in its packet as `.new`. Those read-after-writes are the soft dependences: legal
in one packet, whose consumer then executes after its producer (the packet grows by
the chain). Every other read-after-write is hard: the consumer goes in a later packet.
A write after a read may share a packet (the reader sees the old value), memory
included; a write after a write may not.

Duplexes (two scalar sub-instructions in one word) are not modelled, so a packet with
a constant extender is held to four words where LLVM may fit five: conservative.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cache
from itertools import permutations


class Unit(Enum):
    """HVX resources (the scalar side is fully described by slots)."""

    LOAD = "ld"
    STORE = "st"
    MPY0 = "mpy0"
    MPY1 = "mpy1"
    SHIFT = "shift"
    XLANE = "xlane"


HVX_CORE = (Unit.MPY0, Unit.MPY1, Unit.SHIFT, Unit.XLANE)


@dataclass(frozen=True)
class InstrClass:
    """An instruction type: where it may issue, what it holds, when its result is ready."""

    name: str
    slots: frozenset[int]
    resources: tuple[frozenset[Unit], ...]
    """Alternative sets of HVX resources; the instruction takes one whole set."""
    latency: int
    reserved: frozenset[int] = frozenset()
    """Slots the instruction keeps free of others (unaligned vector memory: slot 1)."""


def _class(
    name: str, slots: str, resources: tuple[tuple[Unit, ...], ...], latency: int, reserved=""
):
    return InstrClass(
        name, frozenset(int(s) for s in slots), tuple(frozenset(r) for r in resources), latency,
        frozenset(int(s) for s in reserved),
    )


_ANY_CORE = tuple((u,) for u in HVX_CORE)

CLASSES: dict[str, InstrClass] = {
    c.name: c
    for c in [
        # HVX
        _class("CVI_VA", "0123", _ANY_CORE, 1),
        _class("CVI_VA_DV", "0123", ((Unit.MPY0, Unit.MPY1), (Unit.SHIFT, Unit.XLANE)), 1),
        _class("CVI_VX", "23", ((Unit.MPY0,), (Unit.MPY1,)), 2),
        _class("CVI_VX_DV", "23", ((Unit.MPY0, Unit.MPY1),), 2),
        _class("CVI_VX_LATE", "23", ((Unit.MPY0,), (Unit.MPY1,)), 2),
        _class("CVI_VS", "0123", ((Unit.SHIFT,),), 1),
        _class("CVI_VP", "0123", ((Unit.XLANE,),), 2),
        _class("CVI_VP_VS", "0123", ((Unit.XLANE, Unit.SHIFT),), 2),
        _class("CVI_VM_LD", "01", tuple((Unit.LOAD, u) for u in HVX_CORE), 2),
        _class("CVI_VM_LDU", "0", ((Unit.LOAD, Unit.XLANE),), 3, reserved="1"),
        _class("CVI_VM_ST", "0", tuple((Unit.STORE, u) for u in HVX_CORE), 1),
        _class("CVI_VM_STU", "0", ((Unit.STORE, Unit.XLANE),), 1, reserved="1"),
        # no HVX resource: register-renaming views of pairs
        _class("ALIAS", "", (), 0),
        # scalar
        _class("ALU32", "0123", ((),), 1),
        _class("XTYPE", "23", ((),), 2),
        _class("LD", "01", ((),), 2),
        _class("ST", "01", ((),), 1),
        _class("J", "23", ((),), 1),
        _class("CR", "3", ((),), 1),
        _class("SYSTEM", "2", ((),), 1),
        # the extra word of an instruction with a 32-bit immediate (`##`): it counts
        # toward the four words of a packet but takes no slot
        _class("EXTENDER", "", (), 0),
    ]
}

EXTENDER = "extender"
"""The name `fits` takes for a constant-extender word: a word of the packet, no slot."""

INSTRUCTIONS: dict[str, str] = {
    # multiplies
    "hvx.vmpy": "CVI_VX_DV",
    "hvx.vmpy_acc": "CVI_VX_DV",
    "hvx.vmpy_h_acc": "CVI_VX_DV",
    "hvx.vmpa": "CVI_VX_DV",
    "hvx.vmpa_acc": "CVI_VX_DV",
    "hvx.vrmpy": "CVI_VX",
    "hvx.vrmpy_acc": "CVI_VX",
    "hvx.vtmpy": "CVI_VX_DV",
    "hvx.vmpyi_w": "CVI_VX",
    "hvx.vmpyi_w_acc": "CVI_VX",
    "hvx.vmpyi_wh_acc": "CVI_VX_DV",
    "hvx.vmpye": "CVI_VX_DV",
    "hvx.vmpyo_acc": "CVI_VX_DV",
    "hvx.vadd_widen_acc": "CVI_VX_DV",
    "hvx.vsplat": "CVI_VX_LATE",
    "hvx.vmpyie": "CVI_VX_DV",
    "hvx.vmpyie_acc": "CVI_VX_DV",
    # vector ALU
    "hvx.vadd_w": "CVI_VA",
    "hvx.vsub_w": "CVI_VA",
    "hvx.vadd_h": "CVI_VA",
    "hvx.vmax_w": "CVI_VA",
    "hvx.vmin_w": "CVI_VA",
    "hvx.vmax_ub": "CVI_VA",
    "hvx.vmin_ub": "CVI_VA",
    "hvx.vsat_h": "CVI_VA",
    "hvx.vsat_ub": "CVI_VA",
    "hvx.vxor": "CVI_VA",
    "hvx.vzero": "CVI_VA",
    "hvx.vcmp_gt_w": "CVI_VA",
    "hvx.vcmp_gt_w_and": "CVI_VA",
    "hvx.vadd_w_if": "CVI_VA",
    "hvx.vmux": "CVI_VA",
    "hvx.vcombine": "CVI_VA_DV",
    "hvx.vzxt_b": "CVI_VA_DV",
    "hvx.vzxt_h": "CVI_VA_DV",
    "hvx.vcmp_eq_b": "CVI_VA",
    "hvx.vcmp_eq_b_and": "CVI_VA",
    "hvx.vadd_b_if": "CVI_VA",
    "hvx.vsetq2": "CVI_VP",
    "hvx.vcmp_eq_w": "CVI_VA",
    # shifts and permutes
    "hvx.vasr_w": "CVI_VS",
    "hvx.vasl_w": "CVI_VS",
    "hvx.vasl_w_acc": "CVI_VS",
    "hvx.vround_h": "CVI_VS",
    "hvx.valign": "CVI_VP",
    "hvx.vshuff": "CVI_VP_VS",
    "hvx.vdeal": "CVI_VP_VS",
    # vector memory
    "hvx.vmem_load": "CVI_VM_LD",
    "hvx.vmem_load_pi": "CVI_VM_LD",
    "hvx.vmemu_load": "CVI_VM_LDU",
    "hvx.vmem_store": "CVI_VM_ST",
    "hvx.vmem_store_pi": "CVI_VM_ST",
    "hvx.vmem_store_if": "CVI_VM_ST",
    "hvx.vmemu_store": "CVI_VM_STU",
    # views
    "hvx.lo": "ALIAS",
    "hvx.hi": "ALIAS",
    "hvx.lo_r": "ALIAS",
    "hvx.hi_r": "ALIAS",
    "hvx.pair": "ALIAS",
    # scalar
    "hvx.tfri": "ALU32",
    "hvx.address": "ALU32",
    "hvx.addi": "ALU32",
    "hvx.add": "ALU32",
    "hvx.min": "XTYPE",
    "hvx.memw_load": "LD",
    "hvx.memw_load_pi": "LD",
    "hvx.memd_load_pi": "LD",
    "hvx.memw_store": "ST",
    "hvx.memub_load_rr": "LD",
    "hvx.memb_store_rr": "ST",
    "hvx.call": "J",
    "hvx.syscall": "SYSTEM",
    # what clang emits in the kernels' loops (classes from LLVM's HexagonDepInstrInfo.td)
    "hvx.vassign": "CVI_VA",
    "hvx.vand_qr": "CVI_VX_LATE",
    "hvx.vand_vr": "CVI_VX_LATE",
    "hvx.valign_i": "CVI_VP",
    "hvx.vlalign_i": "CVI_VP",
    "hvx.tfr": "ALU32",
    "hvx.memd_load": "LD",
    "hvx.nop": "ALU32",
    EXTENDER: "EXTENDER",
}
"""Each instruction op's class."""

BARRIERS = frozenset({"hvx.call", "hvx.syscall"})
"""Instructions that sit alone in their packet and order all memory around them."""


def instr_class(op_name: str) -> InstrClass:
    try:
        return CLASSES[INSTRUCTIONS[op_name]]
    except KeyError:
        raise KeyError(f"the machine description has no entry for {op_name}") from None


class Dependence(Enum):
    """What a dependence between two instructions allows of their packets."""

    ORDER = "order"
    """The later one may share the earlier one's packet (a write after a read)."""
    SOFT = "soft"
    """
    May share a packet, the consumer reading the new value through forwarding
    (`.cur`/`.new`), at the cost of `FORWARD_STALL` cycles; otherwise in a later
    packet, with the producer's latency.
    """
    HARD = "hard"
    """The later one goes in a later packet."""


class Forwarding(Enum):
    """How a consumer reads, in the same packet, a register its producer writes there."""

    CURRENT = "cur"
    """`Vd.cur = vmem(...)`: every HVX instruction of the packet sees the loaded vector."""
    NEW = "new"
    """`vmem(...) = Vs.new` / `memw(...) = Rt.new`: a store of a value made in the packet."""


READ_WRITE_STAGES = 2
"""A packet's register read and write-back stages, around its execute stage."""

ALIGNED_VECTOR_LOADS = frozenset({"hvx.vmem_load", "hvx.vmem_load_pi"})
NEW_VALUE_VECTOR_STORES = {"hvx.vmem_store": "s", "hvx.vmem_store_pi": "s"}
"""Stores whose data operand (named here) may be `.new`: aligned and unpredicated."""
NEW_VALUE_SCALAR_STORES = {"hvx.memw_store": "t", "hvx.memb_store_rr": "t"}
SCALAR_PRODUCER_CLASSES = frozenset({"ALU32", "XTYPE", "LD"})


def is_hvx(op_name: str) -> bool:
    return instr_class(op_name).name.startswith("CVI_")


def forwarding(
    producer: str, consumer: str, operand: str, scalar_result: bool, first_result: bool = True
) -> Forwarding | None:
    """
    Whether `consumer` may read through `operand`, in the producer's packet, what
    `producer` writes (`scalar_result`: a single scalar register, not a pair or an
    incremented base; `first_result`: the producer's first result, not the incremented
    base of a post-increment access, which `.cur` does not forward). None: the read
    sees the old value, so they cannot share a packet.
    (Checked against llvm-mc-19: `tests/test_hvx_forwarding.py`.)
    """
    if producer in ALIGNED_VECTOR_LOADS and is_hvx(consumer) and first_result:
        return Forwarding.CURRENT
    if NEW_VALUE_VECTOR_STORES.get(consumer) == operand and is_hvx(producer):
        return Forwarding.NEW
    if (
        NEW_VALUE_SCALAR_STORES.get(consumer) == operand
        and scalar_result
        and instr_class(producer).name in SCALAR_PRODUCER_CLASSES
    ):
        return Forwarding.NEW
    return None


def scalar_new_store_alone(op_name: str) -> bool:
    """A scalar new-value store leaves no slot for another store in its packet."""
    return op_name in NEW_VALUE_SCALAR_STORES


def latency(op_name: str) -> int:
    """Cycles of the instruction's execute stage."""
    return instr_class(op_name).latency


def fits(op_names: tuple[str, ...]) -> bool:
    """Whether these instructions can form one packet: slots and HVX resources."""
    if len(op_names) > 4:
        return False
    if any(name in BARRIERS for name in op_names) and len(op_names) > 1:
        return False
    return _fits(tuple(sorted(op_names)))


@cache
def _fits(op_names: tuple[str, ...]) -> bool:
    classes = [c for c in map(instr_class, op_names) if c.name not in ("ALIAS", "EXTENDER")]
    slot_needs = [c.slots for c in classes] + [frozenset({r}) for c in classes for r in c.reserved]
    if not _slots_fit(slot_needs):
        return False
    return _resources_fit([c.resources for c in classes], frozenset())


def _slots_fit(slot_sets: list[frozenset[int]]) -> bool:
    return _slot_order(tuple(slot_sets)) is not None


@cache
def _slot_order(slot_sets: tuple[frozenset[int], ...]) -> tuple[int, ...] | None:
    for order in permutations(range(4), len(slot_sets)):
        if all(slot in allowed for slot, allowed in zip(order, slot_sets)):
            return order
    return None


def assign_slots(op_names: tuple[str, ...]) -> tuple[int, ...] | None:
    """
    A slot for each instruction of a packet that fits (pair views and extender words
    get none and are left out), or None where it does not fit.
    """
    if not fits(op_names):
        return None
    classes = [c for c in map(instr_class, op_names) if c.name not in ("ALIAS", "EXTENDER")]
    reserved = [frozenset({r}) for c in classes for r in c.reserved]
    order = _slot_order(tuple([c.slots for c in classes] + reserved))
    assert order is not None
    return order[: len(classes)]


def slots_valid(op_names: tuple[str, ...], slots: tuple[int, ...]) -> bool:
    """Whether these slots (one per instruction that takes one) are a legal assignment."""
    classes = [c for c in map(instr_class, op_names) if c.name not in ("ALIAS", "EXTENDER")]
    reserved = {r for c in classes for r in c.reserved}
    return (
        len(slots) == len(classes)
        and len(set(slots)) == len(slots)
        and all(slot in c.slots for slot, c in zip(slots, classes))
        and not reserved & set(slots)
    )


def _resources_fit(choices: list[tuple[frozenset[Unit], ...]], taken: frozenset[Unit]) -> bool:
    if not choices:
        return True
    first, rest = choices[0], choices[1:]
    return any(
        not (option & taken) and _resources_fit(rest, taken | option) for option in first
    )
