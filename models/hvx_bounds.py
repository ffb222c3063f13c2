"""
Lower bounds on what any packing of a block's instructions can reach.

A packing, however it orders or overlaps iterations, must give every instruction a
slot and its HVX resources in some packet of at most four words. Counting only that,
and forgetting dependences, bounds from below:

- the packets of any packing: fewest packets whose slots, HVX units and words hold the
  instructions;
- the modelled cycles of any packing (`hvx_cycles`): a packet costs at least the read
  and write stages plus its longest latency, so the bound also chooses which packets
  carry the slow instructions.

Both are small integer programs over instruction counts (per class, slot, resource
choice and packet kind), solved exactly with CP-SAT. A bound applies as much to a
software-pipelined loop body (LLVM's) as to a block packed in place (ours): it is what
says how far a packer could still go on a kernel's instruction stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ortools.sat.python import cp_model

from mobile_opt.dialects.vliw import machine

WORDS = 4
SLOTS = range(4)


@dataclass(frozen=True)
class PackingBound:
    packets: int
    cycles: int


def packing_bound(op_names: Iterable[str]) -> PackingBound:
    """The bounds for a block holding instructions of these names (extender words included)."""
    counts = Counter(op_names)
    return PackingBound(
        _solve(counts, weighted=False),
        _solve(counts, weighted=True),
    )


def _solve(counts: Counter[str], weighted: bool) -> int:
    classes: Counter[machine.InstrClass] = Counter()
    extenders = barriers = 0
    for name, n in counts.items():
        cls = machine.instr_class(name)
        if name in machine.BARRIERS:  # alone in a packet
            barriers += n * ((machine.READ_WRITE_STAGES + cls.latency) if weighted else 1)
        elif cls.name == "EXTENDER":
            extenders += n
        elif cls.name != "ALIAS":
            classes[cls] += n
    if not classes:
        return barriers
    # packet kinds by their longest latency; without weights one kind is enough
    kinds = sorted({c.latency for c in classes}) if weighted else [max(c.latency for c in classes)]
    model = cp_model.CpModel()
    total = sum(classes.values()) + extenders
    packets = {k: model.new_int_var(0, total, f"packets_{k}") for k in kinds}
    slot_use = {(k, s): [] for k in kinds for s in SLOTS}
    unit_use = {(k, u): [] for k in kinds for u in machine.Unit}
    words = {k: [] for k in kinds}
    for cls, n in classes.items():
        placed = []
        for k in kinds:
            if k < cls.latency:
                continue
            for slot in cls.slots:
                for option in cls.resources:
                    y = model.new_int_var(0, n, f"{cls.name}_{k}_{slot}_{len(placed)}")
                    placed.append(y)
                    slot_use[k, slot].append(y)
                    for reserved in cls.reserved:
                        slot_use[k, reserved].append(y)
                    for unit in option:
                        unit_use[k, unit].append(y)
                    words[k].append(y)
        model.add(sum(placed) == n)
    extender_at = {k: model.new_int_var(0, extenders, f"extenders_{k}") for k in kinds}
    model.add(sum(extender_at.values()) == extenders)
    for k in kinds:
        for s in SLOTS:
            model.add(sum(slot_use[k, s]) <= packets[k])
        for u in machine.Unit:
            model.add(sum(unit_use[k, u]) <= packets[k])
        model.add(sum(words[k]) + extender_at[k] <= WORDS * packets[k])
    cost = machine.READ_WRITE_STAGES
    model.minimize(sum((cost + k if weighted else 1) * packets[k] for k in kinds))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(model)
    assert status == cp_model.OPTIMAL, solver.status_name(status)
    return barriers + round(solver.objective_value)
