"""
The device storage of a lowered host function (after `onnx-to-texture`): each
`texture.pack`/`texture.alloc` result's pixel grid and lifetime, and the slots (memory
objects) that values whose lifetimes do not overlap share. The host plan
(`backends/opencl/plan.py`) allocates these slots; FlashMem's planner
(`transforms/flashmem_plan.py`) counts the same bytes, so that a plan's budget holds at
run time.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type
from xdsl.ir import Operation, SSAValue

from mobile_opt.dialects import ocl, texture
from mobile_opt.dialects.onnx.base import is_constant_expression
from mobile_opt.dialects.stream.ops import streamed_from

IR_LINK = {"ir": True}
"""Field metadata: the field links a record to the IR and never goes into the JSON."""


def pixel_bytes(element_type: str) -> int:
    """The bytes of one RGBA pixel of `element_type` ("f32" or "f16")."""
    return 8 if element_type == "f16" else 16


@dataclass
class Storage:
    """One `texture.pack`/`texture.alloc` result: its pixel grid and where it lives."""

    value: str
    kind: str  # "image" or "buffer"
    width: int
    height: int
    element_type: str  # "f32" or "f16"
    layout: str
    shape: list[int]
    defined: int  # step of the pack or alloc
    last_use: int  # step of the last launch or unpack that names it
    permanent: bool  # a weight: packed once, never freed
    slot: int = -1
    ssa: SSAValue | None = field(default=None, repr=False, compare=False, metadata=IR_LINK)

    @property
    def nbytes(self) -> int:
        return self.width * self.height * pixel_bytes(self.element_type)


@dataclass
class Slot:
    """A device memory object that storage values take in turn."""

    index: int
    kind: str
    width: int
    height: int
    element_type: str
    nbytes: int
    permanent: bool
    values: list[str] = field(default_factory=list)


def assign_slots(storage: list[Storage]) -> list[Slot]:
    """
    Give each storage value a slot by a linear scan in definition order: a slot is
    free once its transient value's last use lies before the new value's definition;
    an image takes a free image slot of the same size and format, a buffer the
    smallest free buffer slot with enough bytes; otherwise a new slot.
    """
    slots: list[Slot] = []
    free: list[Slot] = []
    active: list[Storage] = []
    for s in sorted(storage, key=lambda s: s.defined):
        for gone in [a for a in active if a.last_use < s.defined]:
            active.remove(gone)
            free.append(slots[gone.slot])
        slot = None if s.permanent else _reusable(free, s)
        if slot is None:
            slot = Slot(
                len(slots), s.kind, s.width, s.height, s.element_type, s.nbytes, s.permanent
            )
            slots.append(slot)
        else:
            free.remove(slot)
        slot.values.append(s.value)
        s.slot = slot.index
        if not s.permanent:
            active.append(s)
    return slots


def _reusable(free: list[Slot], s: Storage) -> Slot | None:
    if s.kind == "image":
        return next(
            (
                f
                for f in free
                if f.kind == "image"
                and (f.width, f.height, f.element_type) == (s.width, s.height, s.element_type)
            ),
            None,
        )
    fits = [f for f in free if f.kind == "buffer" and f.nbytes >= s.nbytes]
    return min(fits, key=lambda f: f.nbytes, default=None)


def holds(home: Slot, slot: Slot) -> bool:
    """Whether the memory object `home` can hold `slot`'s value: of its kind and format
    and at least its size (kernels read pixels by coordinates, so a larger image serves)."""
    if (home.kind, home.element_type) != (slot.kind, slot.element_type):
        return False
    if slot.kind == "buffer":
        return home.nbytes >= slot.nbytes
    return home.width >= slot.width and home.height >= slot.height


def _grown(home: Slot, slot: Slot) -> Slot:
    """`home` made large enough for `slot` as well."""
    if slot.kind == "buffer":
        nbytes = max(home.nbytes, slot.nbytes)
        return Slot(home.index, "buffer", nbytes, 1, home.element_type, nbytes, True)
    width, height = max(home.width, slot.width), max(home.height, slot.height)
    return Slot(home.index, "image", width, height, home.element_type,
                width * height * pixel_bytes(home.element_type), True)


def weight_pool(lives: list[tuple[Slot, int, int]]) -> tuple[list[Slot], list[int]]:
    """
    Memory objects for streamed weights that are made once and kept across runs, so that
    a run allocates and releases nothing. Each weight (its slot, the layer it is loaded
    at, the layer of its last reader) gets an object that `holds` it and whose previous
    weight's last reader comes before this load. Greedy in load order, twice: taking a
    free object that holds the weight, or else a new one; and also growing a free object
    where that adds less than the weight's own bytes. Returns the smaller pool's objects
    and, per weight, its object's index.
    """
    pools = [_pool(lives, grow) for grow in (False, True)]
    return min(pools, key=lambda p: sum(s.nbytes for s in p[0]))


def _pool(lives: list[tuple[Slot, int, int]], grow: bool) -> tuple[list[Slot], list[int]]:
    pool: list[Slot] = []
    free_after: list[int] = []
    homes = [0] * len(lives)
    for i in sorted(range(len(lives)), key=lambda i: lives[i][1]):
        slot, load, last = lives[i]
        best, cost = None, slot.nbytes
        for j, home in enumerate(pool):
            if free_after[j] >= load or (home.kind, home.element_type) != (
                    slot.kind, slot.element_type) or not (grow or holds(home, slot)):
                continue
            added = _grown(home, slot).nbytes - home.nbytes
            if added < cost or added == cost and (best is None
                                                  or home.nbytes < pool[best].nbytes):
                best, cost = j, added
        if best is None:
            best = len(pool)
            pool.append(Slot(best, slot.kind, slot.width, slot.height, slot.element_type,
                             slot.nbytes, True))
            free_after.append(last)
        else:
            pool[best] = _grown(pool[best], slot)
        free_after[best] = last
        homes[i] = best
    return pool, homes


def shape_of(slot: Slot) -> tuple:
    """What makes memory objects alike: kind, size and format."""
    return slot.kind, slot.width, slot.height, slot.element_type


def same_shape(a: Slot, b: Slot) -> bool:
    """Whether memory objects for `a` and `b` are alike."""
    return shape_of(a) == shape_of(b)


def next_need(lives: list[tuple[Slot, int, int]]) -> Callable[[Slot, int], int]:
    """
    For the weights `lives` (slot, load layer, last reader's layer): when a memory object
    like `slot` is next needed after `layer`, the key of Belady's rule across runs: the
    next load of a weight of its shape in this run, else its first in the next run (counted
    on past the last layer), else never (later than both).
    """
    n = max((last for _, _, last in lives), default=0)
    loads: dict[tuple, list[int]] = {}
    for slot, load, _ in sorted(lives, key=lambda life: life[1]):
        loads.setdefault(shape_of(slot), []).append(load)

    def need(slot: Slot, layer: int) -> int:
        at = loads.get(shape_of(slot), [])
        i = bisect_right(at, layer)
        return at[i] if i < len(at) else (n + at[0] if at else 2 * n + 1)

    return need


def churn(lives: list[tuple[Slot, int, int]], room: int) -> int | None:
    """
    The allocations and releases per run, once runs repeat, of memory objects made per run
    for the weights `lives` (slot, load layer, last reader's layer) within `room` bytes, as
    the streaming runtime makes them: a weight takes a spare object of its shape, else a
    new one, releasing spare objects needed last first (Belady's rule, across runs) while
    the new one would not fit. A weight's object is spare after its last reader. None where
    the weights do not fit.
    """
    order = sorted(lives, key=lambda life: life[1])
    need = next_need(lives)
    spare: list[Slot] = []
    busy: list[tuple[Slot, int]] = []
    held = count = 0
    for _ in range(2):  # the second run starts with the first's spare objects
        count = 0
        for slot, load, last in order:
            spare += [obj for obj, end in busy if end < load]
            busy = [(obj, end) for obj, end in busy if end >= load]
            shape = shape_of(slot)
            alike = next((k for k, obj in enumerate(spare) if shape_of(obj) == shape), None)
            if alike is not None:
                busy.append((spare.pop(alike), last))
                continue
            spare.sort(key=lambda obj: need(obj, load))
            while held + slot.nbytes > room:
                if not spare:
                    return None
                held -= spare.pop().nbytes
                count += 1
            held += slot.nbytes
            count += 1
            busy.append((slot, last))
        spare += [obj for obj, _ in busy]
        busy = []
    return count


def kept_objects(lives: list[tuple[Slot, int, int]], pool: list[Slot], homes: list[int],
                 room: int) -> set[int]:
    """
    Which objects of `weight_pool` to keep within `room` bytes, the weights of the others
    getting theirs per run: greedily, each round the object whose keeping lowers the
    allocations and releases per run (`churn`) of the others, within the room left, most.
    """

    def cost(kept: set[int]) -> int | None:
        left = room - sum(pool[j].nbytes for j in kept)
        return churn([life for life, home in zip(lives, homes) if home not in kept], left)

    kept: set[int] = set()
    best = cost(kept)
    while best != 0:
        trials = [(c, j) for j in range(len(pool)) if j not in kept
                  for c in [cost(kept | {j})] if c is not None and (best is None or c < best)]
        if not trials:
            break
        best, j = min(trials)
        kept.add(j)
    return kept


STEP_OPS = (texture.PackOp, texture.AllocOp, ocl.LaunchOp, texture.UnpackOp)
"""The host ops that take a step: the device work, in the order the host issues it."""


def host_steps(function: func.FuncOp) -> Iterator[tuple[int, Operation]]:
    """The function's ops, each with its step: the number of `STEP_OPS` before it."""
    step = 0
    for op in function.body.block.ops:
        yield step, op
        if isinstance(op, STEP_OPS):
            step += 1


def storage_kind(t: texture.PixelStorageType) -> str:
    return "image" if isinstance(t, texture.Image2DType) else "buffer"


def storage_element(t: texture.PixelStorageType) -> str:
    return "f16" if isinstance(t.element_type, Float16Type) else "f32"


def new_storage(op: texture.PackOp | texture.AllocOp, step: int, name: str) -> Storage:
    """The storage `op` makes at `step`; a pack of a constant expression is a weight, and
    so is the texture that `stream` ops fill (a streamed weight)."""
    t = op.result.type
    width, height = t.size
    permanent = (is_constant_expression(op.source) if isinstance(op, texture.PackOp)
                 else streamed_from(op.result) is not None)
    return Storage(name, storage_kind(t), width, height, storage_element(t),
                   op.layout.data.value, list(op.tensor_shape()), step, step, permanent,
                   ssa=op.result)


@dataclass
class HostStorage:
    """The storage of a host function, and its launches in order."""

    values: dict[SSAValue, Storage]
    launches: list[tuple[int, ocl.LaunchOp]]
    steps: int

    def arena_bytes(self) -> int:
        """The transient slots' bytes: the activations and inputs that a run holds."""
        return sum(s.nbytes for s in assign_slots(list(self.values.values()))
                   if not s.permanent)


def host_storage(function: func.FuncOp,
                 name: Callable[[texture.PackOp | texture.AllocOp], str] | None = None
                 ) -> HostStorage:
    """
    Every storage value of `function` with its lifetime (a weight's last use included),
    named by `name` (called in program order; default `%N`).
    """
    values: dict[SSAValue, Storage] = {}
    launches: list[tuple[int, ocl.LaunchOp]] = []
    step = 0
    for step, op in host_steps(function):
        if isinstance(op, texture.PackOp | texture.AllocOp):
            values[op.result] = new_storage(op, step,
                                            name(op) if name else f"%{len(values)}")
        elif isinstance(op, ocl.LaunchOp | texture.UnpackOp):
            for v in op.args if isinstance(op, ocl.LaunchOp) else [op.source]:
                if v in values:
                    values[v].last_use = max(values[v].last_use, step)
            if isinstance(op, ocl.LaunchOp):
                launches.append((step, op))
    return HostStorage(values, launches, step)
