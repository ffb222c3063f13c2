"""
Lowering rules: pools and channel normalisations on rank-4 NCHW tensors
(MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, LRN) and inference-mode
BatchNormalization.

A work-item computes one output pixel, four channels at (n, h, w), from whole
input pixels; window taps outside the input are skipped (see `conv.over_taps`).
A max is NaN where its window holds a NaN (`reduce.fold`).
AveragePool divides by the number of taps inside the input, or with
`count_include_pad` inside the input and its pads (never ceil mode's extra room).
"""

from __future__ import annotations

import math

from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.shapes import ShapeError
from mobile_opt.dialects.texture import Layout
from mobile_opt.dialects.texture.layouts import ceil4
from mobile_opt.models.conv_shape import ConvShape
from xdsl.ir import Operation, SSAValue

from .context import KernelContext, LoweringContext
from .nodes import LoweringError, node_label, shape
from .conv import (
    Column,
    activation_input,
    channel_block,
    in_range,
    over_taps,
    require_rank4,
    store_nchw,
)
from .kernel_builder import KernelBuilder, Val
from .reduce import end, fold, start
from .rules import lowers
from .views import TensorView


def pool_shape(op: onnx.MaxPoolOp | onnx.AveragePoolOp) -> tuple[ConvShape, tuple[int, int]]:
    """
    The window geometry of a 2-D pool, in the form `over_window` walks, and its end
    pads (h, w), declared or from auto_pad (without ceil mode's extra room).
    """
    x, y = shape(op.X), shape(op.Y)
    try:
        win = op.window(x[2:])
    except ShapeError as e:
        raise LoweringError(f"{node_label(op)}: {e}") from None
    geo = ConvShape(x, y, win.kernel, win.strides, win.dilations, win.pads[:2], 1, False)
    return geo, win.pads[2:]


def window_count(kb: KernelBuilder, geo: ConvShape, axis: int, out_pos: Val,
                 lo: int, hi: int) -> Val:
    """How many taps of the window at `out_pos` along `axis` land in [lo, hi)."""
    kernel, stride = geo.kernel[axis], geo.strides[axis]
    dilation, pad = geo.dilations[axis], geo.pads[axis]
    last = (geo.output[2 + axis] - 1) * stride - pad + (kernel - 1) * dilation
    if -pad >= lo and last < hi:
        return kb.int(kernel)

    def tap(k: Val, count: Val) -> list[Val]:
        pos = out_pos * stride - pad + k * dilation
        return [count + kb.select((pos >= lo) & (pos < hi), kb.int(1), kb.int(0))]

    return kb.loop(0, kernel, tap, [kb.int(0)], name="k")[0]


@lowers(onnx.MaxPoolOp, onnx.AveragePoolOp)
def lower_pool(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    assert isinstance(op, onnx.MaxPoolOp | onnx.AveragePoolOp)
    if len(op.results) != 1:
        raise LoweringError(f"{node_label(op)}: the Indices output has no GPU kernel")
    require_rank4(op, op.X, op.Y)
    geo, end_pads = pool_shape(op)
    is_max = isinstance(op, onnx.MaxPoolOp)
    k = KernelContext(ctx, op, "maxpool" if is_max else "avgpool", epilogue)
    kb = k.kb
    x = activation_input(k, op.X)

    def pixel(n: Val, cb: Val, h: Val, w: Val) -> Val:
        kind = "max" if is_max else "sum"

        def step(kh: Val, kw: Val, ih: Val, cols: list[Column], accs: list[Val]) -> list[Val]:
            return fold(kb, kind, accs, channel_block(x, n, cb, ih, cols[0].iw))

        init = [v.named("acc") for v in start(kb, kind, True)]
        result = end(kind, over_taps(kb, geo, h, [w], init, step))
        if is_max:
            return result
        counts = []
        for axis, pos in ((0, h), (1, w)):
            size = geo.input[2 + axis]
            if op.int_attr("count_include_pad"):
                lo, hi = -geo.pads[axis], size + end_pads[axis]
                counts.append(window_count(kb, geo, axis, pos, lo, hi))
            else:
                counts.append(window_count(kb, geo, axis, pos, 0, size))
        return result / kb.to_float(counts[0] * counts[1])

    store_nchw(k, pixel)
    k.finish()


@lowers(onnx.GlobalAveragePoolOp, onnx.GlobalMaxPoolOp)
def lower_global_pool(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    assert isinstance(op, onnx.GlobalAveragePoolOp | onnx.GlobalMaxPoolOp)
    require_rank4(op, op.X, op.Y)
    is_max = isinstance(op, onnx.GlobalMaxPoolOp)
    k = KernelContext(ctx, op, "globalpool", epilogue)
    kb = k.kb
    x = activation_input(k, op.X)
    _, _, height, width = shape(op.X)

    def pixel(n: Val, cb: Val, _h: Val, _w: Val) -> Val:
        kind = "max" if is_max else "sum"

        def row(h: Val, *accs: Val) -> list[Val]:
            def column(w: Val, *accs: Val) -> list[Val]:
                return fold(kb, kind, accs, channel_block(x, n, cb, h, w))

            return kb.loop(0, width, column, list(accs), name="w")

        init = [v.named("acc") for v in start(kb, kind, True)]
        result = end(kind, kb.loop(0, height, row, init, name="h"))
        return result if is_max else result * (1.0 / (height * width))

    store_nchw(k, pixel)
    k.finish()


def guarded_block(x: TensorView, n: Val, cb: Val, h: Val, w: Val, blocks: int) -> Val:
    """`channel_block` at block `cb`, or zeros where `cb` is outside [0, blocks)."""
    kb = x.kb
    if cb.const is not None and 0 <= cb.const < blocks:
        return channel_block(x, n, cb, h, w)
    clamped = kb.min(kb.max(cb, 0), blocks - 1)
    return kb.select(in_range(kb, cb, blocks), channel_block(x, n, clamped, h, w), 0.0)


@lowers(onnx.LRNOp)
def lower_lrn(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """
    `x / (bias + alpha/size * sum of squares over channels c-⌊(size-1)/2⌋ ..
    c+⌈(size-1)/2⌉)^beta`: the pixels of the neighbouring channel blocks are read
    once, squared, and each lane sums its window from them.
    """
    assert isinstance(op, onnx.LRNOp)
    require_rank4(op, op.X, op.Y)
    size = op.int_attr("size")
    alpha, beta, bias = (op.float_attr(a) for a in ("alpha", "beta", "bias"))
    before = (size - 1) // 2
    after = size - 1 - before
    k = KernelContext(ctx, op, "lrn", epilogue)
    kb = k.kb
    x = activation_input(k, op.X)
    blocks = ceil4(shape(op.X)[1])

    def pixel(n: Val, cb: Val, h: Val, w: Val) -> Val:
        first, last = -before // 4, (3 + after) // 4  # block offsets around cb
        squares = {}
        for offset in range(first, last + 1):
            px = channel_block(x, n, cb, h, w) if offset == 0 else guarded_block(
                x, n, cb + offset, h, w, blocks)
            if offset == 0:
                centre = px
            squares[offset] = px * px
        lanes = []
        for lane in range(4):
            total: Val | None = None
            for c in range(lane - before, lane + after + 1):
                term = kb.lane(squares[c // 4], c % 4)
                total = term if total is None else total + term
            lanes.append(total)
        scale = kb.vec4(lanes) * (alpha / size) + bias
        return centre / kb.pow(scale, beta)

    store_nchw(k, pixel)
    k.finish()


@lowers(onnx.BatchNormalizationOp)
def lower_batch_normalization(
    ctx: LoweringContext, op: Operation, epilogue: list[Operation]
) -> None:
    """`(x - mean) * scale / sqrt(var + epsilon) + B` with per-channel (axis 1) operands."""
    assert isinstance(op, onnx.BatchNormalizationOp)
    if len(op.results) != 1 or op.int_attr("training_mode"):
        raise LoweringError(
            f"{node_label(op)}: only inference-mode BatchNormalization runs on the GPU")
    rank = len(shape(op.X))
    if rank < 2:
        raise LoweringError(f"{node_label(op)}: the input needs a channel axis")
    k = KernelContext(ctx, op, "batchnorm", epilogue)
    kb = k.kb
    epsilon = op.float_attr("epsilon")
    params = [k.input(v, Layout.ROWS4, hint) for v, hint in (
        (op.scale, "scale"), (op.B, "shift"), (op.input_mean, "mean"), (op.input_var, "var"))]

    def normalize(xv: Val, scale: Val, shift: Val, mean: Val, var: Val) -> Val:
        return (xv - mean) * (scale * kb.math("rsqrt", var + epsilon)) + shift

    if rank == 4:
        x = activation_input(k, op.X)

        def pixel(n: Val, cb: Val, h: Val, w: Val) -> Val:
            return normalize(channel_block(x, n, cb, h, w), *(p.read_block([cb]) for p in params))

        store_nchw(k, pixel)
    else:
        store_elementwise_per_channel(k, op.X, params, normalize)
    k.finish()


def store_elementwise_per_channel(k: KernelContext, value: SSAValue, params: list[TensorView],
                                  fn) -> None:
    """
    Store `fn(x, *params[c])` for an input of any rank, lane by lane: element
    (.., c, ..) of the output pixel meets the channel-c elements of `params`.
    """
    kb = k.kb
    x = k.input(value)
    out = k.out
    packed = out.packed_axis
    extent = out.shape[packed]
    lanes = []
    for lane in range(4):
        idx: list[Val | int] = list(k.pixel.block)
        idx[packed] = kb.min(kb.like(idx[packed], kb.int(0)) * 4 + lane, extent - 1)
        channel = idx[1]
        lanes.append(fn(x.read(idx), *(p.read([channel]) for p in params)))
    k.store(kb.vec4(lanes))
