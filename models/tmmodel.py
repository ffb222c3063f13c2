"""
TMModel (Guan et al., ICS '25, §4): the analytic cost of a texture kernel
configuration from a device profile's measured constants.

- **Thread level** (eq. 1): a thread's texture access latency `L_t = <β, H>`, where `H`
  describes its access trace by cross-block strides: for each assumed texture block
  shape, the share of its steps that leave a block along x and along y (plus a
  constant term). β comes from the random 2D stride pointer chase (`mobile-probe`).
- **Warp level** (eqs. 2, 3): the texture cache holds `C` lines; threads that each keep
  `s` lines in reuse (a pattern's reuse distance) thrash it once `|W|·s > C`, and every
  further cache's worth multiplies latency by `D`:
  `L_w = Σ_i L_t(H_i) · D^ceil((Σ_i |W_i|·s_i − C) / C)` over a kernel's inputs.
- **Work-group level** (eqs. 4–6): a core runs `R / footprint` threads at once
  (`footprint`: registers per thread, from the kernel IR), at most its measured
  occupancy group (on a CPU device that is a thread per core); a work group of `|G|`
  threads gives an occupancy of `R / (footprint·|G|)` groups per core (below one, a
  group runs in several rounds), and of a group that stages its inputs in local memory
  at most `floor(local / local_bytes)` (the device's local memory per core; Romou's
  local-memory criterion as a limit rather than a cut); the output needs
  `WGs = Π_j ceil(O_j / (T_j·G_j))` groups (times K's slices where a blocked product
  splits it), run in `L_g = ceil(WGs / (SPs · occupancy))` rounds.
- **Local memory** (ours, for the blocked product): β describes texture reads only; a
  work-item's loads from local memory in its inner loop cost `LOCAL_LOAD_SHARE` of a
  texture read's constant term β₀ each, added to its warp's latency.
- **FMAs** (ours, for the blocked product, whose loop is FMAs on staged operands): a
  work-item's FMAs, padding included, each cost `fma_ns` (a full core's FMA lanes shared
  by its resident threads, from the measured peak), added likewise. Without them the
  model sees a block twice as wide as the output (VGG's 64-channel convs in 128x128
  blocks) as free.
- **Kernel** (eq. 7): `L = L_w · L_g`, here times the work-group shape's measured
  relative time `F(G)` (the probe's work-group sweep; 1 where the profile has none).
  Eq. 7 alone cannot tell apart groups of equal occupancy, which devices do not run
  equally fast: a CPU pays per group dispatched, a GPU idles the lanes a sub-warp group
  leaves empty. A shape's speed also moves with the thread tile, so F(G) is read at the
  nearest tile the probe timed. Likewise times the access pattern's measured relative time `F(A)`
  (MatMul's B in each layout): β, fitted to one thread's pointer chase, barely tells
  patterns apart, while a warp's reads of each share the cache's lines unequally.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BLOCK_SHAPES: tuple[tuple[int, int], ...] = ((2, 2), (4, 4), (8, 8), (16, 16))
"""
Texture block shapes (width, height in pixels) assumed by the cross-block features.
Crossings along x depend only on a shape's width and along y only on its height, so
the shapes are square: a second shape of the same width would repeat a feature.
"""

FEATURES: tuple[str, ...] = ("constant", *(f"{axis}{w}x{h}" for w, h in BLOCK_SHAPES
                                            for axis in ("x", "y")))


def cross_block_features(trace: np.ndarray) -> np.ndarray:
    """
    `H` of an access trace ((n, 2) pixel coordinates x, y in access order): 1, then for
    each block shape the share of steps that cross a block boundary along x, along y.
    """
    trace = np.asarray(trace, dtype=np.int64)
    if len(trace) < 2:
        return np.array([1.0] + [0.0] * (len(FEATURES) - 1))
    before, after = trace[:-1], trace[1:]
    features = [1.0]
    for w, h in BLOCK_SHAPES:
        features.append(float(np.mean(before[:, 0] // w != after[:, 0] // w)))
        features.append(float(np.mean(before[:, 1] // h != after[:, 1] // h)))
    return np.array(features)


LOCAL_LOAD_SHARE = 0.125
"""
A local-memory load's cost as a share of β₀ (a texture read that crosses no block). An
assumption, not a measurement: a GPU's local memory answers in some tens of cycles (the
H100's shared memory about 30) where β's pointer chase takes β₀ (150 ns on the H100,
some 250 cycles), and on a CPU device local memory is a cached array where PoCL
emulates an image read in software (β₀ 58 ns). With the H100 profile the model keeps
the blocked kernels for every kernels-bench shape that has a plan (where they measured
1.3–10x faster, `bench/results/kernels-*nvidia-h100*.json`) for shares from 1/16 to
1/2; at 1 the 7x7 stem and the 1x1 64->256 conv go back to one-pixel kernels.
"""

GroupFactors = tuple[tuple[int, int, float], ...]
"""(Gx, Gy, time relative to the best shape)."""
PatternFactors = tuple[tuple[str, float], ...]
"""(layout, time relative to the best layout)."""


@dataclass(frozen=True)
class TextureConstants:
    """What the model reads from a device profile."""

    beta: tuple[float, ...]
    """ns per access, one weight per entry of `FEATURES`."""
    thrash_factor: float
    """D: the latency factor per cache's worth of lines beyond the cache."""
    cache_lines: int
    """C: lines the texture cache holds."""
    cores: int
    """SPs."""
    registers_per_core: int
    """R: 32-bit registers one core shares among its threads."""
    warp_size: int
    resident_threads: int | None = None
    """Threads one core runs at once (the occupancy sweep's occupancy group at the lowest
    register pressure); None: as many as its registers hold."""
    group_factors: tuple[tuple[int, int, float], ...] = ()
    """(Gx, Gy, time relative to the best shape) from the work-group sweep; 1 where the
    difference is within the sweep's noise between rounds."""
    family_group_factors: tuple[tuple[str, tuple[tuple[int, int, float], ...]], ...] = ()
    """The same, per kernel family, from timing one lowered kernel of the family in every
    work-group shape; a family missing here takes `group_factors`."""
    family_pattern_factors: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()
    """F(A): (layout, time relative to the best) per family whose kernel was timed with
    its streamed operand in each layout; 1 within the noise, and for any other."""
    tile_group_factors: tuple[tuple[str, tuple[tuple[tuple[int, int], GroupFactors], ...]],
                              ...] = ()
    """F(G) per family and thread tile (the family's kernel timed at several tiles): a
    family here takes the table of the tile nearest to the configuration's."""
    tile_pattern_factors: tuple[tuple[str, tuple[tuple[tuple[int, int], PatternFactors], ...]],
                                ...] = ()
    """F(A) per family and thread tile, likewise."""
    local_memory: int | None = None
    """Bytes of local memory one core shares among its groups: the profile's
    `compute.local_memory_bytes`, the device's `CL_DEVICE_LOCAL_MEM_SIZE` (what one group
    may take, which OpenCL reports in place of a core's: the H100 says 48 KiB of its SMs'
    up to 228, so occupancy comes out low there, PoCL 1 MiB); None: unknown, no limit."""
    fma_ns: float | None = None
    """ns a thread's FMA takes when its core is full: the core's resident threads share its
    FMA lanes (the profile's measured `peak_gflops` over its cores); None: not counted."""


@dataclass(frozen=True)
class InputAccess:
    """One input of a kernel as a warp reads it."""

    features: np.ndarray
    """H of one thread's trace."""
    reuse_lines: int
    """s: cache lines a thread keeps in reuse (0 for a coalesced column walk)."""
    accesses: int
    """Texture reads per thread."""


def thread_latency(constants: TextureConstants, features: np.ndarray) -> float:
    """Eq. 1: ns per access of one thread."""
    return max(float(np.dot(constants.beta, features)), 1e-3)


def thrashing_exponent(constants: TextureConstants, warp_threads: int,
                       inputs: Sequence[InputAccess]) -> int:
    lines = sum(warp_threads * i.reuse_lines for i in inputs)
    return max(0, math.ceil((lines - constants.cache_lines) / constants.cache_lines))


def warp_latency(constants: TextureConstants, warp_threads: int,
                 inputs: Sequence[InputAccess]) -> float:
    """Eqs. 2–3: ns one warp spends reading its inputs (per-thread accesses included)."""
    factor = constants.thrash_factor ** thrashing_exponent(constants, warp_threads, inputs)
    return sum(thread_latency(constants, i.features) * i.accesses for i in inputs) * factor


def occupancy(constants: TextureConstants, footprint: int, group_threads: int,
              local_bytes: int = 0) -> float:
    """
    Eq. 4: work groups one core runs at once (a fraction: a group needs several rounds):
    the threads its registers hold, at most the occupancy group measured (§3.2.2), and
    at most the groups whose `local_bytes` of local memory the core holds.
    """
    threads = constants.registers_per_core / max(footprint, 1)
    if constants.resident_threads is not None:
        threads = min(threads, constants.resident_threads)
    groups = threads / group_threads
    if local_bytes and constants.local_memory is not None:
        groups = min(groups, constants.local_memory // local_bytes)
    return groups


def work_groups(output: Sequence[int], tile: Sequence[int], group: Sequence[int]) -> int:
    """Eq. 5: groups covering the output, each thread computing a tile of it."""
    return math.prod(math.ceil(o / (t * g)) for o, t, g in zip(output, tile, group))


def occupancy_groups(constants: TextureConstants, groups: int, footprint: int,
                     group_threads: int, local_bytes: int = 0) -> float:
    """
    Eq. 6: rounds of concurrently running groups over all cores. A work group belongs to
    one core, so a group larger than a core's occupancy runs there in several rounds
    while the other cores wait for groups of their own; one whose local memory no core
    holds never runs (infinity).
    """
    per_core = occupancy(constants, footprint, group_threads, local_bytes)
    if per_core <= 0:
        return math.inf
    if per_core >= 1:
        return math.ceil(groups / (constants.cores * math.floor(per_core)))
    return math.ceil(groups / constants.cores) * math.ceil(1 / per_core)


def _measured_table(by_tile, by_family, family: str | None, tile: Sequence[int] | None,
                    fallback=()):
    """
    The family's table at the thread tile nearest to `tile` (in log2 of each side) where
    the family was timed at several tiles, else its one table, else `fallback`.
    """
    tiles = dict(by_tile).get(family)
    if tiles and tile is not None:
        return min(tiles, key=lambda entry: sum((math.log2(a) - math.log2(b)) ** 2
                                                for a, b in zip(entry[0], tile)))[1]
    return dict(by_family).get(family, fallback)


def group_factor(constants: TextureConstants, group: Sequence[int],
                 family: str | None = None, tile: Sequence[int] | None = None) -> float:
    """
    F(G): of the shapes measured for the kernel's family at the nearest thread tile (else
    for the family, else in the generic sweep), the one nearest to `group` (in log2 of
    each side); 1 if none was measured.
    """
    factors = _measured_table(constants.tile_group_factors, constants.family_group_factors,
                              family, tile, constants.group_factors)
    if not factors:
        return 1.0
    gx, gy = (math.log2(max(g, 1)) for g in group)
    nearest = min(factors,
                  key=lambda f: (math.log2(f[0]) - gx) ** 2 + (math.log2(f[1]) - gy) ** 2)
    return nearest[2]


def pattern_factor(constants: TextureConstants, family: str | None, pattern: str | None,
                   tile: Sequence[int] | None = None) -> float:
    """F(A): the family's measured time of the access pattern relative to its best, at the
    nearest thread tile where it was timed at several."""
    factors = _measured_table(constants.tile_pattern_factors,
                              constants.family_pattern_factors, family, tile)
    return dict(factors).get(pattern, 1.0)


def local_latency(constants: TextureConstants, loads: int) -> float:
    """ns one warp spends on `loads` local-memory loads per thread (`LOCAL_LOAD_SHARE`)."""
    return loads * LOCAL_LOAD_SHARE * constants.beta[0]


def compute_latency(constants: TextureConstants, fmas: int) -> float:
    """ns a thread spends issuing `fmas` FMAs on a full core (0 where the profile cannot say)."""
    return fmas * (constants.fma_ns or 0.0)


def kernel_cost(constants: TextureConstants, inputs: Sequence[InputAccess],
                output: Sequence[int], tile: Sequence[int], group: Sequence[int],
                warp_shape: Sequence[int], footprint: int, family: str | None = None,
                pattern: str | None = None, local_bytes: int = 0, local_loads: int = 0,
                slices: int = 1, measured_factors: bool = True, fmas: int = 0) -> float:
    """
    Eq. 7 (times F(G) and F(A)): the modelled cost (ns-like units) of one configuration;
    a group's `local_bytes` limit its occupancy, a thread's `local_loads` and `fmas` add
    to its warp's latency, and `slices` of K multiply the groups. `measured_factors=False`
    leaves F(G) and F(A) out: they were timed on the one-pixel kernels, among whose groups
    and patterns they choose, and say nothing of a blocked kernel, whose block sets both.
    """
    group_threads = math.prod(group)
    warp_threads = min(math.prod(warp_shape), constants.warp_size, group_threads)
    rounds = occupancy_groups(constants, work_groups(output, tile, group) * slices, footprint,
                              group_threads, local_bytes)
    latency = (warp_latency(constants, warp_threads, inputs)
               + local_latency(constants, local_loads) + compute_latency(constants, fmas))
    if not measured_factors:
        return latency * rounds
    return (latency * rounds
            * group_factor(constants, group, family, tile)
            * pattern_factor(constants, family, pattern, tile))
