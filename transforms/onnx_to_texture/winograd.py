"""
Winograd F(2x2, 3x3) for the wide kernels' convs (issue 22): in buffers, an ungrouped 3x3
conv of stride and dilation 1 computes each 2x2 block of outputs from a 4x4 input patch,

    Y = Aᵀ [ Σ_i (G g_i Gᵀ) ⊙ (Bᵀ d_i B) ] A        (i over input channels)

16 multiplies where the direct kernel takes 36, at the price of a few adds. U = G g Gᵀ is
computed on the host, once per weight: a (M, C, 4, 4) constant packed in `hwio4`, whose
sixteen "taps" are the positions of the 4x4 product, so a row of U is sixteen output
channels as in the wide kernel. A work-item computes sixteen output channels (four blocks)
at 2 rows by 2T columns: T neighbouring tiles along w share each read of U.

It makes four passes over the input channels, one per row a of the 4x4 products, so that
only that row's sums (four float16s a tile) are carried through the loop. Per input block
a pass reads the two patch rows that Bᵀ's row a takes (zero off the input: positions are
clamped and masked, as the wide kernel's columns), combines them and then each tile's
columns (adds only, four channels at once: Bᵀ has entries 0 and ±1), and meets each
channel's lane of V with four rows of U. After the pass, Aᵀ's column a takes the row's
share of the outputs (adds only too); the bias and the fused epilogue follow, as in the
wide kernel's stores.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from mobile_opt.dialects.onnx.base import constant_array
from mobile_opt.dialects.texture import Layout
from mobile_opt.dialects.texture.layouts import ceil4
from mobile_opt.models.conv_shape import ConvShape
from mobile_opt.transforms.onnx_utils import make_constant

from .context import KernelContext
from .kernel_builder import KernelBuilder, Val
from .views import OutputPixel, TensorView

G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
"""The weight transform of F(2, 3) (Lavin and Gray's)."""
BT = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
"""Bᵀ, the input transform: each row takes two of the four inputs."""
AT = ((1, 1, 1, 0), (0, 1, -1, -1))
"""Aᵀ, the output transform."""
BT_ROWS = tuple((row.index(1), next(i for i, c in enumerate(row) if c and i != row.index(1)),
                 next(c for i, c in enumerate(row) if c and i != row.index(1))) for row in BT)
"""Row a of Bᵀ as (r0, r1, s): d[r0] + s·d[r1], which a pass reads as two patch rows."""

MIN_CHANNELS = 8
"""The fewest input channels for which Winograd measured faster on PoCL (`bench/kernels.py
--winograd`): at 4 the two kernels run alike, the patch's reads and transforms amortised
over too few products."""
MIN_POSITIONS = 64
"""The fewest output positions (h·w) for which it measured faster: at 7x7 ResNet-50's conv
of 512 channels runs about 1.4x slower in Winograd (16 values of U per channel pair
against 9, read for only 16 tiles, and nearly a quarter of the 8x8 outputs computed past
the edges), and one of 256 channels about alike."""

TILES = 6
"""The most Winograd tiles along w (2 output columns each) that one work-item computes: on
PoCL 4 to 6 measured alike, and 7 (28 float16 sums carried) up to twice as slow at 512
channels."""


def tiles_per_item(tiles: int) -> int:
    """Of `TILES` down to 4, the tiles a work-item computes that leave the fewest computed
    past the row's end (the most of those): 4 for rows of 4, 7 or 28 tiles, 5 for 14."""
    counts = range(min(TILES, tiles), min(4, tiles) - 1, -1)
    return min(counts, key=lambda t: -(-tiles // t) * t)


def transformed_weight(weight: np.ndarray) -> np.ndarray:
    """U = G g Gᵀ of each (output, input) channel's 3x3 kernel: (M, C, 4, 4), computed in
    float64 and rounded once."""
    return np.einsum("ak,mckl,bl->mcab", G, weight.astype(np.float64), G).astype(np.float32)


def takes_winograd(k: KernelContext, geo: ConvShape, x: TensorView, weight: SSAValue) -> bool:
    """
    Whether a wide conv takes Winograd: asked for (`onnx-to-texture{winograd=true}`; off by
    default, as whole models on PoCL ran no faster with it and the small ones slower), an
    ungrouped 3x3 conv of stride and dilation 1 whose input is nc4hw4 and weight a constant
    the host can transform, where it measured faster (`MIN_CHANNELS`, `MIN_POSITIONS`).
    """
    return (k.ctx.winograd and geo.group == 1 and not geo.transposed
            and geo.kernel == (3, 3) and geo.strides == (1, 1) and geo.dilations == (1, 1)
            and x.layout is Layout.NC4HW4 and geo.input[1] >= MIN_CHANNELS
            and geo.output[2] * geo.output[3] >= MIN_POSITIONS
            and k.ctx.is_host_constant(weight) and constant_array(weight) is not None)


def _combine(row: tuple[int, ...], values: list[Val]) -> Val:
    """Σ row[i] values[i] for coefficients 0 and ±1, the row having a +1: adds only."""
    plus = [v for c, v in zip(row, values) if c > 0]
    total = plus[0]
    for v in plus[1:]:
        total = total + v
    for c, v in zip(row, values):
        if c < 0:
            total = total - v
    return total


def winograd_conv(k: KernelContext, geo: ConvShape, x: TensorView, weight_value: SSAValue,
                  bias: TensorView | None, finish: Callable[[Val], Val]) -> None:
    """
    The kernel of a conv that `takes_winograd`: its range, body and stores; `finish` takes
    each float4 of the result to the value stored (the activation).
    """
    kb = k.kb
    batch, out_channels, out_h, out_w = geo.output
    in_channels, height, width = geo.input[1:]
    u = k.ctx.host().insert(make_constant(transformed_weight(constant_array(weight_value))))
    u.results[0].name_hint = f"{weight_value.name_hint or 'weight'}_winograd"
    weight = k.weight(u.results[0], Layout.HWIO4)
    k.config = None  # texture-tile's configurations are the image kernels'

    tiles_h, tiles_w = -(-out_h // 2), -(-out_w // 2)
    per_item = tiles_per_item(tiles_w)
    items_w = -(-tiles_w // per_item)
    blocks = ceil4(out_channels)
    k.global_size = (items_w * -(-blocks // 4), batch * tiles_h)
    gx, gy = k.pixel.x, k.pixel.y
    n, th = (gy // tiles_h).named("n"), (gy % tiles_h).named("th")
    g, tw = (gx // items_w).named("g"), (gx % items_w).named("tw")
    h0, w0 = (th * 2).named("h0"), (tw * (2 * per_item)).named("w0")
    cols = patch_positions(kb, w0, 2 * per_item + 2, geo.pads[1], width, items_w * per_item)

    cbs = [g * 4 + j for j in range(4)]
    zero = kb.vec16([kb.float4(0.0)] * 4).named("m")
    bias16 = (kb.vec16([bias.read_block([kb.min(cb, blocks - 1)]) for cb in cbs])
              if bias is not None else None)

    def row_pass(a: Val, *outs: Val) -> list[Val]:
        """Row a of the 4x4 products over every input channel, and its share of Y."""
        r0, r1 = _pick(kb, a, [BT_ROWS[i][0] for i in range(4)]), _pick(
            kb, a, [BT_ROWS[i][1] for i in range(4)])
        sign = _pick(kb, a, [float(BT_ROWS[i][2]) for i in range(4)])
        rows = [patch_position(kb, h0 + r, geo.pads[0], height, tiles_h) for r in (r0, r1)]
        masks = [[kb.all([m for m in (row_in, col_in) if m is not None]) for _, col_in in cols]
                 for _, row_in in rows]
        starts = [zero] * (4 * per_item)
        if bias16 is not None:  # M[1][1] meets every output with coefficient 1
            first = (kb.splat16(_pick(kb, a, [0.0, 1.0, 0.0, 0.0])) * bias16).named("m")
            starts = [first if b == 1 else zero for _ in range(per_item) for b in range(4)]

        def channels(ib: Val, *accs: Val) -> list[Val]:
            pixels = [[x.read_block([n, ib, y, iw]) for iw, _ in cols] for y, _ in rows]
            pixels = [[px if mask.const is not None else kb.select(mask, px, 0.0)
                       for px, mask in zip(line, line_masks)]
                      for line, line_masks in zip(pixels, masks)]
            across = [kb.fma(sign, p1, p0) for p0, p1 in zip(*pixels)]  # (Bᵀ d)[a]
            vs = [[_combine(BT[b], across[2 * t:2 * t + 4]) for b in range(4)]
                  for t in range(per_item)]
            accs = list(accs)
            for j in range(4):
                if ib.const is not None and ib.const * 4 + j >= in_channels:
                    break
                for b in range(4):
                    row = weight.read_row16([cbs[0], ib * 4 + j, a, b])
                    for t in range(per_item):
                        accs[t * 4 + b] = kb.fma(kb.splat16(kb.lane(vs[t][b], j)), row,
                                                 accs[t * 4 + b])
            return accs

        accs = kb.loop(0, ceil4(in_channels), channels, starts, name="ib")
        weights = [kb.splat16(_pick(kb, a, [float(c) for c in AT[p]])) for p in range(2)]
        outs = list(outs)
        for t in range(per_item):
            for q in range(2):
                share = _combine(AT[q], accs[t * 4:t * 4 + 4])  # (M A)[a][q]
                for p in range(2):
                    i = (t * 2 + p) * 2 + q
                    outs[i] = kb.fma(weights[p], share, outs[i])  # Aᵀ's column a
        return outs

    outs = kb.loop(0, 4, row_pass, [zero] * (4 * per_item), name="a")

    ragged_h, ragged_w = out_h % 2 != 0, out_w % (2 * per_item) != 0
    for t in range(per_item):
        for p in range(2):
            for q in range(2):
                h, w = h0 + p, w0 + (2 * t + q)
                for j, cb in enumerate(cbs):
                    guards = ([h < out_h] if ragged_h and p else []) + (
                        [w < out_w] if ragged_w and (t or q) else []) + (
                        [cb < blocks] if blocks % 4 and j else [])
                    value = outs[(t * 2 + p) * 2 + q]
                    k.store_at(OutputPixel(cb * out_w + w, n * out_h + h, [n, cb, h, w]),
                               lambda part=kb.part4(value, j): finish(part), guards)


def patch_positions(kb: KernelBuilder, start: Val, count: int, pad: int, size: int,
                    tiles: int) -> list[tuple[Val, Val | None]]:
    """The `count` input positions from `start - pad` of a patch along one axis
    (`patch_position`)."""
    return [patch_position(kb, start + i, pad, size, tiles) for i in range(count)]


def patch_position(kb: KernelBuilder, at: Val, pad: int, size: int,
                   tiles: int) -> tuple[Val, Val | None]:
    """Input position `at - pad` of a patch, clamped into the input, with whether it lies
    inside (None: always, where no tile of the `tiles` along the axis reaches past it)."""
    pos = at - pad
    if pad > 0 or 2 * tiles + 1 - pad > size - 1:
        return kb.min(kb.max(pos, 0), size - 1), (pos >= 0) & (pos < size)
    return pos, None


def _pick(kb: KernelBuilder, a: Val, table: list) -> Val:
    """table[a] for a loop index a in 0..3: selects, the table's entries constants."""
    value = kb.like(table[-1], kb.int(0) if isinstance(table[-1], int) else kb.float(0.0))
    for i in range(len(table) - 2, -1, -1):
        value = kb.select(a.eq(i), table[i], value)
    return value
