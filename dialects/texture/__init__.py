"""The `texture` dialect: image2d storage, tensor↔image layouts, pixel access."""

from .layouts import Layout, image_size, pack, unpack
from .ops import (
    PIXEL_F32,
    TEXTURE,
    AllocOp,
    Image2DType,
    LayoutAttr,
    LimitsAttr,
    PackOp,
    PixelBufferType,
    PixelStorageType,
    ReadOp,
    Read16Op,
    RelayoutOp,
    UnpackOp,
    WriteOp,
    device_limits,
)

__all__ = [
    "PIXEL_F32",
    "TEXTURE",
    "AllocOp",
    "Image2DType",
    "Layout",
    "LayoutAttr",
    "LimitsAttr",
    "PackOp",
    "PixelBufferType",
    "PixelStorageType",
    "ReadOp",
    "Read16Op",
    "RelayoutOp",
    "UnpackOp",
    "WriteOp",
    "device_limits",
    "image_size",
    "pack",
    "unpack",
]
