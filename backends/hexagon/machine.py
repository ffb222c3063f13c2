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

Latencies are in packets: the number of packets after the producer's packet at which a
consumer reads the result without stalling. A consumer in the same packet reads the
old value, so a read-after-write can never share a packet (the `.new` forms that would
allow it are not emitted); it is hard. A consumer placed closer than the latency is
legal, but stalls: that distance is soft. Write-after-read may share a packet (the
reader sees the old value); write-after-write may not.

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
    NONE = "none"
    SOFT = "soft"
    """Legal in consecutive packets, but the consumer stalls until the result is ready."""
    HARD = "hard"
    """The two cannot share a packet."""


def register_dependence(kind: str) -> Dependence:
    """`raw`, `war` or `waw` between two instructions on a register."""
    return {"raw": Dependence.HARD, "war": Dependence.NONE, "waw": Dependence.HARD}[kind]


def stall(producer: str, distance: int) -> int:
    """Cycles a consumer `distance` packets after `producer` waits for its result."""
    return max(0, instr_class(producer).latency - distance)


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
    for order in permutations(range(4), len(slot_sets)):
        if all(slot in allowed for slot, allowed in zip(order, slot_sets)):
            return True
    return False


def _resources_fit(choices: list[tuple[frozenset[Unit], ...]], taken: frozenset[Unit]) -> bool:
    if not choices:
        return True
    first, rest = choices[0], choices[1:]
    return any(
        not (option & taken) and _resources_fit(rest, taken | option) for option in first
    )
