"""
Work-group shape per kernel family: the work-group sweep (`tmprobe.probe_work_groups`)
repeated on real kernels. One kernel of each family of `texture_kernels.FAMILIES`,
lowered as the compiler lowers it, is timed in every work-group shape Gx × Gy of the
searches, the shapes interleaved over rounds (`tuning.retime`). A fixed sweep kernel
cannot show what a family's reads do to a shape: on a GPU a stride-1 convolution's
tall groups share input rows in the texture cache, while a stride-2 transposed one's
wide rows keep its warps on one parity of the output. Nor does one thread tile show
another's: the best group moves with the tile, so the kernel is timed at several tiles
(`PROBED_TILE_SIDES`). The model takes F(G) from here.

A family whose kernel streams an operand the host can lay out (MatMul's B) is then
timed in each of those layouts, its access patterns, in each tile's best work group: the
pointer chase's β sees one thread's block crossings, not how a warp's reads of each
pattern share the cache's lines and sectors, so the model takes F(A) from here too.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.opencl.executor import OpenCLRunError
from mobile_opt.backends.opencl.probe.archprobe import Effort, Progress, _noop
from mobile_opt.backends.opencl.probe.runner import ProbeError, Runner
from mobile_opt.backends.opencl.probe.sweep import Sweep
from mobile_opt.backends.opencl.probe.tmprobe import plot_group_times, relative_group_times
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.frontend.single_node import NODE_NAME, save_single_node
from mobile_opt.models.texture_kernels import candidates
from mobile_opt.tools.tuning import node_name, retime
from mobile_opt.transforms.prune_configs import kernel_of


@dataclass(frozen=True)
class Representative:
    """The node one family is timed on, and the thread tile it runs with."""

    op: str
    shapes: tuple[tuple[int, ...], ...]
    attrs: tuple[tuple[str, object], ...] = ()
    tile: tuple[int, int] = (1, 1)


def representatives(channels: int, side: int, rows: int) -> dict[str, Representative]:
    """
    A kernel of each family: convolutions of `channels` channels (a depthwise one, whose
    work per pixel is far less, of four times as many) with a 3×3 kernel and an output
    of `side`² pixels; a MatMul of `rows`³; normalisations of 4·`rows` rows of `rows`
    elements.
    """
    def conv(stride: int, depthwise: bool = False, transposed: bool = False) -> Representative:
        c = 4 * channels if depthwise else channels
        group = c if depthwise else 1
        attrs: dict = {"strides": (stride,) * 2, "pads": (1,) * 4, "group": group}
        if transposed:
            attrs["output_padding"] = (stride - 1,) * 2
            return Representative("ConvTranspose", ((1, c, side // stride, side // stride),
                                                    (c, c, 3, 3), (c,)), tuple(attrs.items()))
        return Representative("Conv", ((1, c, side * stride, side * stride),
                                       (c, c // group, 3, 3), (c,)), tuple(attrs.items()))

    row = ((4 * rows, rows),)
    return {
        "matmul": Representative("MatMul", ((rows, rows), (rows, rows))),
        "conv": conv(1),
        "conv-s2": conv(2),
        "depthwise": conv(1, depthwise=True),
        "conv-transpose-s2": conv(2, transposed=True),
        "softmax": Representative("Softmax", row, (("axis", -1),), (4, 1)),
        "layernorm": Representative("LayerNormalization", (*row, (rows,), (rows,)),
                                    (("axis", -1),), (4, 1)),
    }


def probe_kernel_groups(runner: Runner, effort: Effort, progress: Progress = _noop):
    gpu = "GPU" in runner.info.kind
    scale = effort.pick((64, 64, 512) if gpu else (16, 32, 128), (8, 16, 64))
    rounds = effort.pick(10, 2)
    sweeps, tables = [], {}
    with tempfile.TemporaryDirectory() as folder:
        for family, node in representatives(*scale).items():
            path = save_single_node(Path(folder) / f"{family}.onnx", node.op, node.shapes,
                                    node.attrs)
            module = import_onnx(path)
            kernel = kernel_of(next(op for op in module.walk() if node_name(op) == NODE_NAME))
            assert kernel is not None and kernel.family == family, family

            def timed(configs: list[TileConfig]) -> dict[TileConfig, float]:
                """The configurations interleaved over rounds; those that launch."""
                try:
                    measured = retime(module, NODE_NAME, configs, runner.info, rounds,
                                      lambda note: progress(f"{family}: {note}"))
                except (OpenCLRunError, DiagnosticException) as e:  # a probe's failure is one line
                    raise ProbeError(f"kernel-groups: {kernel.describe_shape()}: {e}") from None
                return {m.config: m.seconds for m in measured if math.isfinite(m.seconds)}

            space = list(candidates(kernel, runner.device.max_work_group_size))
            by_tile = {tile: _time_tile(kernel, tile, space, timed)
                       for tile in probed_tiles(kernel)}
            seconds, table = by_tile[node.tile]
            sweep = Sweep(f"Work-group shape, {kernel.describe_shape()} "
                          f"(T={node.tile[0]}x{node.tile[1]})", "Gx", "ms", log_x=True,
                          name=f"kernel_groups_{family}")
            plot_group_times(sweep, seconds)
            # the representative's own tile stands for the family where a tile's is missing
            tables[family] = {"kernel": kernel.describe_shape(), "tile": list(node.tile),
                              **table,
                              "tiles": {f"{t[0]}x{t[1]}": v for t, (_, v) in by_tile.items()}}
            sweeps.append(sweep)
    return sweeps, tables


PROBED_TILE_SIDES = (1, 2, 4, 8, 16, 64)
"""Thread tiles whose work groups and patterns are timed: a family's best work group moves
with its tile (on the H100 a MatMul's rows tile of 4 wants groups 2 wide, one of 8
wants them 8 wide), and the model looks up the table of the nearest tile."""


def probed_tiles(kernel) -> list[tuple[int, int]]:
    return [t for t in kernel.thread_tiles() if max(t) in PROBED_TILE_SIDES]


def _time_tile(kernel, tile: tuple[int, int], space: list[TileConfig],
               timed) -> tuple[dict[tuple[int, int], float], dict]:
    """
    The representative at one thread tile: every work group of the searches, B as it
    comes; then, where the kernel streams an operand the host lays out, each layout in
    the tile's best group. The groups' seconds, and the tile's table of relative times.
    """
    times = {c.group: t for c, t in timed(
        [c for c in space if c.tile == tile and c.group and c.layout is None]).items()}
    if not times:
        raise ProbeError(f"kernel-groups: {kernel.describe_shape()} launches in no "
                         f"work-group shape at T={tile[0]}x{tile[1]}")
    best = min(times, key=times.get)
    table = {"best_ms": times[best] * 1e3, "relative_time": relative_group_times(times)}
    if len(kernel.layouts()) > 1:
        patterns = timed([TileConfig(tile, best, layout) for layout in kernel.layouts()])
        if patterns:
            fastest = min(patterns.values())
            table["pattern_group"] = list(best)
            table["pattern_relative_time"] = {kernel.pattern(c): t / fastest
                                              for c, t in patterns.items()}
    return times, table
