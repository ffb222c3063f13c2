"""
A kernel configuration chosen by `texture-tile`: the thread tile T (output pixels along
x, rows along y, that one work-item computes) and the work-group size G, recorded on
the `onnx` op as the discardable attribute `texture.tile`, which `onnx-to-texture`
honours when it lowers the op:

    %y = onnx.MatMul(%a, %b) {texture.tile = {tile = array<i64: 1, 8>, group = array<i64: 16, 4>}}

The access pattern follows from the tile: a work-item of T rows reads its row operand
T rows at a time (TMModel's block-T major order; T = 1 is row major).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, i64
from xdsl.ir import Operation

ATTRIBUTE = "texture.tile"


@dataclass(frozen=True)
class TileConfig:
    tile: tuple[int, int] = (1, 4)
    group: tuple[int, int] | None = None
    """None: the driver chooses."""

    @property
    def rows(self) -> int:
        return self.tile[1]

    @property
    def pattern(self) -> str:
        return "row" if self.rows == 1 else f"block-{self.rows}"

    def attribute(self) -> DictionaryAttr:
        entries = {"tile": DenseArrayBase.from_list(i64, self.tile)}
        if self.group is not None:
            entries["group"] = DenseArrayBase.from_list(i64, self.group)
        return DictionaryAttr(entries)

    def describe(self) -> str:
        group = "driver" if self.group is None else f"{self.group[0]}x{self.group[1]}"
        return f"T={self.tile[0]}x{self.tile[1]} G={group}"

    @staticmethod
    def from_attribute(attr: DictionaryAttr) -> TileConfig:
        data = attr.data
        tile = tuple(data["tile"].get_values()) if "tile" in data else (1, 4)
        group = tuple(data["group"].get_values()) if "group" in data else None
        return TileConfig(tile, group)  # type: ignore[arg-type]

    @staticmethod
    def of(op: Operation) -> TileConfig | None:
        """The configuration recorded on `op`, if any."""
        attr = op.attributes.get(ATTRIBUTE)
        return TileConfig.from_attribute(attr) if isinstance(attr, DictionaryAttr) else None

    def apply(self, op: Operation) -> None:
        op.attributes[ATTRIBUTE] = self.attribute()
