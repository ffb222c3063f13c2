"""
Lowering rules: data movement (Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
Slice, Split, Concat, Pad, Expand, Gather, Resize, Identity, Dropout) and the
explicit layout change `texture.relayout`.

Every result element of these ops is a copy of one source element or a fill
value. An `IndexMap` says where each one comes from twice: in IR, for the
kernel, and in numpy, on an array of source element ids. The numpy form, packed
in the source's and the result's layouts, decides how the result is made (its copy
method, `copy_method`):

- `ALIAS`: the source storage already holds exactly the result's pixels (a
  reshape that keeps the packed axis, Identity, Dropout): no kernel.
- `BLOCK`: each result pixel is one whole source pixel with its lanes in place:
  one pixel read per work-item.
- `LANES`: otherwise each lane finds its own element (one scalar read a lane).

A Reshape, Flatten, (Un)Squeeze, Identity, Transpose, a Slice or Split with constant
parameters, or a Concat, that the layout selection marked `texture.view` (`viewable` says which can
be: every reader reads it through `KernelContext.input`, none is a graph output) gets no
kernel and no storage (`lower_view`): a reader's `KernelContext.input` returns a
`MappedView` of the stored source through the op's index map (views of views compose;
a copy kernel reading a view composes the view's map into its own). It reads whole
source pixels where the map keeps each pixel's four lanes together and in place
(`view_method`), else gathers lanes; a Concat view (`ConcatView`) branches to the
operand holding each pixel, or each lane where a boundary splits a pixel.
`view_reads_per_element` is the cost of that for the selection.

A Gather whose indices are computed at run time (an embedding lookup of token ids)
reads each index in the kernel; its method follows from the layouts alone
(`GatheredAtRunTime.method`), and it starts no chain.

A chain of single-use reshapes, transposes, slices and expands after a movement
op becomes one kernel (ShuffleNet's Reshape → Transpose → Reshape channel shuffle
is one copy). Concat picks its operand with a branch per pixel (or per lane when
an operand boundary splits a pixel of the packed axis).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import prod

import numpy as np
from mobile_opt.reference.kernels import (
    NEAREST,
    resize_scales_and_sizes,
    source_coordinates,
)
from mobile_opt.dialects import onnx, texture
from mobile_opt.dialects.onnx.base import (
    UnknownShape,
    constant_array,
    is_constant_expression,
    is_none,
)
from mobile_opt.dialects.onnx.shapes import ShapeError, normalize_axis
from mobile_opt.dialects.texture import Layout
from mobile_opt.dialects.texture.layouts import ceil4, pack
from mobile_opt.dialects.texture.value_layouts import record_view, recorded_layout
from xdsl.ir import Operation, SSAValue

from .context import KernelContext, LoweringContext, Stored
from .nodes import LoweringError, node_label, shape
from .kernel_builder import KernelBuilder, Val
from .rules import lowers
from .views import MappedView, OutputPixel, TensorView, delinearize, gather_block, linearize

Index = list[Val | int]
"""A logical element index, one entry per axis."""


# index maps ---------------------------------------------------------------------------------


@dataclass
class IndexMap:
    """Where each element of a result of `shape` comes from in the tensor `source`."""

    source: SSAValue
    shape: tuple[int, ...]

    fill: float | None = field(default=None, init=False)
    """The value of result elements with no source element (None: there are none)."""

    @property
    def source_shape(self) -> tuple[int, ...]:
        return shape(self.source)

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        """
        The source index of the result element at `idx`, and the condition that it
        has one (None: always). Where it has none the index is still in range.
        """
        raise NotImplementedError

    def ids(self, ids: np.ndarray) -> np.ndarray:
        """The result for a source holding `ids`, with -1 where `fill` goes."""
        raise NotImplementedError

    def method(self, source: Stored, layout: Layout) -> str:
        """How the result in `layout` is made from `source`: ALIAS, BLOCK or LANES."""
        return copy_method(source, layout, self)


@dataclass
class Reshaped(IndexMap):
    """The same elements in row-major order: Reshape, Flatten, (Un)Squeeze, Identity, relayout."""

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        return reshape_index(k.kb, idx, self.shape, self.source_shape), None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        return ids.reshape(self.shape)


def reshape_index(kb: KernelBuilder, idx: Index, out_shape: Sequence[int],
                  source_shape: Sequence[int]) -> Index:
    """
    The source index of element `idx` of a reshape. Runs of axes with equal
    products on both sides map independently, so only axes that really split or
    merge cost a division.
    """
    out_axes = [a for a, d in enumerate(out_shape) if d != 1]
    src_axes = [a for a, d in enumerate(source_shape) if d != 1]
    result: Index = [0] * len(source_shape)
    i = j = 0
    while i < len(out_axes) and j < len(src_axes):
        group_out, group_src = [out_axes[i]], [src_axes[j]]
        size_out, size_src = out_shape[out_axes[i]], source_shape[src_axes[j]]
        i, j = i + 1, j + 1
        while size_out != size_src:
            if size_out < size_src:
                group_out.append(out_axes[i])
                size_out *= out_shape[out_axes[i]]
                i += 1
            else:
                group_src.append(src_axes[j])
                size_src *= source_shape[src_axes[j]]
                j += 1
        linear = linearize(kb, [idx[a] for a in group_out], [out_shape[a] for a in group_out])
        parts = delinearize(kb, linear, [source_shape[a] for a in group_src])
        for a, v in zip(group_src, parts, strict=True):
            result[a] = v
    return result


@dataclass
class Transposed(IndexMap):
    """Result axis i is source axis perm[i]."""

    perm: tuple[int, ...] = ()

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        result: Index = [0] * len(self.perm)
        for i, p in enumerate(self.perm):
            result[p] = idx[i]
        return result, None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        return np.transpose(ids, self.perm)


@dataclass
class Strided(IndexMap):
    """Source index starts[a] + steps[a] * i along each axis: Slice and Split."""

    starts: tuple[int, ...] = ()
    steps: tuple[int, ...] = ()

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        kb = k.kb
        return [kb.like(i, kb.int(0)) * step + start
                for i, start, step in zip(idx, self.starts, self.steps, strict=True)], None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        picks = [start + step * np.arange(n)
                 for start, step, n in zip(self.starts, self.steps, self.shape, strict=True)]
        return ids[np.ix_(*picks)]


@dataclass
class Broadcast(IndexMap):
    """numpy broadcasting of the source to `shape` (Expand)."""

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        lead = len(self.shape) - len(self.source_shape)
        return [0 if d == 1 else idx[lead + a] for a, d in enumerate(self.source_shape)], None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        return np.broadcast_to(ids, self.shape)


class HostTables:
    """Integer tables a kernel looks up, held in host constants packed once each."""

    def __init__(self) -> None:
        self._values: dict[str, SSAValue] = {}

    def view(self, k: KernelContext, name: str, table: np.ndarray) -> TensorView:
        if name not in self._values:
            constant = k.ctx.host().insert(onnx.ConstantOp(table.reshape(-1).astype(np.float32)))
            self._values[name] = constant.results[0]
        return k.weight(self._values[name], Layout.ROWS4, hint=name)

    def lookup(self, k: KernelContext, name: str, table: np.ndarray, position: Val | int) -> Val:
        """table[position], exact for |values| < 2**24."""
        return k.kb.to_int(self.view(k, name, table).read([position]))


@dataclass
class Gathered(IndexMap):
    """Source index `indices[i...]` along `axis` (Gather with constant indices)."""

    axis: int = 0
    indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tables: HostTables = field(default_factory=HostTables)

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        kb = k.kb
        q = self.indices.ndim
        at = idx[self.axis:self.axis + q]
        flat = self.indices.reshape(-1)
        step = int(flat[1] - flat[0]) if flat.size > 1 else 0
        chosen: Val | int
        if flat.size == 1:
            chosen = int(flat[0])
        elif q == 1 and np.array_equal(flat, flat[0] + step * np.arange(flat.size)):
            chosen = kb.like(at[0], kb.int(0)) * step + int(flat[0])
        else:
            position = linearize(kb, at, self.indices.shape)
            chosen = self.tables.lookup(k, "indices", flat, position)
        return [*idx[:self.axis], chosen, *idx[self.axis + q:]], None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        return np.take(ids, self.indices, axis=self.axis)


@dataclass
class GatheredAtRunTime(IndexMap):
    """
    Source index `indices[i...]` along `axis`, where `indices` is computed at run time
    (an embedding lookup of token ids): each work-item reads its index from the
    indices tensor, wraps a negative one and clamps it into the axis (ONNX leaves
    out-of-range indices undefined; ONNX Runtime rejects them).
    """

    axis: int = 0
    indices: SSAValue | None = None

    @property
    def indices_shape(self) -> tuple[int, ...]:
        assert self.indices is not None
        return shape(self.indices)

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        kb = k.kb
        q = len(self.indices_shape)
        view = k.input(self.indices, hint="indices")  # type: ignore[arg-type]
        chosen = kb.to_int(view.read(idx[self.axis:self.axis + q])).named("index")
        size = self.source_shape[self.axis]
        chosen = kb.select(chosen < 0, chosen + size, chosen)
        chosen = kb.min(kb.max(chosen, 0), size - 1)
        return [*idx[:self.axis], chosen, *idx[self.axis + q:]], None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        """With stand-in indices: only `method` reads this, where the values cannot matter."""
        stand_in = np.arange(prod(self.indices_shape)) % ids.shape[self.axis]
        return np.take(ids, stand_in.reshape(self.indices_shape), axis=self.axis)

    def method(self, source: Stored, layout: Layout) -> str:
        """
        BLOCK where neither the gathered source axis nor the output axes the indices
        span are packed (each output pixel is one source pixel, whatever the index),
        else LANES.
        """
        q = len(self.indices_shape)
        rank = len(self.shape)
        if (source.layout.packed_axis(max(len(source.shape), 1)) == self.axis
                or self.axis <= layout.packed_axis(max(rank, 1)) < self.axis + q):
            return LANES
        return BLOCK if copy_method(source, layout, self) != LANES else LANES


@dataclass
class Padded(IndexMap):
    """
    Pad: per axis a crop of (begin, end) elements, then `grows` (begin, end)
    elements filled by `mode` (constant `value`, reflect, edge or wrap).
    """

    crops: tuple[tuple[int, int], ...] = ()
    grows: tuple[tuple[int, int], ...] = ()
    mode: str = "constant"
    value: float = 0.0

    def __post_init__(self) -> None:
        if self.mode == "constant" and any(g != (0, 0) for g in self.grows):
            self.fill = self.value

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        kb = k.kb
        result: Index = []
        conditions: list[Val] = []
        for i, size, (crop, crop_end), (grow, grow_end) in zip(
            idx, self.source_shape, self.crops, self.grows, strict=True
        ):
            n = size - crop - crop_end
            at = kb.like(i, kb.int(0)) - grow
            if grow or grow_end:
                match self.mode:
                    case "constant":
                        conditions.append((at >= 0) & (at < n))
                        at = kb.min(kb.max(at, 0), n - 1)
                    case "edge":
                        at = kb.min(kb.max(at, 0), n - 1)
                    case "reflect":
                        at = kb.select(at < 0, -at, at)
                        at = kb.select(at > n - 1, 2 * (n - 1) - at, at)
                    case "wrap":
                        at = (at + n) % n
            result.append(at + crop)
        return result, kb.all(conditions) if conditions else None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        cropped = ids[tuple(slice(b, size - e) for (b, e), size in zip(self.crops, ids.shape))]
        if self.mode == "constant":
            return np.pad(cropped, self.grows, mode="constant", constant_values=-1)
        return np.pad(cropped, self.grows, mode=self.mode)


@dataclass
class Resized(IndexMap):
    """
    Nearest-neighbour Resize: along each axis, result index o reads source index
    `tables[a][o]` (-1: outside the source, `fill` goes there).
    """

    tables: tuple[np.ndarray, ...] = ()
    extrapolation: float = 0.0
    host: HostTables = field(default_factory=HostTables)

    def __post_init__(self) -> None:
        if any((t < 0).any() for t in self.tables):
            self.fill = self.extrapolation
        self._fits: list[tuple[int, int, int, bool] | None] | None = None

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        kb = k.kb
        result: Index = []
        conditions: list[Val] = []
        if self._fits is None:  # once per map, not per lane
            self._fits = [affine_fit(t, n)
                          for t, n in zip(self.tables, self.source_shape, strict=True)]
        for a, (i, table, size, fit) in enumerate(
            zip(idx, self.tables, self.source_shape, self._fits, strict=True)
        ):
            if fit is not None:
                mul, add, div, clamp = fit
                at = (kb.like(i, kb.int(0)) * mul + add) // div
                result.append(kb.min(kb.max(at, 0), size - 1) if clamp else at)
                continue
            at = self.host.lookup(k, f"axis{a}", table, i)
            if (table < 0).any():
                conditions.append(at >= 0)
                at = kb.max(at, 0)
            result.append(at)
        return result, kb.all(conditions) if conditions else None

    def ids(self, ids: np.ndarray) -> np.ndarray:
        picked = ids[np.ix_(*[np.maximum(t, 0) for t in self.tables])]
        outside = np.zeros(picked.shape, bool)
        for a, t in enumerate(self.tables):
            outside |= (t < 0).reshape([-1 if b == a else 1 for b in range(len(self.tables))])
        return np.where(outside, -1, picked)


def affine_fit(table: np.ndarray, size: int) -> tuple[int, int, int, bool] | None:
    """
    (mul, add, div, clamp) with table[o] = (o * mul + add) // div, clamped to
    [0, size) if `clamp`, for the usual nearest-neighbour coordinate maps; None when
    the table has no such form (or marks elements outside the source).
    """
    if (table < 0).any():
        return None
    o = np.arange(len(table))
    ratios = {Fraction(size, len(table)), Fraction(size, len(table)).limit_denominator(64)}
    for ratio in sorted(ratios):
        for scale in (1, 2):
            mul, div = ratio.numerator * scale, ratio.denominator * scale
            for add in range(-2 * div, 2 * div + 1):
                raw = (o * mul + add) // div
                if np.array_equal(np.clip(raw, 0, size - 1), table):
                    return mul, add, div, bool(raw.min() < 0 or raw.max() > size - 1)
    return None


@dataclass
class Chained(IndexMap):
    """`maps` applied in turn, the first to the source (only the first may `fill`)."""

    maps: tuple[IndexMap, ...] = ()

    def __post_init__(self) -> None:
        self.fill = self.maps[0].fill

    def index(self, k: KernelContext, idx: Index) -> tuple[Index, Val | None]:
        condition = None
        for m in reversed(self.maps):
            idx, c = m.index(k, idx)
            if c is not None:
                condition = c if condition is None else condition & c
        return idx, condition

    def ids(self, ids: np.ndarray) -> np.ndarray:
        for m in self.maps:
            ids = m.ids(ids)
        return ids


# copy methods ---------------------------------------------------------------------------


ALIAS, BLOCK, LANES = "alias", "block", "lanes"


def copy_method(source: Stored, layout: Layout, imap: IndexMap) -> str:
    """How to make `imap`'s result in `layout` from `source`: ALIAS, BLOCK or LANES."""
    count = prod(source.shape)
    src_px = pack(source.layout, np.arange(1, count + 1, dtype=np.int64).reshape(source.shape))
    ids = imap.ids(np.arange(count, dtype=np.int64).reshape(source.shape))
    out_px = pack(layout, np.where(ids >= 0, ids + 1, -1))  # 0: padding lane, -1: fill
    if layout == source.layout and imap.fill is None and np.array_equal(src_px, out_px):
        return ALIAS
    # the pixel and lane of each source element (by id + 1)
    src_flat = src_px.reshape(-1, 4)
    pixel_of = np.zeros(count + 1, np.int64)
    lane_of = np.zeros(count + 1, np.int64)
    pixels, lanes = np.nonzero(src_flat > 0)
    pixel_of[src_flat[pixels, lanes]] = pixels
    lane_of[src_flat[pixels, lanes]] = lanes
    out = out_px.reshape(-1, 4)
    used = out > 0
    from_pixel = np.where(used, pixel_of[np.maximum(out, 0)], -1)  # -1: fill
    lanes_in_place = np.where(used, lane_of[np.maximum(out, 0)] == np.arange(4), True).all()
    # lane 0 of every pixel holds an element; padding lanes follow it
    first = from_pixel[:, :1]
    one_pixel = (np.where(out == 0, first, from_pixel) == first).all()
    return BLOCK if lanes_in_place and one_pixel else LANES


def lane_index(k: KernelContext, lane: int) -> Index:
    """The (clamped) logical index of `lane` of the output pixel."""
    kb = k.kb
    if not k.out.shape:
        return []
    p = k.out.packed_axis
    extent = k.out.shape[p]
    idx: Index = list(k.pixel.block)
    idx[p] = k.pixel.block[p] * 4 + lane
    if extent % 4 and lane:
        idx[p] = kb.min(idx[p], extent - 1)
    return idx


def lanes_present(k: KernelContext) -> int:
    """Lanes that can hold an element (fewer than 4 when the packed axis is short)."""
    return min(4, k.out.dims[k.out.packed_axis])


def emit_copy(k: KernelContext, src: TensorView, imap: IndexMap, method: str) -> Val:
    """The output pixel of `imap` read from `src` by `method` (BLOCK or LANES)."""
    kb = k.kb
    fill = imap.fill if imap.fill is not None else 0.0
    if method == BLOCK:
        first = lane_index(k, 0)
        idx, condition = imap.index(k, first)
        block = list(idx) or [0]
        p = src.packed_axis
        if k.out.shape and block[p] is first[k.out.packed_axis]:
            block[p] = k.pixel.block[k.out.packed_axis]
        else:
            block[p] = kb.like(block[p], kb.int(0)) // 4
        value = src.read_block(block)
        return kb.select(condition, value, kb.float4(fill)) if condition is not None else value
    lanes: list[Val | float] = []
    for lane in range(4):
        if lane >= lanes_present(k):
            lanes.append(0.0)
            continue
        idx, condition = imap.index(k, lane_index(k, lane))
        value = src.read(idx)
        lanes.append(kb.select(condition, value, fill) if condition is not None else value)
    return kb.vec4(lanes)


# chains and the generic rule ---------------------------------------------------------------


INDEX_MAPS: dict[type[Operation], Callable[[Operation], IndexMap]] = {}
"""The index map of each single-source movement op."""

CHAINABLE: set[type[Operation]] = set()
"""Ops whose index map needs no fill value or table: they may extend a chain."""


def index_map(*ops: type[Operation], chainable: bool = True):
    """Register the function giving these ops' index map."""

    def register(fn: Callable[[Operation], IndexMap]) -> Callable[[Operation], IndexMap]:
        for o in ops:
            INDEX_MAPS[o] = fn
            if chainable:
                CHAINABLE.add(o)
        return fn

    return register


def make_index_map(op: Operation) -> IndexMap:
    """The op's index map; a LoweringError where its operands do not give one."""
    try:
        return INDEX_MAPS[type(op)](op)
    except (ShapeError, UnknownShape) as e:
        raise LoweringError(f"{node_label(op)}: {e or 'its operands must be constants'}") from None


def fold_chain(op: Operation, imap: IndexMap, result: SSAValue, fuse: bool,
               done: set[Operation]) -> tuple[IndexMap, Operation, SSAValue]:
    """
    `imap` (of `op`'s `result`) with the single-use pure movement ops after it folded in,
    where `fuse` allows and none is in `done` (those folded join it): the whole map, the
    last op and its result.
    """
    maps = [imap]
    last = op
    at_run_time = isinstance(imap, GatheredAtRunTime)  # its method needs the map alone
    while fuse and not at_run_time and result.has_one_use():
        user = next(iter(result.uses)).operation
        if type(user) not in CHAINABLE or user.operands[0] is not result or user in done:
            break
        maps.append(make_index_map(user))
        done.add(user)
        last, result = user, user.results[0]
    if last is not op:
        imap = Chained(imap.source, shape(result), tuple(maps))
    return imap, last, result


def lower_map(ctx: LoweringContext, op: Operation, epilogue: list[Operation], imap: IndexMap,
              result: SSAValue | None = None, base: str = "copy") -> None:
    """
    Make `result` (default: the op's only one) from `imap`, with the single-use
    pure movement ops after it folded in: an alias, or one kernel.
    """
    result = result if result is not None else op.results[0]
    imap, last, result = fold_chain(op, imap, result, ctx.fuse, ctx.done)
    if last is not op:
        order = {o: i for i, o in enumerate(ctx.graph.body.block.ops)}
        order[last] = order[op]  # the kernel runs where `op` was
        epilogue = ctx.epilogue(last, order)
    label = node_label(op)
    imap = through_views(ctx, imap)
    if prod(shape(result)) == 0 or prod(shape(imap.source)) == 0:
        raise LoweringError(f"{label}: empty tensors have no GPU storage")
    stored = None
    if imap.source in ctx.views:
        method = LANES  # a Concat view: each lane through its branch
    else:
        stored = ctx.tensor(imap.source, label)
        method = imap.method(stored, ctx.layout_for(result))
        if method == ALIAS:
            ctx.alias(result, stored)
            return
    k = KernelContext(ctx, op, base, epilogue, result=result)
    channels = (channel_map(imap) if ctx.buffers and method == LANES and stored is not None
                and stored.layout is Layout.NC4HW4 and k.out.layout is Layout.NC4HW4 else None)
    if channels is not None:
        store_channel_map(k, k.input(imap.source), channels)
    else:
        k.store(emit_copy(k, k.input(imap.source), imap, method))
    k.finish()


CHANNEL_MAP_BLOCKS = 256
"""The most output channel blocks a channel map's kernel writes unrolled (its code grows
with them: a load per source block and a store per output block)."""


def channel_map(imap: IndexMap) -> list[int] | None:
    """
    For a map of rank-4 tensors that moves only channels (ShuffleNet's channel shuffle,
    a channel slice or concat of one source): the source channel of each result channel;
    else None.
    """
    source, result = imap.source_shape, imap.shape
    if (len(source) != 4 or len(result) != 4 or imap.fill is not None
            or source[::2] != result[::2] or source[3] != result[3]
            or ceil4(result[1]) > CHANNEL_MAP_BLOCKS):
        return None
    ids = imap.ids(np.arange(prod(source), dtype=np.int64).reshape(source))
    n, c, h, w = source
    plane = h * w
    channels = [int(i) for i in ids[0, :, 0, 0] // plane]
    expected = (np.arange(result[0])[:, None, None, None] * c * plane
                + np.asarray(channels)[None, :, None, None] * plane
                + np.arange(plane).reshape(1, 1, h, w))
    return channels if np.array_equal(ids, expected) else None


def store_channel_map(k: KernelContext, src: TensorView, channels: list[int]) -> None:
    """
    A channel map between nc4hw4 tensors: a work-item per pixel (n, h, w) reads each
    source block it needs once and writes every output block, its lanes picked at
    compile time (where one work-item per output pixel gathers each lane alone at a
    computed address: ShuffleNet's shuffle of 112 channels at 56x56 on PoCL, 0.25 ms
    against 0.04 ms).
    """
    kb = k.kb
    batch, out_channels, height, width = k.out.shape
    k.global_size = (width, batch * height)
    w, gy = k.pixel.x, k.pixel.y
    n, h = (gy // height).named("n"), (gy % height).named("h")
    read: dict[int, Val] = {}

    def lane(c: int) -> Val | float:
        if c >= out_channels:
            return 0.0
        block, at = divmod(channels[c], 4)
        if block not in read:
            read[block] = src.read_block([n, block, h, w])
        return kb.lane(read[block], at)

    for ob in range(ceil4(out_channels)):
        value = kb.vec4([lane(c) for c in range(4 * ob, 4 * ob + 4)])
        k.store_at(OutputPixel(ob * width + w, gy, [n, ob, h, w]), lambda v=value: v)


def data_of(op: Operation) -> SSAValue:
    """The moved tensor: operand 0 of every movement op."""
    return op.operands[0]


@index_map(onnx.ReshapeOp, onnx.FlattenOp, onnx.SqueezeOp, onnx.UnsqueezeOp, onnx.IdentityOp,
           onnx.DropoutOp, texture.RelayoutOp)
def reshaped(op: Operation) -> IndexMap:
    return Reshaped(data_of(op), shape(op.results[0]))


@index_map(onnx.TransposeOp)
def transposed(op: Operation) -> IndexMap:
    assert isinstance(op, onnx.TransposeOp)
    rank = len(shape(op.data))
    perm = op.ints_attr("perm") or tuple(reversed(range(rank)))
    return Transposed(op.data, shape(op.transposed), perm)


@index_map(onnx.SliceOp)
def sliced(op: Operation) -> IndexMap:
    assert isinstance(op, onnx.SliceOp)
    try:
        slices = op.slices()
    except UnknownShape:
        raise LoweringError(
            f"{node_label(op)}: starts, ends, axes and steps must be constants") from None
    ranges = [s.indices(size) for s, size in zip(slices, shape(op.data), strict=True)]
    return Strided(op.data, shape(op.output), tuple(r[0] for r in ranges),
                   tuple(r[2] for r in ranges))


@index_map(onnx.ExpandOp)
def broadcast(op: Operation) -> IndexMap:
    return Broadcast(data_of(op), shape(op.results[0]))


@index_map(onnx.GatherOp, chainable=False)
def gathered(op: onnx.GatherOp) -> IndexMap:
    data = shape(op.data)
    axis = normalize_axis(op.int_attr("axis"), len(data))
    indices = constant_array(op.indices)
    if indices is None:
        return GatheredAtRunTime(op.data, shape(op.output), axis, op.indices)
    indices = np.asarray(indices, np.int64)
    if indices.size and (indices.min() < -data[axis] or indices.max() >= data[axis]):
        raise LoweringError(
            f"{node_label(op)}: an index is out of range for axis size {data[axis]}")
    return Gathered(op.data, shape(op.output), axis,
                    np.where(indices < 0, indices + data[axis], indices))


@index_map(onnx.PadOp, chainable=False)
def padded(op: onnx.PadOp) -> IndexMap:
    label = node_label(op)
    data = shape(op.data)
    rank = len(data)
    pads = constant_array(op.pads)
    axes = None if is_none(op.axes) else constant_array(op.axes)
    if pads is None or (not is_none(op.axes) and axes is None):
        raise LoweringError(f"{label}: pads and axes must be constants")
    chosen = [normalize_axis(int(a), rank)
              for a in (range(rank) if axes is None else axes.reshape(-1))]
    amounts = [int(v) for v in np.asarray(pads).reshape(-1)]
    widths = [(0, 0)] * rank
    for i, a in enumerate(chosen):
        widths[a] = (amounts[i], amounts[i + len(chosen)])
    crops = tuple((max(-b, 0), max(-e, 0)) for b, e in widths)
    grows = tuple((max(b, 0), max(e, 0)) for b, e in widths)
    mode = op.mode.data
    value = 0.0
    if mode == "constant" and not is_none(op.constant_value):
        fill = constant_array(op.constant_value)
        if fill is None:
            raise LoweringError(f"{label}: the pad value must be a constant")
        value = float(np.asarray(fill).reshape(-1)[0])
    for size, (cb, ce), (gb, ge) in zip(data, crops, grows, strict=True):
        n = size - cb - ce
        if mode == "reflect" and max(gb, ge) >= n:
            raise LoweringError(f"{label}: reflect pads must be smaller than the axis ({n})")
        if mode == "wrap" and max(gb, ge) > n:
            raise LoweringError(f"{label}: wrap pads must not exceed the axis ({n})")
    return Padded(op.data, shape(op.output), crops, grows, mode, value)


@index_map(onnx.ResizeOp, chainable=False)
def resized(op: onnx.ResizeOp) -> IndexMap:
    label = node_label(op)
    if op.mode.data != "nearest" or op.antialias.value.data:
        raise LoweringError(f"{label}: only nearest resizing without antialias runs on the GPU")
    rounding = NEAREST.get(op.nearest_mode.data)
    if rounding is None:
        raise LoweringError(f"{label}: unknown nearest_mode '{op.nearest_mode.data}'")
    operands = {}
    for name in ("roi", "scales", "sizes"):
        value = getattr(op, name)
        operands[name] = None if is_none(value) else constant_array(value)
        if not is_none(value) and operands[name] is None:
            raise LoweringError(f"{label}: {name} must be a constant")
    x = shape(op.X)
    factors, out, axes = resize_scales_and_sizes(op, x, operands["scales"], operands["sizes"])
    if tuple(out) != shape(op.Y):
        raise LoweringError(
            f"{label}: computed size {out} differs from the result's {list(shape(op.Y))}")
    ctm = op.coordinate_transformation_mode.data
    boxes = [(0.0, 1.0)] * len(x)
    roi = operands["roi"]
    if ctm == "tf_crop_and_resize" and roi is not None and roi.size:
        values = [float(v) for v in roi.reshape(-1)]
        for i, a in enumerate(axes):
            boxes[a] = (values[i], values[i + len(axes)])
    tables = []
    for d, size in enumerate(x):
        coords = source_coordinates(ctm, out[d], size, factors[d], boxes[d])
        table = np.clip(rounding(coords), 0, size - 1).astype(np.int64)
        if ctm == "tf_crop_and_resize":
            table = np.where((coords >= 0) & (coords <= size - 1), table, -1)
        tables.append(table)
    return Resized(op.X, tuple(out), tuple(tables), op.extrapolation_value.value.data)


# rules --------------------------------------------------------------------------------------


VIEW_OPS = (onnx.ReshapeOp, onnx.FlattenOp, onnx.SqueezeOp, onnx.UnsqueezeOp, onnx.IdentityOp,
            onnx.TransposeOp, onnx.SliceOp, onnx.SplitOp, onnx.ConcatOp)
"""Movement ops that can be views: each result a reshape, transpose or strided slice of
one source, or a concat of several."""

FIRST_OPERAND_READERS = (onnx.ConvOp, onnx.FusedConvOp, onnx.ConvTransposeOp, onnx.ClipOp,
                         *INDEX_MAPS, onnx.SplitOp)
"""Readers that read only their first operand through `KernelContext.input` (the rest are
weights packed by the host, or constants: shapes, indices, pads)."""


def why_not_viewable(op: Operation) -> str | None:
    """Why `op` cannot be a view (`viewable`), or None if it can."""
    from .rules import RULES

    if not isinstance(op, VIEW_OPS):
        return "only reshapes, transposes, slices, splits and concats can be views"
    if isinstance(op, onnx.ConcatOp):
        sources = list(op.inputs)
        copies = [(op.concat_result, None)]
    else:
        try:
            copies = copy_maps(op)
        except LoweringError as e:
            return str(e).split(": ", 1)[-1]
        if not copies:
            return "none of its results is read"
        sources = [copies[0][1].source]
    if all(is_constant_expression(v) for v in sources):
        return "it is computed on the host"
    if any(not shape(v) or prod(shape(v)) == 0 for v in sources):
        return "only non-empty tensors of rank 1 or more can be views"
    for result, imap in copies:
        if not shape(result) or prod(shape(result)) == 0:
            return "only non-empty tensors of rank 1 or more can be views"
        if imap is not None and imap.fill is not None:
            return "a view has no fill value"
        for use in result.uses:
            user = use.operation
            if user.name == "func.return":
                return "a graph output needs storage"
            if type(user) not in RULES or isinstance(user, onnx.ShapeOp):
                return f"its reader {node_label(user)} cannot read a view"
            if isinstance(user, FIRST_OPERAND_READERS) and use.index != 0:
                return f"its reader {node_label(user)} reads it as a weight or constant"
    return None


def viewable(op: Operation) -> bool:
    """
    Whether `op` can be a view (`texture.view`): a movement op of `VIEW_OPS` with static
    parameters, not computed on the host, whose every reader is a kernel reading the
    result through `KernelContext.input` (not a graph output, which needs storage).
    """
    return why_not_viewable(op) is None


@dataclass
class View:
    """
    A result of a movement op made a view: `imap` over `imap.source`, which is stored
    (views of views compose into one map). `open` decides, per layout a kernel reads it
    in, whether whole pixels of the source serve (`view_method`).
    """

    imap: IndexMap
    layout: Layout | None
    """The layout recorded for the result (the selection's wish), if any."""
    _methods: dict[tuple[Layout, Layout], tuple[str, bool]] = field(default_factory=dict)

    @property
    def source(self) -> SSAValue:
        return self.imap.source

    def method(self, source: TensorView, layout: Layout) -> tuple[str, bool]:
        key = (source.layout, layout)
        if key not in self._methods:
            self._methods[key] = view_method(source.layout, layout, self.imap)
        return self._methods[key]

    def open(self, k: KernelContext, layout: Layout | None, hint: str) -> TensorView:
        """Read in `layout` if given, else in the first of the recorded layout, rows4,
        cols4 and nc4hw4 whose pixels are whole source pixels (else the first)."""
        source = k.input(self.source, hint=hint)
        candidates = view_layouts(layout, self.layout, len(self.imap.shape))
        chosen = next((c for c in candidates if self.method(source, c)[0] != LANES),
                      candidates[0])
        method, dirty = self.method(source, chosen)
        imap = self.imap
        return MappedView(k.kb, source.storage, chosen, imap.shape, source,
                          lambda idx: imap.index(k, idx)[0], method != LANES, dirty)


def view_layouts(asked: Layout | None, recorded: Layout | None, rank: int) -> list[Layout]:
    """The layouts a view may read in: the one asked for, else the recorded one, rows4,
    cols4 and nc4hw4 (those the rank allows), best first."""
    if asked is not None:
        return [asked]
    return [c for c in dict.fromkeys([recorded, Layout.ROWS4, Layout.COLS4, Layout.NC4HW4])
            if c is not None and c.check_rank(rank) is None]


@dataclass
class ConcatSpec:
    """A Concat made a view: each element read from the operand that holds it."""

    inputs: list[SSAValue]
    axis: int
    shape: tuple[int, ...]
    layout: Layout | None

    def open(self, k: KernelContext, layout: Layout | None, hint: str) -> TensorView:
        """Read in the first layout (`view_layouts`) whose packed axis all operands share
        (whole pixels, when no operand boundary falls inside one), else the first."""
        parts = [k.input(v, hint=f"{hint}{i}") for i, v in enumerate(self.inputs)]
        starts = [0]
        for v in self.inputs:
            starts.append(starts[-1] + shape(v)[self.axis])
        candidates = view_layouts(layout, self.layout, len(self.shape))

        def view(c: Layout) -> ConcatView:
            return ConcatView(k.kb, parts[0].storage, c, self.shape, parts, self.axis,
                              tuple(starts))

        return next((view(c) for c in candidates if view(c).whole), view(candidates[0]))


@dataclass
class ConcatView(TensorView):
    """A Concat made a view, read as if stored in `layout`: a branch picks the operand."""

    parts: list[TensorView] = field(default_factory=list)
    axis: int = 0
    starts: tuple[int, ...] = ()
    """Where each operand starts along `axis`, then the end."""

    @property
    def whole(self) -> bool:
        """Whether each pixel is one whole pixel of one operand."""
        p = self.packed_axis
        return all(v.packed_axis == p for v in self.parts) and (
            self.axis != p or all(s % 4 == 0 for s in self.starts[1:-1]))

    def pixel(self, block_idx: Sequence[Val | int]) -> tuple[Val, Val]:
        raise AssertionError("a view has no pixels of its own")

    def read(self, idx: Sequence[Val | int]) -> Val:
        kb = self.kb
        at = [kb.like(v, kb.int(0)) for v in (idx or [0])]

        def part(i: int) -> list[Val]:
            own = list(at)
            own[self.axis] = at[self.axis] - self.starts[i]
            return [self.parts[i].read(own)]

        return branch(kb, at[self.axis], self.starts, part)[0]

    def read_block(self, block_idx: Sequence[Val | int]) -> Val:
        kb = self.kb
        block = [kb.like(v, kb.int(0)) for v in (block_idx or [0])]
        if not self.whole:
            return gather_block(self, block)
        unit = 4 if self.axis == self.packed_axis else 1

        def part(i: int) -> list[Val]:
            own = list(block)
            own[self.axis] = block[self.axis] - self.starts[i] // unit
            return [self.parts[i].read_block(own)]

        return branch(kb, block[self.axis], [s // unit for s in self.starts], part)[0]


def view_method(source: Layout, layout: Layout, imap: IndexMap) -> tuple[str, bool]:
    """
    How a view of `imap` over a source stored in `source` reads a pixel in `layout`:
    BLOCK (or ALIAS) when it is one whole source pixel, else LANES (four gathered
    lanes); and whether such a source pixel may hold elements where the view has
    padding lanes (they must read as 0).
    """
    shaped = Stored(None, source, imap.source_shape)  # type: ignore[arg-type]
    method = copy_method(shaped, layout, imap)
    if method == LANES:
        return method, False
    count = prod(imap.source_shape)
    ids = imap.ids(np.arange(1, count + 1, dtype=np.int64).reshape(imap.source_shape))
    out = pack(layout, ids).reshape(-1, 4)
    src = pack(source, np.arange(1, count + 1, dtype=np.int64).reshape(imap.source_shape))
    src = src.reshape(-1, 4)
    # the source pixel each view pixel reads: the one holding its lane 0
    row_of = np.zeros(count + 1, np.int64)
    rows, lanes = np.nonzero(src > 0)
    row_of[src[rows, lanes]] = rows
    read = src[row_of[out[:, 0]]]
    return method, bool(((out == 0) & (read != 0)).any())


def view_reads_per_element(op: Operation, source: Layout, layout: Layout | None = None,
                           result: int = 0) -> float:
    """
    The cost hook of a view for the layout selection (no device needed): about how many
    texture reads a reader of `op`'s result `result` makes per element when `op` is a
    view of a source stored in `source` and the reader reads it in `layout` (None: the
    view's best layout, as `View.open` picks one): 1/4 where one source pixel serves
    four elements (a reshape or transpose that keeps the packed axis, a split along
    another axis or at a multiple of 4), 1 where each lane is gathered alone. A copy
    kernel instead costs one write and 1/4 or 1 read per element once, and its readers
    1/4 each; a view has no kernel and no storage but its readers pay these reads every
    time they read it (a product reads its operands many times). For a Concat, `source`
    is its operands' layout: whole pixels (after a branch) where they share the packed
    axis and no operand boundary falls inside a pixel.
    """
    rank = len(shape(op.results[result]))
    candidates = view_layouts(layout, None, rank)
    if isinstance(op, onnx.ConcatOp):
        axis = normalize_axis(op.int_attr("axis"), rank)
        ends = np.cumsum([shape(v)[axis] for v in op.inputs])[:-1]
        p = source.packed_axis(rank)
        whole = any(c.packed_axis(rank) == p for c in candidates) and (
            axis != p or all(e % 4 == 0 for e in ends))
        return 0.25 if whole else 1.0
    imap = dict(copy_maps(op))[op.results[result]]
    whole = any(view_method(source, c, imap)[0] != LANES for c in candidates)
    return 0.25 if whole else 1.0


def mark_views(module: Operation) -> int:
    """Make every viewable op of `module` a view (`record_view`), after the layouts are
    recorded: all views, the selection's other extreme from none. The count marked."""
    marked = [op for op in module.walk() if isinstance(op, VIEW_OPS) and viewable(op)]
    for op in marked:
        record_view(op)
    return len(marked)


def lower_view(ctx: LoweringContext, op: Operation) -> None:
    """A movement op made a view: no kernel and no storage; its readers read through it."""
    why = why_not_viewable(op)
    if why is not None:
        raise LoweringError(f"{node_label(op)}: marked texture.view but cannot be a view: {why}")
    if isinstance(op, onnx.ConcatOp):
        out = shape(op.concat_result)
        axis = normalize_axis(op.int_attr("axis"), len(out))
        ctx.views[op.concat_result] = ConcatSpec(list(op.inputs), axis, out,
                                                 recorded_layout(op.concat_result))
        return
    for result, imap in copy_maps(op):
        ctx.views[result] = View(through_views(ctx, imap), recorded_layout(result))


def through_views(ctx: LoweringContext, imap: IndexMap) -> IndexMap:
    """`imap` over a stored source: a view source's map composed in (a Concat view's
    cannot be: its readers read through it)."""
    view = ctx.views.get(imap.source)
    if not isinstance(view, View):
        return imap
    inner = view.imap
    return Chained(inner.source, imap.shape, (inner, imap))


def copy_maps(op: Operation) -> list[tuple[SSAValue, IndexMap]]:
    """
    The copies `lower_map` makes of a single-source movement op, a Split or a Concat of
    one non-empty operand: each used result and its index map (none for other ops).
    """
    if type(op) in INDEX_MAPS:
        return [(op.results[0], make_index_map(op))]
    if isinstance(op, onnx.SplitOp):
        data = shape(op.input)
        axis = normalize_axis(op.int_attr("axis"), len(data))
        try:
            sizes = op.sizes()
        except (ShapeError, UnknownShape):
            raise LoweringError(f"{node_label(op)}: split sizes must be constants") from None
        copies = []
        start = 0
        for result, size in zip(op.outputs, sizes, strict=True):
            starts = [0] * len(data)
            starts[axis] = start
            start += size
            if result.uses:
                copies.append((result, Strided(op.input, shape(result), tuple(starts),
                                               (1,) * len(data))))
        return copies
    if isinstance(op, onnx.ConcatOp):
        out = shape(op.concat_result)
        axis = normalize_axis(op.int_attr("axis"), len(out))
        inputs = [v for v in op.inputs if shape(v)[axis] > 0]
        if len(inputs) == 1:
            return [(op.concat_result, Reshaped(inputs[0], out))]
    return []


@lowers(*INDEX_MAPS, onnx.SplitOp, integers=True)
def lower_copies(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """
    A single-source movement op or a Split (one copy per used result), each copy with the
    chain after it: an alias or one kernel.
    """
    base = op.name.split(".", 1)[1].lower()
    for result, imap in copy_maps(op):
        lower_map(ctx, op, epilogue if result is op.results[0] else [], imap, result, base)


@lowers(onnx.ConcatOp, integers=True)
def lower_concat(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """
    One kernel: each output pixel (or lane) branches to the operand that holds it.
    Whole pixels are copied when every operand is packed along the output's packed
    axis and no operand boundary falls inside a pixel.
    """
    assert isinstance(op, onnx.ConcatOp)
    out = shape(op.concat_result)
    axis = normalize_axis(op.int_attr("axis"), len(out))
    inputs = [v for v in op.inputs if shape(v)[axis] > 0]
    for result, imap in copy_maps(op):  # one operand: a copy
        lower_map(ctx, op, epilogue, imap, result, base="concat")
        return
    starts = [0]
    for v in inputs:
        starts.append(starts[-1] + shape(v)[axis])
    k = KernelContext(ctx, op, "concat", epilogue)
    kb = k.kb
    views = [k.input(v, hint=f"in{i}") for i, v in enumerate(inputs)]
    p = k.out.packed_axis
    whole_pixels = all(v.packed_axis == p for v in views) and (
        axis != p or all(s % 4 == 0 for s in starts[1:-1]))
    if whole_pixels:
        block = k.pixel.block
        unit = 4 if axis == p else 1

        def read_block(i: int) -> list[Val]:
            at = list(block)
            at[axis] = block[axis] - starts[i] // unit
            return [views[i].read_block(at)]

        value = branch(kb, block[axis], [s // unit for s in starts], read_block)[0]
    else:
        lanes: list[Val | float] = []
        for lane in range(4):
            if lane >= lanes_present(k):
                lanes.append(0.0)
                continue
            idx = lane_index(k, lane)

            def read(i: int, idx: Index = idx) -> list[Val]:
                at = list(idx)
                at[axis] = kb.like(idx[axis], kb.int(0)) - starts[i]
                return [views[i].read(at)]

            lanes.append(branch(kb, kb.like(idx[axis], kb.int(0)), starts, read)[0])
        value = kb.vec4(lanes)
    k.store(value)
    k.finish()


def branch(kb: KernelBuilder, coord: Val, starts: Sequence[int],
           read: Callable[[int], list[Val]], lo: int = 0, hi: int | None = None) -> list[Val]:
    """read(i) for the operand i with starts[i] <= coord < starts[i + 1] (a binary search)."""
    hi = len(starts) - 1 if hi is None else hi
    if hi - lo == 1:
        return read(lo)
    mid = (lo + hi) // 2
    return kb.if_(coord < starts[mid],
                  lambda: branch(kb, coord, starts, read, lo, mid),
                  lambda: branch(kb, coord, starts, read, mid, hi))


@lowers(onnx.ShapeOp, epilogue=False)
def lower_shape(ctx: LoweringContext, op: Operation, epilogue: list[Operation]) -> None:
    """Shape is for `onnx-fold-constants` (static shapes fold); it never runs on the GPU."""
    raise LoweringError(f"{node_label(op)}: shape computations do not run on the GPU; "
                        "run onnx-fold-constants first to fold them")
