"""
TMModel's micro-benchmarks (§3): the measurements behind its cost model
(`models/tmmodel.py`).

- **Random 2D stride pointer chase** (§3.1, Fig. 2). Each run draws multinomial
  distributions over the strides {0..4} along x and y, walks an image2d with strides
  drawn from them (each pixel names the next, so the walk is a pointer chase and no
  index is computed on the device), and times the walk. Its cross-block features `H`
  (for every assumed block shape, the share of steps that cross a block along x and
  along y) and its latency per access are one sample; least squares over the runs
  gives β of eq. 1, with its fit error.
- **Intra-warp scalability** (§3.2.1, Figs. 3–4). One work group of 1..n threads,
  each streaming its own part of an image in one of the access patterns: column
  (threads side by side walk down columns: reuse distance 0), row (1), block-2, -4 and
  -8 (a thread sweeps a band of 2/4/8 rows column by column: 2/4/8). The latency per
  access relative to one thread, fitted to eq. 2, gives the thrashing factor D and the
  cache lines C.
- **Occupancy** (§3.2.2, Fig. 5). One work group of 1..16 warps reading the same row,
  with `log()` over 1..16 unrolled accumulators to raise the register footprint: the
  time steps up where the warps no longer run as one occupancy group.
- **Work-group shape** (the work-group half of §3.2.2's sweep). A fixed range of
  work-items, each summing a short run of texture pixels along x, launched in every
  work-group shape Gx × Gy of the searches: the time relative to the best shape. Eq. 7
  cannot tell apart groups of equal occupancy, while devices do (per-group dispatch on
  a CPU, lanes a sub-warp group leaves idle on a GPU); the model scales by this.
"""

from __future__ import annotations

import math

import numpy as np
import pyopencl as cl

from mobile_opt.models.tmmodel import FEATURES, cross_block_features

from .archprobe import IMAGE_CHASE, Effort, Progress, _noop
from .runner import Runner
from .sweep import Sweep, plateau_end

STRIDES = (0, 1, 2, 3, 4)


def random_walk(rng: np.random.Generator, width: int, height: int, length: int) -> np.ndarray:
    """A walk of `length` distinct pixels with multinomial x and y strides (Fig. 2, step I)."""
    px = rng.dirichlet(np.full(len(STRIDES), 0.6))
    py = rng.dirichlet(np.full(len(STRIDES), 0.6))
    dx = rng.choice(STRIDES, size=length, p=px)
    dy = rng.choice(STRIDES, size=length, p=py)
    visited = np.zeros((height, width), dtype=bool)
    trace = np.empty((length, 2), dtype=np.int64)
    x = y = 0
    for k in range(length):
        trace[k] = (x, y)
        visited[y, x] = True
        step_x, step_y = int(dx[k]), int(dy[k])
        if step_x == 0 and step_y == 0:
            step_x = 1
        nx, ny = (x + step_x) % width, (y + step_y) % height
        if nx < x:  # wrapped around a row: move to fresh rows
            ny = (ny + 1) % height
        while visited[ny, nx]:  # never revisit: the walk must stay one pointer chain
            nx = (nx + 1) % width
            if nx == 0:
                ny = (ny + 1) % height
        x, y = nx, ny
    return trace


def chase_image(trace: np.ndarray, width: int, height: int) -> np.ndarray:
    """The image whose pixel at trace[k] names trace[k+1] (the last names the first)."""
    pixels = np.zeros((height, width, 4), np.int32)
    following = np.roll(trace, -1, axis=0)
    pixels[trace[:, 1], trace[:, 0], 0] = following[:, 0]
    pixels[trace[:, 1], trace[:, 0], 1] = following[:, 1]
    return pixels


def nonnegative_least_squares(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """argmin ||a x - b|| over x >= 0 (Lawson and Hanson's active-set method)."""
    rows, cols = a.shape
    x = np.zeros(cols)
    passive = np.zeros(cols, dtype=bool)
    for _ in range(3 * cols):
        gradient = a.T @ (b - a @ x)
        if passive.all() or gradient[~passive].max(initial=0.0) <= 1e-10 * max(1.0, abs(b).max()):
            break
        passive[np.argmax(np.where(passive, -np.inf, gradient))] = True
        while True:
            z = np.zeros(cols)
            z[passive], *_ = np.linalg.lstsq(a[:, passive], b, rcond=None)
            if (z[passive] > 0).all():
                x = z
                break
            shrinking = passive & (z <= 0)
            step = np.min(x[shrinking] / (x[shrinking] - z[shrinking]))
            x = x + step * (z - x)
            passive &= x > 1e-12
    return x


def fit_beta(features: np.ndarray, latency: np.ndarray) -> tuple[np.ndarray, float, float]:
    """
    β of eq. 1 by non-negative least squares (leaving a block can only cost: a negative
    weight would only fit noise, and turns predictions for other traces negative), its
    mean relative error and its leave-one-out error.
    """
    beta = nonnegative_least_squares(features, latency)
    error = float(np.mean(np.abs(features @ beta - latency) / latency))
    held_out = []
    for i in range(len(latency)):
        keep = np.arange(len(latency)) != i
        b = nonnegative_least_squares(features[keep], latency[keep])
        held_out.append(abs(features[i] @ b - latency[i]) / latency[i])
    return beta, error, float(np.mean(held_out))


def probe_stride_chase(runner: Runner, effort: Effort, progress: Progress = _noop):
    side = effort.pick(2048, 512)
    width, height = min(side, runner.info.max_image_width), min(side, runner.info.max_image_height)
    runs = effort.pick(48, 16)
    length = effort.pick(1 << 14, 1 << 12)
    rng = np.random.default_rng(2025)
    kernel = runner.kernel(IMAGE_CHASE, "chase")
    out = runner.buffer(nbytes=4)
    rows, latency = [], []
    for run in range(runs):
        progress(f"2D stride chase run {run + 1}/{runs}")
        trace = random_walk(rng, width, height, length)
        seconds = runner.time(kernel, (1,), (1,), runner.image(chase_image(trace, width, height)),
                              out, np.int32(length))
        rows.append(cross_block_features(trace))
        latency.append(seconds * 1e9 / length)
    features, measured = np.array(rows), np.array(latency)
    beta, error, held_out = fit_beta(features, measured)
    predicted = features @ beta
    order = np.argsort(measured)
    sweep = Sweep("2D random stride chase: fit of eq. 1", "run (by latency)",
                  "ns per access",
                  {"measured": [(i, float(measured[j])) for i, j in enumerate(order)],
                   "<beta, H>": [(i, float(predicted[j])) for i, j in enumerate(order)]},
                  name="stride_chase")
    histograms = Sweep("Cross-block strides per run",
                       "feature (x/y crossings per block shape)", "share of steps",
                       {f"run {r}": [(k, float(v)) for k, v in enumerate(rows[r][1:])]
                        for r in range(min(runs, 6))}, name="stride_histograms")
    return [sweep, histograms], {
        "features": list(FEATURES),
        "beta": [float(b) for b in beta],
        "fit_error": error,
        "held_out_error": held_out,
        "runs": runs,
        "samples": [{"features": [float(v) for v in f], "latency_ns": float(m)}
                    for f, m in zip(rows, latency)],
    }


PATTERNS = {"column": 0, "row": 1, "block-2": 2, "block-4": 4, "block-8": 8}
"""Access pattern: its reuse distance s (cache lines a thread keeps in reuse)."""


def pattern_coordinates(pattern: str) -> str:
    """OpenCL expression of thread t's k-th pixel in a pattern."""
    if pattern == "column":
        return "(int2)(t, k)"
    if pattern == "row":
        return "(int2)(k, t)"
    band = PATTERNS[pattern]
    return f"(int2)(k / {band}, {band} * t + k % {band})"


def scalability_kernel(pattern: str) -> str:
    return (
        "__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | "
        "CLK_FILTER_NEAREST;\n"
        "__kernel void stream(__read_only image2d_t in, __global float4* out, int steps) {\n"
        "    int t = get_local_id(0);\n    float4 sum = 0.0f;\n"
        "    for (int k = 0; k < steps; ++k)\n"
        f"        sum += read_imagef(in, nearest, {pattern_coordinates(pattern)});\n"
        "    out[t] = sum;\n}\n"
    )


def fit_thrashing(samples: list[tuple[int, int, float]]) -> tuple[float, int, float]:
    """
    D and C of eq. 2 from (threads, reuse distance, L_w / L_t) samples: for each C (a
    power of two) the least-squares log D through the origin; the C that fits best.
    Returns (D, C, mean squared log residual).
    """
    best = (1.0, 1, float("inf"))
    logs = np.log([max(r, 1e-9) for _, _, r in samples])
    for lines in (2**e for e in range(0, 15)):
        exponents = np.array([max(0, math.ceil((n * s - lines) / lines)) for n, s, _ in samples],
                             dtype=float)
        denom = float(exponents @ exponents)
        log_d = float(exponents @ logs) / denom if denom else 0.0
        log_d = max(log_d, 0.0)  # thrashing never speeds a warp up
        residual = float(np.mean((logs - exponents * log_d) ** 2))
        if residual < best[2] - 1e-12:
            best = (math.exp(log_d), lines, residual)
    return best


def probe_scalability(runner: Runner, effort: Effort, warp: int, progress: Progress = _noop):
    limit = runner.device.max_work_group_size
    most = min(limit, max(64, 2 * warp), effort.pick(256, 64))
    threads = [n for n in (1, 2, 4, 8, 16, 32, 64, 128, 256) if n <= most]
    steps = effort.pick(1024, 256)
    band = max(PATTERNS.values())
    width = min(max(steps, most), runner.info.max_image_width)
    height = min(max(steps, most * band), runner.info.max_image_height)
    data = np.random.default_rng(1).random((height, width, 4), dtype=np.float32)
    image = runner.image(data, channel_type=cl.channel_type.FLOAT)
    out = runner.buffer(nbytes=16 * most)
    sweep = Sweep("Intra-warp scalability by access pattern",
                  "threads in the work group", "ns per access per thread", log_x=True,
                  name="scalability")
    samples = []
    for pattern, reuse in PATTERNS.items():
        kernel = runner.kernel(scalability_kernel(pattern), "stream")
        points = []
        for n in threads:
            progress(f"scalability {pattern} threads={n}")
            seconds = runner.time(kernel, (n,), (n,), image, out, np.int32(steps))
            points.append((n, seconds * 1e9 / steps))
        sweep.series[f"{pattern} (s={reuse})"] = points
        single = points[0][1]
        samples += [(n, reuse, lat / single) for n, lat in points if reuse > 0]
    thrash, lines, residual = fit_thrashing(samples)
    sweep.marks.append((lines, f"C={lines}"))
    return sweep, {"thrash_factor": thrash, "cache_lines": lines, "fit_residual": residual,
                   "single_thread_ns": {p: sweep.series[f"{p} (s={s})"][0][1]
                                        for p, s in PATTERNS.items()}}


def occupancy_kernel(unroll: int) -> str:
    declare = "".join(f"    float a{j} = 0.0f;\n" for j in range(unroll))
    body = "".join(
        f"        a{j} += log(read_imagef(in, nearest, (int2)(k + {j}, 0)).x + 2.0f);\n"
        for j in range(unroll))
    total = " + ".join(f"a{j}" for j in range(unroll))
    return (
        "__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | "
        "CLK_FILTER_NEAREST;\n"
        "__kernel void occupancy(__read_only image2d_t in, __global float* out, int steps) {\n"
        f"{declare}    for (int k = 0; k < steps; k += {unroll}) {{\n{body}    }}\n"
        f"    out[get_global_id(0)] = {total};\n}}\n"
    )


def probe_occupancy(runner: Runner, effort: Effort, warp: int, progress: Progress = _noop):
    limit = runner.device.max_work_group_size
    warp = max(warp, 1)
    warps = [w for w in range(1, 17) if w * warp <= limit]
    unrolls = effort.pick((1, 2, 4, 8, 16), (1, 4, 16))
    steps = effort.pick(2048, 256)
    data = np.random.default_rng(2).random((1, steps + 16, 4), dtype=np.float32)
    image = runner.image(data, channel_type=cl.channel_type.FLOAT)
    out = runner.buffer(nbytes=4 * warps[-1] * warp)
    sweep = Sweep("Occupancy: work-group size and unrolling", "warps in the group",
                  "ms", name="occupancy")
    groups = {}
    for unroll in unrolls:
        kernel = runner.kernel(occupancy_kernel(unroll), "occupancy")
        points = []
        for w in warps:
            if w * warp > runner.group_limit(kernel):
                break
            progress(f"occupancy unroll={unroll} warps={w}")
            points.append((w, runner.time(kernel, (w * warp,), (w * warp,), image, out,
                                          np.int32(steps)) * 1e3))
        sweep.series[f"unroll {unroll}"] = points
        knee = plateau_end(points, rise=1.3)
        groups[str(unroll)] = int(knee) if knee is not None else int(points[-1][0])
    return sweep, {"warps_per_occupancy_group": groups, "warp_size_used": warp}


GROUP_READS = 64
"""Texture reads per work-item of the work-group sweep: a kernel's worth of work, so that
per-group costs weigh as they do in real kernels."""


GROUP_ROUNDS = 5
"""Rounds over all shapes (each shape's least time counts). A round launches every
shape once, so a slow spell of a busy CPU slows all shapes of that round alike instead
of whichever shape was being timed."""


def work_group_kernel() -> str:
    return (
        "__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | "
        "CLK_FILTER_NEAREST;\n"
        "__kernel void groups(__read_only image2d_t in, __global float4* out, int reads) {\n"
        "    int x = get_global_id(0), y = get_global_id(1);\n"
        "    float4 acc = (float4)(0.0f);\n"
        "    for (int k = 0; k < reads; ++k)\n"
        "        acc += read_imagef(in, nearest, (int2)(x + k, y));\n"
        "    out[y * get_global_size(0) + x] = acc;\n}\n"
    )


def probe_work_groups(runner: Runner, effort: Effort, progress: Progress = _noop):
    from mobile_opt.models.texture_kernels import GROUP_SIDES

    gpu = "GPU" in runner.info.kind
    side = effort.pick(1024 if gpu else 256, 256 if gpu else 64)
    data = np.random.default_rng(3).random((side, side + GROUP_READS, 4), dtype=np.float32)
    image = runner.image(data, channel_type=cl.channel_type.FLOAT)
    out = runner.buffer(nbytes=16 * side * side)
    kernel = runner.kernel(work_group_kernel(), "groups")
    limit = min(runner.device.max_work_group_size, runner.group_limit(kernel))
    sweep = Sweep(f"Work-group shape ({side}x{side} work-items, {GROUP_READS} reads each)",
                  "Gx", "ms", log_x=True, name="work_groups")
    shapes = [(gx, gy) for gy in GROUP_SIDES for gx in GROUP_SIDES
              if gx * gy <= limit and gx <= side and gy <= side]
    seen: dict[tuple[int, int], list[float]] = {shape: [] for shape in shapes}
    for round_ in range(GROUP_ROUNDS):
        progress(f"work groups, round {round_ + 1}/{GROUP_ROUNDS}")
        for shape in shapes:
            seen[shape].append(runner.time(kernel, (side, side), shape, image, out,
                                           np.int32(GROUP_READS)))
    times = {shape: min(t) for shape, t in seen.items()}
    # how far one shape's rounds lie apart: differences between shapes below it are noise
    spread = float(np.median([max(t) / min(t) - 1 for t in seen.values()]))
    plot_group_times(sweep, times)
    return sweep, {"range": [side, side], "reads": GROUP_READS, "round_spread": spread,
                   "relative_time": relative_group_times(times)}


def plot_group_times(sweep: Sweep, times: dict[tuple[int, int], float]) -> None:
    """Seconds per work-group shape (Gx, Gy) as a series per Gy on `sweep` (in ms)."""
    from mobile_opt.models.texture_kernels import GROUP_SIDES

    for gy in GROUP_SIDES:
        points = [(gx, times[gx, gy] * 1e3) for gx in GROUP_SIDES if (gx, gy) in times]
        if points:
            sweep.series[f"Gy={gy}"] = points


def relative_group_times(times: dict[tuple[int, int], float]) -> dict[str, float]:
    """Each work-group shape's time relative to the best, by `GxxGy`."""
    best = min(times.values())
    return {f"{gx}x{gy}": t / best for (gx, gy), t in times.items()}
