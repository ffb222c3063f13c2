"""
ArchProbe's micro-benchmarks (Romou §3.1): what a kernel generator must know of a GPU
that documents none of it. Each probe generates its OpenCL kernels, sweeps one
parameter, reads the inflection of the latency curve and returns the sweep with what
it read.

- **Registers** (Romou Listing 1): a kernel keeps `n` floats live in a multiply chain;
  the time per multiply steps up where they no longer fit a work-item's registers
  (spilling), and, for a work group of many items, where the items no longer share
  the core's register file at once.
- **Warp size**: work-items of a warp run in lock-step, so a branch that splits a
  warp runs both sides one after the other. Items take one of two equal paths by
  `(id / s) % 2`: while the stripe `s` is narrower than a warp every warp diverges and
  pays twice. (Romou grows the work group until latency rises, which a latency-bound
  body on a GPU with many warp schedulers can hide; divergence cannot be hidden.)
- **ALUs per core**: one work group of independent multiply-add chains: its time stays
  flat while the core runs all its items at once, and rises after.
- **Caches** (Romou Listing 2): a pointer chase `i = next[i]` over an array of a given
  size with a given stride, through a buffer and through an image2d; latency steps
  up past each cache size, and at sizes past the cache it stops growing with the
  stride once the stride reaches a line.
- **Bandwidths**: many work groups streaming float4s from a buffer, an image, local
  and constant memory.
- **Peak FLOP/s**: the roofline's compute roof (`models/roofline.py`): work-items each
  running `FMA_CHAINS` independent vector `fma` chains (enough in flight to hide the
  FMA's latency), over a few ranges that fill the device; the best rate, an FMA being 2
  FLOPs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from .runner import Runner
from .sweep import Sweep, plateau_end, steps

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Effort:
    """How long the probes run: `quick` for tests and a first look."""

    quick: bool = False

    def pick(self, full, quick):
        return quick if self.quick else full


def _noop(_: str) -> None:
    pass


# ---------------------------------------------------------------- registers


def register_kernel(count: int) -> str:
    declare = "".join(
        f"    float r{i} = 1.0f + (float)(get_local_id(0) + {i}) * 1e-7f;\n" for i in range(count)
    )
    chain = "".join(f"        r{i} *= r{(i - 1) % count};\n" for i in range(count))
    # `zero` is 0 but the compiler cannot know: every register is stored, none folded
    store = "".join(f"    out[zero * {i} + get_global_id(0)] = r{i};\n" for i in range(count))
    return (
        "__kernel void registers(__global float* out, int iterations) {\n"
        f"{declare}    int i = 0;\n"
        f"    for (; i < iterations; ++i) {{\n{chain}    }}\n"
        f"    int zero = i >> 31;\n{store}}}\n"
    )


def probe_registers(runner: Runner, effort: Effort, progress: Progress = _noop):
    counts = list(range(8, effort.pick(257, 129), effort.pick(8, 16)))
    limit = runner.device.max_work_group_size
    groups = sorted({g for g in (1, 64, 256, 1024) if g <= limit})[: effort.pick(4, 2)]
    iterations = effort.pick(512, 128)
    sweep = Sweep("Register probe (Romou Listing 1)", "live floats per work-item",
                  "ns per multiply (whole group)", log_y=True, name="registers")
    out = runner.buffer(nbytes=4 * max(groups))
    launches: dict[int, int] = {}
    """Per work-group size, the most live floats a kernel could still launch with."""
    for group in groups:
        points = []
        for count in counts:
            progress(f"registers n={count} wg={group}")
            kernel = runner.kernel(register_kernel(count), "registers")
            if runner.group_limit(kernel) < group:  # the registers of the group do not fit
                break
            launches[group] = count
            rounds = max(iterations * 64 // max(group, 64), 16)  # big groups: fewer rounds
            seconds = runner.time(kernel, (group,), (group,), out, np.int32(rounds))
            points.append((count, seconds * 1e9 / (rounds * count)))
        sweep.series[f"work group {group}"] = points
    per_item = plateau_end(sweep.series["work group 1"], rise=1.5)
    register_file = None
    for group in groups[1:]:
        knee = plateau_end(sweep.series[f"work group {group}"], rise=1.5)
        if launches.get(group, counts[-1]) < counts[-1]:  # the launch limit is the sharper edge
            knee = launches[group]
        if knee is not None:
            register_file = max(register_file or 0, int(knee) * group)
    if per_item is not None:
        sweep.marks.append((per_item, f"{int(per_item)} per item"))
    return sweep, {
        "registers_per_item": int(per_item) if per_item is not None else None,
        "register_file": register_file,
        "registers_swept_to": counts[-1],
        "launch_limits": {str(g): n for g, n in launches.items()},
    }


# ---------------------------------------------------------------- warp size

WARP_KERNEL = """
__kernel void divergence(__global float* out, int stripe, int iterations) {
    float x = (float)get_global_id(0) * 1e-6f, y = 1.0f - x;
    if ((get_local_id(0) / stripe) % 2 == 0) {
        for (int i = 0; i < iterations; ++i) x = mad(x, 0.999f, 0.0001f);
    } else {
        for (int i = 0; i < iterations; ++i) y = mad(y, 0.998f, 0.0002f);
    }
    out[get_global_id(0)] = x + y;
}
"""


def probe_warp(runner: Runner, effort: Effort, progress: Progress = _noop):
    limit = min(runner.device.max_work_group_size, 256)
    stripes = [s for s in (1, 2, 4, 8, 16, 32, 64, 128) if 2 * s <= limit]
    group = limit
    groups = runner.device.max_compute_units * effort.pick(8, 2)
    iterations = effort.pick(4096, 512)
    kernel = runner.kernel(WARP_KERNEL, "divergence")
    out = runner.buffer(nbytes=4 * group * groups)
    points = []
    for stripe in stripes:
        progress(f"warp stripe={stripe}")
        seconds = runner.time(kernel, (group * groups,), (group,), out, np.int32(stripe),
                              np.int32(iterations))
        points.append((stripe, seconds * 1e3))
    # the warp is the narrowest stripe after which time stops falling
    floor = min(y for _, y in points)
    warp = next(s for s, y in points if y <= 1.2 * floor)
    diverges = points[0][1] > 1.5 * floor
    sweep = Sweep("Warp size: divergent stripes", "stripe of work-items on one path",
                  "ms", {"two paths by (id / stripe) % 2": points}, log_x=True, name="warp")
    if diverges:
        sweep.marks.append((warp, f"warp {warp}"))
    return sweep, {"warp_size": warp if diverges else 1, "divergence_penalty": points[0][1] / floor}


# ---------------------------------------------------------------- ALUs

ALU_KERNEL = """
__kernel void alus(__global float* out, int iterations) {
    float a = get_global_id(0) * 1e-6f, b = a + 0.1f, c = a + 0.2f, d = a + 0.3f;
    for (int i = 0; i < iterations; ++i) {
        a = mad(a, 0.999f, 0.001f); b = mad(b, 0.999f, 0.001f);
        c = mad(c, 0.999f, 0.001f); d = mad(d, 0.999f, 0.001f);
    }
    out[get_global_id(0)] = a + b + c + d;
}
"""


def probe_alus(runner: Runner, effort: Effort, warp: int, progress: Progress = _noop):
    limit = runner.device.max_work_group_size
    step = max(warp, 1)
    sizes = [s for s in range(step, min(limit, effort.pick(1024, 256)) + 1, step)]
    if len(sizes) > 40:  # keep the sweep short: every other size past the first 16
        sizes = sizes[:16] + sizes[16::max(1, (len(sizes) - 16) // 24)]
    iterations = effort.pick(8192, 1024)
    kernel = runner.kernel(ALU_KERNEL, "alus")
    out = runner.buffer(nbytes=4 * sizes[-1])
    points = []
    for size in sizes:
        progress(f"alus wg={size}")
        points.append((size, runner.time(kernel, (size,), (size,), out, np.int32(iterations)) * 1e3))
    knee = plateau_end(points, rise=1.25)
    sweep = Sweep("ALUs per core: one work group", "work-group size", "ms",
                  {"4 independent mad chains": points}, name="alus")
    if knee is not None:
        sweep.marks.append((knee, f"{int(knee)} at once"))
    return sweep, {"alus_per_core": int(knee) if knee is not None else sizes[-1],
                   "alus_saturated": knee is not None}


# ---------------------------------------------------------------- caches

BUFFER_CHASE = """
__kernel void chase(__global const int* next, __global int* out, int steps) {
    int i = 0;
    for (int s = 0; s < steps; ++s) i = next[i];
    out[0] = i;
}
"""

IMAGE_CHASE = """
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
__kernel void chase(__read_only image2d_t next, __global int* out, int steps) {
    int2 at = (int2)(0, 0);
    for (int s = 0; s < steps; ++s) at = read_imagei(next, nearest, at).xy;
    out[0] = at.x + at.y;
}
"""


def _chase_sizes(effort: Effort) -> list[int]:
    low, high = 10, effort.pick(25, 21)  # 1 KiB .. 32 MiB (2 MiB quick)
    sizes = []
    for e in range(low, high + 1):
        sizes += [2**e, 3 * 2 ** (e - 1)] if e < high else [2**e]
    return sizes


def _chase_steps(elements: int, stride_elements: int, effort: Effort) -> int:
    return int(min(max(4 * elements // stride_elements, 4096), effort.pick(1 << 16, 1 << 13)))


def _caches(sweep: Sweep, line_stride: int) -> tuple[list[int], int | None]:
    """Cache sizes (steps of the curve at the line-size stride) and the line size."""
    at_line = sweep.series[f"stride {line_stride}B"]
    sizes = [int(s) for s in steps(at_line, rise=1.3)]
    line = None
    if sizes:  # past the caches, latency grows with the stride until a stride is a line
        by_stride = sorted((int(name.split()[1][:-1]), points[-1][1])
                           for name, points in sweep.series.items() if points)
        top = max(lat for _, lat in by_stride)
        line = next(s for s, lat in by_stride if lat >= 0.85 * top)
    return sizes, line


def _chase_sweep(runner: Runner, effort: Effort, progress: Progress, sweep: Sweep, source: str,
                 element: int, strides: list[int], memory) -> dict:
    """
    Time the chase `source` over every size and stride (bytes; `element` bytes an entry),
    `memory(n, step)` giving the memory object of n entries each naming the one `step`
    further on; read the caches off the curves.
    """
    kernel = runner.kernel(source, "chase")
    out = runner.buffer(nbytes=4)
    for stride in strides:
        points = []
        for size in _chase_sizes(effort):
            n, step = size // element, stride // element
            if step >= n:
                continue
            progress(f"{sweep.name} {size}B stride {stride}B")
            count = _chase_steps(n, step, effort)
            seconds = runner.time(kernel, (1,), (1,), memory(n, step), out, np.int32(count))
            points.append((size, seconds * 1e9 / count))
        sweep.series[f"stride {stride}B"] = points
    sizes, line = _caches(sweep, 256)
    for size in sizes:
        sweep.marks.append((size, f"{size // 1024}K"))
    return {"sizes": sizes, "line": line}


def probe_buffer_cache(runner: Runner, effort: Effort, progress: Progress = _noop):
    """The chase through a buffer of ints: next[i] = (i + stride) % n."""
    sweep = Sweep("Buffer pointer chase (Romou Listing 2)", "array bytes", "ns per access",
                  log_x=True, name="buffer_cache")

    def memory(n: int, step: int):
        return runner.buffer(((np.arange(n, dtype=np.int64) + step) % n).astype(np.int32))

    return sweep, _chase_sweep(runner, effort, progress, sweep, BUFFER_CHASE, 4,
                               [4, 16, 32, 64, 128, 256], memory)


def probe_image_cache(runner: Runner, effort: Effort, progress: Progress = _noop):
    """The same chase through an RGBA32I image2d: each pixel (16 bytes) names the next."""
    width_limit = min(runner.info.max_image_width, 4096)
    sweep = Sweep("Image2d pointer chase (texture cache)", "image bytes", "ns per access",
                  log_x=True, name="image_cache")

    def memory(n: int, step: int):
        width = min(n, width_limit)
        height = -(-n // width)
        index = (np.arange(width * height, dtype=np.int64) + step) % n
        pixels = np.zeros((height, width, 4), np.int32)
        pixels[..., 0] = (index % width).reshape(height, width)
        pixels[..., 1] = (index // width).reshape(height, width)
        return runner.image(pixels)

    return sweep, _chase_sweep(runner, effort, progress, sweep, IMAGE_CHASE, 16,
                               [16, 32, 64, 128, 256], memory)


# ---------------------------------------------------------------- bandwidths

BANDWIDTH_KERNELS = """
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

__kernel void buffer_read(__global const float4* in, __global float4* out, int count, int mask) {
    float4 sum = 0.0f;
    int g = get_global_id(0), n = get_global_size(0);
    for (int k = 0; k < count; ++k) sum += in[(g + k * n) & mask];
    out[g] = sum;
}

__kernel void image_read(__read_only image2d_t in, __global float4* out, int count, int width_mask,
                         int height_mask) {
    float4 sum = 0.0f;
    int g = get_global_id(0), n = get_global_size(0);
    for (int k = 0; k < count; ++k) {
        int i = g + k * n;
        sum += read_imagef(in, nearest, (int2)(i & width_mask, (i / (width_mask + 1)) & height_mask));
    }
    out[g] = sum;
}

__kernel void local_read(__global const float4* in, __global float4* out, int count,
                         __local float4* tile) {
    int l = get_local_id(0), size = get_local_size(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 sum = 0.0f;
    for (int k = 0; k < count; ++k) sum += tile[(l + k) % size];
    out[get_global_id(0)] = sum;
}

__kernel void constant_read(__constant float4* in, __global float4* out, int count, int mask) {
    float4 sum = 0.0f;
    int g = get_global_id(0);
    for (int k = 0; k < count; ++k) sum += in[(g + k) & mask];
    out[g] = sum;
}
"""


def probe_bandwidths(runner: Runner, effort: Effort, progress: Progress = _noop):
    """GB/s of float4 reads: buffer and image streaming a range past the caches, local, constant."""
    device = runner.device
    group = min(256, device.max_work_group_size)
    items = group * device.max_compute_units * effort.pick(16, 4)
    count = effort.pick(64, 16)
    out = runner.buffer(nbytes=16 * items)
    stream = 1 << effort.pick(22, 18)  # float4s: 64 MiB (4 MiB quick)
    data = np.random.default_rng(0).random((stream, 4), dtype=np.float32)
    results = {}

    def rate(seconds: float) -> float:
        return items * count * 16 / seconds / 1e9

    progress("bandwidth buffer")
    kernel = runner.kernel(BANDWIDTH_KERNELS, "buffer_read")
    results["buffer"] = rate(runner.time(kernel, (items,), (group,), runner.buffer(data), out,
                                         np.int32(count), np.int32(stream - 1)))
    progress("bandwidth image")
    width = min(4096, runner.info.max_image_width)
    height = stream // width
    image = runner.image(data.reshape(height, width, 4), cl.channel_type.FLOAT)
    kernel = runner.kernel(BANDWIDTH_KERNELS, "image_read")
    results["texture"] = rate(runner.time(kernel, (items,), (group,), image, out, np.int32(count),
                                          np.int32(width - 1), np.int32(height - 1)))
    progress("bandwidth local")
    kernel = runner.kernel(BANDWIDTH_KERNELS, "local_read")
    results["local"] = rate(runner.time(kernel, (items,), (group,), runner.buffer(data[:items]),
                                        out, np.int32(count), cl.LocalMemory(16 * group)))
    progress("bandwidth constant")
    constant = min(device.max_constant_buffer_size // 16, 4096)
    kernel = runner.kernel(BANDWIDTH_KERNELS, "constant_read")
    results["constant"] = rate(runner.time(kernel, (items,), (group,),
                                           runner.buffer(data[:constant]), out, np.int32(count),
                                           np.int32(constant - 1)))
    sweep = Sweep("Read bandwidth by memory", "memory (1 buffer 2 texture 3 local 4 constant)",
                  "GB/s", {"float4 reads": [(i + 1, v) for i, v in enumerate(results.values())]},
                  name="bandwidth")
    return sweep, {k: round(v, 2) for k, v in results.items()}


# ---------------------------------------------------------------- peak FLOP/s

FMA_CHAINS = 8
"""Independent vector accumulators per work-item: enough in flight to cover the FMA's
latency (on PoCL's CPU 4 float4 chains reach half the rate of 8, and 16 no more)."""
FMA_UNROLL = 4
"""Times each chain steps per loop iteration: the loop's own instructions stay few."""
FMA_WIDTHS = (4, 8, 16)
"""Vector widths of the chains. A GPU's lanes are its work-items, so any width serves;
a CPU's compiler maps a floatN onto its SIMD registers (PoCL does not vectorize these
chains across work-items), and only 8 or 16 fill AVX2 or AVX-512: PoCL reaches twice
its float4 rate with float8. The kernels use float16s too (the wide buffer kernels)."""


def peak_flops_kernel(width: int) -> str:
    """FMA_CHAINS float`width` chains `a = fma(a, b, c)`, unrolled FMA_UNROLL times a loop
    iteration. `b` and `c` are arguments, so nothing folds, and every lane is stored, so
    none is dropped; with 0 < b < 1 each chain tends to c / (1 - b): no overflow, no
    denormals."""
    vector = f"float{width}"
    chains = range(FMA_CHAINS)
    declare = "".join(f"    {vector} a{i} = ({vector})(x + {i}.0f);\n" for i in chains)
    step = "".join(f"        a{i} = fma(a{i}, bv, cv);\n" for i in chains)
    total = " + ".join(f"a{i}" for i in chains)
    return (
        f"__kernel void peak_flops(__global {vector}* out, int iterations, float b, float c) {{\n"
        "    float x = (float)get_global_id(0) * 1e-7f;\n"
        f"    {vector} bv = ({vector})(b), cv = ({vector})(c);\n"
        f"{declare}    for (int i = 0; i < iterations; ++i) {{\n{step * FMA_UNROLL}    }}\n"
        f"    out[get_global_id(0)] = {total};\n}}\n"
    )


def flops_per_item(width: int, iterations: int) -> int:
    """The FLOPs one work-item of `peak_flops_kernel(width)` does: 2 per lane of each fma."""
    return iterations * FMA_UNROLL * FMA_CHAINS * width * 2


def probe_peak_flops(runner: Runner, effort: Effort, progress: Progress = _noop):
    """
    fp32 GFLOP/s of independent FMA chains: the best over the vector widths
    `FMA_WIDTHS` and ranges of 1, 4 and 16 work groups per compute unit. The loop count
    of each width is set from one short launch so that its largest range takes about
    `target` seconds, where a launch's overhead is noise.
    """
    device = runner.device
    target = effort.pick(0.05, 0.01)
    b, c = np.float32(0.999), np.float32(0.001)
    sweep = Sweep("Peak fp32 FLOP/s: independent fma chains", "work-items", "GFLOP/s",
                  log_x=True, name="peak_flops")
    by_width = {}

    def seconds(kernel: cl.Kernel, group: int, out: cl.Buffer, items: int,
                iterations: int) -> float:
        return runner.time(kernel, (items,), (group,), out, np.int32(iterations), b, c)

    for width in FMA_WIDTHS:
        kernel = runner.kernel(peak_flops_kernel(width), "peak_flops")
        # the chains' registers may bound the work group
        group = min(256, device.max_work_group_size, runner.group_limit(kernel))
        sizes = [group * device.max_compute_units * k for k in (1, 4, 16)]
        out = runner.buffer(nbytes=4 * width * sizes[-1])
        progress(f"peak flops float{width}: calibrating")
        iterations = 16
        first = seconds(kernel, group, out, sizes[-1], iterations)
        iterations = int(min(max(iterations * target / max(first, 1e-9), 16), 1 << 20))
        points = []
        for items in sizes:
            progress(f"peak flops float{width}: {items} work-items")
            flops = items * flops_per_item(width, iterations)
            points.append((items, flops / seconds(kernel, group, out, items, iterations) / 1e9))
        sweep.series[f"{FMA_CHAINS} float{width} chains a work-item"] = points
        by_width[f"float{width}"] = round(max(rate for _, rate in points), 2)
    return sweep, {"peak_gflops": max(by_width.values()), "gflops_by_width": by_width,
                   "chains": FMA_CHAINS}
