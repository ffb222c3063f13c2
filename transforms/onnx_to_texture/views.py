"""
Tensors as kernels see them: pixel storage plus the layout and logical shape that
give each element's pixel. `TensorView` turns logical indices into pixel reads; the
address arithmetic is what `layouts.Layout` documents, emitted as IR.

Indices are lists of `Val`/int, one per axis. In a *block index* the packed axis
counts pixels (element index // 4); elsewhere it counts elements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from mobile_opt.dialects.texture import Layout, image_size
from mobile_opt.dialects.texture.layouts import ceil4

from .kernel_builder import KernelBuilder, Operand, Val


def linearize(kb: KernelBuilder, idx: Sequence[Operand], dims: Sequence[int]) -> Val:
    """Row-major linear index of `idx` over `dims`."""
    result: Operand = 0
    for i, d in zip(idx, dims, strict=True):
        result = kb.like(result, kb.int(0)) * d + i
    return kb.like(result, kb.int(0))


def delinearize(kb: KernelBuilder, linear: Val, dims: Sequence[int]) -> list[Val]:
    """The row-major index over `dims` of `linear`."""
    idx: list[Val] = []
    rest = linear
    for d in reversed(dims[1:]):
        idx.append(rest % d)
        rest = rest // d
    idx.append(rest if dims else kb.int(0))
    return list(reversed(idx))[: len(dims)] if dims else []


@dataclass
class TensorView:
    """A tensor of `shape` held in `storage` (a kernel argument) in `layout`."""

    kb: KernelBuilder
    storage: Val
    layout: Layout
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def packed_axis(self) -> int:
        return self.layout.packed_axis(max(self.rank, 1))

    @property
    def dims(self) -> tuple[int, ...]:
        return self.shape or (1,)

    @property
    def image_size(self) -> tuple[int, int]:
        return image_size(self.layout, self.shape)

    @property
    def blocks(self) -> int:
        """Pixels along the packed axis."""
        return ceil4(self.dims[self.packed_axis])

    def pixel(self, block_idx: Sequence[Operand]) -> tuple[Val, Val]:
        """(x, y) of the pixel at a block index."""
        kb = self.kb
        i = [kb.like(v, kb.int(0)) for v in (block_idx or [0])]
        d = self.dims
        match self.layout:
            case Layout.NC4HW4:
                n, c4, h, w = i
                return c4 * d[3] + w, n * d[2] + h
            case Layout.ROWS4:
                return i[-1], linearize(kb, i[:-1], d[:-1])
            case Layout.COLS4:
                m4 = i[-2]
                return i[-1], linearize(kb, i[:-2], d[:-2]) * ceil4(d[-2]) + m4
            case Layout.BLOCK2 | Layout.BLOCK4 | Layout.BLOCK8:
                b = self.layout.block
                m, k4 = i
                return k4 * b + m % b, m // b
            case Layout.OIHW4O:
                o4, ii, kh, kw = i
                return (kh * d[3] + kw) * (4 * ceil4(d[1])) + ii, o4
            case Layout.DW4:
                c4, _, kh, kw = i
                return kh * d[3] + kw, c4
            case Layout.HWIO4:
                o4, ii, kh, kw = i
                return o4, (kh * d[3] + kw) * (4 * ceil4(d[1])) + ii
        raise AssertionError(self.layout)

    def read_block(self, block_idx: Sequence[Operand]) -> Val:
        x, y = self.pixel(block_idx)
        return self.kb.read(self.storage, x, y)

    def read_row16(self, block_idx: Sequence[Operand]) -> Val:
        """The pixels of four blocks along the packed axis from `block_idx`'s on, which
        sit side by side in a row (`hwio4`'s output blocks, `rows4`'s last-axis blocks),
        as one float16."""
        assert self.layout in (Layout.HWIO4, Layout.ROWS4)
        x, y = self.pixel(block_idx)
        return self.kb.read16(self.storage, x, y)

    def read(self, idx: Sequence[Operand]) -> Val:
        """The element at a logical index."""
        kb = self.kb
        idx = [kb.like(v, kb.int(0)) for v in (idx or [0])]
        p = self.packed_axis
        block = list(idx)
        block[p] = idx[p] // 4
        return kb.lane(self.read_block(block), idx[p] % 4)

    def broadcast_index(self, out_idx: Sequence[Operand], out_shape: Sequence[int]) -> list[Operand]:
        """This tensor's index for an element of a numpy-broadcast result."""
        lead = len(out_shape) - self.rank
        return [0 if d == 1 else out_idx[lead + k] for k, d in enumerate(self.shape)]

    def read_broadcast_block(
        self, out_block: Sequence[Operand], out_shape: Sequence[int], out_packed: int
    ) -> Val:
        """
        The four elements of a broadcast operand that meet the output pixel at
        `out_block` (whose packed axis is `out_packed`), as one float4.
        """
        kb = self.kb
        lead = len(out_shape) - self.rank
        mine = out_packed - lead
        if self.rank and mine == self.packed_axis and self.shape[mine] == out_shape[out_packed]:
            idx = self.broadcast_index(out_block, out_shape)
            return self.read_block(idx)
        if not self.shape or mine < 0 or self.shape[mine] == 1:
            idx = self.broadcast_index(out_block, out_shape)
            return kb.splat(self.read(idx))
        # packed along another axis: gather the four lanes one by one
        lanes = []
        extent = out_shape[out_packed]
        for k in range(4):
            idx = list(out_block)
            idx[out_packed] = kb.min(kb.like(out_block[out_packed], kb.int(0)) * 4 + k, extent - 1)
            lanes.append(self.read(self.broadcast_index(idx, out_shape)))
        return kb.vec4(lanes)


@dataclass
class MappedView(TensorView):
    """
    A tensor of `shape` that has no storage: each element is an element of `source`, at
    the index `index` maps it to (a data-movement op made a view, `texture.view`). It
    reads as if stored in `layout`: `read_block` takes one pixel of `source` where
    `whole` (the map keeps each pixel's four lanes together and in place), else it
    gathers the four lanes one by one. `dirty_padding`: a whole source pixel may hold
    elements where this view's padding lanes are, which read as 0 here.
    """

    source: TensorView | None = None
    index: Callable[[list[Operand]], list[Operand]] | None = None
    whole: bool = False
    dirty_padding: bool = False

    def pixel(self, block_idx: Sequence[Operand]) -> tuple[Val, Val]:
        raise AssertionError("a view has no pixels of its own")

    def read(self, idx: Sequence[Operand]) -> Val:
        assert self.source is not None and self.index is not None
        return self.source.read(self.index(list(idx) or [0]))

    def read_block(self, block_idx: Sequence[Operand]) -> Val:
        assert self.source is not None and self.index is not None
        kb = self.kb
        p = self.packed_axis
        block = [kb.like(v, kb.int(0)) for v in (block_idx or [0])]
        if self.whole:
            first = list(block)
            first[p] = block[p] * 4
            at = [kb.like(v, kb.int(0)) for v in self.index(first)]
            sp = self.source.packed_axis
            at[sp] = at[sp] // 4
            value = self.source.read_block(at)
            return zero_padding_lanes(self, block, value) if self.dirty_padding else value
        return gather_block(self, block)


def gather_block(view: TensorView, block: Sequence[Val]) -> Val:
    """The pixel of `view` at a block index, its lanes read one by one (padding as 0)."""
    kb = view.kb
    p = view.packed_axis
    extent = view.dims[p]
    lanes: list[Operand] = []
    for lane in range(min(4, extent)):
        idx = list(block)
        element = block[p] * 4 + lane
        idx[p] = kb.min(element, extent - 1) if extent % 4 and lane else element
        value = view.read(idx)
        lanes.append(kb.select(element < extent, value, 0.0) if extent % 4 and lane else value)
    return kb.vec4(lanes + [0.0] * (4 - len(lanes)))


@dataclass
class OutputPixel:
    """The output pixel a work-item computes: its coordinates and block index."""

    x: Val
    y: Val
    block: list[Val]


def output_pixel(view: TensorView, x: Val, y: Val) -> OutputPixel:
    """Invert `view.pixel` for the activation layouts that outputs use."""
    kb = view.kb
    d = view.dims
    match view.layout:
        case Layout.NC4HW4:
            n, c, h, w = d
            block = [(y // h).named("n"), (x // w).named("c4"), (y % h).named("h"), (x % w).named("w")]
        case Layout.ROWS4:
            block = [*delinearize(kb, y, d[:-1]), x]
        case _:
            raise ValueError(f"outputs are nc4hw4 or rows4, not {view.layout.value}")
    return OutputPixel(x, y, block)


def zero_padding_lanes(view: TensorView, block: Sequence[Val], value: Val) -> Val:
    """`value` with the lanes past the packed axis's end set to 0 (they stay zero)."""
    kb = view.kb
    extent = view.dims[view.packed_axis]
    if extent % 4 == 0:
        return value
    valid = kb.like(extent, kb.int(0)) - block[view.packed_axis] * 4
    value = kb.splat(value)
    return kb.vec4([kb.select(valid > k, kb.lane(value, k), 0.0) for k in range(4)])


def elements(shape: Sequence[int]) -> int:
    return prod(shape)
