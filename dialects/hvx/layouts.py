"""
GCD²'s SIMD layouts of a uint8 matrix (rows × cols) in 128-byte HVX vectors.

- `col1` (for `vmpy`): panels of 128 rows; within a panel each column is one vector of
  its 128 rows.
- `col2` (for `vmpa`): panels of 64 rows; each vector holds two adjacent columns of the
  panel's 64 rows, interleaved (byte 2·r + c holds row r, column c of the pair).
- `col4` (for `vrmpy`): panels of 32 rows; each vector holds four adjacent columns,
  byte 4·r + c holding row r, column c of the quad.
- `row` (plain row-major): element (r, c) at r·cols + c, the flat buffer rounded up to
  whole vectors. Elementwise kernels use it; matrix products do not.

A panel of a `colK` layout is `ceil(cols / K)` consecutive vectors. In every layout a
vector of activations holds `128 / K` rows ("pixels") of `K` columns ("channels").

Images (the rows of an activation matrix are the pixels of an NCHW image, N = 1) add a
geometry on top of the layout, see `ImageGeometry`: each image line starts at a panel
boundary, and halo panels, halo lines and the padding lanes of a line hold the tensor's
zero point, so that convolution windows read the zero point outside the image.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

VECTOR_BYTES = 128


class SimdLayout(StrEnum):
    ROW = "row"
    COL1 = "col1"
    COL2 = "col2"
    COL4 = "col4"

    @property
    def columns_per_vector(self) -> int:
        """K: how many adjacent columns one vector interleaves (1 for `row`)."""
        return {"row": 1, "col1": 1, "col2": 2, "col4": 4}[self.value]

    @property
    def panel_rows(self) -> int:
        """Rows per panel: a vector holds this many rows of K columns."""
        return VECTOR_BYTES // self.columns_per_vector

    @property
    def instruction(self) -> str:
        """The multiply instruction the layout is designed for."""
        return {"row": "", "col1": "vmpy", "col2": "vmpa", "col4": "vrmpy"}[self.value]


MATRIX_LAYOUTS = (SimdLayout.COL1, SimdLayout.COL2, SimdLayout.COL4)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


@dataclass(frozen=True)
class ImageGeometry:
    """
    Where the pixels of a (channels, height, width) activation live in a `colK` buffer.

    The buffer is `lines` lines of `line_panels` panels; a panel is `groups` vectors
    (one per K-column group of channels). Pixel (h, w) is row
    `(h + halo_lines) · line_panels · P + halo_panels · P + w` of the matrix, where P is
    the layout's panel rows. A matrix [M, K] is the geometry with one line, no halo and
    M pixels.
    """

    layout: SimdLayout
    channels: int
    height: int
    width: int
    halo_lines: int = 0
    halo_panels: int = 0

    def __post_init__(self):
        assert self.layout in MATRIX_LAYOUTS, self.layout

    @property
    def panel_rows(self) -> int:
        return self.layout.panel_rows

    @property
    def groups(self) -> int:
        return ceil_div(self.channels, self.layout.columns_per_vector)

    @property
    def data_panels(self) -> int:
        return ceil_div(self.width, self.panel_rows)

    @property
    def line_panels(self) -> int:
        return self.data_panels + 2 * self.halo_panels

    @property
    def lines(self) -> int:
        return self.height + 2 * self.halo_lines

    @property
    def panel_bytes(self) -> int:
        return self.groups * VECTOR_BYTES

    @property
    def line_bytes(self) -> int:
        return self.line_panels * self.panel_bytes

    @property
    def size(self) -> int:
        return self.lines * self.line_bytes

    def pixel_rows(self) -> np.ndarray:
        """The matrix row of each pixel, shape (height, width)."""
        h = np.arange(self.height)[:, None]
        w = np.arange(self.width)[None, :]
        p = self.panel_rows
        return (h + self.halo_lines) * self.line_panels * p + self.halo_panels * p + w

    def byte_offsets(self) -> np.ndarray:
        """Offset of element (channel, h, w), shape (channels, height, width)."""
        k = self.layout.columns_per_vector
        p = self.panel_rows
        rows = self.pixel_rows()[None]
        c = np.arange(self.channels)[:, None, None]
        panel, lane = rows // p, rows % p
        return panel * self.panel_bytes + (c // k) * VECTOR_BYTES + lane * k + c % k

    def pack(self, image: np.ndarray, zero_point: int) -> np.ndarray:
        """(C, H, W) uint8 → the buffer's bytes, halo and padding lanes at `zero_point`."""
        assert image.shape == (self.channels, self.height, self.width), image.shape
        buffer = np.full(self.size, zero_point, np.uint8)
        buffer[self.byte_offsets()] = image
        return buffer

    def unpack(self, buffer: np.ndarray) -> np.ndarray:
        return np.asarray(buffer)[self.byte_offsets()]


def matrix_geometry(layout: SimdLayout, rows: int, cols: int) -> ImageGeometry:
    """A rows × cols matrix: columns are channels, rows are the pixels of one line."""
    return ImageGeometry(layout, cols, 1, rows)


def pack_matrix(layout: SimdLayout, matrix: np.ndarray, fill: int = 0) -> np.ndarray:
    """A uint8 matrix in `layout`; padding rows and columns hold `fill`."""
    rows, cols = matrix.shape
    if layout is SimdLayout.ROW:
        flat = np.full(round_up(rows * cols, VECTOR_BYTES), fill, np.uint8)
        flat[: rows * cols] = matrix.ravel()
        return flat
    return matrix_geometry(layout, rows, cols).pack(matrix.T[:, None, :], fill)


def unpack_matrix(layout: SimdLayout, buffer: np.ndarray, rows: int, cols: int) -> np.ndarray:
    if layout is SimdLayout.ROW:
        return np.asarray(buffer)[: rows * cols].reshape(rows, cols)
    return matrix_geometry(layout, rows, cols).unpack(buffer)[:, 0, :].T
