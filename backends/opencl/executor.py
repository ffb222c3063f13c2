"""
Run a lowered module (after `onnx-to-texture` and `texture-to-ocl`) through
pyopencl by following its host plan (`plan.py`): build the printed program once,
make one memory object per plan slot, so storage whose lifetime has ended is
reused, and pack the weights into their slots once. Each run packs the inputs (a
discrete GPU's input images by a gather kernel, `device_pack.py`), launches the kernels
in order and unpacks the outputs.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl
from mobile_opt.backends.opencl.plan import (
    LaunchRecord,
    OutputRecord,
    PackRecord,
    Plan,
    Slot,
    build_plan,
    steps,
)
from mobile_opt.backends.opencl.device_pack import DevicePacker, gather_program, takes_device_pack
from mobile_opt.backends.opencl.memory import ChunkCopier, DeviceMemory, check_slots, discrete
from mobile_opt.backends.opencl.host_pack import (
    OpenCLRunError,
    host_value,
    pack_pixels,
    pixel_dtype,
)
from mobile_opt.backends.opencl.printer import opencl_source
from mobile_opt.backends.opencl.trace import COMPUTE, Span, Timeline, launch_args
from mobile_opt.backends.opencl.weight_store import WeightStore
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.reference.interpreter import _checked_input, find_function
from mobile_opt.dialects import texture
from mobile_opt.dialects.stream.attributes import chunks_of
from mobile_opt.dialects.onnx.graph import graph_io_names
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue


PRELOAD_RING = 4
"""The staging buffers a preloading run moves its weights through."""

DIRECT_WRITES = True
"""Whether a discrete GPU's weights are written straight from the store's map (its driver
stages pageable memory), not through a staging ring (`ChunkCopier`). On one H100, GPT-2's
495 MB took 68-82 ms at load this way against 135-148 ms through the ring, and a streamed
first run's moves 56 against 137-142 ms (`bench/flashmem.py --sources map ring`,
`bench/results/flashmem-sources-nvidia-h100-80gb-hbm3.json`)."""


@dataclass
class KernelTime:
    kernel: str
    node: str
    seconds: float


@dataclass
class RunResult:
    outputs: dict[str, np.ndarray]
    wall_seconds: float = 0.0
    """From packing the first input to having the last output on the host."""
    events: list[tuple[LaunchRecord, cl.Event]] = field(default_factory=list, repr=False)
    timeline: Timeline | None = field(default=None, repr=False)
    """What the run did, where it ran with `trace=True` (`trace.py`)."""

    @functools.cached_property
    def kernel_times(self) -> list[KernelTime]:
        """Each launch's time on the device, read from its event when first asked for: a
        run does not spend its own time on it (a few microseconds a launch)."""
        return [KernelTime(r.kernel, r.node, (e.profile.end - e.profile.start) * 1e-9)
                for r, e in self.events]


class CompiledModel:
    """A lowered module built for one OpenCL device (a `pyopencl.Device` or `DeviceInfo`)."""

    def __init__(
        self, module: ModuleOp, device, function: str = "main_graph", plan: Plan | None = None,
        store: WeightStore | None = None, context: cl.Context | None = None,
        memory: DeviceMemory | None = None, direct: bool | None = None,
        device_pack: bool | None = None,
    ):
        self.module = module
        self.store = store
        self.device: cl.Device = getattr(device, "device", device)
        self.direct = DIRECT_WRITES and discrete(self.device) if direct is None else direct
        """Weights from the store go straight from its map, not through a staging ring."""
        self.device_pack = discrete(self.device) if device_pack is None else device_pack
        """Input images are packed by a gather kernel (`device_pack.py`), not on the host."""
        self.context = context or cl.Context([self.device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        self.graph = find_function(module, function)
        self.input_names, self.output_names = graph_io_names(self.graph)
        self.plan = plan if plan is not None else build_plan(module, function)
        check_slots([s for s in self.plan.slots if self._allocated_now(s)], self.device)
        started = time.perf_counter()
        self.source = opencl_source(module)
        self.source_seconds = time.perf_counter() - started
        self.program = build_program(self.context, self.device, self.source)
        self.build_seconds = time.perf_counter() - started
        """Making the program: printing its OpenCL C (`source_seconds`) and building it.
        A deployed model has both done ahead of time; loading is the rest."""
        self.memory = memory or DeviceMemory(self.context)
        self.timeline: Timeline | None = None
        """The timeline of the run in progress, if it is traced."""
        self.load()

    def load(self) -> None:
        """Allocate the storage and move the weights in (what preloading costs)."""
        self.slots = [self._new_slot(s) if self._allocated_now(s) else None
                      for s in self.plan.slots]
        self._launches = []
        for record in self.plan.launches:
            kernel = cl.Kernel(self.program, record.kernel)
            if all(self.slots[a["slot"]] is not None for a in record.args):
                kernel.set_args(*[self.slots[a["slot"]] for a in record.args])
            local = None if record.local_size is None else tuple(record.local_size)
            self._launches.append((record, kernel, tuple(record.global_size), local))
        self._steps = list(steps(self.plan))
        self._packers = self._device_packers()
        started = time.perf_counter()
        self._upload_weights()
        self.upload_seconds = time.perf_counter() - started
        """Moving the weights in, apart from the rest of loading."""

    def unload(self) -> None:
        """Free every memory object of the model (`load` makes them again)."""
        self.queue.finish()
        for packer in self._packers.values():
            packer.close()
        self._packers = {}
        for obj in self.slots:
            if obj is not None:
                self.memory.free(obj)
        self.slots = []

    def with_local_size(self, launches: Callable[[LaunchRecord], bool],
                        local_size: Sequence[int] | None) -> CompiledModel:
        """
        This build, its storage shared, with the launches `launches` picks run in work
        groups of `local_size` (None: the driver's choice). A work group is only a launch
        parameter, so configurations that differ in it alone need one build.
        """
        variant = copy.copy(self)
        variant._launches = []
        for record, kernel, global_size, local in self._launches:
            if launches(record):
                if local_size is not None and any(g % n for g, n in zip(global_size,
                                                                        local_size)):
                    raise OpenCLRunError(f"{record.kernel}: work group {list(local_size)} "
                                         f"does not tile the range {list(global_size)}")
                local = None if local_size is None else tuple(local_size)
            variant._launches.append((record, kernel, global_size, local))
        return variant

    @property
    def launch_sizes(self) -> list[tuple[LaunchRecord, tuple[int, ...], tuple[int, ...] | None]]:
        """Each launch, in program order, with the global and local size it runs with
        (this variant's: `with_local_size` may have changed the latter)."""
        return [(record, global_size, local) for record, _, global_size, local in self._launches]

    # storage --------------------------------------------------------------------------
    def _allocated_now(self, slot: Slot) -> bool:
        """Whether the slot exists from the start (a streaming run makes some later)."""
        return True

    def _new_slot(self, slot: Slot) -> cl.MemoryObject:
        max_size = (self.device.image2d_max_width, self.device.image2d_max_height)
        if slot.kind == "image" and (slot.width > max_size[0] or slot.height > max_size[1]):
            raise OpenCLRunError(
                f"an image of {slot.width}x{slot.height} pixels exceeds the device limit "
                f"{max_size[0]}x{max_size[1]}; lower with max-image-width/height of the device"
            )
        return self.memory.slot(slot)

    def _device_packers(self) -> dict[int, DevicePacker]:
        """The gathers of the input images (by their records' steps), where the device packs."""
        records = [r for r in self.plan.inputs
                   if self.device_pack and takes_device_pack(r) and self.slots[r.slot] is not None]
        if not records:
            return {}
        program = gather_program(self.context, self.device)
        return {r.step: DevicePacker(self.queue, self.memory, program, r, self.slots[r.slot])
                for r in records}

    def _put_input(self, record: PackRecord, array: np.ndarray, keep: list) -> None:
        """Enqueue an input's packing and upload; host arrays in flight go to `keep`."""
        timeline = self.timeline
        before = time.perf_counter_ns() if timeline is not None else 0
        packer = self._packers.get(record.step)
        if packer is not None:
            events = packer.upload(self.queue, array)
            names = ("upload", "gather")
        else:
            pixels, event = self._upload(record, array, blocking=False)
            keep.append(pixels)
            events = (event,)
            names = ("upload",)
        if timeline is not None:
            name, after = record.name or record.value, time.perf_counter_ns()
            timeline.spans.append(Span(f"pack {name}", "pack", before, after,
                                       {"input": name, "layout": record.layout,
                                        "on_device": packer is not None}))
            for what, event in zip(names, events):  # enqueued within the packing
                timeline.enqueued(COMPUTE, f"{what} {name}", what, event, before, after,
                                  shown=False, input=name, storage=record.value)

    def _upload(self, record: PackRecord, array: np.ndarray, blocking: bool
                ) -> tuple[np.ndarray, cl.Event]:
        """Pack `array` into its slot; the pixels, which must live until the copy ends, and
        the copy's event."""
        pixels = pack_pixels(record, array)
        return pixels, self._copy(record, self.slots[record.slot], pixels, blocking)

    def _copy(self, record, dest, src, blocking: bool) -> cl.Event:
        """Copy between host pixels and a slot (either way); images take a region."""
        if record.kind == "image":
            region = (record.width, record.height)
            return cl.enqueue_copy(self.queue, dest, src, origin=(0, 0), region=region,
                                   is_blocking=blocking)
        return cl.enqueue_copy(self.queue, dest, src, is_blocking=blocking)

    def _upload_weights(self) -> None:
        """Every weight into its slot: from the weight store, or packed from the module."""
        if self.store is not None:
            self.store.check(self.plan)
            copier = self._preload_copier()
            for record in self.plan.weights:
                if self.slots[record.slot] is not None:  # else streamed
                    chunks = chunks_of(self.store.entries[record.value]["nbytes"], copier.chunk)
                    copier.move(self.store, record, self.slots[record.slot], 0, chunks)
            copier.queue.finish()
            self._preloaded(copier)
            return
        values: dict[SSAValue, object] = {}
        for record in self.plan.weights:
            host_value(record.source_value, values)
            self._upload(record, values[record.source_value], blocking=True)

    def _preload_copier(self) -> ChunkCopier:
        """The staging ring that preloading from the store goes through."""
        assert self.store is not None
        return ChunkCopier(self.context, self.memory, self.store.chunk_bytes, PRELOAD_RING,
                           direct=self.direct)

    def _preloaded(self, copier: ChunkCopier) -> None:
        copier.close()

    def _download(self, record: OutputRecord) -> np.ndarray:
        """Start copying an output's pixels to the host; they are there after `finish`."""
        pixels = np.empty((record.height, record.width, 4), pixel_dtype(record.element_type))
        before = time.perf_counter_ns() if self.timeline is not None else 0
        event = self._copy(record, pixels, self.slots[record.slot], blocking=False)
        if self.timeline is not None:
            self.timeline.enqueued(COMPUTE, f"download {record.name}", "download", event,
                                   before, output=record.name, storage=record.value)
        return pixels

    # running --------------------------------------------------------------------------
    def _inputs(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> dict:
        if not isinstance(inputs, Mapping):
            inputs = dict(zip(self.input_names, inputs, strict=True))
        values: dict[SSAValue, object] = {}
        for arg, name in zip(self.graph.body.block.args, self.input_names, strict=True):
            if name not in inputs:
                raise OpenCLRunError(f"no value for input '{name}'")
            try:
                values[arg] = _checked_input(name, np.asarray(inputs[name]), arg.type)
            except ReferenceRunError as e:
                raise OpenCLRunError(str(e)) from None
        return values

    def _trace(self, trace: bool) -> None:
        """Start recording the run's timeline (`trace.py`), or stop (False)."""
        self.timeline = Timeline() if trace else None
        self.memory.timeline = self.timeline
        if self.timeline is not None:
            self.timeline.resident(self.memory.resident)

    def _traced(self, result: RunResult) -> RunResult:
        """`result` with the run's timeline, which ends here; recording stops."""
        timeline = self.timeline
        if timeline is not None:
            timeline.resident(self.memory.resident)
            timeline.end = time.perf_counter_ns()
            timeline.spans.append(Span("run", "run", timeline.start, timeline.end, {}))
            result.timeline = timeline
            self._trace(False)
        return result

    def _launched(self, launch: LaunchRecord, event: cl.Event, before: int, global_size,
                  local_size, layer: int, **extra) -> None:
        """Record a launch in the timeline (where the run is traced)."""
        if self.timeline is not None:
            self.timeline.enqueued(COMPUTE, launch.kernel, "kernel", event, before,
                                   **launch_args(launch, global_size, local_size, layer),
                                   **extra)

    def _finish(self, *queues: cl.CommandQueue) -> None:
        """Wait for `queues`: the end of a run."""
        span = self.timeline.span("wait for the device", "wait") if self.timeline \
            else contextlib.nullcontext()
        with span:
            for queue in queues:
                queue.finish()

    def run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
            trace: bool = False) -> RunResult:
        """Run once; `trace`: record the run's timeline (`RunResult.timeline`) for a trace."""
        values = self._inputs(inputs)
        self._trace(trace)
        self.memory.marks.clear()
        start = time.perf_counter()
        keep: list[np.ndarray] = []  # host arrays of copies still in flight
        events: list[tuple[object, cl.Event]] = []
        downloads: list[tuple[object, np.ndarray]] = []
        launches = iter(self._launches)
        for kind, record in self._steps:
            if kind == "input":
                host_value(record.source_value, values)
                self._put_input(record, values[record.source_value], keep)
            elif kind == "launch":
                launch, kernel, global_size, local_size = next(launches)
                assert launch is record
                self.memory.mark(launch.kernel)
                before = time.perf_counter_ns() if self.timeline is not None else 0
                event = self._enqueue(launch, kernel, global_size, local_size)
                events.append((record, event))
                self._launched(launch, event, before, global_size, local_size, len(events))
            elif record.slot is not None:
                downloads.append((record, self._download(record)))
        self._finish(self.queue)
        return self._traced(self._result(values, downloads, events, start))

    def _result(self, values: dict, downloads: list, events: list, start: float) -> RunResult:
        """The outputs (unpacked, or computed on the host) and the kernels' times."""
        result = RunResult({}, events=events)
        timeline = self.timeline
        unpacked = {}
        for r, pixels in downloads:
            with timeline.span(f"unpack {r.name}", "unpack", output=r.name, layout=r.layout) \
                    if timeline is not None else contextlib.nullcontext():
                unpacked[r.name] = host_tensor(
                    texture.unpack(texture.Layout(r.layout), pixels.astype(np.float32),
                                   tuple(r.shape)),
                    np.dtype(r.dtype),
                )
        for record in self.plan.outputs:
            if record.slot is None:
                with timeline.span(f"compute {record.name}", "unpack", output=record.name) \
                        if timeline is not None else contextlib.nullcontext():
                    host_value(record.source_value, values)
                result.outputs[record.name] = np.asarray(values[record.source_value])
            else:
                result.outputs[record.name] = unpacked[record.name]
        result.wall_seconds = time.perf_counter() - start
        return result

    def launch(self, wait_for: Sequence[cl.Event] | None = None,
               each: Callable[[int], None] | None = None) -> list[cl.Event]:
        """
        Enqueue the kernels alone again, over what the storage holds (the last run's
        inputs), the first after `wait_for`; their events, not waited on. What a probe
        times when the inputs' packing must not share the kernels' time. `each` is called
        with the number of kernels enqueued after each (to enqueue other work in step).
        """
        events = []
        for record, kernel, global_size, local_size in self._launches:
            events.append(self._enqueue(record, kernel, global_size, local_size,
                                        None if events else wait_for))
            if each is not None:
                each(len(events))
        return events

    def _enqueue(self, record: LaunchRecord, kernel: cl.Kernel, global_size, local_size,
                 wait_for: Sequence[cl.Event] | None = None) -> cl.Event:
        """One kernel launch on the compute queue; a failure names the kernel."""
        try:
            return cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size,
                                              wait_for=wait_for or None)
        except cl.Error as e:
            raise OpenCLRunError(f"launching {record.kernel} failed: {e}") from None


def host_tensor(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Unpacked float values as the output's dtype: integers rounded, booleans nonzero."""
    if dtype.kind == "b":
        return values != 0
    if dtype.kind in "iu":
        return np.rint(values).astype(dtype)
    return values.astype(dtype, copy=False)


def build_program(context: cl.Context, device: cl.Device, source: str) -> cl.Program:
    """Build `source`; a failure names the kernel the build log points at."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)  # "compilation done" chatter
            return cl.Program(context, source).build(devices=[device])
    except cl.Error as e:
        log = str(e)
        kernel = _failing_kernel(source, log)
        where = f" in kernel {kernel}" if kernel else ""
        first = next(
            (l for l in log.splitlines() if "error" in l), log.splitlines()[0] if log else ""
        )
        raise OpenCLRunError(f"OpenCL build failed{where}: {first.strip()}") from None


def _failing_kernel(source: str, log: str) -> str | None:
    import re

    m = re.search(r":(\d+):\d+: error", log)
    if not m:
        return None
    line = int(m.group(1))
    name = None
    for i, text in enumerate(source.splitlines(), 1):
        if i > line:
            break
        k = re.match(r"__kernel void (\w+)\(", text)
        if k:
            name = k.group(1)
    return name
