"""The `hvx` dialect: HVX and scalar Hexagon instructions, SIMD layouts, kernel structure."""

from xdsl.ir import Dialect

from . import ops
from .attributes import ImplementationAttr, LayoutAttr
from .layouts import ImageGeometry, SimdLayout
from .registers import PredType, RegPairType, RegType, VecPairType, VecType

OPERATIONS = [
    value
    for value in vars(ops).values()
    if isinstance(value, type) and issubclass(value, ops.IRDLOperation) and "name" in vars(value)
    and value.name.startswith("hvx.")
]

HVX = Dialect(
    "hvx",
    OPERATIONS,
    [VecType, VecPairType, PredType, RegType, RegPairType, LayoutAttr, ImplementationAttr],
)

__all__ = [
    "HVX",
    "ImageGeometry",
    "ImplementationAttr",
    "LayoutAttr",
    "PredType",
    "RegPairType",
    "RegType",
    "SimdLayout",
    "VecPairType",
    "VecType",
    "ops",
]
