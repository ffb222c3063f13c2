"""
The streaming runtime (FlashMem, issue 21): run a module that `flashmem-plan` planned
and `flashmem-stream` turned into `stream` ops, with its weights read from a weight store
(`weight_store.py`) as those ops say (the host plan's `streams`).

- The weights still packed (FlashMem's W) are copied into their textures
  once, when the model is made (layer 0), and stay.
- A streamed weight gets its texture at its load layer z_w, its chunks move while the
  layers of its plan run, and the texture is free again once its last reader is done;
  the next run streams it again.
- Chunks go from the store's memory map into a ring of R staging buffers (host-visible,
  CL_MEM_ALLOC_HOST_PTR), then into the texture by image writes of regions, all on a copy
  queue of their own; kernels run on the compute queue, and a kernel that reads a
  streamed weight waits on the event of the weight's last chunk. A discrete GPU has no
  ring (`DIRECT_WRITES`): W and the first run's moves are written straight from the map,
  one write per weight (its driver stages pageable memory), and from the second run on
  from a pinned host copy of the streamed weights (`PinnedStore`: host memory, not the
  device's, and the copy engine's full rate). That is made before the second run, not at
  load: pinning costs more host time than the first run's copies save (257 ms for GPT-2's
  streamed weights on the H100), and the integrated latency is load plus the first run.
- At each layer the host enqueues the kernel first, then the layer's loads, which that
  kernel does not read (C1): where a load waits for memory, the kernel keeps running.
- Every allocation goes through `DeviceMemory`, which counts resident bytes. Releasing a
  texture costs 0.1-0.4 ms of host time on NVIDIA (`bench/flashmem_waits.py`), so the
  streamed weights' textures are made once, before the second run, and kept where the
  budget allows
  (`weight_pool`; `kept_objects` where not all fit): a weight's first chunk then waits on
  the device for the last reader of the weight that held its texture before. The others
  are made per run: a spare texture of the weight's shape, else one freed by waiting for
  the weights last read before this layer, else a new one once the host has released
  spares needed last or waited for the oldest weight still in use. Either way the peak
  reported is what the run held, and never over the budget.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyopencl as cl
from xdsl.dialects.builtin import ModuleOp

from mobile_opt.backends.opencl.executor import CompiledModel, OpenCLRunError, RunResult
from mobile_opt.backends.opencl.host_pack import host_value
from mobile_opt.backends.opencl.memory import ChunkCopier, DeviceMemory, PinnedStore, discrete
from mobile_opt.backends.opencl.plan import PackRecord, Plan
from mobile_opt.backends.opencl.weight_store import WeightStore
from mobile_opt.dialects.stream.attributes import (
    PLAN,
    WEIGHT_PLAN,
    Decision,
    PlanAttr,
    WeightPlanAttr,
    layer_chunks,
)
from mobile_opt.models.storage import Slot, kept_objects, next_need, same_shape, weight_pool


FLUSH_EVERY = 8
"""Launches between flushes of the compute queue where no wait forces one."""

LOADS_FIRST = False
"""Whether a layer's loads are enqueued before its kernel (else after it: the layer's
kernel does not read them (C1), and where a load waits for memory the kernel keeps
running)."""


class BudgetExceeded(OpenCLRunError):
    """The run would hold more than the budget (the plan does not fit this device)."""


@dataclass
class Streamed:
    """A streamed weight: its pack record, slot and plan."""

    record: PackRecord
    plan: WeightPlanAttr
    last_use: int
    """The layer of its last reader."""

    @property
    def slot(self) -> int:
        return self.record.slot


class StreamingModel(CompiledModel):
    """A planned module built for one device, its weights from `store`, within `budget`."""

    def __init__(self, module: ModuleOp, device, store: WeightStore, function: str = "main_graph",
                 plan: Plan | None = None, budget: int | None = None,
                 context: cl.Context | None = None, memory: DeviceMemory | None = None,
                 pinned: bool | None = None, keep: bool | None = True,
                 direct: bool | None = None):
        head = module.attributes.get(PLAN)
        if not isinstance(head, PlanAttr):
            raise OpenCLRunError("the module has no stream.plan: run flashmem-plan first")
        self.stream_plan = head
        self.budget = head.budget.data if budget is None else budget
        self.chunk = head.chunk.data
        self.streamed: dict[int, Streamed] = {}
        self._streams_read = False
        self._pending: deque[tuple[cl.Event, Streamed]] = deque()
        self._spare: list[tuple[Slot, cl.MemoryObject]] = []
        self._layer = 0
        self._after: dict[int, list[cl.Event]] = {}
        self.pool: dict[int, cl.MemoryObject] = {}
        self.pinned = pinned
        self.keep = keep
        """Kept memory objects for streamed weights (`_make_pool`): all where they fit, else
        where they spare allocations per run (True: on the H100, GPT-2's streamed runs took
        1.23x preload-all's with all kept, 1.41x with those chosen by churn); only where
        they spare allocations (None); or none (False)."""
        self.loads_first = LOADS_FIRST
        self.runs = 0
        self.settle_seconds = 0.0
        """Host time of `_settle`, before the second run (not in its time)."""
        self.wait_seconds = 0.0
        """Host time spent waiting for the device to free memory (`_make_room`), all runs."""
        super().__init__(module, device, function, plan, store, context, memory, direct)

    # storage --------------------------------------------------------------------------
    def _streamed_plans(self) -> None:
        """The streamed weights, with their schedules as their `stream` ops give them (once:
        `_allocated_now` asks for each slot)."""
        if self._streams_read:
            return
        self._streams_read = True
        by_slot = {r.slot: r for r in self.plan.weights}
        last_use: dict[int, int] = {}
        for layer, launch in enumerate(self.plan.launches, 1):
            for a in launch.args:
                last_use[a["slot"]] = layer
        # in the order they are read: a layer's writes then go the soonest needed first
        for stream in sorted(self.plan.streams, key=lambda s: (s.use, s.load)):
            plan = WeightPlanAttr.streamed(dict(map(tuple, stream.moves)), stream.use,
                                           stream.load)
            self.streamed[stream.slot] = Streamed(by_slot[stream.slot], plan,
                                                  last_use[stream.slot])
        for storage in self.plan.storage:  # a plan that no flashmem-stream realised
            attr = storage.ssa.owner.attributes.get(WEIGHT_PLAN) if storage.permanent else None
            if isinstance(attr, WeightPlanAttr) and attr.decision.data is Decision.STREAM:
                raise OpenCLRunError(f"weight {storage.value} is planned to stream, but no "
                                     "stream ops move it: run flashmem-stream after flashmem-plan")

    def _allocated_now(self, slot: Slot) -> bool:
        self._streamed_plans()
        return slot.index not in self.streamed

    def _new_slot(self, slot: Slot) -> cl.MemoryObject:
        self._make_room(slot.nbytes)
        return super()._new_slot(slot)

    def _upload_weights(self) -> None:
        assert self.store is not None
        moves = layer_chunks(s.plan for s in self.streamed.values())
        ring = max(1, max(moves.values(), default=0)) if self.plan.weights else 0
        if self.pinned is None:
            self.pinned = discrete(self.device)
        if not self.direct:  # W and the first run go through the ring
            self._make_room(ring * self.chunk)
        self.copier = ChunkCopier(self.context, self.memory, self.chunk, ring,
                                  direct=self.direct)
        # what happens at each layer: weights placed and chunks moved (`_schedule`), first
        # and last readers
        self._schedule(whole=self.direct, at_use=self.direct)
        self.ending: dict[int, list[Streamed]] = {}
        self.first_reads: dict[int, list[int]] = {}
        for s in self.streamed.values():
            self.ending.setdefault(s.last_use, []).append(s)
            self.first_reads.setdefault(s.plan.use.data, []).append(s.slot)
        self.need = next_need([(self.plan.slots[s.slot], s.plan.load.data, s.last_use)
                               for s in self.streamed.values()])
        self.reads_streamed = {layer for layer, launch in enumerate(self.plan.launches, 1)
                               if any(a["slot"] in self.streamed for a in launch.args)}
        super()._upload_weights()  # W, whole, from the store
        self.pool, self.home, self.freed = {}, {}, {}  # made after the first run (`_settle`)
        self.memory.mark("preload")

    def _make_pool(self) -> None:
        """
        Memory objects for streamed weights, made once and kept where they fit the budget
        beside what is held (`weight_pool`, `kept_objects`): a weight in one needs no
        allocation or release per run, and its first chunk waits on the device for the last
        reader of the weight before it there. The other weights get theirs per run.
        """
        self.pool, self.home = {}, {}
        self.freed: dict[int, cl.Event] = {}
        """The event of the last reader of each kept object's latest weight."""
        streamed = list(self.streamed.values())
        if self.keep is False or not streamed:
            return
        lives = [(self.plan.slots[s.slot], s.plan.load.data, s.last_use) for s in streamed]
        pool, homes = weight_pool(lives)
        room = self.budget - self.memory.resident
        kept = (set(range(len(pool))) if self.keep and sum(p.nbytes for p in pool) <= room
                else kept_objects(lives, pool, homes, room))
        self.pool = {j: super(StreamingModel, self)._new_slot(pool[j]) for j in sorted(kept)}
        self.home = {s.slot: h for s, h in zip(streamed, homes) if h in kept}

    def _preload_copier(self) -> ChunkCopier:
        return self.copier

    def _preloaded(self, copier: ChunkCopier) -> None:
        pass  # the ring stays for the first run

    def _settle(self) -> None:
        """
        What serves the runs after the first, made before the second (the first run makes
        every memory object anyway, and the integrated latency is load plus that run): on a
        discrete GPU the pinned store, the chunks' source from now on, and the ring freed;
        then the kept objects (`_make_pool`: 0.21 s for ResNet-50's plan on PoCL), once the
        first run's spares are released.
        """
        started = time.perf_counter()
        if self.pinned:
            self.copier.pinned = PinnedStore(self.context, self.memory, self.store,
                                             [s.record.value for s in self.streamed.values()])
            self.copier.drop_ring()
            self._schedule(whole=True)
        self._release_spare(None)
        self._make_pool()
        self.settle_seconds = time.perf_counter() - started

    def _schedule(self, whole: bool, at_use: bool = False) -> None:
        """
        The layer at which each streamed weight gets its memory object (`loading`) and
        those at which its chunks are written (`by_layer`), and whether a layer's writes go
        before its kernel. Through the ring: at the plan's load layer and moves.

        `whole`, from host memory that the driver reads (the pinned store, or the map where
        writes are direct): a weight's chunks go in one write. Its memory object is its own
        from its load layer either way, the plan's pacing of chunks (C3) is for copies that
        share the device with kernels, and each write costs the host about 25 us (ViT-B/16's
        streamed runs were bound by the host's enqueues). From the pinned store the write is
        at the weight's first planned move, and runs on the copy engine beside the kernels.

        `at_use`, from the map (a first run): the write holds the host while the driver
        stages it, so the weight is placed and written just before its first reader, the
        kernels before that enqueued first and running meanwhile (GPT-2's first run on the
        H100 took 87 ms with the writes at the plan's layers, of which 58 ms the host spent
        in them).
        """
        self.by_layer: dict[int, list[tuple[Streamed, int]]] = {}
        self.loading: dict[int, list[Streamed]] = {}
        for s in self.streamed.values():
            load, moves = s.plan.load.data, s.plan.moves
            if at_use:
                load = s.plan.use.data
                moves = {load: s.plan.chunks.data}
            elif whole:
                moves = {min(moves): s.plan.chunks.data}
            for layer, count in moves.items():
                self.by_layer.setdefault(layer, []).append((s, count))
            self.loading.setdefault(load, []).append(s)
        self.loads_first = at_use or LOADS_FIRST

    def _drop_pool(self) -> None:
        for obj in self.pool.values():
            self.memory.free(obj)
        for index in self.home:
            self.slots[index] = None  # a kept object, freed once above
        self.pool, self.home = {}, {}

    def unload(self) -> None:
        self.copier.queue.finish()
        self.queue.finish()
        while self._pending:
            self._free(self._pending.popleft()[1])
        self._release_spare(None)
        self._drop_pool()
        self.copier.close()
        if self.copier.pinned is not None:
            self.copier.pinned.close()
        self.runs = 0  # a load's first run is cold again (mobile-run's FIFO loads per run)
        super().unload()

    def _make_room(self, nbytes: int) -> None:
        """
        Free finished streamed weights; while `nbytes` would not fit, release spare images,
        then wait for the oldest weight still in use.
        """
        while self._pending and (self._pending[0][0].command_execution_status
                                 == cl.command_execution_status.COMPLETE):
            self._free(self._pending.popleft()[1])
        while self.memory.resident + nbytes > self.budget:
            if self._release_spare(self.memory.resident + nbytes - self.budget):
                continue
            if not self._pending:
                raise BudgetExceeded(
                    f"allocating {nbytes} bytes would hold {self.memory.resident + nbytes}, "
                    f"over the budget of {self.budget}")
            event, s = self._pending.popleft()
            self.queue.flush()
            started = time.perf_counter()
            if self.timeline is not None:
                with self.timeline.span("wait for memory", "wait", bytes=nbytes,
                                        weight=s.record.value):
                    event.wait()
            else:
                event.wait()
            self.wait_seconds += time.perf_counter() - started
            self._free(s)

    def _free(self, s: Streamed) -> None:
        """A finished weight's memory object becomes spare: still held, and counted, until a
        later weight of its shape takes it or the budget needs it (releasing an image costs
        more than the copies of a chunk on a GPU)."""
        self._spare.append((self.plan.slots[s.slot], self.slots[s.slot]))
        self.slots[s.slot] = None

    def _release_spare(self, nbytes: int | None) -> bool:
        """Release spare objects until `nbytes` are freed (None: all), those needed last
        first (Belady's rule, across runs); whether any was."""
        released = 0
        self._spare.sort(key=lambda spare: self.need(spare[0], self._layer))
        while self._spare and (nbytes is None or released < nbytes):
            shape, obj = self._spare.pop()
            self.memory.free(obj)
            released += shape.nbytes
        return released > 0

    def _take(self, index: int) -> tuple[cl.MemoryObject, list[cl.Event]]:
        """
        The memory object of a streamed weight's slot, as `models.storage.churn` counts,
        and the events its first chunk waits for: a spare one of its shape; else that of a
        weight of its shape last read before this layer, once that weight's last reader is
        done (on the device: the host does not wait); else a new one. (Not a larger one:
        the plan counts each weight's own bytes, and a weight kept in a larger object could
        leave a later one no room.)
        """
        slot = self.plan.slots[index]
        obj = self._spare_like(slot)
        if obj is not None:
            return obj, []
        for i, (event, s) in enumerate(self._pending):
            if s.last_use < self._layer and same_shape(self.plan.slots[s.slot], slot):
                del self._pending[i]
                obj, self.slots[s.slot] = self.slots[s.slot], None
                return obj, [event]
        self._make_room(slot.nbytes)
        return super()._new_slot(slot), []

    def _spare_like(self, slot: Slot) -> cl.MemoryObject | None:
        for i, (shape, obj) in enumerate(self._spare):
            if same_shape(shape, slot):
                del self._spare[i]
                return obj
        return None

    def _place(self, s: Streamed) -> list[cl.Event]:
        """Give a streamed weight its memory object at its load layer; the events its
        first chunk waits for (the readers of what a kept object held)."""
        home = self.home.get(s.slot)
        if home is not None:
            self.slots[s.slot] = self.pool[home]
            return [self.freed[home]] if home in self.freed else []
        self.slots[s.slot], after = self._take(s.slot)
        return after

    # running --------------------------------------------------------------------------
    def _loads(self, layer: int, ready: dict[int, cl.Event], done: dict[int, int]) -> None:
        """Layer `layer`'s loads: the weights loaded there get their memory objects, and
        the chunks moved there are enqueued (`ready`: a weight's last chunk's event;
        `done`: its chunks enqueued)."""
        for s in self.loading.get(layer, []):
            self._after[s.slot] = self._place(s)  # for its first move, here or later
        for s, count in self.by_layer.get(layer, []):
            first = done.get(s.slot, 0)
            ready[s.slot] = self.copier.move(self.store, s.record, self.slots[s.slot], first,
                                             count, self._after.pop(s.slot, None))
            done[s.slot] = first + count

    def run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
            trace: bool = False) -> RunResult:
        values = self._inputs(inputs)
        self._trace(trace)
        if self.runs == 1 and self.streamed:
            if self.timeline is not None:
                with self.timeline.span("settle", "settle"):
                    self._settle()
            else:
                self._settle()
        self.runs += 1
        self.memory.marks.clear()
        start = time.perf_counter()
        keep: list = []
        events, downloads = [], []
        ready: dict[int, cl.Event] = {}  # a streamed weight's last chunk copy
        done: dict[int, int] = {}
        launches = iter(self._launches)
        self._layer = 0
        for kind, record in self._steps:
            if kind == "input":
                host_value(record.source_value, values)
                self._put_input(record, values[record.source_value], keep)
            elif kind == "launch":
                self._layer += 1
                layer = self._layer
                launch, kernel, global_size, local_size = next(launches)
                if self.loads_first:
                    self._loads(layer, ready, done)
                # the first reader of a streamed weight waits for its chunks; the queue is
                # in order, so later readers need not
                wait = [ready[slot] for slot in self.first_reads.get(layer, ())]
                if layer in self.reads_streamed:
                    kernel.set_args(*[self.slots[a["slot"]] for a in launch.args])
                before = time.perf_counter_ns() if self.timeline is not None else 0
                event = self._enqueue(launch, kernel, global_size, local_size, wait)
                if self.timeline is not None:
                    self._launched(launch, event, before, global_size, local_size, layer,
                                   waits_for=[self.streamed[i].record.value for i in
                                              self.first_reads.get(layer, ())])
                if wait or layer % FLUSH_EVERY == 0:
                    self.queue.flush()
                events.append((launch, event))
                for s in self.ending.get(layer, ()):
                    if s.slot in self.home:
                        self.freed[self.home[s.slot]] = event
                    else:
                        self._pending.append((event, s))
                if not self.loads_first:
                    self._loads(layer, ready, done)
                self.memory.mark(launch.kernel)
            elif record.slot is not None:
                downloads.append((record, self._download(record)))
        self._finish(self.queue, self.copier.queue)
        result = self._result(values, downloads, events, start)
        while self._pending:
            self._free(self._pending.popleft()[1])
        return self._traced(result)
