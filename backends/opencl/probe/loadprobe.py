"""
Load capacity (FlashMem §4.2, Table 5): how many bytes a kernel tolerates moving beside
it before it slows down, per operator class, as `models/flashmem.load_ratios` reads it.

A kernel of each family this compiler emits (a single ONNX node compiled by the default
GPU pipeline: MatMul and Conv are reusable, Relu and Add elemental, Softmax and
LayerNormalization hierarchical) is timed alone and while chunks move on a second
in-order queue of its context, as the streaming runtime moves them (`ChunkMover`): each
chunk from pinned host memory into its rows of an image, the write that lays it out as
pixels (stream.load and stream.transform in one copy, as `memory.ChunkCopier` does). The
extra bytes grow by doubling, as a ratio of the kernel's own input bytes
(`flashmem.LOAD_RATIO`'s unit), until the slowdown is well past the threshold.

The time with a load is its span: from the first of the kernels and copies to start to
the last to end (profiling events, one device clock). Copies that outlast the kernel
therefore slow the layer too, as they would hold back the next layer's chunks on the
in-order queue. A user event holds both queues until everything is enqueued, so the
host's enqueueing is no part of the span. Each point is the median over `repeats` pairs
of a run alone and a run loaded right after it of the loaded run's time over the lone
one's: a slow spell of the device falls on both runs of a pair (on PoCL's CPU device,
shared with other work, a kernel's time jumps between one core's and two cores' worth).

The capacity of a kernel is the ratio at which its slowdown first reaches 1 +
`THRESHOLD` (`capacity_ratio`); a class's is the least of its kernels'.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median

import numpy as np
import pyopencl as cl

from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.opencl.executor import CompiledModel, OpenCLRunError
from mobile_opt.frontend.single_node import save_single_node
from mobile_opt.models.flashmem import OpClass, op_class

from .archprobe import Effort, Progress, _noop
from .runner import ProbeError, Runner
from .sweep import Sweep

THRESHOLD = 0.10
"""The slowdown a kernel may take from the bytes moved beside it: at most 10 % slower."""

STOP = 2.0
"""A kernel's sweep ends after two points this much slower than alone (past the threshold)."""

PIXEL_BYTES = 16
"""An RGBA float pixel of the image the chunks move into."""


@dataclass(frozen=True)
class LoadKernel:
    """A single-node model whose kernels are timed under load."""

    name: str
    op: str
    shapes: tuple[tuple[int, ...], ...]
    attrs: tuple[tuple[str, object], ...] = ()

    @property
    def op_class(self) -> OpClass:
        return op_class(self.op)

    @property
    def input_bytes(self) -> int:
        """The bytes of its inputs, graph input and constants, as fp32 ONNX tensors."""
        return sum(4 * math.prod(shape) for shape in self.shapes)

    def describe(self) -> str:
        return f"{self.op} " + " x ".join("x".join(map(str, s)) for s in self.shapes)


def load_kernels(side: int, channels: int, pixels: int, rows: int,
                 cols: int) -> list[LoadKernel]:
    """
    The kernels timed: MatMul `side`³, a 3×3 Conv of `channels` channels over `pixels`²
    pixels, and Relu, Add (of a constant), Softmax and LayerNormalization over `rows` ×
    `cols` (the last axis).
    """
    row = (rows, cols)
    return [
        LoadKernel("matmul", "MatMul", ((side, side), (side, side))),
        LoadKernel("conv", "Conv", ((1, channels, pixels, pixels), (channels, channels, 3, 3),
                                    (channels,)), (("pads", (1, 1, 1, 1)),)),
        LoadKernel("relu", "Relu", (row,)),
        LoadKernel("add", "Add", (row, row)),
        LoadKernel("softmax", "Softmax", (row,), (("axis", -1),)),
        LoadKernel("layernorm", "LayerNormalization", (row, (cols,), (cols,)),
                   (("axis", -1),)),
    ]


def capacity_ratio(points: Sequence[tuple[float, float]],
                   threshold: float = THRESHOLD) -> tuple[float, bool]:
    """
    The load capacity a slowdown curve shows: `points` are (ratio, slowdown), the ratio
    of extra bytes to the kernel's input bytes and its time with them over its time
    alone. The ratio where the curve first exceeds 1 + `threshold`, linear between the
    point before (at first (0, 1): no extra bytes, no slowdown) and the first past it,
    and True; a curve that never exceeds it gives its largest ratio (a lower bound) and
    False. A point past the limit counts only where the next one is past it too (or it
    is the last), so that one noisy point is no crossing (as `sweep.steps` reads steps).
    """
    limit = 1.0 + threshold
    points = sorted(points)
    before = (0.0, 1.0)
    for i, (ratio, slowdown) in enumerate(points):
        if slowdown > limit and all(s > limit for _, s in points[i + 1 : i + 2]):
            r0, s0 = before
            return r0 + (ratio - r0) * (limit - s0) / (slowdown - s0), True
        before = (ratio, slowdown)
    return before[0], False


def class_ratios(capacities: dict[str, tuple[OpClass, float]]) -> dict[OpClass, float]:
    """Per class, the least capacity of its kernels (`capacities`: kernel → class, ratio)."""
    ratios: dict[OpClass, float] = {}
    for cls, ratio in capacities.values():
        ratios[cls] = min(ratio, ratios.get(cls, math.inf))
    return ratios


def chunk_image_shape(chunk_bytes: int, max_width: int) -> tuple[int, int]:
    """The width of the image the chunks move into, and the rows one chunk fills: the
    widest power of two up to a chunk's pixels and the device's limit."""
    pixels = chunk_bytes // PIXEL_BYTES
    width = min(pixels, 1 << (max_width.bit_length() - 1))
    return width, pixels // width


class ChunkMover:
    """
    The streaming runtime's chunk moves (`memory.ChunkCopier`) on a second in-order queue
    of a build's context (the kernels' own queue is the first): chunk k from bytes k·S..
    of pinned host memory (ALLOC_HOST_PTR, mapped: the runtime's staging ring, or a
    discrete GPU's pinned store) into its rows of an image2d, each into memory of its own
    as a weight's chunks are; the write lays the bytes out as the texture's pixels.
    """

    def __init__(self, build: CompiledModel, chunk_bytes: int, chunks: int,
                 max_width: int):
        context = build.context
        self.chunk_bytes = chunk_bytes
        self.queue = cl.CommandQueue(
            context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.width, self.rows = chunk_image_shape(chunk_bytes, max_width)
        total = chunk_bytes * chunks
        self.staging = cl.Buffer(context, cl.mem_flags.READ_ONLY | cl.mem_flags.ALLOC_HOST_PTR,
                                 total)
        self.host, mapped = cl.enqueue_map_buffer(self.queue, self.staging, cl.map_flags.WRITE,
                                                  0, (total,), np.uint8)
        mapped.wait()
        self.host[:] = np.arange(total, dtype=np.uint64).astype(np.uint8)  # bytes, not zeros
        self.image = cl.create_image(
            context, cl.mem_flags.READ_WRITE,
            cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT),
            shape=(self.width, self.rows * chunks))
        # the gate holds the queue through a small buffer write: image writes from host
        # memory are not given a user event to wait on
        self.marker = cl.Buffer(context, cl.mem_flags.READ_WRITE, PIXEL_BYTES)

    def enqueue(self, chunks: int, gate: cl.Event) -> list[cl.Event]:
        """Enqueue the moves of chunks 0..`chunks`-1, after `gate`; their events."""
        if not chunks:
            return []
        s = self.chunk_bytes
        held = cl.enqueue_copy(self.queue, self.marker, self.host[:PIXEL_BYTES],
                               is_blocking=False, wait_for=[gate])
        return [held] + [cl.enqueue_copy(self.queue, self.image, self.host[k * s:(k + 1) * s],
                                         origin=(0, k * self.rows),
                                         region=(self.width, self.rows), is_blocking=False)
                         for k in range(chunks)]

    def close(self) -> None:
        """Unmap the staging buffer and free the memory (up to twice the most bytes)."""
        self.host.base.release(self.queue)
        self.queue.finish()
        for memory in (self.staging, self.image, self.marker):
            memory.release()


def _timed(build: CompiledModel, mover: ChunkMover, chunks: int) -> tuple[float, float]:
    """One run with `chunks` chunks moving: (the span of kernels and copies, the kernels')
    in seconds."""
    gate = cl.UserEvent(build.context)
    copies = mover.enqueue(chunks, gate)
    kernels = build.launch([gate])
    mover.queue.flush()
    build.queue.flush()
    gate.set_status(cl.command_execution_status.COMPLETE)
    cl.wait_for_events(kernels + copies)
    starts = [e.profile.start for e in kernels + copies]
    ends = [e.profile.end for e in kernels + copies]
    kernel_span = kernels[-1].profile.end - kernels[0].profile.start
    return (max(ends) - min(starts)) * 1e-9, kernel_span * 1e-9


def chunk_counts(input_bytes: int, chunk_bytes: int, ratios: Sequence[float],
                 most_chunks: int) -> list[int]:
    """The chunks to move for each ratio of the input bytes: at least one, at most
    `most_chunks`, each count once."""
    counts = []
    for ratio in ratios:
        n = max(1, round(ratio * input_bytes / chunk_bytes))
        if n <= most_chunks and n not in counts:
            counts.append(n)
    return counts


def sweep_kernel(build: CompiledModel, kernel: LoadKernel, mover: ChunkMover,
                 counts: Sequence[int], repeats: int, progress: Progress = _noop) -> dict:
    """A kernel's slowdown at each chunk count (ascending), until it is past `STOP` twice."""
    _timed(build, mover, 1)  # warm-up: the first launch and copy pay for set-up
    points, past = [], 0
    for index, n in enumerate(counts):
        progress(f"{kernel.name}: {n} chunks ({index + 1}/{len(counts)})")
        alone, loaded, kernel_loaded = [], [], []
        for _ in range(repeats):
            alone.append(_timed(build, mover, 0)[0])
            span, kernel_span = _timed(build, mover, n)
            loaded.append(span)
            kernel_loaded.append(kernel_span)
        extra = n * mover.chunk_bytes
        points.append({
            "extra_bytes": extra, "ratio": extra / kernel.input_bytes,
            "slowdown": median(t / a for t, a in zip(loaded, alone)),
            "kernel_slowdown": median(t / a for t, a in zip(kernel_loaded, alone)),
            "alone_ms": [t * 1e3 for t in alone], "loaded_ms": [t * 1e3 for t in loaded],
        })
        past = past + 1 if points[-1]["slowdown"] > STOP else 0
        if past == 2:
            break
    ratio, reached = capacity_ratio([(p["ratio"], p["slowdown"]) for p in points])
    return {"op": kernel.op, "class": str(kernel.op_class), "shape": kernel.describe(),
            "input_bytes": kernel.input_bytes,
            "alone_ms": median(t for p in points for t in p["alone_ms"]),
            "ratio": ratio, "reached": reached, "points": points}


Compile = Callable[[Path], CompiledModel]
"""Compiles a single-node ONNX file for the device (the tool passes the GPU pipeline's)."""


def probe_load_capacity(runner: Runner, effort: Effort, compile_model: Compile,
                        progress: Progress = _noop):
    """
    Every kernel of `load_kernels` compiled by `compile_model` and swept; the sweep and
    the profile's `load_capacity` section: the ratio per class, and per kernel its
    ratio and the points it was read from, with the times of every run.
    """
    gpu = "GPU" in runner.info.kind
    sizes = effort.pick((1024, 128, 128, 4096, 1024) if gpu else (256, 32, 64, 512, 256),
                        (32, 8, 16, 64, 64))
    chunk_bytes = effort.pick(256 << 10 if gpu else 64 << 10, 16 << 10)
    most_bytes = effort.pick(1 << 30 if gpu else 256 << 20, 1 << 20)
    ratios = effort.pick([2.0**k for k in range(-6, 7)], [0.5, 4.0])
    repeats = effort.pick(9 if gpu else 15, 2)
    # the image holds every chunk: its height bounds them too
    _, rows = chunk_image_shape(chunk_bytes, runner.info.max_image_width)
    most_chunks = min(most_bytes // chunk_bytes, runner.info.max_image_height // rows)
    kernels, sweep = {}, Sweep("Slowdown under concurrent chunk moves",
                               "extra bytes / the kernel's input bytes",
                               "time with the moves / time alone", log_x=True,
                               name="load_capacity")
    with tempfile.TemporaryDirectory() as folder:
        for kernel in load_kernels(*sizes):
            path = save_single_node(Path(folder) / f"{kernel.name}.onnx", kernel.op,
                                    kernel.shapes, kernel.attrs)
            try:
                build = compile_model(path)
                feeds = {"X": np.random.default_rng(0).standard_normal(
                    kernel.shapes[0]).astype(np.float32)}
                build.run(feeds)  # the inputs in place for `launch`
                counts = chunk_counts(kernel.input_bytes, chunk_bytes, ratios, most_chunks)
                mover = ChunkMover(build, chunk_bytes, max(counts), runner.info.max_image_width)
                try:
                    kernels[kernel.name] = sweep_kernel(build, kernel, mover, counts, repeats,
                                                        progress)
                finally:
                    mover.close()
            except (cl.Error, OpenCLRunError, DiagnosticException) as e:
                raise ProbeError(f"load-capacity: {kernel.describe()}: {e}") from None
            sweep.series[f"{kernel.name} ({kernel.op_class})"] = [
                (p["ratio"], p["slowdown"]) for p in kernels[kernel.name]["points"]]
    ratios_by_class = class_ratios({name: (OpClass(k["class"]), k["ratio"])
                                    for name, k in kernels.items()})
    sweep.marks += [(r, f"{c} {r:.3g}") for c, r in ratios_by_class.items() if r > 0]
    return sweep, {
        "threshold": THRESHOLD,
        "unit": "extra bytes moved while the kernel runs / the kernel's input bytes",
        "ratios": {str(c): r for c, r in ratios_by_class.items()},
        "chunk_bytes": chunk_bytes,
        "copies": "per chunk on a second in-order queue: pinned host memory -> image2d rows "
                  "(one write, as the streaming runtime moves chunks)",
        "statistic": f"median over {repeats} pairs of runs (alone, then with the moves) "
                     "of their time ratio; time = the span of the kernels and copies",
        "kernels": kernels,
    }
