"""
The explicit geometry of a 2-D convolution, transposed convolution or pool window over
NCHW tensors: what the texture lowering's kernels and their cost model
(`texture_kernels.ConvKernel`) both walk. Plain integers only; the lowering emits the
same tap arithmetic as IR (`onnx_to_texture/conv.py`, `tap`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConvShape:
    """A 2-D convolution (or transposed convolution) in explicit form."""

    input: tuple[int, int, int, int]
    output: tuple[int, int, int, int]
    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pads: tuple[int, int]
    """Begin pads (h, w)."""
    group: int
    transposed: bool

    @property
    def in_per_group(self) -> int:
        return self.input[1] // self.group

    @property
    def out_per_group(self) -> int:
        return self.output[1] // self.group

    @property
    def kind(self) -> str:
        """Which kernel computes it: `blocked`, `depthwise` or `grouped` (see the lowering)."""
        if self.group == 1 or (self.in_per_group % 4 == 0 and self.out_per_group % 4 == 0):
            return "blocked"
        if self.group == self.input[1] == self.output[1]:
            return "depthwise"
        return "grouped"

    def input_position(self, axis: int, out_pos: int, k: int) -> int | None:
        """
        The input position that tap `k` of output position `out_pos` reads along spatial
        `axis` (0 = h, 1 = w), or None where the tap has none.
        """
        size = self.input[2 + axis]
        stride, dilation, pad = self.strides[axis], self.dilations[axis], self.pads[axis]
        if not self.transposed:
            pos = out_pos * stride - pad + k * dilation
        else:
            offset = out_pos + pad - k * dilation
            if offset < 0 or offset % stride:
                return None
            pos = offset // stride
        return pos if 0 <= pos < size else None
