"""
A kernel configuration chosen by `texture-tile`: the thread tile T (output pixels along
x, rows along y, that one work-item computes) and the work-group size G, recorded on
the `onnx` op as the discardable attribute `texture.tile`, which `onnx-to-texture`
honours when it lowers the op:

    %y = onnx.MatMul(%a, %b) {texture.tile = {tile = array<i64: 1, 8>, group = array<i64: 16, 4>,
                                              layout = "block4"}}

The access pattern (TMModel's A) is the storage layout of the operand each work-item
streams through, MatMul's B, which the host packs that way (weights and graph inputs
only: an activation keeps the layout its producer wrote). In rows4 a work-item walks
down a one-pixel column that its warp neighbours continue (column major); in block-b
it walks a b-pixel-wide strip (block-b major); in cols4 it reads four neighbouring
pixels per step and keeps a dot product per lane. The tile sets the pattern of the
other operand: T rows of A are read T pixels at a time (block-T; T = 1: row major).

A product or convolution may instead take the blocked product
(`onnx_to_texture/blocked.py`): a `GemmPlan`, its block and K's slices, recorded beside
the tile and group that the block implies (its work-item's pixels and rows, its group):

    {texture.tile = {tile = array<i64: 1, 4>, group = array<i64: 16, 16>,
                     block = array<i64: 64, 64, 16, 4, 4>, split = 8 : i64}}

(`split` only where K is split.) The blocks and the fixed rule the lowering falls back
on where `texture-tile` chose nothing (`plan_gemm`) live here, with the configuration.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects.texture.layouts import Layout

ATTRIBUTE = "texture.tile"


# the blocked product's configurations ---------------------------------------------------


@dataclass(frozen=True)
class GemmBlock:
    """
    A work group's block: `bm` x `bn` of C over K in steps of `bk`; each work-item
    keeps `tm` rows by `tn` columns of it in registers.
    """

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int

    @property
    def group(self) -> tuple[int, int]:
        return self.bn // self.tn, self.bm // self.tm

    @property
    def threads(self) -> int:
        return prod(self.group)

    @property
    def staged(self) -> tuple[int, int]:
        """Pixels of A and of B each work-item reads and stages per K step."""
        return self.bm * self.bk // 4 // self.threads, self.bn // 4 * self.bk // self.threads

    @property
    def local_bytes(self) -> int:
        """Local memory of a group: two steps' float4s of A's and B's blocks."""
        return 2 * self.bk * (self.bm + self.bn) // 4 * 16

    def blocks(self, rows: int, cols: int) -> int:
        return -(-rows // self.bm) * -(-cols // self.bn)

    def fault(self) -> str | None:
        """Why `blocked_product` cannot emit this block, or None: the work-items' rows and
        columns come in float4s and tile the block, and every work-item stages whole
        pixels of A and B."""
        if min(self.bm, self.bn, self.bk, self.tm, self.tn) < 1:
            return "its sizes must be positive"
        if self.tm % 4 or self.tn % 4 or self.bm % self.tm or self.bn % self.tn:
            return "tm and tn must be multiples of 4 that divide bm and bn"
        if self.bm * self.bk // 4 % self.threads or self.bn // 4 * self.bk % self.threads:
            return (f"its {self.threads} work-items must stage whole pixels of A "
                    f"({self.bm * self.bk // 4}) and B ({self.bn // 4 * self.bk})")
        return None

    def __str__(self) -> str:
        return f"{self.bm}x{self.bn}x{self.bk}/{self.tm}x{self.tn}"


GEMM_BLOCKS = (GemmBlock(256, 128, 8, 16, 8), GemmBlock(128, 128, 8, 8, 8),
               GemmBlock(64, 64, 16, 4, 4))
"""Largest first; each of 256 work-items stages whole pixels of A and B per K step, and a
group holds two steps of both in 16–24 KiB of local memory."""

GEMM_MIN_GROUPS = 128
"""A blocked kernel launches at least this many work groups (about one per core of a
large GPU): the largest block that gives them, else the smallest with K split."""

MIN_SLICE_STEPS = 8
"""K steps a slice keeps at the least: fewer, and staging and the partial sums cost more
than the parallelism gains."""


@dataclass(frozen=True)
class GemmPlan:
    block: GemmBlock
    split: int = 1
    """Slices of K, each its own group along z (1: no partial sums)."""

    @property
    def group(self) -> tuple[int, ...]:
        """The launch's local size."""
        wx, wy = self.block.group
        return (wx, wy, 1) if self.split > 1 else (wx, wy)


def gemm_plans(rows: int, cols: int, depth: int, split: bool = False) -> Iterator[GemmPlan]:
    """
    The blocked product's candidates for a product, in the fixed rule's order of
    preference: each block that gives `GEMM_MIN_GROUPS` groups, largest first; where none
    does and `split` allows, the smallest block with K in 2, 4, ... slices from the
    fewest that give them to the most that keep `MIN_SLICE_STEPS` steps each. None where
    even those give too few: the one-pixel kernels' many small work-items fill the
    device better.
    """
    enough = [GemmPlan(b) for b in GEMM_BLOCKS if b.blocks(rows, cols) >= GEMM_MIN_GROUPS]
    yield from enough
    if enough or not split:
        return
    block = GEMM_BLOCKS[-1]
    steps, blocks = -(-depth // block.bk), block.blocks(rows, cols)
    slices = 2
    while steps // slices >= MIN_SLICE_STEPS:
        if blocks * slices >= GEMM_MIN_GROUPS:
            yield GemmPlan(block, slices)
        slices *= 2


def plan_gemm(rows: int, cols: int, depth: int, split: bool = False) -> GemmPlan | None:
    """The fixed rule, where `texture-tile` chose nothing: the first of `gemm_plans`."""
    return next(gemm_plans(rows, cols, depth, split), None)


# the configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class TileConfig:
    tile: tuple[int, int] = (1, 4)
    group: tuple[int, int] | None = None
    """None: the driver chooses."""
    layout: Layout | None = None
    """The streamed operand's storage (the access pattern); None: as it comes."""
    plan: GemmPlan | None = None
    """The blocked product's block and K's slices; None: a one-pixel kernel."""

    @staticmethod
    def blocked(plan: GemmPlan) -> TileConfig:
        """The configuration of a blocked kernel: its work-item's pixels and rows, its group."""
        return TileConfig((plan.block.tn // 4, plan.block.tm), plan.block.group, plan=plan)

    @property
    def rows(self) -> int:
        return self.tile[1]

    def attribute(self) -> DictionaryAttr:
        entries = {"tile": DenseArrayBase.from_list(i64, self.tile)}
        if self.group is not None:
            entries["group"] = DenseArrayBase.from_list(i64, self.group)
        if self.layout is not None:
            entries["layout"] = StringAttr(self.layout.value)
        if self.plan is not None:
            b = self.plan.block
            entries["block"] = DenseArrayBase.from_list(i64, (b.bm, b.bn, b.bk, b.tm, b.tn))
            if self.plan.split > 1:
                entries["split"] = IntegerAttr(self.plan.split, i64)
        return DictionaryAttr(entries)

    def describe(self) -> str:
        group = "driver" if self.group is None else f"{self.group[0]}x{self.group[1]}"
        pattern = "" if self.layout is None else f" B={self.layout.value}"
        blocked = ""
        if self.plan is not None:
            split = f" split={self.plan.split}" if self.plan.split > 1 else ""
            blocked = f" block={self.plan.block}{split}"
        return f"T={self.tile[0]}x{self.tile[1]} G={group}{pattern}{blocked}"

    @staticmethod
    def from_attribute(attr: DictionaryAttr) -> TileConfig:
        data = attr.data
        tile = tuple(data["tile"].get_values()) if "tile" in data else (1, 4)
        group = tuple(data["group"].get_values()) if "group" in data else None
        name = data["layout"].data if isinstance(data.get("layout"), StringAttr) else None
        if name is not None and name not in set(Layout):
            raise DiagnosticException(f"{ATTRIBUTE}: no layout '{name}'")
        config = TileConfig(tile, group,  # type: ignore[arg-type]
                            Layout(name) if name is not None else None)
        if "block" in data:
            config = _blocked_from(data, config)
        elif "split" in data:
            raise DiagnosticException(f"{ATTRIBUTE}: a split needs a block")
        return config

    @staticmethod
    def of(op: Operation) -> TileConfig | None:
        """The configuration recorded on `op`, if any."""
        attr = op.attributes.get(ATTRIBUTE)
        return TileConfig.from_attribute(attr) if isinstance(attr, DictionaryAttr) else None

    def apply(self, op: Operation) -> None:
        op.attributes[ATTRIBUTE] = self.attribute()


def _blocked_from(data: dict, given: TileConfig) -> TileConfig:
    """A recorded blocked configuration, checked: a block the kernel can take, and the tile
    and group it implies (where recorded)."""
    values = data["block"].get_values() if isinstance(data["block"], DenseArrayBase) else ()
    if len(values) != 5:
        raise DiagnosticException(f"{ATTRIBUTE}: block must be array<i64: bm, bn, bk, tm, tn>")
    block = GemmBlock(*values)
    fault = block.fault()
    if fault is not None:
        raise DiagnosticException(f"{ATTRIBUTE}: block {list(values)} is invalid: {fault}")
    split = data["split"].value.data if isinstance(data.get("split"), IntegerAttr) else 1
    if split < 1:
        raise DiagnosticException(f"{ATTRIBUTE}: split must be 1 or more, not {split}")
    config = TileConfig.blocked(GemmPlan(block, split))
    if given.layout is not None or ("tile" in data and given.tile != config.tile) or (
            given.group is not None and given.group != config.group):
        raise DiagnosticException(
            f"{ATTRIBUTE}: block {list(values)} takes tile {list(config.tile)} and group "
            f"{list(config.group)} and no layout, not {given.describe()}")
    return config
