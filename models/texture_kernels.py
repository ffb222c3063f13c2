"""
What TMModel needs to know of a GPU kernel under a configuration: its output in
pixels, the trace one work-item reads from each input image (for the cross-block
features `H`), the lines each work-item keeps in reuse (`s`), its reads, and its register
footprint; plus the configuration space itself.

Kernels (those `onnx-to-texture` emits, in their usual layouts):

- `MatMulKernel`: MatMul and Gemm, rows4; the thread tile is T rows of the output, which
  makes the walk over A block-T major.
- `ConvKernel`: Conv (any stride), depthwise conv and ConvTranspose, nc4hw4; the thread
  tile is T output pixels along w, which share each weight pixel read.
- `RowKernel`: Softmax and LayerNormalization over the last axis, rows4; the thread tile
  is T pixels of a row, whose statistics the work-item computes once (T = 1: every
  pixel's work-item reduces its row; T = the row: one work-item per row).

A product or ungrouped convolution in images may also take the blocked product
(`onnx_to_texture/blocked.py`; conv as implicit GEMM): its `plans`, found by the
lowering's own test (`prune_configs.kernel_of`), are configurations beside the tiles,
described by `_blocked_inputs` from the pixels that the lowering's reads of A and B
address.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Protocol

import numpy as np

from mobile_opt.dialects.texture import Layout
from mobile_opt.dialects.texture.layouts import pixel_coordinates
from mobile_opt.dialects.texture.tiling import GemmPlan, TileConfig
from mobile_opt.models import tmmodel
from mobile_opt.models.conv_shape import ConvShape

TILE_SIDES = (1, 2, 4, 8)
GROUP_SIDES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
FAMILIES = ("matmul", "conv", "conv-s2", "depthwise", "conv-transpose-s2", "softmax",
            "layernorm")
"""
Kernel families, each with its own work-group preferences on a device: a stride-1
convolution's neighbouring work-items share input rows, a stride-2 one's do not, and a
stride-2 transposed one's alternate between the taps of its output's parities.
"""
TRACE_STEPS = 256
"""Reduction steps a trace follows: enough for stable shares of block crossings."""


@dataclass(frozen=True)
class KernelModelInputs:
    output: tuple[int, int]
    """The output in pixels along x and rows along y (work-items cover it in tiles)."""
    inputs: tuple[tmmodel.InputAccess, ...]
    footprint: int
    """32-bit registers a work-item holds."""
    loaded_bytes: int
    """Bytes one work-item reads per step of its reduction loop (Romou's L1 criterion)."""
    local_bytes: int = 0
    """Local memory one work group takes."""
    local_loads: int = 0
    """Loads from local memory per work-item."""
    slices: int = 1
    """Work groups along z: K's slices of a split blocked product."""
    fmas: int = 0
    """FMAs per work-item, counted where they bound the kernel (the blocked product's)."""


class Kernel(Protocol):
    """A GPU kernel's shape as the model and the searches see it."""

    plans: tuple[GemmPlan, ...]
    """The blocked product's configurations it can take (none but for products and
    convolutions that the lowering would block)."""

    @property
    def family(self) -> str:
        """Which of `FAMILIES` it is: kernels of one family prefer the same work groups."""
        ...

    def describe_shape(self) -> str: ...

    def thread_tiles(self) -> Iterable[tuple[int, int]]:
        """The thread tiles (x, y) its lowering can take."""
        ...

    def layouts(self) -> tuple[Layout | None, ...]:
        """The storage layouts (access patterns) its streamed operand can take."""
        ...

    def pattern(self, config: TileConfig) -> str | None:
        """What its family's measured patterns (F(A)) call the configuration's; None: no
        table applies."""
        ...

    def global_size(self, config: TileConfig) -> tuple[int, int]: ...

    def model_inputs(self, config: TileConfig) -> KernelModelInputs: ...

    def warp_footprint(self, config: TileConfig, warp: tuple[int, int]) -> tuple[int, int]:
        """The output elements (along x, along y) a warp of that shape computes."""
        ...


def _features(trace: list[tuple[int, int]] | np.ndarray) -> np.ndarray:
    return tmmodel.cross_block_features(np.array(trace, dtype=np.int64).reshape(-1, 2))


# MatMul ---------------------------------------------------------------------------------


B_LAYOUTS: tuple[Layout | None, ...] = (None, Layout.BLOCK2, Layout.BLOCK4, Layout.BLOCK8,
                                         Layout.COLS4)
"""The access patterns of a MatMul's B that the host packs (a weight or graph input):
as it comes (rows4: a one-pixel column walk), block-b strips, and cols4."""

LINE_PIXELS = 2
"""Pixels along x of a cache line as TMModel's patterns count reuse (its Fig. 3)."""


@dataclass(frozen=True)
class MatMulKernel:
    m: int
    k: int
    n: int
    trans_b: bool = False
    """B is stored [N, K] (Gemm's transB)."""
    b_layouts: tuple[Layout | None, ...] = (None,)
    """The layouts B may take: all of `B_LAYOUTS` where the host packs B."""
    plans: tuple[GemmPlan, ...] = ()

    family = "matmul"

    def describe_shape(self) -> str:
        return f"MatMul {self.m}x{self.k}x{self.n}"

    def thread_tiles(self) -> Iterator[tuple[int, int]]:
        return ((1, rows) for rows in TILE_SIDES if rows == 1 or rows <= self.m)

    def layouts(self) -> tuple[Layout | None, ...]:
        return self.b_layouts

    def pattern(self, config: TileConfig) -> str | None:
        # the table is measured on a [K, N] B; a [N, K] one lies otherwise in a layout
        return None if self.trans_b else (config.layout or Layout.ROWS4).value

    def global_size(self, config: TileConfig) -> tuple[int, int]:
        return (math.ceil(self.n / 4), math.ceil(self.m / config.rows) if self.m > 1 else 1)

    def model_inputs(self, config: TileConfig) -> KernelModelInputs:
        if config.plan is not None:
            return _matmul_blocked(self, config.plan)
        return self._one_pixel_inputs(config)

    def _one_pixel_inputs(self, config: TileConfig) -> KernelModelInputs:
        """
        One work-item computes `rows` output rows of one 4-wide column block n4: each step
        k4 of its loop reads A's pixels (k4, m..m+rows-1) (rows4 of A: a block-`rows` walk
        along k) and the four pixels of B that hold B[4·k4..4·k4+3, n4·4..n4·4+3], where
        B's layout puts them (rows4: down a column, which the warp's neighbours along n4
        read beside it). B packed along K keeps a float4 of partial sums per output lane.
        """
        rows = min(config.rows, self.m)
        k4 = math.ceil(self.k / 4)
        layout = config.layout or Layout.ROWS4
        a_features = _block_walk_features(min(k4, TRACE_STEPS), rows)
        b_features, b_lines, dot = _b_walk(min(k4, TRACE_STEPS), layout, self.trans_b)
        a = tmmodel.InputAccess(a_features, rows, rows * k4)
        b = tmmodel.InputAccess(b_features, b_lines, 4 * k4)
        accumulators = 16 * rows if dot else 4 * rows
        footprint = accumulators + 4 * rows + 16 + 8  # A block, B pixels, indices
        output = (math.ceil(self.n / 4), self.m)
        return KernelModelInputs(output, (a, b), footprint, 16 * (rows + 4))

    def warp_footprint(self, config: TileConfig, warp: tuple[int, int]) -> tuple[int, int]:
        if config.plan is not None:
            return 4 * config.tile[0] * warp[0], config.tile[1] * warp[1]
        return 4 * warp[0], warp[1]


@cache
def _matmul_blocked(kernel: MatMulKernel, plan: GemmPlan) -> KernelModelInputs:
    """A (rows4): pixel (kq, m); B packed along N: pixel (n4, k) in rows4, (k, n4) in
    cols4 (Gemm's transB)."""
    if kernel.trans_b:
        return _blocked_inputs(plan, kernel.m, kernel.n, kernel.k, lambda m, kq: (kq, m),
                               lambda k, n4: (k, n4))
    return _blocked_inputs(plan, kernel.m, kernel.n, kernel.k, lambda m, kq: (kq, m),
                           lambda k, n4: (n4, k))


@cache
def _block_walk_features(steps: int, rows: int) -> np.ndarray:
    """H of A's trace: `rows` pixels down a column per step, the steps along x."""
    return _features([(k4, r) for k4 in range(steps) for r in range(rows)])


@cache
def _b_walk(steps: int, layout: Layout, trans_b: bool) -> tuple[np.ndarray, int, bool]:
    """
    H of B's trace over `steps` steps of one work-item in `layout`; the cache lines it
    keeps in reuse per step (0 for a one-pixel column walk, whose lines the warp's
    neighbours fill); whether B is packed along K (the dot form).
    """
    k_rows = 4 * steps
    shape = (4, k_rows) if trans_b else (k_rows, 4)
    where = pixel_coordinates(layout, shape)
    if trans_b:
        where = where.transpose(1, 0, 2)  # indexed [k, n] like a plain B
    dot = layout.packed_axis(2) == (1 if trans_b else 0)
    trace: list[tuple[int, int]] = []
    lines = 0
    for k4 in range(steps):
        block = where[4 * k4:4 * k4 + 4]
        order = block.transpose(1, 0, 2) if dot else block  # lanes outer in the dot form
        step = list(dict.fromkeys(map(tuple, order.reshape(-1, 2).tolist())))
        trace += step
        if len({x for x, _ in step}) > 1:
            lines = max(lines, len({(x // LINE_PIXELS, y) for x, y in step}))
    return _features(trace), lines, dot


# convolutions -------------------------------------------------------------------------------


TRACE_CHANNEL_BLOCKS = 8
"""Input-channel blocks a convolution's trace follows (later ones repeat the pattern)."""


@dataclass(frozen=True)
class ConvKernel:
    geometry: ConvShape
    plans: tuple[GemmPlan, ...] = ()

    @property
    def family(self) -> str:
        g = self.geometry
        if g.kind == "depthwise":
            return "depthwise"
        strided = max(g.strides) > 1
        if g.transposed:
            return "conv-transpose-s2" if strided else "conv"
        return "conv-s2" if strided else "conv"

    def describe_shape(self) -> str:
        g = self.geometry
        name = "ConvTranspose" if g.transposed else "Conv"
        if g.kind == "depthwise":
            name = f"depthwise {name}"
        n, c, h, w = g.input
        return (f"{name} {c}x{h}x{w}->{g.output[1]} k{g.kernel[0]}x{g.kernel[1]} "
                f"s{g.strides[0]}")

    def thread_tiles(self) -> Iterator[tuple[int, int]]:
        if self.geometry.kind == "grouped":
            return iter([(1, 1)])  # the grouped kernel computes one pixel
        width = self.geometry.output[3]
        return ((t, 1) for t in TILE_SIDES if t == 1 or t <= width)

    def layouts(self) -> tuple[Layout | None, ...]:
        return (None,)

    def pattern(self, config: TileConfig) -> str | None:
        return None

    def _tiles(self, config: TileConfig) -> int:
        return math.ceil(self.geometry.output[3] / config.tile[0])

    def global_size(self, config: TileConfig) -> tuple[int, int]:
        n, m, h, _ = self.geometry.output
        return self._tiles(config) * math.ceil(m / 4), n * h

    def model_inputs(self, config: TileConfig) -> KernelModelInputs:
        if config.plan is not None:
            return _conv_blocked(self.geometry, config.plan)
        return self._one_pixel_inputs(config)

    def _one_pixel_inputs(self, config: TileConfig) -> KernelModelInputs:
        """
        One work-item computes channel block cb at `width` neighbouring output pixels:
        per kernel tap and input-channel block it reads `width` input pixels of one row
        (a row walk along w, which its warp neighbours continue) and the tap's weight
        pixels (4 in `oihw4o` for the blocked kernel, 1 in `dw4` for the depthwise one),
        which serve all `width` outputs.
        """
        g = self.geometry
        width = config.tile[0]
        x_trace, w_trace, blocks_traced, blocks = _conv_traces(g, width)
        scale = blocks / blocks_traced
        x = tmmodel.InputAccess(_features(x_trace), 1, round(len(x_trace) * scale))
        w = tmmodel.InputAccess(_features(w_trace), 0, round(len(w_trace) * scale))
        per_step = {"blocked": width + 4, "depthwise": width + 1, "grouped": 5}[g.kind]
        # accumulators, input pixels, a weight pixel, column positions and masks, indices
        footprint = 4 * width + 4 * width + 4 + 2 * width + 8
        output = (self._tiles(config) * width * math.ceil(g.output[1] / 4),
                  g.output[0] * g.output[2])
        return KernelModelInputs(output, (x, w), footprint, 16 * per_step)

    def warp_footprint(self, config: TileConfig, warp: tuple[int, int]) -> tuple[int, int]:
        if config.plan is not None:
            return 4 * config.tile[0] * warp[0], config.tile[1] * warp[1]
        return config.tile[0] * warp[0], warp[1]


@cache
def _conv_blocked(g: ConvShape, plan: GemmPlan) -> KernelModelInputs:
    """
    The implicit GEMM: A's pixel (m, kq) is the input pixel of channel block kq % ⌈C/4⌉
    at tap kq // ⌈C/4⌉ of output position m (`nc4hw4`, clamped where the tap is off the
    input: the read happens and is masked); B's (k, n4) is the `hwio4` weight's (n4, k).
    """
    _, channels, height, width = g.input
    _, cout, ho, wo = g.output
    blocks, (_, kernel_w) = math.ceil(channels / 4), g.kernel

    def a_pixel(m: int, kq: int) -> tuple[int, int]:
        n, oh, ow = m // (ho * wo), m // wo % ho, m % wo
        tap, cb = kq // blocks, kq % blocks
        ih = oh * g.strides[0] - g.pads[0] + tap // kernel_w * g.dilations[0]
        iw = ow * g.strides[1] - g.pads[1] + tap % kernel_w * g.dilations[1]
        return cb * width + min(max(iw, 0), width - 1), n * height + min(max(ih, 0), height - 1)

    depth = g.kernel[0] * g.kernel[1] * 4 * blocks
    return _blocked_inputs(plan, g.output[0] * ho * wo, cout, depth, a_pixel,
                           lambda k, n4: (n4, k))


@cache
def _conv_traces(g: ConvShape, width: int) -> tuple[list, list, int, int]:
    """
    The pixels a work-item in the middle of the output reads from the input and the
    weight, in order, over its first `TRACE_CHANNEL_BLOCKS` input-channel blocks; with
    how many blocks that is and how many its loop has.
    """
    _, _, in_h, in_w = g.input
    out_h, out_w = g.output[2], g.output[3]
    h, w0 = out_h // 2, (math.ceil(out_w / width) // 2) * width
    ws = [min(w0 + t, out_w - 1) for t in range(width)]
    kernel_h, kernel_w = g.kernel
    padded_in = 4 * math.ceil(g.in_per_group / 4)
    if g.kind == "blocked":
        blocks, per_block = math.ceil(g.in_per_group / 4), 4
    elif g.kind == "depthwise":
        blocks, per_block = 1, 1
    else:
        blocks, per_block = g.in_per_group, 1
    traced = min(blocks, TRACE_CHANNEL_BLOCKS)
    x_trace: list[tuple[int, int]] = []
    w_trace: list[tuple[int, int]] = []
    for kh in range(kernel_h):
        ih = g.input_position(0, h, kh)
        if ih is None:
            continue
        for kw in range(kernel_w):
            columns = [g.input_position(1, w, kw) for w in ws]
            if width == 1 and columns[0] is None:
                continue
            # a tile's masked columns still read, at a clamped position
            columns = [c if c is not None else min(max(w, 0), in_w - 1)
                       for c, w in zip(columns, ws)]
            tap = kh * kernel_w + kw
            for ib in range(traced):
                channel_block = 0 if g.kind == "depthwise" else ib
                reads = 4 if g.kind == "grouped" else 1  # the grouped kernel reads lanes
                x_trace += [(channel_block * in_w + c, ih) for c in columns for _ in range(reads)]
                if g.kind == "depthwise":
                    w_trace.append((tap, 0))
                else:
                    w_trace += [(tap * padded_in + ib * per_block + j, 0)
                                for j in range(per_block)]
    return x_trace, w_trace, traced, blocks


# the blocked product ---------------------------------------------------------------------


def _blocked_inputs(plan: GemmPlan, rows: int, cols: int, depth: int,
                    a_pixel: Callable[[int, int], tuple[int, int]],
                    b_pixel: Callable[[int, int], tuple[int, int]]) -> KernelModelInputs:
    """
    The blocked product C[rows, cols] = A[rows, depth] B[depth, cols] under `plan`, as
    `blocked_product` runs it: per K step, work-item t of a group stages the pixels
    q = t, t + |G|, ... of A's block (row q % bm, K pixel q // bm) and of B's (K row
    q // (bn/4), pixel q % (bn/4)), `a_pixel(m, kq)` and `b_pixel(k, n4)` saying where
    each lies in its image. Its traces are those of a work-item in the middle of the
    launch, over its slice's first `TRACE_STEPS` steps; a warp's neighbours read the
    neighbouring q, so no lines are kept in reuse. In the loop it loads bk·(tm/4 + tn/4)
    float4s a step from local memory. A split's partial sums are written and read again
    by the adds (each of its tm·tn/4 output pixels `split` times, a slice's rows apart).
    Registers: tm·tn accumulators, the staged pixels (the next step's, held over this
    one), a step's A and B quads, indices. FMAs: tm·tn a K row, padding past the output
    included.
    """
    block, split = plan.block, plan.split
    threads, (a_staged, b_staged) = block.threads, block.staged
    bn4 = block.bn // 4
    steps = math.ceil(depth / block.bk)
    per_slice = math.ceil(steps / split)
    traced = min(per_slice, TRACE_STEPS)
    m0 = math.ceil(rows / block.bm) // 2 * block.bm
    n0 = math.ceil(cols / block.bn) // 2 * bn4
    first = split // 2 * per_slice
    t = threads // 2
    a_trace, b_trace = [], []
    for step in range(first, first + traced):
        k0 = step * block.bk
        a_trace += [a_pixel(m0 + q % block.bm, k0 // 4 + q // block.bm)
                    for q in range(t, t + a_staged * threads, threads)]
        b_trace += [b_pixel(k0 + q // bn4, n0 + q % bn4)
                    for q in range(t, t + b_staged * threads, threads)]
    inputs = [tmmodel.InputAccess(_features(a_trace), 0, a_staged * per_slice),
              tmmodel.InputAccess(_features(b_trace), 0, b_staged * per_slice)]
    outputs = block.tm * block.tn // 4
    if split > 1:
        sums = [(n0, s * rows + m0) for s in range(split)]
        inputs.append(tmmodel.InputAccess(_features(sums), 0, outputs * split))
    quads = (block.tm + block.tn) // 4
    footprint = block.tm * block.tn + 4 * (a_staged + b_staged) + 4 * quads + 8
    return KernelModelInputs(
        (math.ceil(cols / 4), rows), tuple(inputs), footprint, 16 * (a_staged + b_staged),
        local_bytes=block.local_bytes, local_loads=per_slice * block.bk * quads, slices=split,
        fmas=per_slice * block.bk * block.tm * block.tn)


# softmax and layer normalisation ----------------------------------------------------------


@dataclass(frozen=True)
class RowKernel:
    op: str
    """`Softmax` (also LogSoftmax) or `LayerNormalization`."""
    rows: int
    """Rows normalised (the product of the leading axes)."""
    length: int
    """Elements of a row (the last axis)."""

    @property
    def blocks(self) -> int:
        return math.ceil(self.length / 4)

    @property
    def family(self) -> str:
        return "layernorm" if self.op == "LayerNormalization" else "softmax"

    def describe_shape(self) -> str:
        return f"{self.op} {self.rows}x{self.length}"

    def thread_tiles(self) -> Iterator[tuple[int, int]]:
        sides = [t for t in (*TILE_SIDES, 16, 32, 64) if t < self.blocks] + [self.blocks]
        return ((t, 1) for t in sides)

    plans = ()

    def layouts(self) -> tuple[Layout | None, ...]:
        return (None,)

    def pattern(self, config: TileConfig) -> str | None:
        return None

    def global_size(self, config: TileConfig) -> tuple[int, int]:
        return math.ceil(self.blocks / config.tile[0]), self.rows

    def model_inputs(self, config: TileConfig) -> KernelModelInputs:
        """
        A work-item walks its row twice for the statistics (max and sum; or mean and
        variance), then reads its T pixels again to write them (LayerNormalization also
        reads T pixels of its scale and bias).
        """
        tile = min(config.tile[0], self.blocks)
        x_features, own_features = _row_features(self.blocks, tile)
        inputs = [tmmodel.InputAccess(x_features, 1, 2 * self.blocks + tile)]
        if self.op == "LayerNormalization":
            inputs += [tmmodel.InputAccess(own_features, 0, tile)] * 2
        output = (math.ceil(self.blocks / tile) * tile, self.rows)
        return KernelModelInputs(output, tuple(inputs), 4 * 4 + 8, 16 * len(inputs))

    def warp_footprint(self, config: TileConfig, warp: tuple[int, int]) -> tuple[int, int]:
        return 4 * config.tile[0] * warp[0], warp[1]


@cache
def _row_features(blocks: int, tile: int) -> tuple[np.ndarray, np.ndarray]:
    """H of a work-item's walk over its row's input and of its reads of its own pixels."""
    first = (math.ceil(blocks / tile) // 2) * tile
    own = [(min(first + t, blocks - 1), 0) for t in range(tile)]
    sweep = [(p, 0) for p in range(min(blocks, TRACE_STEPS))]
    return _features(sweep + sweep + own), _features(own)


# the space and the model's choice --------------------------------------------------------


def warp_shape(group: tuple[int, int], warp: int) -> tuple[int, int]:
    """How a warp of consecutive local ids lies in a work group (x fastest)."""
    wx = min(group[0], warp)
    return wx, min(group[1], max(1, warp // wx))


def candidates(kernel: Kernel, max_group: int) -> Iterator[TileConfig]:
    """Every (A, T, G) whose group tiles the range: G is left to the driver too; then
    each blocked product's plan (its block sets T and G)."""
    for layout in kernel.layouts():
        for tile in kernel.thread_tiles():
            probe = TileConfig(tile, None, layout)
            gx_total, gy_total = kernel.global_size(probe)
            yield probe
            for gx in GROUP_SIDES:
                for gy in GROUP_SIDES:
                    if gx * gy <= max_group and gx_total % gx == 0 and gy_total % gy == 0:
                        yield TileConfig(tile, (gx, gy), layout)
    for plan in kernel.plans:
        if plan.block.threads <= max_group:
            yield TileConfig.blocked(plan)


def predicted_cost(constants: tmmodel.TextureConstants, kernel: Kernel,
                   config: TileConfig) -> float:
    """
    Eq. 7 for a configuration. The model sets the work group itself: one left to the
    driver is unknown to it and costs infinity.
    """
    if config.group is None:
        return math.inf
    described = kernel.model_inputs(config)
    group = config.group
    return tmmodel.kernel_cost(constants, described.inputs, described.output, config.tile, group,
                               warp_shape(group, constants.warp_size), described.footprint,
                               kernel.family, kernel.pattern(config), described.local_bytes,
                               described.local_loads, described.slices,
                               measured_factors=config.plan is None, fmas=described.fmas)


def squareness(kernel: Kernel, config: TileConfig, warp: int) -> float:
    """How far a warp's output footprint is from square, in log2."""
    if config.group is None:
        return math.inf
    x, y = kernel.warp_footprint(config, warp_shape(config.group, warp))
    return abs(math.log2(x) - math.log2(y))


@dataclass(frozen=True)
class TMModel:
    """TMModel (eq. 7) with a device's constants, as a `CostModel` of (kernel, configuration)."""

    constants: tmmodel.TextureConstants
    name = "tmmodel"
    unit = "relative"

    def cost(self, candidate: tuple[Kernel, TileConfig]) -> float:
        return predicted_cost(self.constants, *candidate)

    def choose(self, kernel: Kernel, configs: list[TileConfig]) -> TileConfig:
        """
        The configuration of least eq. 7 cost; among equals (eq. 7 often cannot tell work
        groups apart), the one whose warps cover the squarest block of the output, whose
        texture reads then stay in the fewest 2D blocks.
        """
        warp = self.constants.warp_size
        return min(configs, key=lambda c: (round(self.cost((kernel, c)), 6),
                                           squareness(kernel, c, warp)))
