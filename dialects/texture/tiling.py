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
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, StringAttr, i64
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects.texture.layouts import Layout

ATTRIBUTE = "texture.tile"


@dataclass(frozen=True)
class TileConfig:
    tile: tuple[int, int] = (1, 4)
    group: tuple[int, int] | None = None
    """None: the driver chooses."""
    layout: Layout | None = None
    """The streamed operand's storage (the access pattern); None: as it comes."""

    @property
    def rows(self) -> int:
        return self.tile[1]

    def attribute(self) -> DictionaryAttr:
        entries = {"tile": DenseArrayBase.from_list(i64, self.tile)}
        if self.group is not None:
            entries["group"] = DenseArrayBase.from_list(i64, self.group)
        if self.layout is not None:
            entries["layout"] = StringAttr(self.layout.value)
        return DictionaryAttr(entries)

    def describe(self) -> str:
        group = "driver" if self.group is None else f"{self.group[0]}x{self.group[1]}"
        pattern = "" if self.layout is None else f" B={self.layout.value}"
        return f"T={self.tile[0]}x{self.tile[1]} G={group}{pattern}"

    @staticmethod
    def from_attribute(attr: DictionaryAttr) -> TileConfig:
        data = attr.data
        tile = tuple(data["tile"].get_values()) if "tile" in data else (1, 4)
        group = tuple(data["group"].get_values()) if "group" in data else None
        name = data["layout"].data if isinstance(data.get("layout"), StringAttr) else None
        if name is not None and name not in set(Layout):
            raise DiagnosticException(f"{ATTRIBUTE}: no layout '{name}'")
        return TileConfig(tile, group,  # type: ignore[arg-type]
                          Layout(name) if name is not None else None)

    @staticmethod
    def of(op: Operation) -> TileConfig | None:
        """The configuration recorded on `op`, if any."""
        attr = op.attributes.get(ATTRIBUTE)
        return TileConfig.from_attribute(attr) if isinstance(attr, DictionaryAttr) else None

    def apply(self, op: Operation) -> None:
        op.attributes[ATTRIBUTE] = self.attribute()
