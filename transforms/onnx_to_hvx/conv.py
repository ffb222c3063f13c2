"""
Quantized convolution and matrix product kernels for the three SIMD layouts.

A matrix product [M, K] × [K, N] is a 1×1 convolution over one line of M pixels, so
one generator serves QLinearConv, QLinearMatMul and their QDQ forms. Pixels lie in
the lanes of a vector and channels in its column groups (`layouts.py`); a kernel
computes one output line at a time, one panel of P output pixels and a tile of output
channels at a time, summing over kernel rows (a loop), input column groups (the
hardware loop, unrolled U times) and kernel columns (unrolled):

    for oh:  for panel:  for channel tile:
        acc = 0
        for kh:  for g in groups (step U):  for u < U:  for kw:
            window = the input pixels this tap reads for the panel's P outputs
            acc[t] ⊕= window × w[t, g+u, kh, kw]   for t in the tile
        requantise acc, pack into output vectors, store

A window is an aligned panel load, shifted by `valign` for a horizontal tap offset;
with stride 2 two shifted windows are `vdeal`t to keep every other pixel. Image lines
carry halo panels and halo lines holding the input zero point, so taps outside the
image read the zero point.

The multiply-accumulate `⊕=` is the layout's instruction:

- `col4`/`vrmpy`: one instruction per (window, channel) sums the 4 channels of a
  column group into 32 int32 pixels.
- `col1`/`vmpy`: 16-bit products (the even and odd pixels in the two halves of a pair)
  accumulate in 16 bits for a chunk of `chunk` items, then widen into int32 with
  `vadd` (two chunks per instruction).
- `col2`/`vmpa`: two windows form a pair; one instruction multiplies the four channels
  they hold, two at a time into 16 bits; chunks then widen (`vadd` of both halves).

Chunk lengths come from the weights: the largest that cannot overflow 16 bits for any
input (|Σ w|·255 within int16 for each lane's weights), so every kernel is exact.
Depthwise convolutions use `vmpy` in every layout, with the weights of the channels a
vector holds packed into the scalar operand.

The weights, per-channel bias and requantisation are folded at compile time; the
kernel streams one 32-bit scalar per (item, channel) in exactly its loop order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import ImageGeometry, SimdLayout, ceil_div
from mobile_opt.transforms.onnx_to_hvx.builder import KernelBuilder, loop_kinds
from mobile_opt.transforms.onnx_to_hvx.requant import Requantizer

VECTOR = 128

HOISTED_CORRECTIONS = 6
"""Requantiser corrections whose constants live in registers for the whole kernel;
beyond that each is splatted where it is used, to spare the vector registers."""


class KernelInfeasible(Exception):
    """This layout cannot run this operator (exactly); the reason says why."""


@dataclass(frozen=True)
class ConvShape:
    """A convolution over one image (N = 1), in the input's pixel coordinates."""

    channels: int
    height: int
    width: int
    out_channels: int
    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    pads: tuple[int, int] = (0, 0)
    """Top and left padding (bottom and right follow from the output size)."""
    depthwise: bool = False

    @property
    def out_height(self) -> int:
        kh, sh, pt = self.kernel[0], self.stride[0], self.pads[0]
        return (self.height + 2 * pt - kh) // sh + 1

    @property
    def out_width(self) -> int:
        kw, sw, pl = self.kernel[1], self.stride[1], self.pads[1]
        return (self.width + 2 * pl - kw) // sw + 1

    def input_reach(self) -> tuple[int, int, int, int]:
        """Pixels read beyond the image: above, below, left, right."""
        kh, kw = self.kernel
        sh, sw = self.stride
        pt, pl = self.pads
        below = (self.out_height - 1) * sh + kh - pt - self.height
        right = (self.out_width - 1) * sw + kw - pl - self.width
        return pt, max(0, below), pl, max(0, right)

    @property
    def macs(self) -> int:
        per_output = self.kernel[0] * self.kernel[1] * (1 if self.depthwise else self.channels)
        return self.out_channels * self.out_height * self.out_width * per_output


def _words(values: np.ndarray) -> np.ndarray:
    """int8 values, four along the last axis → the uint32 words with those bytes (the
    first least significant)."""
    data = np.ascontiguousarray(np.asarray(values, np.int64).astype(np.uint8))
    return data.view("<u4")[..., 0]


def _chunk_length(positive: list[np.ndarray], negative: list[np.ndarray]) -> int:
    """
    Per item of an iteration, the sums of the positive and of the negative int8 weights
    each 16-bit lane multiplies by unsigned bytes (any leading shape). The largest
    chunk of consecutive items whose lane sums stay within int16 for every input.
    """
    high = np.stack(positive, -1)
    low = np.stack(negative, -1)
    count = high.shape[-1]
    for length in range(count, 0, -1):
        fits = all(
            255 * high[..., s : s + length].sum(-1).max(initial=0) <= 32767
            and 255 * low[..., s : s + length].sum(-1).min(initial=0) >= -32768
            for s in range(0, count, length)
        )
        if fits:
            return length
    return 0


class WindowReader:
    """
    The input windows of a sliding-window kernel (convolution, pooling): for a panel
    of P output pixels and a tap kw, the P input pixels the tap reads, made from
    aligned panel loads by `valign` (a horizontal offset) and `vdeal` (stride 2).
    Loads go through one pointer with immediate offsets where they reach, else one
    pointer per input panel.
    """

    def __init__(self, b: KernelBuilder, shape: ConvShape, in_geo: ImageGeometry, unroll: int,
                 symbol: str):
        self.b, self.shape, self.in_geo, self.unroll, self.symbol = b, shape, in_geo, unroll, symbol
        self.k = in_geo.layout.columns_per_vector
        self.p = in_geo.layout.panel_rows

    def panel_offsets(self) -> list[int]:
        """Input panels (relative to the panel of the first output pixel) windows read."""
        kw, sw, pl = self.shape.kernel[1], self.shape.stride[1], self.shape.pads[1]
        lowest = (0 - pl) // self.p
        highest = (self.p * sw - 1 + kw - 1 - pl) // self.p
        return list(range(lowest, highest + 1))

    def shared_pointer(self) -> bool:
        """Whether one pointer reaches every panel a window needs by immediate offsets."""
        groups = self.in_geo.groups
        offsets = [j * groups + u for j in self.panel_offsets() for u in range(self.unroll)]
        return all(-8 <= o <= 7 for o in offsets)

    def pointer_panels(self) -> list[int]:
        """The panels the group loop keeps a pointer to."""
        return [0] if self.shared_pointer() else self.panel_offsets()

    def group_windows(self, ptrs: list[SSAValue], u: int) -> dict[int, SSAValue]:
        """The window of each tap kw of group u (relative to the pointers) of an iteration."""
        b, p, k = self.b, self.p, self.k
        kw_count, sw, pl = self.shape.kernel[1], self.shape.stride[1], self.shape.pads[1]
        offsets = self.panel_offsets()
        panels: dict[int, SSAValue] = {}

        def panel(j: int) -> SSAValue:
            if j not in panels:
                if len(ptrs) == 1:
                    q, offset = ptrs[0], j * self.in_geo.groups + u
                else:
                    q, offset = ptrs[offsets.index(j)], u
                panels[j] = b(ops.VmemLoadOp(q, offset, region=self.symbol))
            return panels[j]

        def shifted(start: int) -> SSAValue:
            """Pixels [start, start + P) relative to the panel's first pixel."""
            j, shift = start // p, start % p
            if shift == 0:
                return panel(j)
            return b(ops.ValignOp(panel(j + 1), panel(j), b.const(shift * k)))

        windows = {}
        for kw in range(kw_count):
            delta = kw - pl
            if sw == 1:
                windows[kw] = shifted(delta)
            else:
                low, high = shifted(delta), shifted(delta + p)
                windows[kw] = b(ops.LoOp(b(ops.VdealOp(high, low, b.const(-k)))))
        return windows


class _LazyWindows:
    """An iteration's windows, made when the accumulation first needs their group."""

    def __init__(self, reader: WindowReader, ptrs: list[SSAValue]):
        self.reader, self.ptrs = reader, ptrs
        self.groups: dict[int, dict[int, SSAValue]] = {}

    def __getitem__(self, item: tuple[int, int]) -> SSAValue:
        u, kw = item
        if u not in self.groups:
            self.groups[u] = self.reader.group_windows(self.ptrs, u)
        return self.groups[u][kw]


@dataclass
class ConvKernel:
    """One layout's kernel for one convolution: the function and its weight stream."""

    func: ops.FuncOp
    weights: np.ndarray
    """uint8 bytes the kernel streams (its `weights` buffer)."""
    layout: SimdLayout
    instruction: str


class ConvKernelGenerator:
    """
    Builds the kernel of `shape` in `layout`. `weights` are int8 [N, C or 1, KH, KW]
    with zero point 0, `bias` the int32 constant to add per output channel (zero-point
    terms folded in), `requant` the output requantiser. Buffers are named by the
    `*_symbol` arguments; geometries say where pixels live.
    """

    def __init__(
        self,
        name: str,
        shape: ConvShape,
        layout: SimdLayout,
        weights: np.ndarray,
        bias: np.ndarray,
        requant: Requantizer,
        in_geo: ImageGeometry,
        out_geo: ImageGeometry,
        input_symbol: str,
        output_symbol: str,
        weight_symbol: str,
    ):
        self.name, self.shape, self.layout = name, shape, layout
        self.k = layout.columns_per_vector
        self.p = layout.panel_rows
        self.weights = np.asarray(weights, np.int64)
        self.bias = np.asarray(bias, np.int64)
        self.requant = requant
        self.in_geo, self.out_geo = in_geo, out_geo
        self.symbols = (input_symbol, output_symbol, weight_symbol)
        assert in_geo.layout is layout and out_geo.layout is layout
        top, below, left, right = shape.input_reach()
        if top > in_geo.halo_lines or below > in_geo.halo_lines:
            raise KernelInfeasible("input halo lines are too few for the kernel's reach")
        if left > in_geo.halo_panels * self.p or right > in_geo.halo_panels * self.p:
            raise KernelInfeasible("input halo panels are too few for the kernel's reach")
        if shape.stride[1] not in (1, 2):
            raise KernelInfeasible(f"horizontal stride {shape.stride[1]} (only 1 and 2)")
        self.instruction = "vmpy" if shape.depthwise else layout.instruction
        self.hoisted = len(requant.corrections) <= HOISTED_CORRECTIONS
        """Whether the requantiser's correction constants live in registers throughout."""
        self._size_tiles()
        # memd needs 8-byte aligned pairs: every group of stream words is even-sized
        self.paired_loads = not shape.depthwise and self.tile_channels % 2 == 0

    # ------------------------------------------------------------------ tiling

    def _size_tiles(self) -> None:
        shape, k = self.shape, self.k
        out_groups = self.out_geo.groups
        kw = shape.kernel[1]
        in_groups = 1 if shape.depthwise else self.in_geo.groups
        # unroll the group loop so an iteration has a few items to pair and chunk
        per_window = 2 if shape.stride[1] == 2 else 1
        self.unroll = max(
            (u for u in range(1, min(in_groups, 8) + 1)
             if in_groups % u == 0 and u * kw * per_window <= 12),
            default=1,
        )
        # channel tile: whole output vectors, within the vector registers. Per channel a
        # tile holds its accumulators and, for 16-bit chunks, the chunk in flight and
        # the one waiting to widen.
        per_channel = {"vrmpy": 1, "vmpa": 4, "vmpy": 8}[self.instruction]
        windows = kw * (3 if shape.stride[1] == 2 else 1) + 4
        constants = 8 + 2 * min(len(self.requant.corrections), HOISTED_CORRECTIONS)
        budget = 32 - windows - constants - 4
        if shape.depthwise:
            self.tile_groups = 1
        else:
            fitting = [
                g for g in range(1, min(out_groups, 8) + 1)
                if out_groups % g == 0 and g * k * per_channel <= budget
            ]
            self.tile_groups = max(fitting, default=1)
        self.tile_channels = self.tile_groups * k

    # ------------------------------------------------------------------ weights

    def _items(self) -> list[tuple[int, int]]:
        """(group offset u, tap kw) of one iteration, in order."""
        return [(u, kw) for u in range(self.unroll) for kw in range(self.shape.kernel[1])]

    def _weight_words(self) -> np.ndarray:
        """
        The scalar operands the kernel streams, shape (tiles, KH · iterations, items or
        pairs of an iteration, words per item), in loop order; weights outside the real
        tensor are zero. vrmpy: byte j is input channel 4·group + j; vmpy (col1): the one
        channel's weight in all four bytes; vmpa: bytes (c0 of the pair's first window,
        c0 of its second, c1 first, c1 second); depthwise: byte j is channel j mod K of
        the tile's group.
        """
        shape, k = self.shape, self.k
        kh_count, kw_count = shape.kernel
        w = self.weights
        if shape.depthwise:
            tiles = self.out_geo.groups
            padded = np.zeros((tiles * k, kh_count, kw_count), np.int64)
            padded[: w.shape[0]] = w[:, 0]
            lanes = padded.reshape(tiles, k, kh_count, kw_count)[:, np.arange(4) % k]
            return _words(lanes.transpose(0, 2, 3, 1))[..., None]
        tc, unroll = self.tile_channels, self.unroll
        tiles = self.out_geo.groups // self.tile_groups
        iterations = ceil_div(self.in_geo.groups, unroll)
        padded = np.zeros((tiles * tc, iterations * unroll * k, kh_count, kw_count), np.int64)
        padded[: w.shape[0], : w.shape[1]] = w
        grid = padded.reshape(tiles, tc, iterations, unroll, k, kh_count, kw_count)
        # (tile, kh, iteration, u, kw, t, j): items are (u, kw), j the channel in the group
        ordered = grid.transpose(0, 5, 2, 3, 6, 1, 4).reshape(
            tiles, kh_count * iterations, unroll * kw_count, tc, k)
        if self.instruction == "vrmpy":
            return _words(ordered)
        if self.instruction == "vmpy":
            return _words(np.repeat(ordered, 4, -1))
        items = ordered.shape[2]
        if items % 2:  # the last window pairs with zero
            ordered = np.concatenate([ordered, np.zeros_like(ordered[:, :, :1])], 2)
        pairs = ordered.reshape(tiles, kh_count * iterations, -1, 2, tc, 2)
        return _words(pairs.transpose(0, 1, 2, 4, 5, 3).reshape(*pairs.shape[:3], tc, 4))

    def _bias_words(self, tiles: int) -> np.ndarray:
        """Each tile's per-channel bias words, shape (tiles, tile channels)."""
        padded = np.zeros(tiles * self.tile_channels, np.int64)
        padded[: len(self.bias)] = self.bias
        return (padded & 0xFFFFFFFF).astype(np.uint32).reshape(tiles, self.tile_channels)

    # ------------------------------------------------------------------ generation

    def generate(self, allocated: bool = False) -> ConvKernel:
        """
        The kernel, with the widest channel tile, paired weight loads, group unrolling
        and hoisted requantiser constants that the registers hold: each try is
        allocated (on a copy, unless `allocated` asks for the kernel allocated), and a
        failure relieves the pressure one step — a narrower tile, single loads, then (at
        one output vector) less unrolling and the correction constants made where they
        are used. `config` then holds the choice, which `generate_as` repeats.
        """
        from mobile_opt.transforms.hvx_regalloc import RegisterAllocationError, allocate_registers

        in_groups = 1 if self.shape.depthwise else self.in_geo.groups
        tiles = [g for g in range(self.tile_groups, 0, -1) if self.out_geo.groups % g == 0]
        unrolls = [u for u in range(self.unroll, 0, -1) if in_groups % u == 0]
        tries = [(g, paired, self.unroll, self.hoisted)
                 for g in tiles for paired in (self.paired_loads, False)]
        tries += [(1, False, u, hoisted) for hoisted in (self.hoisted, False) for u in unrolls]
        for config in dict.fromkeys(tries):
            kernel = self.generate_as(config)
            try:
                allocate_registers(kernel.func if allocated else kernel.func.clone())
            except RegisterAllocationError:
                continue
            return kernel
        raise KernelInfeasible("the kernel needs more registers than the machine has")

    def generate_as(self, config: tuple[int, bool, int, bool]) -> ConvKernel:
        """The kernel with `config` (tile groups, paired loads, unroll, hoisted), unchecked."""
        from mobile_opt.transforms.hvx_unroll import record_output_shape

        tile_groups, paired, unroll, hoisted = config
        self.tile_groups, self.unroll, self.hoisted = tile_groups, unroll, hoisted
        self.tile_channels = tile_groups * self.k
        self.paired_loads = paired and self.tile_channels % 2 == 0
        self.config = config
        kernel = self._generate()
        shape = self.shape
        record_output_shape(kernel.func, shape.out_height * shape.out_width, shape.out_channels)
        return kernel

    def _generate(self) -> ConvKernel:
        shape, k, p = self.shape, self.k, self.p
        in_geo, out_geo = self.in_geo, self.out_geo
        b = KernelBuilder(self.name)
        self.b = b
        reader = WindowReader(b, shape, in_geo, self.unroll, self.symbols[0])
        in_sym, out_sym, w_sym = self.symbols
        in_groups = 1 if shape.depthwise else in_geo.groups
        iterations = ceil_div(in_groups, self.unroll)
        tiles = out_geo.groups // self.tile_groups
        items = self._items()
        pairs = [(items[i], items[i + 1] if i + 1 < len(items) else None)
                 for i in range(0, len(items), 2)]
        kh_count = shape.kernel[0]
        sh, sw = shape.stride
        out_panels = out_geo.data_panels

        # the weight stream, in loop order; chunk lengths from its values
        words = self._weight_words()
        self.chunk = self._chunk_from(words.reshape(-1, *words.shape[2:]))
        if self.chunk == 0:
            raise KernelInfeasible(
                f"{self.instruction}: a single instruction's 16-bit sum can overflow with "
                "these weights"
            )
        stream = np.concatenate([words.reshape(tiles, -1), self._bias_words(tiles)], 1)
        weight_bytes = np.ascontiguousarray(stream).view(np.uint8).ravel()

        in_base = b(ops.AddressOp(in_sym))
        out_base = b(ops.AddressOp(out_sym))
        w_base = b(ops.AddressOp(w_sym))
        self.zero = b.splat(0)
        requant_consts = self._requant_constants()

        pb_in, pb_out = in_geo.panel_bytes, out_geo.panel_bytes
        lp_in, lp_out = in_geo.line_panels, out_geo.line_panels
        first_in = ((in_geo.halo_lines - shape.pads[0]) * lp_in + in_geo.halo_panels) * pb_in
        first_out = (out_geo.halo_lines * lp_out + out_geo.halo_panels) * pb_out
        oh_count = shape.out_height
        kinds = loop_kinds([oh_count, out_panels, tiles, kh_count, iterations])
        row_in = b(ops.AddImmOp(in_base, first_in))
        row_out = b(ops.AddImmOp(out_base, first_out))
        with b.loop(oh_count, kinds[0], [row_in, row_out]) as line_loop:
            row_in, row_out = line_loop.args
            pan_in, pan_out = b.copy(row_in), b.copy(row_out)
            masked = shape.out_width % p != 0
            valid = b.fresh_const(shape.out_width * k) if masked else None
            with b.loop(out_panels, kinds[1], [pan_in, pan_out, *([valid] if masked else [])]) \
                    as panel_loop:
                pan_in, pan_out, *valid_arg = panel_loop.args
                mask = None
                if masked:
                    lanes = b(ops.MinOp(valid_arg[0], b.const(VECTOR)))
                    mask = b(ops.Vsetq2Op(lanes))
                wp, dst = b.copy(w_base), b.copy(pan_out)
                # a depthwise tile is one channel group: its input advances with it
                group = [b.copy(pan_in)] if shape.depthwise else []
                with b.loop(tiles, kinds[2], [wp, dst, *group]) as tile_loop:
                    wp, dst, *group = tile_loop.args
                    accs = self._zero_accumulators()
                    kh_src = b.copy(group[0] if group else pan_in)
                    with b.loop(kh_count, kinds[3], [kh_src, wp, *accs]) as kh_loop:
                        kh_src, wp, *accs = kh_loop.args
                        ptrs = [b(ops.AddImmOp(kh_src, j * pb_in)) for j in reader.pointer_panels()]
                        with b.loop(iterations, kinds[4], [wp, *ptrs, *accs]) as g_loop:
                            wp, *rest = g_loop.args
                            ptrs, accs = rest[: len(ptrs)], rest[len(ptrs):]
                            windows = _LazyWindows(reader, ptrs)
                            wp, accs = self._accumulate(windows, items, pairs, wp, accs)
                            ptrs = [b(ops.AddImmOp(q, self.unroll * VECTOR)) for q in ptrs]
                            g_loop.next(wp, *ptrs, *accs)
                        wp, *rest = g_loop.results
                        accs = rest[len(ptrs):]
                        kh_src = b(ops.AddImmOp(kh_src, lp_in * pb_in))
                        kh_loop.next(kh_src, wp, *accs)
                    _, wp, *accs = kh_loop.results
                    biases, wp = self._load_words(wp, self.tile_channels)
                    dst = self._store_tile(dst, accs, biases, requant_consts, mask)
                    group = [b(ops.AddImmOp(group[0], VECTOR))] if group else []
                    tile_loop.next(wp, dst, *group)
                pan_in = b(ops.AddImmOp(pan_in, sw * pb_in))
                pan_out = b(ops.AddImmOp(pan_out, pb_out))
                valid_next = [b(ops.AddImmOp(valid_arg[0], -p * k))] if masked else []
                panel_loop.next(pan_in, pan_out, *valid_next)
            row_in = b(ops.AddImmOp(row_in, sh * lp_in * pb_in))
            row_out = b(ops.AddImmOp(row_out, lp_out * pb_out))
            line_loop.next(row_in, row_out)
        return ConvKernel(b.func, weight_bytes, self.layout, self.instruction)

    def _chunk_from(self, words: np.ndarray) -> int:
        """The 16-bit chunk length for vmpy/vmpa (vrmpy sums in 32 bits: 1), from the
        stream's words, shape (iterations, items, channels)."""
        if self.instruction == "vrmpy" or words.size == 0:
            return 1
        weights = words.view(np.int8).reshape(*words.shape, 4).astype(np.int64)
        if self.instruction == "vmpa":
            # a lo lane sums bytes 0 and 1 of the word, a hi lane bytes 2 and 3
            pairs = weights.reshape(*words.shape, 2, 2)
            positive = np.clip(pairs, 0, None).sum(-1)
            negative = np.clip(pairs, None, 0).sum(-1)
        else:
            positive, negative = np.clip(weights, 0, None), np.clip(weights, None, 0)
        return _chunk_length(
            [positive[:, i] for i in range(words.shape[1])],
            [negative[:, i] for i in range(words.shape[1])],
        )

    def _load_word(self, wp: SSAValue) -> tuple[SSAValue, SSAValue]:
        op = ops.LoadWordPostIncOp(wp, 4, region=self.symbols[2])
        self.b.add(op)
        return op.d, op.new_base

    def _load_words(self, wp: SSAValue, count: int) -> tuple[list[SSAValue], SSAValue]:
        """`count` consecutive stream words, two at a time (`memd`) where they pair up."""
        words = []
        while len(words) + 2 <= count and self.paired_loads:
            op = ops.LoadDoubleWordPostIncOp(wp, 8, region=self.symbols[2])
            self.b.add(op)
            words += [self.b(ops.LoOfPairOp(op.d)), self.b(ops.HiOfPairOp(op.d))]
            wp = op.new_base
        while len(words) < count:
            word, wp = self._load_word(wp)
            words.append(word)
        return words, wp

    # ------------------------------------------------------------------ accumulate

    def _zero_accumulators(self) -> list[SSAValue]:
        b = self.b
        count = self.tile_channels if not self.shape.depthwise else 1
        accs = []
        for _ in range(count):
            if self.instruction == "vrmpy":
                accs.append(b(ops.VzeroOp()))
            elif self.instruction == "vmpa":
                accs.append(b(ops.PairOp(b(ops.VzeroOp()), b(ops.VzeroOp()))))
            else:  # vmpy: pairs A and B
                accs.append(b(ops.PairOp(b(ops.VzeroOp()), b(ops.VzeroOp()))))
                accs.append(b(ops.PairOp(b(ops.VzeroOp()), b(ops.VzeroOp()))))
        return accs

    def _accumulate(self, windows, items, pairs, wp, accs):
        b = self.b
        channels = self.tile_channels if not self.shape.depthwise else 1
        if self.instruction == "vrmpy":
            for item in items:
                words, wp = self._load_words(wp, channels)
                for t in range(channels):
                    accs[t] = b(ops.VrmpyAccOp(accs[t], windows[item], words[t]))
            return wp, accs
        if self.instruction == "vmpa":
            sequence = []
            joined: set[SSAValue] = set()
            for first, second in pairs:
                lo = windows[first]
                hi = windows[second] if second is not None else b(ops.VzeroOp())
                if any(v in joined or isinstance(v.owner, ops.LoOp) for v in (lo, hi)) or lo is hi:
                    sequence.append(b(ops.VcombineOp(hi, lo)))
                else:
                    joined.update((lo, hi))
                    sequence.append(b(ops.PairOp(lo, hi)))
        else:
            sequence = [windows[item] for item in items]
        products: list[SSAValue | None] = [None] * channels
        pending: list[SSAValue | None] = [None] * channels
        for index, source in enumerate(sequence):
            start_chunk = index % self.chunk == 0
            end_chunk = (index + 1) % self.chunk == 0 or index == len(sequence) - 1
            words, wp = self._load_words(wp, channels)
            for t in range(channels):
                word = words[t]
                if self.instruction == "vmpa":
                    op = ops.VmpaOp(source, word) if start_chunk else ops.VmpaAccOp(
                        products[t], source, word)
                else:
                    op = ops.VmpyOp(source, word) if start_chunk else ops.VmpyAccOp(
                        products[t], source, word)
                products[t] = b(op)
                if end_chunk:
                    accs = self._widen(accs, t, products[t], pending, flush=False)
        for t in range(channels):
            accs = self._widen(accs, t, None, pending, flush=True)
        return wp, accs

    def _widen(self, accs, t, product, pending, flush):
        """Fold a finished 16-bit chunk into the int32 accumulators of channel t."""
        b = self.b
        if self.instruction == "vmpa":
            if product is not None:
                accs[t] = b(ops.VaddWidenAccOp(accs[t], b(ops.LoOp(product)), b(ops.HiOp(product))))
            return accs
        # vmpy: two chunks per widening add; a lone chunk pairs with zero
        if product is not None and pending[t] is None:
            pending[t] = product
            return accs
        first = pending[t]
        if first is None:
            return accs
        second_lo = b(ops.LoOp(product)) if product is not None else self.zero
        second_hi = b(ops.HiOp(product)) if product is not None else self.zero
        a, c = 2 * t, 2 * t + 1
        accs[a] = b(ops.VaddWidenAccOp(accs[a], b(ops.LoOp(first)), second_lo))
        accs[c] = b(ops.VaddWidenAccOp(accs[c], b(ops.HiOp(first)), second_hi))
        pending[t] = None
        return accs

    # ------------------------------------------------------------------ requantise

    def _requant_constants(self) -> dict[str, SSAValue]:
        b, r = self.b, self.requant
        return {
            "high": b.splat(r.clamp),
            "low": b.splat(-r.clamp),
            "mantissa_low": b.splat(r.mantissa_low),
            "mantissa_high": b.const(r.mantissa_high * 0x01010101),
            "rounding": b.splat(r.rounding - 1 if r.ties_even else r.rounding),
            "shift": b.const(r.shift),
            "zero_point": b.splat(r.zero_point),
        }

    def _requantize(self, acc: SSAValue, bias: SSAValue, consts) -> SSAValue:
        b, r = self.b, self.requant
        acc = b(ops.VaddWOp(acc, bias))
        a = b(ops.VminWOp(acc, consts["high"]))
        a = b(ops.VmaxWOp(a, consts["low"]))
        t = b(ops.VmpyeOp(a, consts["mantissa_low"]))
        t = b(ops.VmpyiWordAccOp(t, a, consts["mantissa_high"]))
        if r.ties_even:
            # minus the lowest bit of t >> S: (x << 31) >> 31 is 0 or −1
            odd = b(ops.VaslWOp(b(ops.VasrWOp(t, consts["shift"])), b.const(31)))
            odd = b(ops.VasrWOp(odd, b.const(31)))
            t = b(ops.VsubWOp(b(ops.VaddWOp(t, consts["rounding"])), odd))
        else:
            t = b(ops.VaddWOp(t, consts["rounding"]))
        x = b(ops.VasrWOp(t, consts["shift"]))
        y = b(ops.VaddWOp(x, consts["zero_point"]))

        def splat(value: int) -> SSAValue:
            return b.splat(value) if self.hoisted else b(ops.VsplatOp(b.fresh_const(value)))

        for c in r.corrections:
            if c.low == c.high:
                q = b(ops.VcmpEqWOp(acc, splat(c.low)))
            else:
                q = b(ops.VcmpGtWOp(acc, splat(c.low - 1)))
                q = b(ops.VcmpGtWAndOp(q, splat(c.high + 1), acc))
            y = b(ops.VaddWIfOp(q, y, splat(c.delta)))
        return y

    def _store_tile(self, dst, accs, biases, consts, mask):
        """Requantise the tile's accumulators, pack bytes, store; the next tile's dst."""
        b = self.b
        vectors = []  # (q0, q1, q2, q3) per output vector, with each one's bias
        if self.instruction == "vrmpy":
            for v in range(self.tile_groups):
                c = [4 * v + j for j in range(4)]
                quad = [(accs[c[0]], biases[c[0]]), (accs[c[2]], biases[c[2]]),
                        (accs[c[1]], biases[c[1]]), (accs[c[3]], biases[c[3]])]
                vectors.append(quad)
        elif self.instruction == "vmpa":
            for v in range(self.tile_groups):
                n0, n1 = 2 * v, 2 * v + 1
                vectors.append([
                    (b(ops.LoOp(accs[n0])), biases[n0]), (b(ops.HiOp(accs[n0])), biases[n0]),
                    (b(ops.LoOp(accs[n1])), biases[n1]), (b(ops.HiOp(accs[n1])), biases[n1]),
                ])
        else:
            sets = self.tile_channels if not self.shape.depthwise else 1
            for v in range(sets):
                a, c = accs[2 * v], accs[2 * v + 1]
                if self.shape.depthwise:
                    k = self.k
                    # lanes of A.lo, A.hi, B.lo, B.hi hold channels 0, 2, 1, 3 of the group
                    order = {4: (0, 2, 1, 3), 2: (0, 0, 1, 1), 1: (0, 0, 0, 0)}[k]
                    bias = [biases[order[j]] if order[j] < len(biases) else biases[0]
                            for j in range(4)]
                else:
                    bias = [biases[v]] * 4
                vectors.append([
                    (b(ops.LoOp(a)), bias[0]), (b(ops.HiOp(a)), bias[1]),
                    (b(ops.LoOp(c)), bias[2]), (b(ops.HiOp(c)), bias[3]),
                ])
        splats: dict[int, SSAValue] = {}
        for index, quad in enumerate(vectors):
            ys = []
            for acc, bias_word in quad:
                key = id(bias_word)
                if key not in splats:
                    splats[key] = b(ops.VsplatOp(bias_word))
                ys.append(self._requantize(acc, splats[key], consts))
            low = b(ops.VsatHOp(ys[1], ys[0]))
            high = b(ops.VsatHOp(ys[3], ys[2]))
            out = b(ops.VsatUbOp(high, low))
            region = self.symbols[1]
            if mask is not None:
                b.add(ops.VmemStoreIfOp(mask, dst, out, index, region=region))
            else:
                b.add(ops.VmemStoreOp(dst, out, index, region=region))
        return b(ops.AddImmOp(dst, len(vectors) * VECTOR))
