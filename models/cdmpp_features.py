"""
CDMPP's features (`../shared/seeds/cdmpp.txt` §4) of this compiler's OpenCL kernels: a
*compact AST* per `ocl.kernel`, and device features from a probe profile.

The kernel body is an AST whose inner nodes are its `scf.for` loops and `scf.if`
branches. A *leaf* is a maximal run of plain ops in one block (between two region ops,
or a block's end). Each leaf gets one computation vector (`LEAF_FIELDS`): what it
computes, counted in elements (a float16 FMA is 16), its memory accesses by kind and
bytes, the loops around it (depth, extents, trip product), the launch's geometry and how its
groups fill the device's cores. Counts go through log2(1 + x), so that a vector's entries
share one scale.

The *ordering vector* gives each leaf its index in the pre-order serialisation of the
AST in which each leaf is followed by a marker (Fig. 1(d)), and `positional_encoding`
turns it into the sinusoids of §4.2, which the predictor adds to the leaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, math as xmath, scf, vector
from xdsl.dialects.builtin import IntegerAttr, VectorType
from xdsl.ir import Block, Operation, SSAValue

from mobile_opt.dialects import ocl, texture

ARITH_FIELDS = (
    "f_add", "f_mul", "f_fma", "f_div", "f_minmax", "f_special", "f_other", "convert",
    "compare", "select", "i_arith", "i_divrem", "i_other", "shuffle",
)
"""Element counts of arithmetic by kind (`_KINDS`)."""

MEMORY_FIELDS = (
    "image_reads", "image_writes", "buffer_loads", "buffer_load_bytes", "buffer_stores",
    "buffer_store_bytes", "lane_loads", "local_loads", "local_stores", "barriers",
)
"""Memory accesses by kind: op counts, and bytes for buffers (whose loads vary in width)."""

LOOP_FIELDS = ("loop_depth", "if_depth", "trip_product", "extent_inner", "extent_outer",
               "dynamic_loops")
"""The loops and branches around a leaf: their depths, the product of the loop extents,
the two innermost extents, and how many loops have bounds known only at run time (their
extent counts as 1)."""

LAUNCH_FIELDS = ("global_x", "global_y", "work_items", "local_x", "local_y", "work_groups",
                 "core_share", "waves")
"""The launch's geometry (the same for every leaf of a kernel; local 0: the driver's), and
how its groups fill the device's cores: the share of cores they occupy, min(groups,
cores) / cores, and how many rounds of cores they take (a single group leaves all cores
but one idle, which the group count alone, in log scale, hardly shows)."""

TOTAL_FIELDS = ("total_flops", "total_bytes")
"""The leaf's floating-point elements and buffer bytes over all its iterations and work-items."""

LEAF_FIELDS = ARITH_FIELDS + MEMORY_FIELDS + LOOP_FIELDS + LAUNCH_FIELDS + TOTAL_FIELDS
"""A leaf's computation vector, in order (an even length, for the sinusoids)."""

MARKER = -1
"""What follows each leaf in the serialised AST."""

_KINDS: dict[type[Operation], str] = {
    arith.AddfOp: "f_add", arith.SubfOp: "f_add", arith.NegfOp: "f_add",
    arith.MulfOp: "f_mul", xmath.FmaOp: "f_fma", arith.DivfOp: "f_div",
    arith.MaximumfOp: "f_minmax", arith.MinimumfOp: "f_minmax",
    xmath.ExpOp: "f_special", xmath.LogOp: "f_special", xmath.TanhOp: "f_special",
    xmath.ErfOp: "f_special", xmath.SqrtOp: "f_special", xmath.RsqrtOp: "f_special",
    xmath.PowFOp: "f_special", xmath.SinOp: "f_special", xmath.CosOp: "f_special",
    xmath.AbsFOp: "f_other", xmath.FloorOp: "f_other", xmath.CeilOp: "f_other",
    xmath.RoundOp: "f_other", xmath.TruncOp: "f_other", xmath.CopySignOp: "f_other",
    arith.ExtFOp: "convert", arith.TruncFOp: "convert", arith.SIToFPOp: "convert",
    arith.FPToSIOp: "convert",
    arith.CmpfOp: "compare", arith.CmpiOp: "compare", arith.SelectOp: "select",
    arith.AddiOp: "i_arith", arith.SubiOp: "i_arith", arith.MuliOp: "i_arith",
    arith.DivSIOp: "i_divrem", arith.RemSIOp: "i_divrem",
    arith.MinSIOp: "i_other", arith.MaxSIOp: "i_other", arith.AndIOp: "i_other",
    arith.OrIOp: "i_other",
    ocl.Vec4Op: "shuffle", ocl.Vec16Op: "shuffle", ocl.Part4Op: "shuffle",
    ocl.LaneOp: "shuffle", vector.ExtractOp: "shuffle", vector.BroadcastOp: "shuffle",
}
_FLOAT_KINDS = {"f_add", "f_mul", "f_div", "f_minmax", "f_special", "f_other"}


@dataclass(frozen=True)
class CompactAST:
    """A kernel's leaves (one computation vector a row) and their ordering vector."""

    leaves: np.ndarray
    """[leaves, len(LEAF_FIELDS)] float32."""
    order: np.ndarray
    """[leaves] int: each leaf's index in the serialised AST."""

    @property
    def size(self) -> int:
        return len(self.order)

    def encoded(self, theta: float = 10000.0) -> np.ndarray:
        """The leaves with their positional encoding added: the predictor's input."""
        return self.leaves + positional_encoding(self.order, self.leaves.shape[1], theta)


def pooled(leaves: np.ndarray) -> np.ndarray:
    """A fixed-length form of a kernel's leaves for the baselines that take one vector
    (gradient boosting): their sum and maximum per field, and their number."""
    return np.concatenate([leaves.sum(0), leaves.max(0), [len(leaves)]]).astype(np.float32)


def positional_encoding(order: Sequence[int], width: int, theta: float = 10000.0) -> np.ndarray:
    """§4.2: entry 2δ of leaf ξ is sin(V[ξ] / θ^(2δ/width)), entry 2δ+1 the cosine."""
    positions = np.asarray(order, np.float64)[:, None]
    rates = theta ** (-np.arange(0, width, 2, dtype=np.float64) / width)
    encoding = np.zeros((len(positions), width))
    encoding[:, 0::2] = np.sin(positions * rates)
    encoding[:, 1::2] = np.cos(positions * rates)[:, : width // 2]
    return encoding.astype(np.float32)


def compact_ast(kernel: ocl.KernelOp, global_size: Sequence[int],
                local_size: Sequence[int] | None, cores: int) -> CompactAST:
    """The compact AST of `kernel` launched over `global_size` (in `local_size` groups) on
    a device of `cores` compute units."""
    return KernelLeaves.of(kernel).launched(global_size, local_size, cores)


@dataclass(frozen=True)
class KernelLeaves:
    """A kernel's leaves before a launch gives them its geometry: walking the kernel once
    serves every launch of it (the work groups a tuner tries)."""

    fixed: tuple[list[float], ...]
    """Each leaf's fields before the launch's (its counts and loops, `_fixed_fields`)."""
    work: tuple[tuple[float, float], ...]
    """Each leaf's floating-point elements and data bytes over its iterations, per work-item."""
    order: tuple[int, ...]

    @classmethod
    def of(cls, kernel: ocl.KernelOp) -> KernelLeaves:
        leaves: list[tuple[dict[str, float], _Context]] = []
        order: list[int] = []
        serial = 0
        for event in _walk(kernel.body.block, _Context()):
            if event is None:  # an inner node
                serial += 1
                continue
            leaves.append(event)
            order.append(serial)
            serial += 2  # the leaf, then its marker
        if not leaves:  # an empty kernel: one empty leaf
            leaves.append(({}, _Context()))
            order.append(0)
        fixed, work = zip(*(_fixed_fields(counts, context) for counts, context in leaves))
        return cls(fixed, work, tuple(order))

    def launched(self, global_size: Sequence[int], local_size: Sequence[int] | None,
                 cores: int) -> CompactAST:
        """The compact AST of a launch over `global_size` (in `local_size` groups) on a
        device of `cores` compute units."""
        launch = _launch_vector(global_size, local_size, cores)
        items = math.prod(global_size)
        return CompactAST(np.asarray([[*fixed, *launch, _log(flops * items), _log(data * items)]
                                      for fixed, (flops, data) in zip(self.fixed, self.work)],
                                     np.float32),
                          np.asarray(self.order, np.int64))


@dataclass(frozen=True)
class _Context:
    extents: tuple[int, ...] = ()
    """The enclosing loops' extents, outermost first (1 where not known)."""
    dynamic: int = 0
    ifs: int = 0


def _walk(block: Block, context: _Context) -> Iterator[tuple[dict, _Context] | None]:
    """Pre-order: None for each inner node, (counts, context) for each leaf."""
    counts: dict[str, float] = {}
    for op in block.ops:
        if isinstance(op, scf.ForOp | scf.IfOp):
            if counts:
                yield counts, context
                counts = {}
            yield None
            if isinstance(op, scf.ForOp):
                extent = _trip_count(op)
                inner = _Context(context.extents + (extent or 1,),
                                 context.dynamic + (extent is None), context.ifs)
                yield from _walk(op.body.block, inner)
            else:
                inner = _Context(context.extents, context.dynamic, context.ifs + 1)
                for region in op.regions:
                    if region.blocks:
                        yield from _walk(region.block, inner)
            continue
        _count(op, counts)
    if counts:
        yield counts, context


def _trip_count(loop: scf.ForOp) -> int | None:
    bounds = [_constant(v) for v in (loop.lb, loop.ub, loop.step)]
    if any(b is None for b in bounds):
        return None
    lb, ub, step = bounds
    return max(0, -(-(ub - lb) // step))


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _elements(value: SSAValue) -> int:
    t = value.type
    return math.prod(t.get_shape()) if isinstance(t, VectorType) else 1


def _count(op: Operation, counts: dict[str, float]) -> None:
    def add(field: str, amount: float = 1.0) -> None:
        counts[field] = counts.get(field, 0.0) + amount

    kind = _KINDS.get(type(op))
    if kind is not None:
        add(kind, _elements(op.results[0]) if op.results else 1)
        return
    access = next((field for cls, field in _ACCESSES if isinstance(op, cls)), None)
    if access is not None:
        add(access)
    elif isinstance(op, ocl.BufferLoadOp | ocl.BufferLoad16Op):
        add("buffer_loads")
        add("buffer_load_bytes", _elements(op.results[0]) * _element_bytes(op.buffer))
    elif isinstance(op, ocl.BufferStoreOp):
        add("buffer_stores")
        add("buffer_store_bytes", _elements(op.value) * _element_bytes(op.buffer))
    elif isinstance(op, texture.ReadOp | texture.Read16Op):  # not yet lowered: as a buffer's
        add("buffer_loads")
        add("buffer_load_bytes", 4 * _elements(op.results[0]))
    elif isinstance(op, texture.WriteOp):
        add("buffer_stores")
        add("buffer_store_bytes", 16)


_ACCESSES = (
    (ocl.ImageReadOp, "image_reads"), (ocl.ImageWriteOp, "image_writes"),
    (ocl.BufferLaneLoadOp, "lane_loads"), (ocl.LocalLoadOp, "local_loads"),
    (ocl.LocalStoreOp, "local_stores"), (ocl.BarrierOp, "barriers"),
)
"""Accesses counted by op alone (buffers' by their bytes too, above)."""


def _element_bytes(storage: SSAValue) -> int:
    return storage.type.element_type.bitwidth // 8


def _log(x: float) -> float:
    return math.log2(1.0 + max(x, 0.0))


def _launch_vector(global_size: Sequence[int], local_size: Sequence[int] | None,
                   cores: int) -> list[float]:
    gx, gy = (list(global_size) + [1, 1])[:2]
    lx, ly = (list(local_size) + [1, 1])[:2] if local_size else (0, 0)
    items = math.prod(global_size)
    groups = items / max(1, lx * ly) if local_size else 0
    return [_log(gx), _log(gy), _log(items), _log(lx), _log(ly), _log(groups),
            *core_filling(groups, cores)]


def core_filling(groups: float, cores: int) -> tuple[float, float]:
    """`core_share` and `waves` of `groups` work groups (0: the driver chooses, taken as
    filling every core once) on `cores` compute units."""
    if groups <= 0:
        return 1.0, 1.0
    return min(groups, cores) / cores, _log(groups / cores)


def _fixed_fields(counts: dict[str, float], context: _Context
                  ) -> tuple[list[float], tuple[float, float]]:
    """A leaf's fields that no launch changes (its counts and loops), and its floating-point
    elements and data bytes over its iterations (the totals' per-work-item part)."""
    trips = math.prod(context.extents)
    extents = list(reversed(context.extents)) + [0, 0]
    flops = sum(v for k, v in counts.items() if k in _FLOAT_KINDS) + 2 * counts.get("f_fma", 0)
    data = counts.get("buffer_load_bytes", 0) + counts.get("buffer_store_bytes", 0) + 16 * (
        counts.get("image_reads", 0) + counts.get("image_writes", 0)) + 4 * counts.get(
        "lane_loads", 0)
    fields = [_log(counts.get(f, 0.0)) for f in ARITH_FIELDS + MEMORY_FIELDS]
    fields += [len(context.extents), context.ifs, _log(trips), _log(extents[0]),
               _log(extents[1]), context.dynamic]
    return fields, (flops * trips, data * trips)


DEVICE_FIELDS = (
    "gpu", "cores", "warp_size", "alus_per_core", "effective_clock_ghz", "peak_gflops",
    "registers_per_core", "max_work_group_size", "local_memory_bytes", "bandwidth_buffer",
    "bandwidth_texture", "bandwidth_local", "bandwidth_constant", "buffer_cache_l1",
    "buffer_cache_l2", "texture_cache_l1", "cache_line",
)
"""§4.3's device-dependent features, from a probe profile (log2(1 + x) but the flag)."""


def device_features(profile: dict) -> np.ndarray:
    """The device vector of a profile (`models/device_profile.py` reads them). Profiles
    give no clock: `effective_clock_ghz` is the peak over 2 FLOPs x cores x ALUs."""
    compute, bandwidth = profile["compute"], profile["bandwidth_gbs"]
    caches = profile.get("caches", {})
    buffer_sizes = list(caches.get("buffer", {}).get("sizes", [])) + [0, 0]
    texture_sizes = list(caches.get("texture", {}).get("sizes", [])) + [0]
    lanes = compute["cores"] * compute["alus_per_core"]
    values = {
        "cores": compute["cores"], "warp_size": compute["warp_size"],
        "alus_per_core": compute["alus_per_core"],
        "effective_clock_ghz": compute["peak_gflops"] / (2 * lanes),
        "peak_gflops": compute["peak_gflops"],
        "registers_per_core": compute.get("registers_per_core") or 0,
        "max_work_group_size": compute["max_work_group_size"],
        "local_memory_bytes": compute["local_memory_bytes"],
        "bandwidth_buffer": bandwidth["buffer"], "bandwidth_texture": bandwidth["texture"],
        "bandwidth_local": bandwidth["local"], "bandwidth_constant": bandwidth["constant"],
        "buffer_cache_l1": buffer_sizes[0], "buffer_cache_l2": buffer_sizes[1],
        "texture_cache_l1": texture_sizes[0],
        "cache_line": caches.get("buffer", {}).get("line", 0),
    }
    gpu = 1.0 if profile.get("identity", {}).get("kind") == "GPU" else 0.0
    return np.asarray([gpu] + [_log(values[f]) for f in DEVICE_FIELDS[1:]], np.float32)
