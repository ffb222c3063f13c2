"""
Reductions: `ReduceSum`/`ReduceMean`/`ReduceMax`, and the ops built on a
reduction along some axes: `Softmax`/`LogSoftmax` (one axis) and
`LayerNormalization` (axes `axis`..end).

One work-item computes one output pixel. `ReductionGroups` gives, for each of
its four lanes, a statistic of the input elements that reduce into that lane,
read the cheapest way the input's layout allows:

- *pixel*: the packed axis is not reduced and the output packs the same axis,
  so the four lanes are four independent reductions over the same pixels: one
  float4 accumulator, one pixel read per step;
- *packed*: the packed axis is reduced, so a lane's reduction reads whole pixels
  along it (the last partial pixel masked) and sums their lanes at the end; when
  all lanes of the output pixel share one reduction it runs once;
- *elements*: anything else (the two layouts disagree), per lane with scalar reads.

Softmax and LayerNormalization over trailing axes of a rows4 tensor with enough
groups (see `_whole_groups`) use one work-item per group instead: it computes the
group's statistics once and writes the group's pixels in a loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from math import prod

from xdsl.ir import Operation

from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import UnknownShape, is_none
from mobile_opt.dialects.onnx.shapes import normalize_axis
from mobile_opt.dialects.texture import Layout

from .context import KernelContext, LoweringContext
from .nodes import LoweringError, node_label, shape
from .kernel_builder import KernelBuilder, Operand, Val
from .rules import lowers
from .views import OutputPixel, TensorView, delinearize

IDENTITY = {"sum": 0.0, "max": -math.inf, "fmax": -math.inf}
"""The reductions: `max` is NaN where a NaN meets it (ReduceMax, as `numpy.max`), `fmax`
passes NaNs over (Softmax's, whose row a NaN makes NaN either way)."""


def combine(kb: KernelBuilder, kind: str, acc: Val, value: Val) -> Val:
    """`acc + value` or `max(acc, value)`."""
    if kind == "sum":
        return acc + value
    return kb.max(acc, value) if kind == "max" else kb.maxnum(acc, value)


def start(kb: KernelBuilder, kind: str, vector: bool) -> list[Val]:
    """A loop's accumulators: the reduction's identity, and for `max` the NaNs met."""
    identity = kb.float4 if vector else kb.float
    return [identity(IDENTITY[kind]), *([identity(0.0)] if kind == "max" else [])]


def fold(kb: KernelBuilder, kind: str, accs: Sequence[Val], value: Val) -> list[Val]:
    """
    One step of a loop: `max` as fmax, the NaNs summed beside it. A max that propagates
    NaN step by step is a chain of compares and selects that the compiler neither
    shortens nor reorders: twice fmax's time on PoCL (a 112-step ReduceMax: 0.30 ms
    against 0.14, and 0.15 so).
    """
    if kind != "max":
        return [combine(kb, kind, accs[0], value)]
    return [kb.maxnum(accs[0], value), accs[1] + kb.nans(value)]


def end(kind: str, accs: Sequence[Val]) -> Val:
    """The reduction a loop's accumulators hold."""
    return accs[0] + accs[1] if kind == "max" else accs[0]


def combine_lanes(kb: KernelBuilder, kind: str, v: Val, count: int = 4) -> Val:
    """The reduction of the first `count` lanes of a pixel."""
    lanes = kb.lanes(v)[:count]
    while len(lanes) > 1:
        pairs = [combine(kb, kind, lanes[i], lanes[i + 1]) for i in range(0, len(lanes) - 1, 2)]
        lanes = pairs + lanes[len(lanes) - len(lanes) % 2:]
    return lanes[0]


Transform = Callable[..., Val]
"""`transform(x, *stats)`: what is reduced, from an input value (float4 or f32) and
earlier statistics of the same lane(s)."""


def _identity(x: Val, *stats: Val) -> Val:
    return x


class ReductionGroups:
    """
    The reductions over `axes` of `source` that meet the lanes of the output
    pixel at `block`; `out_to_in[j]` is the input axis of output axis j.
    """

    def __init__(self, k: KernelContext, source: TensorView, axes: Sequence[int],
                 out_to_in: Sequence[int]):
        self.kb = k.kb
        self.source = source
        self.axes = tuple(axes)
        self.out_to_in = tuple(out_to_in)
        self.block = k.pixel.block
        out = k.out
        self.out_rank = len(out.shape)
        self.out_packed = out.packed_axis
        self.extent = out.dims[out.packed_axis]
        packed = source.packed_axis
        if self.out_rank and packed not in self.axes and out_to_in[self.out_packed] == packed:
            self.mode = "pixel"
        elif packed in self.axes:
            self.mode = "packed"
        else:
            self.mode = "elements"
        # lanes of the output pixel that meet distinct reductions
        shared = not self.out_rank or self.out_to_in[self.out_packed] in self.axes
        self.lanes = 1 if shared else min(4, self.extent)
        self.shared = shared

    @property
    def count(self) -> int:
        """Elements per reduction."""
        return prod(self.source.dims[a] for a in self.axes)

    def _input_index(self, lane: int | None) -> list[Operand]:
        """The input index of an output lane (or, for None, the input block of the pixel)."""
        kb = self.kb
        idx: list[Operand] = [0] * self.source.rank
        for j, axis in enumerate(self.out_to_in):
            idx[axis] = self.block[j]
        if lane is not None and self.out_rank:
            element = self.block[self.out_packed] * 4 + lane
            if lane and self.extent % 4:
                element = kb.min(element, self.extent - 1)
            idx[self.out_to_in[self.out_packed]] = element
        return idx

    def reduce(self, kind: str, transform: Transform = _identity, stats: Sequence[Val] = ()) -> Val:
        """Per output lane, the `kind` reduction of `transform(x, *stats)` over its group."""
        kb = self.kb
        if self.mode == "pixel":
            return end(kind, self._sweep(
                self._input_index(None), self.axes, start(kb, kind, True),
                lambda idx, accs: fold(kb, kind, accs, transform(
                    self.source.read_block(idx), *stats))))
        results = []
        for lane in range(self.lanes):
            # a shared reduction over whole pixels can take its statistics as pixels too
            whole = self.shared and self.mode == "packed"
            lane_stats = list(stats) if whole else [kb.lane(s, lane) for s in stats]
            idx = self._input_index(None if self.shared else lane)
            if self.mode == "packed":
                results.append(self._reduce_packed(idx, kind, transform, lane_stats))
            else:
                results.append(end(kind, self._sweep(
                    idx, self.axes, start(kb, kind, False),
                    lambda i, accs, st=lane_stats: fold(
                        kb, kind, accs, transform(self.source.read(i), *st)))))
        if self.shared:
            return kb.splat(results[0])
        return kb.vec4([*results, *[0.0] * (4 - self.lanes)])

    def _sweep(self, idx: list[Operand], axes: Sequence[int], init: list[Val],
               step: Callable[[list[Operand], list[Val]], list[Val]]) -> list[Val]:
        """Fold `step(index, accs)` over every index of `axes` (nested loops)."""
        kb = self.kb
        if not axes:
            return step(idx, init)
        axis, rest = axes[0], axes[1:]

        def body(i: Val, *accs: Val) -> list[Val]:
            inner = list(idx)
            inner[axis] = i
            return self._sweep(inner, rest, list(accs), step)

        return kb.loop(0, self.source.dims[axis], body, init, name=f"r{axis}")

    def _reduce_packed(self, block: list[Operand], kind: str, transform: Transform,
                       stats: Sequence[Val]) -> Val:
        """One reduction over `axes`, the packed axis among them: whole pixels, then lanes."""
        kb = self.kb
        packed = self.source.packed_axis
        outer = [a for a in self.axes if a != packed]
        full, rest = divmod(self.source.dims[packed], 4)
        identity = IDENTITY[kind]

        def row(idx: list[Operand], accs: list[Val]) -> list[Val]:
            def body(p: Val, *accs: Val) -> list[Val]:
                at = list(idx)
                at[packed] = p
                return fold(kb, kind, accs, transform(self.source.read_block(at), *stats))

            accs = kb.loop(0, full, body, accs, name="p")
            if rest:
                at = list(idx)
                at[packed] = full
                tail = kb.lanes(transform(self.source.read_block(at), *stats))
                accs = fold(kb, kind, accs, kb.vec4([*tail[:rest], *[identity] * (4 - rest)]))
            return accs

        acc = end(kind, self._sweep(block, outer, start(kb, kind, True), row))
        used = 4 if full or outer else rest
        return combine_lanes(kb, kind, acc, used)


def _kind(op: Operation) -> str:
    return "max" if isinstance(op, onnx.ReduceMaxOp) else "sum"


@lowers(onnx.ReduceSumOp, onnx.ReduceMeanOp, onnx.ReduceMaxOp)
def lower_reduce(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """Sum, mean or max over `axes` (all when absent; none with `noop_with_empty_axes`)."""
    assert isinstance(op, onnx.ReduceOp)
    in_shape = shape(op.data)
    try:
        axes = op.reduction_axes()
    except UnknownShape:
        raise LoweringError(f"{node_label(op)}: axes must be a constant") from None
    rank = len(in_shape)
    if axes is None:
        axes = tuple(range(rank))
    if not rank:
        axes = ()
    keep = bool(op.int_attr("keepdims"))
    out_to_in = list(range(rank)) if keep else [a for a in range(rank) if a not in axes]
    k = KernelContext(ctx, op, "reduce", epilogue)
    if len(k.out.shape) != len(out_to_in):
        raise LoweringError(f"{node_label(op)}: unexpected result shape {list(k.out.shape)}")
    groups = ReductionGroups(k, k.input(op.data, hint="x"), axes, out_to_in)
    value = groups.reduce(_kind(op))
    if isinstance(op, onnx.ReduceMeanOp) and axes:
        value = value * (1.0 / groups.count)
    k.store(value)
    k.finish()


Statistics = Callable[[ReductionGroups], Sequence[Val]]
PixelValue = Callable[[list[Val], Sequence[Val]], Val]


WHOLE_GROUPS_FROM = 64
"""With this many groups, one work-item per group keeps a device busy enough."""


def _whole_groups(k: KernelContext, x: TensorView, first: int) -> bool:
    """
    Whether one work-item should handle a whole group of axes `first`..end and
    write its pixels in a loop (both tensors rows4): in buffers (a CPU device, whose
    few cores gain nothing from splitting a group), or when there are at least as
    many groups as pixels per group, or `WHOLE_GROUPS_FROM` groups. Otherwise one
    work-item per pixel, each reducing its whole group, reads the group once per
    pixel but keeps more work-items busy (a classifier's one row of 1000 on PoCL:
    0.23 ms, against 5 µs whole).
    """
    out = k.out
    if not _rows4(k, x) or first >= out.rank:
        return False
    pixels = prod(out.dims[first:-1]) * out.blocks
    groups = prod(out.dims[:first])
    return pixels > 1 and (k.ctx.buffers or groups >= min(pixels, WHOLE_GROUPS_FROM))


def _normalise(k: KernelContext, x: TensorView, axes: Sequence[int],
               statistics: Statistics, pixel_value: PixelValue) -> None:
    """
    Store `pixel_value(block, stats)` at every output pixel, where `stats` are
    the `statistics` of the reductions over `axes` that the pixel's lanes meet.
    """
    out = k.out
    first = axes[0] if axes else out.rank
    trailing = tuple(axes) == tuple(range(first, out.rank))
    tile = k.config.tile[0] if k.config else None
    if tile is not None:
        if not (trailing and first == out.rank - 1 and _rows4(k, x)):
            raise LoweringError(f"{k.label}: texture.tile needs a reduction over the last axis "
                                "of a rows4 tensor")
        _row_tiles(k, x, statistics, pixel_value, min(tile, out.blocks))
    elif trailing and _whole_groups(k, x, first):
        _whole_group_rows(k, x, first, statistics, pixel_value)
    else:
        stats = statistics(ReductionGroups(k, x, axes, range(out.rank)))
        k.store(pixel_value(k.pixel.block, stats))


def _rows4(k: KernelContext, x: TensorView) -> bool:
    return k.out.layout is Layout.ROWS4 and x.layout is Layout.ROWS4


def _row_tiles(k: KernelContext, x: TensorView, statistics: Statistics,
               pixel_value: PixelValue, tile: int) -> None:
    """One work-item per `tile` pixels of a row: their statistics once, then each pixel."""
    kb, out = k.kb, k.out
    row, first = k.pixel.y, k.pixel.x * tile
    lead = delinearize(kb, row, out.dims[:-1])
    k.pixel = OutputPixel(first, row, [*lead, first])
    stats = statistics(ReductionGroups(k, x, [out.rank - 1], range(out.rank)))
    k.global_size = (-(-out.blocks // tile), prod(out.dims[:-1]))

    def pixel(t: Val) -> list[Val]:
        p = first + t
        def store() -> list[Val]:
            block = [*lead, p]
            k.pixel = OutputPixel(p, row, block)
            k.store(pixel_value(block, stats))
            return []

        if out.blocks % tile:
            kb.if_(p < out.blocks, store)
        else:
            store()
        return []

    if tile == 1:
        pixel(kb.int(0))
    else:
        kb.loop(0, tile, pixel, name="px")


def _whole_group_rows(k: KernelContext, x: TensorView, first: int, statistics: Statistics,
                      pixel_value: PixelValue) -> None:
    """One work-item per group of axes `first`..end: its statistics once, then its pixels."""
    kb, out = k.kb, k.out
    axes = range(first, out.rank)
    group = k.pixel.y
    lead = delinearize(kb, group, out.dims[:first])
    inner = out.dims[first:-1]
    k.pixel = OutputPixel(k.pixel.x, group, [*lead, *[kb.int(0)] * (out.rank - first)])
    stats = statistics(ReductionGroups(k, x, axes, range(out.rank)))
    k.global_size = (1, prod(out.dims[:first]))

    def row(r: Val) -> list[Val]:
        def pixel(p: Val) -> list[Val]:
            block = [*lead, *delinearize(kb, r, inner), p]
            k.pixel = OutputPixel(p, group * prod(inner) + r, block)
            k.store(pixel_value(block, stats))
            return []

        kb.loop(0, out.blocks, pixel, name="px")
        return []

    kb.loop(0, prod(inner), row, name="row")


@lowers(onnx.SoftmaxOp, onnx.LogSoftmaxOp)
def lower_softmax(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """`exp(x - max) / sum(exp(x - max))` (or its log) along `axis`."""
    x_shape = shape(op.operands[0])
    axis = normalize_axis(op.int_attr("axis"), len(x_shape)) if x_shape else 0
    k = KernelContext(ctx, op, "softmax", epilogue)
    kb = k.kb
    x = k.input(op.operands[0], hint="x")

    def statistics(groups: ReductionGroups) -> list[Val]:
        peak = groups.reduce("fmax")
        total = groups.reduce("sum", lambda v, m: kb.math("exp", v - m), [peak])
        return [peak, kb.math("log", total) if isinstance(op, onnx.LogSoftmaxOp) else total]

    def pixel_value(block: list[Val], stats: Sequence[Val]) -> Val:
        peak, total = stats
        shifted = x.read_broadcast_block(block, k.out.shape, k.out.packed_axis) - peak
        if isinstance(op, onnx.LogSoftmaxOp):
            return shifted - total
        return kb.math("exp", shifted) / total

    _normalise(k, x, (axis,) if x_shape else (), statistics, pixel_value)
    k.finish()


@lowers(onnx.LayerNormalizationOp)
def lower_layer_norm(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """`(x - mean) / sqrt(var + epsilon) * Scale + B`, statistics over axes `axis`..end."""
    assert isinstance(op, onnx.LayerNormalizationOp)
    x_shape = shape(op.X)
    rank = len(x_shape)
    if not rank:
        raise LoweringError(f"{node_label(op)}: LayerNormalization needs rank 1 or more")
    axis = normalize_axis(op.int_attr("axis"), rank)
    k = KernelContext(ctx, op, "layernorm", epilogue)
    kb = k.kb
    x = k.input(op.X, hint="x")
    scale = k.input(op.Scale, hint="scale")
    bias = None if is_none(op.B) else k.input(op.B, hint="bias")
    epsilon = op.float_attr("epsilon")

    def statistics(groups: ReductionGroups) -> list[Val]:
        inverse_count = 1.0 / groups.count
        mean = groups.reduce("sum") * inverse_count
        variance = groups.reduce("sum", lambda v, mu: (v - mu) * (v - mu), [mean]) * inverse_count
        return [mean, kb.math("rsqrt", variance + epsilon)]

    def pixel_value(block: list[Val], stats: Sequence[Val]) -> Val:
        mean, rstd = stats
        out_shape, packed = k.out.shape, k.out.packed_axis
        value = (x.read_broadcast_block(block, out_shape, packed) - mean) * rstd
        value = value * scale.read_broadcast_block(block, out_shape, packed)
        if bias is not None:
            value = value + bias.read_broadcast_block(block, out_shape, packed)
        return value

    _normalise(k, x, range(axis, rank), statistics, pixel_value)
    k.finish()
