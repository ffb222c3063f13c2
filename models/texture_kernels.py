"""
What TMModel needs to know of a GPU kernel under a configuration: its output in
pixels, the trace one work-item reads from each input image (for the cross-block
features `H`), the lines each work-item keeps in reuse (`s`), its reads, and its register
footprint; plus the configuration space itself. Ops: MatMul and Gemm (the GPU path's
`onnx-to-texture` kernel for them, in its rows4 layouts).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np

from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.models import tmmodel

ROW_TILES = (1, 2, 4, 8)
GROUP_SIDES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
TRACE_STEPS = 256
"""Reduction steps a trace follows: enough for stable shares of block crossings."""


@dataclass(frozen=True)
class MatMulShape:
    m: int
    k: int
    n: int

    def global_size(self, config: TileConfig) -> tuple[int, int]:
        return (math.ceil(self.n / 4), math.ceil(self.m / config.rows) if self.m > 1 else 1)


@dataclass(frozen=True)
class KernelModelInputs:
    output: tuple[int, int]
    """The output in pixels along x and rows along y (work-items cover it in tiles)."""
    inputs: tuple[tmmodel.InputAccess, ...]
    footprint: int
    """32-bit registers a work-item holds."""
    loaded_bytes: int
    """Bytes one work-item reads per step of its reduction loop (Romou's L1 criterion)."""


def matmul_inputs(shape: MatMulShape, config: TileConfig) -> KernelModelInputs:
    """
    One work-item computes `rows` output rows of one 4-wide column block n4: each step k4
    of its loop reads A's pixels (k4, m..m+rows-1) (rows4 of A: a block-`rows` walk
    along k) and B's pixels (n4, 4·k4..4·k4+3) (rows4 of B: a walk down a column,
    which the warp's neighbours along n4 read beside it).
    """
    rows = min(config.rows, shape.m)
    k4 = math.ceil(shape.k / 4)
    a_features, b_features = _matmul_features(min(k4, TRACE_STEPS), rows)
    a = tmmodel.InputAccess(a_features, rows, rows * k4)
    b = tmmodel.InputAccess(b_features, 0, 4 * k4)
    footprint = 4 * rows + 4 * rows + 16 + 8  # accumulators, A block, B rows, indices
    output = (math.ceil(shape.n / 4), shape.m)
    return KernelModelInputs(output, (a, b), footprint, 16 * (rows + 4))


@cache
def _matmul_features(steps: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """H of A's and B's traces (they depend on the reduction steps and the tile only)."""
    a_trace = np.array([(k4, r) for k4 in range(steps) for r in range(rows)])
    b_trace = np.array([(0, 4 * k4 + j) for k4 in range(steps) for j in range(4)])
    return tmmodel.cross_block_features(a_trace), tmmodel.cross_block_features(b_trace)


def warp_shape(group: tuple[int, int], warp: int) -> tuple[int, int]:
    """How a warp of consecutive local ids lies in a work group (x fastest)."""
    wx = min(group[0], warp)
    return wx, min(group[1], max(1, warp // wx))


def candidates(shape: MatMulShape, max_group: int) -> Iterator[TileConfig]:
    """Every (T, G) whose group tiles the range: G is left to the driver too."""
    for rows in ROW_TILES:
        if rows > 1 and rows > shape.m:
            continue
        probe = TileConfig((1, rows))
        gx_total, gy_total = shape.global_size(probe)
        yield probe
        for gx in GROUP_SIDES:
            for gy in GROUP_SIDES:
                if gx * gy <= max_group and gx_total % gx == 0 and gy_total % gy == 0:
                    yield TileConfig((1, rows), (gx, gy))


def predicted_cost(constants: tmmodel.TextureConstants, shape: MatMulShape,
                   config: TileConfig) -> float:
    """
    Eq. 7 for a configuration. The model sets the work group itself: one left to the
    driver is unknown to it and costs infinity.
    """
    if config.group is None:
        return math.inf
    described = matmul_inputs(shape, config)
    group = config.group
    return tmmodel.kernel_cost(constants, described.inputs, described.output, config.tile, group,
                               warp_shape(group, constants.warp_size), described.footprint)


def squareness(config: TileConfig, warp: int) -> float:
    """How far a warp's output footprint (4-wide pixels by rows) is from square, in log2."""
    if config.group is None:
        return math.inf
    wx, wy = warp_shape(config.group, warp)
    return abs(math.log2(4 * wx) - math.log2(wy))


def model_choice(constants: tmmodel.TextureConstants, shape: MatMulShape,
                 configs: list[TileConfig]) -> TileConfig:
    """
    The configuration of least eq. 7 cost; among equals (eq. 7 often cannot tell work
    groups apart), the one whose warps cover the squarest block of the output, whose
    texture reads then stay in the fewest 2D blocks.
    """
    return min(configs, key=lambda c: (round(predicted_cost(constants, shape, c), 6),
                                       squareness(c, constants.warp_size)))
