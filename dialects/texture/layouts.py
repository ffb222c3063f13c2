"""
Tensor ↔ image layouts: where each element of a logical tensor lives in a 2.5D
image of RGBA pixels.

Every layout packs one tensor axis four to a pixel (the *packed axis*, padded with
zeros to a multiple of 4) and spreads the remaining axes over the image's x and y.
This module is pure numpy: the image size of a tensor, and host-side packing and
unpacking. Kernels compute the same addresses in IR (see `transforms/onnx_to_texture`).
"""

from __future__ import annotations

from xdsl.utils.str_enum import StrEnum
from math import prod

import numpy as np


class Layout(StrEnum):
    NC4HW4 = "nc4hw4"
    """Activations [N, C, H, W]: pixel (x = c/4 * W + w, y = n * H + h) holds c..c+3."""
    ROWS4 = "rows4"
    """Row-major [..., R, L]: pixel (x = l/4, y = linear index of the leading axes)
    holds four consecutive elements of the last axis (TMModel's row-major pattern)."""
    COLS4 = "cols4"
    """Column-major [..., M, N]: pixel (x = n, y = batch * ⌈M/4⌉ + m/4) holds four
    consecutive elements of the second-to-last axis."""
    BLOCK2 = "block2"
    BLOCK4 = "block4"
    BLOCK8 = "block8"
    """Block-b [M, K]: like rows4, but the pixels of b consecutive rows that share a
    column block sit side by side: x = k/4 * b + m % b, y = m / b."""
    OIHW4O = "oihw4o"
    """Conv weights [O, I, KH, KW]: pixel (x = (kh * KW + kw) * Ip + i, y = o/4) holds
    outputs o..o+3, with Ip = I rounded up to 4."""
    DW4 = "dw4"
    """Depthwise weights [C, 1, KH, KW]: pixel (x = kh * KW + kw, y = c/4) holds c..c+3."""
    HWIO4 = "hwio4"
    """Conv weights [O, I, KH, KW] for the wide kernel over buffers: pixel (x = o/4,
    y = (kh * KW + kw) * Ip + i) holds outputs o..o+3, with Ip = I rounded up to 4 and the
    width rounded up to 4 pixels, so that each 16 outputs are one aligned `vload16`."""

    @property
    def block(self) -> int:
        return {Layout.BLOCK2: 2, Layout.BLOCK4: 4, Layout.BLOCK8: 8}.get(self, 1)

    def packed_axis(self, rank: int) -> int:
        """The axis that is packed four to a pixel, for a tensor of this rank."""
        if self in (Layout.NC4HW4,):
            return 1
        if self in (Layout.OIHW4O, Layout.DW4, Layout.HWIO4):
            return 0
        if self is Layout.COLS4:
            return rank - 2
        return rank - 1

    def check_rank(self, rank: int) -> str | None:
        """Why a tensor of this rank can't take this layout, or None."""
        need = {
            Layout.NC4HW4: (4,),
            Layout.OIHW4O: (4,),
            Layout.DW4: (4,),
            Layout.HWIO4: (4,),
            Layout.BLOCK2: (2,),
            Layout.BLOCK4: (2,),
            Layout.BLOCK8: (2,),
        }.get(self)
        if need is not None and rank not in need:
            return f"layout {self.value} needs a rank-{need[0]} tensor, got rank {rank}"
        if self is Layout.COLS4 and rank < 2:
            return f"layout {self.value} needs rank 2 or more, got rank {rank}"
        return None


ACTIVATION_LAYOUTS = (Layout.NC4HW4, Layout.ROWS4)
"""The layouts a kernel writes its result in; the others are the host's packings of
weights and graph inputs."""


def ceil4(n: int) -> int:
    return (n + 3) // 4


def image_size(layout: Layout, shape: tuple[int, ...]) -> tuple[int, int]:
    """(width, height) in pixels of a tensor of `shape` stored in `layout`."""
    shape = tuple(shape) or (1,)
    match layout:
        case Layout.NC4HW4:
            n, c, h, w = shape
            return w * ceil4(c), n * h
        case Layout.ROWS4:
            return ceil4(shape[-1]), prod(shape[:-1])
        case Layout.COLS4:
            return shape[-1], prod(shape[:-2]) * ceil4(shape[-2])
        case Layout.BLOCK2 | Layout.BLOCK4 | Layout.BLOCK8:
            b = layout.block
            m, k = shape
            return ceil4(k) * b, -(-m // b)
        case Layout.OIHW4O:
            o, i, kh, kw = shape
            return kh * kw * 4 * ceil4(i), ceil4(o)
        case Layout.DW4:
            c, _, kh, kw = shape
            return kh * kw, ceil4(c)
        case Layout.HWIO4:
            o, i, kh, kw = shape
            return 4 * ceil4(ceil4(o)), kh * kw * 4 * ceil4(i)
    raise AssertionError(layout)


def _pad_axis(a: np.ndarray, axis: int, multiple: int) -> np.ndarray:
    extra = -a.shape[axis] % multiple
    if not extra:
        return a
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, extra)
    return np.pad(a, widths)


def pack(layout: Layout, array: np.ndarray) -> np.ndarray:
    """The pixels [height, width, 4] that hold `array` in `layout`."""
    a = np.asarray(array).reshape(array.shape or (1,))
    match layout:
        case Layout.NC4HW4:
            n, c, h, w = a.shape
            a = _pad_axis(a, 1, 4).reshape(n, -1, 4, h, w)
            px = a.transpose(0, 3, 1, 4, 2)  # n h c4 w lane
        case Layout.ROWS4:
            a = _pad_axis(a, -1, 4)
            px = a.reshape(-1, a.shape[-1] // 4, 4)
        case Layout.COLS4:
            a = _pad_axis(a, -2, 4)
            m, n = a.shape[-2:]
            px = a.reshape(-1, m // 4, 4, n).transpose(0, 1, 3, 2)
        case Layout.BLOCK2 | Layout.BLOCK4 | Layout.BLOCK8:
            b = layout.block
            a = _pad_axis(_pad_axis(a, 0, b), 1, 4)
            m, k = a.shape
            px = a.reshape(m // b, b, k // 4, 4).transpose(0, 2, 1, 3)
        case Layout.OIHW4O:
            a = _pad_axis(_pad_axis(a, 0, 4), 1, 4)
            o, i, kh, kw = a.shape
            px = a.reshape(o // 4, 4, i, kh, kw).transpose(0, 3, 4, 2, 1)
        case Layout.DW4:
            a = _pad_axis(a, 0, 4)
            c, _, kh, kw = a.shape
            px = a.reshape(c // 4, 4, kh * kw).transpose(0, 2, 1)
        case Layout.HWIO4:
            a = _pad_axis(_pad_axis(a, 0, 16), 1, 4)
            o, i, kh, kw = a.shape
            px = a.reshape(o // 4, 4, i, kh, kw).transpose(3, 4, 2, 0, 1)
    width, height = image_size(layout, array.shape)
    return np.ascontiguousarray(px).reshape(height, width, 4)


def unpack(layout: Layout, pixels: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The tensor of `shape` that `pixels` [height, width, 4] hold in `layout`."""
    shape = tuple(shape)
    full = shape or (1,)
    match layout:
        case Layout.NC4HW4:
            n, c, h, w = full
            a = pixels.reshape(n, h, -1, w, 4).transpose(0, 2, 4, 1, 3)
            a = a.reshape(n, -1, h, w)[:, :c]
        case Layout.ROWS4:
            a = pixels.reshape(*full[:-1], -1)[..., : full[-1]]
        case Layout.COLS4:
            m, n = full[-2:]
            a = pixels.reshape(-1, ceil4(m), n, 4).transpose(0, 1, 3, 2)
            a = a.reshape(*full[:-2], -1, n)[..., :m, :]
        case Layout.BLOCK2 | Layout.BLOCK4 | Layout.BLOCK8:
            b = layout.block
            m, k = full
            a = pixels.reshape(-1, ceil4(k), b, 4).transpose(0, 2, 1, 3)
            a = a.reshape(-1, ceil4(k) * 4)[:m, :k]
        case Layout.OIHW4O:
            o, i, kh, kw = full
            a = pixels.reshape(ceil4(o), kh, kw, -1, 4).transpose(0, 4, 3, 1, 2)
            a = a.reshape(-1, a.shape[2], kh, kw)[:o, :i]
        case Layout.DW4:
            c, one, kh, kw = full
            a = pixels.reshape(ceil4(c), kh * kw, 4).transpose(0, 2, 1)
            a = a.reshape(-1, one, kh, kw)[:c]
        case Layout.HWIO4:
            o, i, kh, kw = full
            a = pixels.reshape(kh, kw, -1, pixels.shape[1], 4).transpose(3, 4, 2, 0, 1)
            a = a.reshape(-1, a.shape[2], kh, kw)[:o, :i]
    return np.ascontiguousarray(a).reshape(shape)


def pixel_coordinates(layout: Layout, shape: tuple[int, ...]) -> np.ndarray:
    """(x, y) of the pixel holding each element of a tensor of `shape`: [*shape, 2]."""
    count = prod(shape)
    pixels = pack(layout, np.arange(1, count + 1, dtype=np.int64).reshape(shape))
    y, x, lane = np.nonzero(pixels)
    where = np.empty((count, 2), dtype=np.int64)
    where[pixels[y, x, lane] - 1] = np.stack([x, y], axis=1)
    return where.reshape(*shape, 2)
