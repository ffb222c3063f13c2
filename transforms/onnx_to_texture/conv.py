"""
Lowering rules: convolutions (Conv, FusedConv, ConvTranspose) on rank-4 NCHW tensors.

A work-item computes four output channels at `TILE_WIDTH` neighbouring output
pixels along w (one pixel for the grouped kernel, or when the output is not
`nc4hw4`), so that each weight pixel read serves several outputs. Three kernels
cover the channel structures:

- *blocked*: group 1, or every group's input and output channels a multiple of 4.
  Weights in `oihw4o`; per kernel tap and input-channel block, each output pixel's
  input pixel meets the same four weight pixels in four float4 fmas.
- *depthwise*: group = input channels = output channels. Weights in `dw4`; per
  tap one weight pixel times each output pixel's input pixel.
- *grouped*: any other grouping. Each output lane gathers its own input channel
  as a scalar; weights in `oihw4o`, one pixel per tap and input channel.

ConvTranspose gathers instead of scattering: output position o meets input
position (o + pad - k * dilation) / stride of tap k where that divides evenly.
Its (C, M/group, KH, KW) weight is regrouped host-side (Reshape/Transpose ops on
the constant) into a convolution's (M, C/group, KH, KW) and takes the same kernels.

In images, an ungrouped conv with enough output positions and channels (or with K,
taps by input channels, split into slices) is instead an implicit GEMM by the blocked
product (`blocked.py`, `conv_plan`): its weight in `hwio4`, whose rows are K.
In buffers, asked for (`winograd=true`), an ungrouped 3x3 conv of stride 1 where it pays
takes Winograd F(2x2, 3x3) instead of the wide kernel (`winograd.py`, `takes_winograd`).

Out-of-range taps are skipped by explicit bounds checks (rows by a branch, the
columns of a tile by a mask on a clamped read): in `nc4hw4` an x past a row's
end is the next channel block's first column, not padding.

A tap on the padding adds nothing, whatever its weight, as onnxruntime's x86 kernels
have it: a NaN or infinite weight there leaves the output finite. The tiled, wide,
Winograd and blocked-product kernels multiply masked zeros instead, which is the same
only for finite weights (0 * w = 0); a conv whose taps reach the padding and whose
weight is not a constant of finite values (`skips_exactly`) takes the one-pixel kernel,
which branches around such taps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
from mobile_opt.dialects import onnx, texture
from mobile_opt.dialects.onnx.base import constant_array, is_host_packed, is_none, tensor
from mobile_opt.dialects.onnx.shapes import ShapeError
from mobile_opt.dialects.texture import Image2DType, Layout, image_size
from mobile_opt.dialects.texture.layouts import ceil4
from mobile_opt.dialects.texture.tiling import GemmPlan, TileConfig, gemm_plans
from mobile_opt.models.conv_shape import ConvShape
from mobile_opt.models.roofline import kernel_flops
from mobile_opt.transforms.onnx_utils import make_constant
from xdsl.dialects.builtin import DenseArrayBase, f32, i64
from xdsl.ir import Operation, SSAValue

from .blocked import blocked_product
from .context import KernelContext, LoweringContext, UNLIMITED_IMAGE, Stored, ocl_node_attr
from .nodes import LoweringError, node_label, shape
from .elementwise import activation
from .kernel_builder import KernelBuilder, Operand, Val
from .rules import lowers
from .views import OutputPixel, TensorView
from .winograd import takes_winograd, winograd_conv

PixelFn = Callable[[Val, Val, Val, Val], Val]
"""(n, channel block, h, w) -> the float4 of output channels 4cb..4cb+3 at (n, h, w)."""


# shared helpers for NCHW kernels (pool.py uses them too) -------------------------------


def require_rank4(op: Operation, *values: SSAValue) -> None:
    """Raise unless every value is a rank-4 (NCHW) tensor."""
    for v in values:
        if len(shape(v)) != 4:
            raise LoweringError(
                f"{node_label(op)}: only rank-4 NCHW tensors run on the GPU, got shape "
                f"{list(shape(v))}"
            )


def activation_input(k: KernelContext, value: SSAValue) -> TensorView:
    """
    A rank-4 activation operand: in `nc4hw4` (graph inputs and constants are packed
    so), or in whatever layout an earlier kernel stored it (`channel_block` then
    reads it lane by lane).
    """
    stored = k.ctx.stored.get(value)
    if stored is not None and stored.layout is not Layout.NC4HW4:
        return k.input(value)
    return k.input(value, Layout.NC4HW4)


def channel_block(view: TensorView, n: Val, cb: Val, h: Val, w: Val) -> Val:
    """
    The float4 of channels 4cb..4cb+3 at (n, h, w) of a rank-4 NCHW view (which must
    be in range); channels past the last read as 0 in any layout.
    """
    if view.layout is Layout.NC4HW4:
        return view.read_block([n, cb, h, w])
    kb = view.kb
    channels = view.shape[1]
    lanes = []
    for lane in range(4):
        c = cb * 4 + lane
        if channels % 4:
            inside = view.read([n, kb.min(c, channels - 1), h, w])
            lanes.append(kb.select(c < channels, inside, 0.0))
        else:
            lanes.append(view.read([n, c, h, w]))
    return kb.vec4(lanes)


def store_nchw(k: KernelContext, pixel: PixelFn) -> None:
    """
    Store an NCHW result computed a channel block at a time: directly when the
    output is `nc4hw4`, else (rows4, w packed) lane by lane, each lane taken from
    its own channel block (four evaluations of `pixel`: a slow but rare path).
    """
    kb = k.kb
    block = k.pixel.block
    if k.out.layout is Layout.NC4HW4:
        n, cb, h, w = block
        k.store(pixel(n, cb, h, w))
        return
    if k.out.layout is not Layout.ROWS4 or k.out.rank != 4:
        raise LoweringError(f"{k.label}: output layout {k.out.layout.value} is not supported")
    n, c, h, w4 = block
    width = k.out.shape[3]
    lanes = []
    for lane in range(4):
        w = kb.min(w4 * 4 + lane, width - 1)
        lanes.append(kb.lane(pixel(n, c // 4, h, w), c % 4))
    k.store(kb.vec4(lanes))


def window_needs_check(
    size: int, out: int, kernel: int, stride: int, dilation: int, pad: int
) -> bool:
    """Whether some tap of a sliding window over `size` positions falls outside them."""
    return pad > 0 or (out - 1) * stride - pad + (kernel - 1) * dilation > size - 1


def in_range(kb: KernelBuilder, index: Val, size: int) -> Val:
    return (index >= 0) & (index < size)


def host_weight(k: KernelContext, value: SSAValue, layout: Layout, hint: str = "weight",
                host_computed: bool = False) -> TensorView:
    """
    A weight packed host-side in `layout`: a constant, a graph input, or (with
    `host_computed`) the result of host ops on those that this lowering inserted.
    """
    if k.ctx.is_host_constant(value):
        return k.weight(value, layout, hint)
    if not isinstance(value.owner, Operation):
        return k.input(value, layout, hint)
    if host_computed:
        return k._view(k.ctx.pack(value, layout, k.label), hint)
    raise LoweringError(f"{k.label}: {hint} must be a constant or a graph input")


# convolution geometry ---------------------------------------------------------------------


def tap(kb: KernelBuilder, geo: ConvShape, axis: int, out_pos: Val,
        k: Val) -> tuple[Val, Val | None]:
    """
    `geo.input_position` as IR: the input position that tap `k` of output position
    `out_pos` reads along spatial `axis` (0 = h, 1 = w), and the condition that it
    exists (None: always).
    """
    size, out = geo.input[2 + axis], geo.output[2 + axis]
    stride, dilation, pad = geo.strides[axis], geo.dilations[axis], geo.pads[axis]
    if not geo.transposed:
        pos = out_pos * stride - pad + k * dilation
        if not window_needs_check(size, out, geo.kernel[axis], stride, dilation, pad):
            return pos, None
        return pos, in_range(kb, pos, size)
    offset = out_pos + pad - k * dilation
    if stride == 1:
        return offset, in_range(kb, offset, size)
    pos = offset // stride
    valid = (offset >= 0) & (offset % stride).eq(0) & (pos < size)
    return pos, valid


def guarded(
    kb: KernelBuilder, cond: Val | None, body: Callable[[], list[Val]], keep: list[Val]
) -> list[Val]:
    """`cond ? body() : keep` (just `body()` when there is no condition)."""
    if cond is None:
        return body()
    return kb.if_(cond, body, lambda: keep)


@dataclass(frozen=True)
class Column:
    """The input column a tap reads for one output pixel of a tile; `mask` false: none."""

    iw: Val
    mask: Val | None


TapStep = Callable[[Val, Val, Val, list[Column], list[Val]], list[Val]]


def over_taps(kb: KernelBuilder, geo: ConvShape, h: Val, ws: Sequence[Val], accs: list[Val],
              step: TapStep) -> list[Val]:
    """
    Fold `step(kh, kw, ih, columns, accs)` over the kernel taps of the output pixels
    (h, w) for w in `ws`. Rows outside the input are skipped; columns too for a
    single pixel, while in a tile each column has a mask and a clamped position.
    """
    kernel_h, kernel_w = geo.kernel
    in_width = geo.input[3]

    def row(kh: Val, *accs: Val) -> list[Val]:
        ih, valid_h = tap(kb, geo, 0, h, kh)

        def columns() -> list[Val]:
            def column(kw: Val, *accs: Val) -> list[Val]:
                taps = [tap(kb, geo, 1, w, kw) for w in ws]
                if len(ws) == 1:
                    iw, valid_w = taps[0]
                    def one() -> list[Val]:
                        return step(kh, kw, ih, [Column(iw, None)], list(accs))

                    return guarded(kb, valid_w, one, list(accs))
                cols = [
                    Column(iw, None) if valid is None
                    else Column(kb.min(kb.max(iw, 0), in_width - 1), valid)
                    for iw, valid in taps
                ]
                return step(kh, kw, ih, cols, list(accs))

            return kb.loop(0, kernel_w, column, list(accs), name="kw")

        return guarded(kb, valid_h, columns, list(accs))

    return kb.loop(0, kernel_h, row, accs, name="kh")


def over_window(kb: KernelBuilder, geo: ConvShape, h: Val, w: Val, acc: Val,
                step: Callable[[Val, Val, Val, Val, Val], Val]) -> Val:
    """Fold `step(kh, kw, ih, iw, acc)` over the taps of one output pixel that land in the input."""
    return over_taps(kb, geo, h, [w], [acc],
                     lambda kh, kw, ih, cols, accs: [step(kh, kw, ih, cols[0].iw, accs[0])])[0]


def column_block(x: TensorView, n: Val, cb: Val, ih: Val, col: Column) -> Val:
    """The input pixel of channel block `cb` at (ih, column), zero where masked off."""
    px = channel_block(x, n, cb, ih, col.iw)
    return px if col.mask is None else x.kb.select(col.mask, px, 0.0)


# the three kernels ------------------------------------------------------------------------


TileFn = Callable[[Val, Val, Val, list[Val]], list[Val]]
"""(n, channel block, h, [w...]) -> the output pixels of those channels at each (n, h, w)."""


def initial_acc(kb: KernelBuilder, bias: TensorView | None, cb: Val) -> Val:
    return (bias.read_block([cb]) if bias is not None else kb.float4(0.0)).named("acc")


def blocked_tile(kb: KernelBuilder, geo: ConvShape, x: TensorView, weight: TensorView,
                 bias: TensorView | None) -> TileFn:
    """Input-channel blocks times `oihw4o` weight pixels: four fmas per input pixel."""
    in_per_group = weight.shape[1]
    in_blocks = ceil4(in_per_group)
    out_blocks_per_group = geo.out_per_group // 4 if geo.group > 1 else 1

    def tile(n: Val, cb: Val, h: Val, ws: list[Val]) -> list[Val]:
        base = (cb // out_blocks_per_group) * in_blocks if geo.group > 1 else kb.int(0)

        def step(kh: Val, kw: Val, ih: Val, cols: list[Column], accs: list[Val]) -> list[Val]:
            def channels(ib: Val, *accs: Val) -> list[Val]:
                pixels = [column_block(x, n, base + ib, ih, col) for col in cols]
                accs = list(accs)
                for j in range(4):
                    if ib.const is not None and ib.const * 4 + j >= in_per_group:
                        break
                    wj = weight.read_block([cb, ib * 4 + j, kh, kw])
                    accs = [kb.fma(kb.splat(kb.lane(px, j)), wj, acc)
                            for px, acc in zip(pixels, accs)]
                return accs

            return kb.loop(0, in_blocks, channels, accs, name="ib")

        return over_taps(kb, geo, h, ws, [initial_acc(kb, bias, cb)] * len(ws), step)

    return tile


def depthwise_tile(kb: KernelBuilder, geo: ConvShape, x: TensorView, weight: TensorView,
                   bias: TensorView | None) -> TileFn:
    """One input pixel times one `dw4` weight pixel per tap."""

    def tile(n: Val, cb: Val, h: Val, ws: list[Val]) -> list[Val]:
        def step(kh: Val, kw: Val, ih: Val, cols: list[Column], accs: list[Val]) -> list[Val]:
            wpx = weight.read_block([cb, 0, kh, kw])
            return [kb.fma(column_block(x, n, cb, ih, col), wpx, acc)
                    for col, acc in zip(cols, accs)]

        return over_taps(kb, geo, h, ws, [initial_acc(kb, bias, cb)] * len(ws), step)

    return tile


def grouped_tile(kb: KernelBuilder, geo: ConvShape, x: TensorView, weight: TensorView,
                 bias: TensorView | None) -> TileFn:
    """Any grouping: each lane reads its own group's input channel as a scalar."""
    in_per_group, out_per_group = geo.in_per_group, geo.out_per_group
    out_channels = geo.output[1]

    def tile(n: Val, cb: Val, h: Val, ws: list[Val]) -> list[Val]:
        first_channel = [
            (kb.min(cb * 4 + lane, out_channels - 1) // out_per_group) * in_per_group
            for lane in range(4)
        ]

        def step(kh: Val, kw: Val, ih: Val, cols: list[Column], accs: list[Val]) -> list[Val]:
            def channel(i: Val, *accs: Val) -> list[Val]:
                wpx = weight.read_block([cb, i, kh, kw])
                result = []
                for col, acc in zip(cols, accs):
                    xs = kb.vec4([x.read([n, c + i, ih, col.iw]) for c in first_channel])
                    if col.mask is not None:
                        xs = kb.select(col.mask, xs, 0.0)
                    result.append(kb.fma(xs, wpx, acc))
                return result

            return kb.loop(0, in_per_group, channel, accs, name="i")

        return over_taps(kb, geo, h, ws, [initial_acc(kb, bias, cb)] * len(ws), step)

    return tile


TILE_WIDTH = 4
"""Output pixels along w that one work-item of the blocked and depthwise kernels computes,
unless `texture-tile` chose another tile."""


def tiled_range(k: KernelContext, blocks: int, width: int,
                hint: str) -> tuple[Val, Val, Val, list[Val], bool]:
    """
    The range of a kernel storing nc4hw4 whose work-items each compute `blocks` channel
    blocks at `width` neighbouring output pixels along w: (n, the item's first block
    over `blocks`, h, its output columns, whether the last tile is ragged).
    """
    batch, channels, height, out_width = k.out.shape
    tiles = -(-out_width // width)
    k.global_size = (tiles * -(-ceil4(channels) // blocks), batch * height)
    gx, gy = k.pixel.x, k.pixel.y
    n, h = (gy // height).named("n"), (gy % height).named("h")
    first, w0 = (gx // tiles).named(hint), ((gx % tiles) * width).named("w0")
    return n, first, h, [w0 + t for t in range(width)], out_width % width != 0


def store_tiles(k: KernelContext, tile: TileFn, width: int) -> None:
    """
    Store an NCHW result whose work-items compute `width` neighbouring output pixels
    along w (nc4hw4 output only; otherwise, or for width 1, one pixel each).
    """
    kb = k.kb
    if k.out.layout is not Layout.NC4HW4 or width <= 1:
        store_nchw(k, lambda n, cb, h, w: tile(n, cb, h, [w])[0])
        return
    n, cb, h, ws, ragged = tiled_range(k, 1, width, "c4")
    out_width = k.out.shape[3]
    gy = k.pixel.y
    values = tile(n, cb, h, [kb.min(w, out_width - 1) if ragged else w for w in ws])
    for t, (w, value) in enumerate(zip(ws, values)):
        k.store_at(OutputPixel(cb * out_width + w, gy, [n, cb, h, w]), lambda value=value: value,
                   [w < out_width] if ragged and t > 0 else [])


WIDE_TILE = 8
"""The most output pixels along w that one work-item of the wide kernel computes."""


def wide_width(out_width: int) -> int:
    """The wide kernel's tile along w: of `WIDE_TILE` down to half of it, the one that
    computes the fewest columns past the row's end (the widest of those): 7 for 14 and
    28 columns, where 8 would compute 16 and 32."""
    widths = range(min(WIDE_TILE, out_width), min(WIDE_TILE // 2, out_width) - 1, -1)
    return min(widths, key=lambda t: -(-out_width // t) * t)


def wide_tile(kb: KernelBuilder, geo: ConvShape, x: TensorView, weight: TensorView,
              bias: TensorView | None, grouped: ConvShape | None = None) -> TileFn:
    """
    Sixteen output channels (four channel blocks) at once, as float16s: per input channel,
    its lane of each output pixel's input, splat, times one `hwio4` row of sixteen weights.
    (n, group of four channel blocks, h, [w...]) -> a float16 per w. `grouped`: the
    grouped conv whose block-diagonal weight this is; a work-item then loops over the
    input blocks of the groups its sixteen outputs fall in, not over every input block.
    """
    in_channels = weight.shape[1]
    in_blocks = ceil4(in_channels)
    last_block = ceil4(geo.output[1]) - 1

    def input_blocks(g: Val) -> tuple[Operand, Operand]:
        if grouped is None:
            return 0, in_blocks
        out_per, in_per = grouped.out_per_group, grouped.in_per_group
        first = (g * 16) // out_per
        last = kb.min(g * 16 + 15, geo.output[1] - 1) // out_per
        lo, hi = (first * in_per) // 4, ((last + 1) * in_per + 3) // 4
        return lo.named("ib_lo"), hi.named("ib_hi")

    def tile(n: Val, g: Val, h: Val, ws: list[Val]) -> list[Val]:
        blocks = [g * 4 + j for j in range(4)]
        lo, hi = input_blocks(g)
        if bias is None:
            acc = kb.vec16([kb.float4(0.0)] * 4)
        else:  # the bias has no pixels past its last block
            acc = kb.vec16([bias.read_block([kb.min(cb, last_block)]) for cb in blocks])

        def step(kh: Val, kw: Val, ih: Val, cols: list[Column], accs: list[Val]) -> list[Val]:
            def channels(ib: Val, *accs: Val) -> list[Val]:
                pixels = [column_block(x, n, ib, ih, col) for col in cols]
                accs = list(accs)
                for j in range(4):
                    if ib.const is not None and ib.const * 4 + j >= in_channels:
                        break
                    row = weight.read_row16([blocks[0], ib * 4 + j, kh, kw])
                    accs = [kb.fma(kb.splat16(kb.lane(px, j)), row, a)
                            for px, a in zip(pixels, accs)]
                return accs

            return kb.loop(lo, hi, channels, accs, name="ib")

        return over_taps(kb, geo, h, ws, [acc.named("acc")] * len(ws), step)

    return tile


def wide_depthwise_tile(kb: KernelBuilder, geo: ConvShape, x: TensorView, weight: TensorView,
                        bias: TensorView | None) -> TileFn:
    """
    The depthwise kernel sixteen channels at once: per tap, four channel blocks of each
    output pixel's input times four `dw4` weight pixels, as float16s. Blocks past the last
    are read clamped and never stored.
    """
    total = ceil4(geo.output[1])

    def tile(n: Val, g: Val, h: Val, ws: list[Val]) -> list[Val]:
        blocks = [kb.min(g * 4 + j, total - 1) if total % 4 else g * 4 + j for j in range(4)]
        acc = kb.vec16([initial_acc(kb, bias, cb) for cb in blocks])

        def step(kh: Val, kw: Val, ih: Val, cols: list[Column], accs: list[Val]) -> list[Val]:
            taps = kb.vec16([weight.read_block([cb, 0, kh, kw]) for cb in blocks])
            return [kb.fma(kb.vec16([column_block(x, n, cb, ih, col) for cb in blocks]), taps, a)
                    for col, a in zip(cols, accs)]

        return over_taps(kb, geo, h, ws, [acc.named("acc")] * len(ws), step)

    return tile


ROW_TILE = 4
"""Output pixels of one channel block that a work-item of the row depthwise kernel computes:
one float16."""


def row_depthwise(geo: ConvShape, x: TensorView) -> bool:
    """Whether a depthwise conv takes the row kernel: stride 1, its input stored in nc4hw4
    (no view), rows at least a tile wide."""
    return (geo.kind == "depthwise" and geo.strides == (1, 1) and not geo.transposed
            and type(x) is TensorView and x.layout is Layout.NC4HW4
            and geo.output[3] >= ROW_TILE)


def row_depthwise_tile(kb: KernelBuilder, geo: ConvShape, x: TensorView, weight: TensorView,
                       bias: TensorView | None) -> TileFn:
    """
    A stride-1 depthwise conv, one channel block at four neighbouring output pixels as a
    float16: the four input pixels a tap reads sit side by side in an nc4hw4 row, so where
    the row holds all four they are one `texture.read16`, else four masked reads; times the
    tap's weight pixel four times. (n, block, h, [w0..w0+3]) -> [a float16].
    """
    in_width, pad, dilation = geo.input[3], geo.pads[1], geo.dilations[1]

    def tile(n: Val, cb: Val, h: Val, ws: list[Val]) -> list[Val]:
        acc = kb.vec16([initial_acc(kb, bias, cb)] * ROW_TILE).named("acc")

        def step(kh: Val, kw: Val, ih: Val, cols: list[Column], accs: list[Val]) -> list[Val]:
            first = ws[0] - pad + kw * dilation

            def whole() -> list[Val]:
                return [kb.read16(x.storage, *x.pixel([n, cb, ih, first]))]

            def masked() -> list[Val]:
                return [kb.vec16([column_block(x, n, cb, ih, col) for col in cols])]

            pixels = kb.if_((first >= 0) & (first + ROW_TILE - 1 < in_width), whole, masked)[0]
            taps = kb.vec16([weight.read_block([cb, 0, kh, kw])] * ROW_TILE)
            return [kb.fma(pixels, taps, accs[0])]

        return over_taps(kb, geo, h, ws, [acc], step)

    return tile


def store_rows(k: KernelContext, tile: TileFn, finish: Callable[[Val], Val]) -> None:
    """Store the row depthwise kernel's result (nc4hw4): a float16 of four pixels each."""
    kb = k.kb
    n, cb, h, ws, ragged = tiled_range(k, 1, ROW_TILE, "c4")
    out_width, gy = k.out.shape[3], k.pixel.y
    value = tile(n, cb, h, [kb.min(w, out_width - 1) if ragged else w for w in ws])[0]
    for t, w in enumerate(ws):
        k.store_at(OutputPixel(cb * out_width + w, gy, [n, cb, h, w]),
                   lambda part=kb.part4(value, t): finish(part),
                   [w < out_width] if ragged and t > 0 else [])


def store_wide(k: KernelContext, tile: TileFn, width: int, finish: Callable[[Val], Val]) -> None:
    """
    Store a wide kernel's result (nc4hw4): each work-item computes four channel blocks
    at `width` neighbouring output pixels along w; `finish` takes each float4 to the
    value stored (the activation).
    """
    kb = k.kb
    n, g, h, ws, ragged = tiled_range(k, 4, width, "g")
    out_width, blocks, gy = k.out.shape[3], ceil4(k.out.shape[1]), k.pixel.y
    values = tile(n, g, h, [kb.min(w, out_width - 1) if ragged else w for w in ws])
    for t, (w, value) in enumerate(zip(ws, values)):
        for j in range(4):
            cb = g * 4 + j
            guards = ([w < out_width] if ragged and t > 0 else []) + (
                [cb < blocks] if blocks % 4 and j > 0 else [])
            k.store_at(OutputPixel(cb * out_width + w, gy, [n, cb, h, w]),
                       lambda part=kb.part4(value, j): finish(part), guards)


DENSE_GROUPS = 8
"""In buffers, a grouped conv (not depthwise) of at most this many groups and an nc4hw4
output takes the wide kernel over its block-diagonal weight, each work-item looping over
only the input blocks of its outputs' groups (`wide_tile`). ShuffleNet's 1x1 convs of 4
groups of 34 channels at 28x28 on PoCL: 0.29 ms each over every input block, 0.11 ms over
the band (the grouped kernel's lane-by-lane gathers took 2.8 ms in all); of 4 groups of
68 at 14x14: 0.12 ms in the blocked kernel, 0.09 ms over the band."""

DENSE_BLOCKED_GROUPS = 4
"""In images, a conv of at most this many groups (not depthwise) takes the blocked product
as the dense conv whose weight is zero between groups, `group` times the work: AlexNet's
convs of 2 groups took 100-170 µs (1-4 TFLOP/s) in the one-pixel kernel on the H100, where
its dense ones ran at 7-16 TFLOP/s blocked (`bench/results/e2e-nvidia-h100-80gb-hbm3.json`)."""


def dense_from_groups(k: KernelContext, geo: ConvShape,
                      weight: SSAValue) -> tuple[ConvShape, SSAValue] | None:
    """A grouped conv as a dense one for the wide kernel (`DENSE_GROUPS`): its geometry
    and block-diagonal weight (a host constant); None to keep it grouped."""
    if (not k.ctx.buffers or k.out.layout is not Layout.NC4HW4 or geo.group == 1
            or geo.kind == "depthwise" or geo.group > DENSE_GROUPS or geo.transposed
            or not k.ctx.is_host_constant(weight)):
        return None
    return block_diagonal(k.ctx, geo, weight)


def block_diagonal(ctx: LoweringContext, geo: ConvShape,
                   weight: SSAValue) -> tuple[ConvShape, SSAValue] | None:
    """A grouped conv's dense geometry and weight, zero between the groups (a host constant);
    None where the weight is no constant."""
    array = constant_array(weight)
    if array is None:
        return None
    out_per, in_per = geo.out_per_group, geo.in_per_group
    dense = np.zeros((geo.output[1], geo.input[1], *array.shape[2:]), np.float32)
    for g in range(geo.group):
        dense[g * out_per:(g + 1) * out_per, g * in_per:(g + 1) * in_per] = (
            array[g * out_per:(g + 1) * out_per])
    constant = ctx.host().insert(make_constant(dense))
    return dataclasses.replace(geo, group=1), constant.results[0]


def wide_conv(k: KernelContext, geo: ConvShape) -> bool:
    """Whether a conv takes a wide kernel: stored in buffers (a device whose images are
    slower, `onnx-to-texture{buffers=true}`), ungrouped or depthwise, its output in nc4hw4."""
    return (k.ctx.buffers and k.out.layout is Layout.NC4HW4
            and (geo.kind == "depthwise" or (geo.kind == "blocked" and geo.group == 1)))


def conv_plan(k: KernelContext, geo: ConvShape, x_value: SSAValue, weight_value: SSAValue,
              host_computed: bool) -> GemmPlan | None:
    """
    The blocked product's plan for a conv as implicit GEMM, or None where it does not
    apply (`conv_product`; its input and output stored in images, the input no view) or
    `texture-tile` chose a one-pixel kernel: the recorded configuration's plan, else (no
    configuration) the fixed rule's.
    """
    ctx = k.ctx
    if (not ctx.blocked or ctx.buffers or host_computed or k.out.layout is not Layout.NC4HW4
            or x_value in ctx.views or not isinstance(k.out_stored.storage.type, Image2DType)):
        return None
    stored = ctx.stored.get(x_value)
    if stored is not None and not isinstance(stored.storage.type, Image2DType):
        return None
    layout = stored.layout if stored else Layout.NC4HW4
    constant = ctx.is_host_constant(weight_value)
    product = conv_product(geo, layout, constant, ctx.max_image)
    if product is None:
        k.recorded_plan_over_limit(conv_product(geo, layout, constant, UNLIMITED_IMAGE) is not None)
        return None
    if k.config is None:
        return next(iter(conv_plans(product, ctx.max_image)), None)
    plan = k.config.plan
    if plan is not None and plan.split > 1 and plan.split * product[0] > ctx.max_image[1]:
        raise LoweringError(f"{k.label}: the recorded {k.config.describe()} needs a partial-"
                            f"sum image of {plan.split * product[0]} rows, over the limit "
                            f"{ctx.max_image[1]}")
    return plan


def conv_product(geo: ConvShape, x_layout: Layout, weight_constant: bool,
                 max_image: tuple[int, int]) -> tuple[int, int, int] | None:
    """
    The implicit GEMM (rows: output positions, columns: output channels, K: taps by input
    channels) that the blocked product computes for a conv, or None where it cannot:
    ungrouped or of a few groups (computed as the dense conv, `DENSE_BLOCKED_GROUPS`), not
    depthwise nor transposed, its input in `nc4hw4`, a constant weight (packed `hwio4`,
    whose rows are K), and input, weight and output within the image limits. The lowering
    asks this, and `prune_configs.kernel_of` asks it before the layouts are chosen.
    """
    if (geo.group > DENSE_BLOCKED_GROUPS or geo.kind == "depthwise" or geo.transposed
            or x_layout is not Layout.NC4HW4 or not weight_constant):
        return None
    weight_shape = (geo.output[1], geo.input[1], *geo.kernel)
    if any(w > max_image[0] or h > max_image[1]
           for w, h in (image_size(Layout.NC4HW4, geo.input),
                        image_size(Layout.HWIO4, weight_shape),
                        image_size(Layout.NC4HW4, geo.output))):
        return None
    n, cout, ho, wo = geo.output
    return n * ho * wo, cout, geo.kernel[0] * geo.kernel[1] * 4 * ceil4(geo.input[1])


def conv_plans(product: tuple[int, int, int], max_image: tuple[int, int]) -> list[GemmPlan]:
    """The blocked product's plans for a conv's product (`gemm_plans`, K split too), a
    split one's partial-sum image within the limits."""
    rows, cols, depth = product
    return [p for p in gemm_plans(rows, cols, depth, split=True)
            if p.split == 1 or p.split * rows <= max_image[1]]


def blocked_conv(k: KernelContext, op: Operation, geo: ConvShape, weight_value: SSAValue,
                 bias: TensorView | None, plan: GemmPlan, act: tuple[str, Sequence[float]]):
    """
    The conv by `blocked_product`: A's pixel (m, kq) is the input pixel of channel block
    kq % ceil4(C) at tap kq // ceil4(C) of output position m (zero off the input or past
    K), B the `hwio4` weight, whose rows are K. With K split, a first kernel writes each
    slice's sums into rows of a partial-sum image and this op's kernel adds them.
    """
    ctx, kb = k.ctx, k.kb
    n_out, cout, ho, wo = geo.output
    channels, height, width = geo.input[1:]
    blocks, (kh_size, kw_size) = ceil4(channels), geo.kernel
    rows, pixels, depth = n_out * ho * wo, ceil4(cout), kh_size * kw_size * 4 * blocks
    x_stored = ctx.tensor(op.operands[0], k.label, Layout.NC4HW4)
    weight = ctx.pack(weight_value, Layout.HWIO4, k.label)
    split = plan.split > 1
    if split:  # the slices' kernel
        pk = KernelBuilder(ctx.kernel_name("conv_slices"), [])
        x_arg, w_arg = pk.add_arg("x", x_stored.storage.type), pk.add_arg("weight",
                                                                        weight.storage.type)
    else:
        pk = kb
        x_arg, w_arg = k._arg(x_stored.storage, "x"), k._arg(weight.storage, "weight")

    def position(m: Val) -> tuple[Val, Val, Val]:
        return m // (ho * wo), m // wo % ho, m % wo

    check_h = window_needs_check(height, ho, kh_size, geo.strides[0], geo.dilations[0],
                                 geo.pads[0])
    check_w = window_needs_check(width, wo, kw_size, geo.strides[1], geo.dilations[1],
                                 geo.pads[1])

    def read_a(m: Val) -> Callable[[Val], Val]:
        n, oh, ow = position(m)
        base_h = oh * geo.strides[0] - geo.pads[0]
        base_w = ow * geo.strides[1] - geo.pads[1]

        def read(kq: Val) -> Val:
            step, cb = kq // blocks, kq % blocks
            ih = base_h + step // kw_size * geo.dilations[0]
            iw = base_w + step % kw_size * geo.dilations[1]
            valid = [kq < depth // 4]
            if check_h:
                valid.append(in_range(pk, ih, height))
            if check_w:
                valid.append(in_range(pk, iw, width))
            px = pk.read(x_arg, cb * width + iw, n * height + ih)
            return pk.select(pk.all(valid), px, 0.0)

        return read

    def read_b(kk: Val, x: Val) -> Val:
        return pk.read(w_arg, x, kk)

    name, params = act

    def finish(value: Val, cb: Val) -> Val:
        return activation(kb, name, params, value + initial_acc(kb, bias, cb))

    if not split:
        def store(m: Val, cb: Val, acc: Val, guards: list[Val]) -> None:
            n, oh, ow = position(m)
            k.store_at(OutputPixel(cb * wo + ow, n * ho + oh, [n, cb, oh, ow]),
                       lambda: finish(acc, cb), guards)

        k.global_size = blocked_product(kb, plan, rows, pixels, depth, read_a, read_b, store)
        k.config = TileConfig.blocked(plan)
        return
    partial_type = Image2DType(pixels, plan.split * rows, f32)
    partial = ctx.host().insert(
        texture.AllocOp(Layout.ROWS4, (plan.split * rows, cout), partial_type)).result
    partial.name_hint = "partial"
    p_arg = pk.add_arg("partial", partial_type)

    def store_slice(m: Val, x: Val, acc: Val, guards: list[Val]) -> None:
        def write() -> list[Val]:
            pk.write(p_arg, x, pk.group_id(2) * rows + m, acc)
            return []

        pk.if_(pk.all(guards), write) if guards else write()

    global_size = blocked_product(pk, plan, rows, pixels, depth, read_a, read_b, store_slice)
    pk.kernel.attributes["onnx.node"] = ocl_node_attr(op, [])
    ctx.launch(pk.finish(), [x_stored.storage, weight.storage, partial], global_size,
               plan.group, kernel_flops(op, []))
    # this op's kernel: one output pixel a work-item, the slices' sums added
    k.config = None  # texture-tile's configuration was for the conv's own kernel
    k.flops = plan.split * prod(geo.output)  # the adds (and bias); the epilogue's uncounted
    n, cb, oh, ow = k.pixel.block
    m = (n * ho + oh) * wo + ow
    sums = k._view(Stored(partial, Layout.ROWS4, (plan.split * rows, cout)), "partial")
    total = sums.read_block([m, cb])
    for s in range(1, plan.split):
        total = total + sums.read_block([s * rows + m, cb])
    k.store(finish(total, cb))


def skips_exactly(geo: ConvShape, weight: SSAValue) -> bool:
    """
    Whether a conv must skip its taps on the padding, not multiply zeros there: some tap
    of it falls outside the input (a pad, or a transposed conv's gaps) and its weight
    (as the graph gives it) is not a constant whose values are all finite.
    """
    outside = geo.transposed or any(
        window_needs_check(geo.input[2 + a], geo.output[2 + a], geo.kernel[a], geo.strides[a],
                           geo.dilations[a], geo.pads[a]) for a in range(2))
    if not outside:
        return False
    array = constant_array(weight)
    return array is None or not bool(np.isfinite(array).all())


def emit_conv(ctx: LoweringContext, op: Operation, epilogue: list[Operation], geo: ConvShape,
              weight_value: SSAValue, bias_value: SSAValue | None,
              act: tuple[str, Sequence[float]] = ("", ()), host_computed: bool = False) -> None:
    """The kernel of a convolution whose weight is (M, C/group, KH, KW)."""
    k = KernelContext(ctx, op, "conv", epilogue)
    kb = k.kb
    if skips_exactly(geo, op.operands[1]):
        # the one-pixel kernel: rows and columns off the input are branched around
        k.config = None
        one_pixel_conv(k, geo, weight_value, bias_value, act, host_computed)
        return
    grouped = None  # the grouped conv that runs as a dense one in the wide kernel
    dense = None if host_computed else dense_from_groups(k, geo, weight_value)
    if dense is not None:
        grouped, (geo, weight_value) = geo, dense
    plan = conv_plan(k, geo, op.operands[0], weight_value, host_computed)
    if plan is not None and geo.group > 1:
        dense = block_diagonal(ctx, geo, weight_value)
        if dense is None:
            plan = None  # a weight the host computes: it stays grouped
        else:
            geo, weight_value = dense
    if plan is None and k.config is not None and k.config.plan is not None:
        k.config = None  # a blocked choice it cannot take (blocked=false): the defaults
    if plan is not None:
        bias = k.input(bias_value, Layout.ROWS4, "bias") if bias_value is not None else None
        blocked_conv(k, op, geo, weight_value, bias, plan, act)
        k.finish()
        return
    x = activation_input(k, op.operands[0])
    bias = k.input(bias_value, Layout.ROWS4, "bias") if bias_value is not None else None
    name, params = act
    if wide_conv(k, geo) and grouped is None and takes_winograd(k, geo, x, weight_value):
        winograd_conv(k, geo, x, weight_value, bias, lambda v: activation(kb, name, params, v))
        k.finish()
        return
    if wide_conv(k, geo) and row_depthwise(geo, x):
        weight = host_weight(k, weight_value, Layout.DW4, host_computed=host_computed)
        k.config = None
        store_rows(k, row_depthwise_tile(kb, geo, x, weight, bias),
                   lambda v: activation(kb, name, params, v))
        k.finish()
        return
    if wide_conv(k, geo):
        depthwise = geo.kind == "depthwise"
        weight = host_weight(k, weight_value, Layout.DW4 if depthwise else Layout.HWIO4,
                             host_computed=host_computed)
        k.config = None  # texture-tile's configurations are the image kernels'
        tile = (wide_depthwise_tile(kb, geo, x, weight, bias) if depthwise
                else wide_tile(kb, geo, x, weight, bias, grouped))
        store_wide(k, tile, wide_width(geo.output[3]), lambda v: activation(kb, name, params, v))
        k.finish()
        return
    width = min(k.config.tile[0] if k.config else TILE_WIDTH, geo.output[3])
    tiled_conv(k, geo, x, weight_value, bias, act, host_computed, width)


def one_pixel_conv(k: KernelContext, geo: ConvShape, weight_value: SSAValue,
                   bias_value: SSAValue | None, act: tuple[str, Sequence[float]],
                   host_computed: bool) -> None:
    """The conv one output pixel a work-item (`skips_exactly`)."""
    x = activation_input(k, k.op.operands[0])
    bias = k.input(bias_value, Layout.ROWS4, "bias") if bias_value is not None else None
    tiled_conv(k, geo, x, weight_value, bias, act, host_computed, 1)


def tiled_conv(k: KernelContext, geo: ConvShape, x: TensorView, weight_value: SSAValue,
               bias: TensorView | None, act: tuple[str, Sequence[float]],
               host_computed: bool, width: int) -> None:
    """The blocked, depthwise or grouped kernel, `width` output pixels a work-item."""
    kb = k.kb
    name, params = act
    if geo.kind == "blocked":
        weight = host_weight(k, weight_value, Layout.OIHW4O, host_computed=host_computed)
        tile = blocked_tile(kb, geo, x, weight, bias)
    elif geo.kind == "depthwise":
        weight = host_weight(k, weight_value, Layout.DW4, host_computed=host_computed)
        tile = depthwise_tile(kb, geo, x, weight, bias)
    else:
        weight = host_weight(k, weight_value, Layout.OIHW4O, host_computed=host_computed)
        tile = grouped_tile(kb, geo, x, weight, bias)
        width = 1

    def activated(n: Val, cb: Val, h: Val, ws: list[Val]) -> list[Val]:
        return [activation(kb, name, params, v) for v in tile(n, cb, h, ws)]

    store_tiles(k, activated, width)
    k.finish()


def optional(value: SSAValue) -> SSAValue | None:
    return None if is_none(value) else value


# rules ------------------------------------------------------------------------------------


def conv_geometry(op: Operation) -> ConvShape:
    """The explicit geometry of a rank-4 Conv, FusedConv or ConvTranspose."""
    assert isinstance(op, onnx.ConvOp | onnx.FusedConvOp | onnx.ConvTransposeOp)
    x, w, y = shape(op.X), shape(op.W), shape(op.Y)
    transposed = isinstance(op, onnx.ConvTransposeOp)
    try:
        win = op.transposed_window(x, w)[0] if transposed else op.window(x[2:], w[2:])
    except ShapeError as e:
        raise LoweringError(f"{node_label(op)}: {e}") from None
    return ConvShape(x, y, win.kernel, win.strides, win.dilations, win.pads[:2],
                     op.int_attr("group"), transposed)


@lowers(onnx.ConvOp, onnx.FusedConvOp)
def lower_conv(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    assert isinstance(op, onnx.ConvOp | onnx.FusedConvOp)
    require_rank4(op, op.X, op.W, op.Y)
    geo = conv_geometry(op)
    act: tuple[str, Sequence[float]] = ("", ())
    if isinstance(op, onnx.FusedConvOp):
        act = (op.activation.data, op.floats_attr("activation_params") or ())
    emit_conv(ctx, op, epilogue, geo, op.W, optional(op.B), act)


@lowers(onnx.ConvTransposeOp)
def lower_conv_transpose(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    assert isinstance(op, onnx.ConvTransposeOp)
    require_rank4(op, op.X, op.W, op.Y)
    geo = conv_geometry(op)
    group = geo.group
    if not is_host_packed(op.W):
        raise LoweringError(f"{node_label(op)}: the weight must be a constant or a graph input")
    emit_conv(ctx, op, epilogue, geo, regroup_transposed_weight(ctx, op.W, group),
              optional(op.B), host_computed=True)


def regroup_transposed_weight(ctx: LoweringContext, weight: SSAValue, group: int) -> SSAValue:
    """
    Host ops turning a ConvTranspose weight (C, M/g, KH, KW) into the (M, C/g, KH, KW)
    weight of the convolution that gathers the same sums.
    """
    c, m_group, kh, kw = shape(weight)
    host = ctx.host()

    def add(op: Operation) -> SSAValue:
        host.insert(op)
        return op.results[0]

    def reshape(value: SSAValue, dims: Sequence[int]) -> SSAValue:
        target = add(onnx.ConstantOp(np.array(dims, np.int64)))
        return add(onnx.ReshapeOp.create(
            operands=[value, target], result_types=[tensor(element_type(value), dims)]))

    def transpose(value: SSAValue, perm: Sequence[int]) -> SSAValue:
        dims = [shape(value)[p] for p in perm]
        return add(onnx.TransposeOp.create(
            operands=[value], result_types=[tensor(element_type(value), dims)],
            properties={"perm": DenseArrayBase.from_list(i64, list(perm))}))

    if group == 1:
        return transpose(weight, (1, 0, 2, 3))
    grouped = reshape(weight, (group, c // group, m_group, kh, kw))
    swapped = transpose(grouped, (0, 2, 1, 3, 4))
    return reshape(swapped, (group * m_group, c // group, kh, kw))


def element_type(value: SSAValue):
    return value.type.element_type  # type: ignore[union-attr]
