"""
The `texture` dialect: 2.5D images of RGBA pixels, their pixel-buffer fallback,
and the ops that move tensors in and out of them and read or write one pixel.

Host-side ops (`pack`, `unpack`, `alloc`) live in the host function; `read` and
`write` live in kernel bodies, where `texture-to-ocl` turns them into OpenCL's
image or buffer accesses; `relayout` lives among a graph's `onnx` ops before
`onnx-to-texture`, a layout change between two of them (`value_layouts.py`).
Images are storage, not values: kernels launched on them (`ocl.launch`) write into
the image an `alloc` made.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    VectorType,
    f16,
    f32,
    i32,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mobile_opt.dialects.enum_syntax import AngleBracketEnum

from .layouts import ACTIVATION_LAYOUTS, Layout, image_size

PIXEL_F32 = VectorType(f32, [4])
"""What `texture.read` gives and `texture.write` takes: one RGBA pixel as float4.
Kernels compute in f32 whatever the storage type."""
PIXELS16_F32 = VectorType(f32, [16])
"""What `texture.read16` gives: four pixels of a row as one float16."""


@dataclass(frozen=True, init=False)
class PixelStorageType(ParametrizedAttribute, TypeAttribute, ABC):
    """A width × height grid of RGBA pixels whose channels are `element_type`."""

    width: IntAttr
    height: IntAttr
    element_type: AnyFloat

    def __init__(self, width: int, height: int, element_type: Attribute = f32):
        super().__init__(IntAttr(width), IntAttr(height), element_type)

    @property
    def size(self) -> tuple[int, int]:
        return self.width.data, self.height.data

    def verify(self) -> None:
        if not isinstance(self.element_type, Float32Type | Float16Type):
            raise VerifyException(f"{self.name}: pixels hold f32 or f16, not {self.element_type}")
        if self.width.data < 1 or self.height.data < 1:
            raise VerifyException(
                f"{self.name}: size {self.width.data}x{self.height.data} is empty")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.width.data}x{self.height.data}x")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_shape()
        if dims is None or len(dims) != 2:
            parser.raise_error(f"{cls.name} takes <width x height x type>")
        return [IntAttr(dims[0]), IntAttr(dims[1]), element_type]


@irdl_attr_definition
class Image2DType(PixelStorageType):
    """An OpenCL `image2d_t` with CL_RGBA channels: reads go through the texture cache."""

    name = "texture.image2d"


@irdl_attr_definition
class PixelBufferType(PixelStorageType):
    """
    The buffer fallback for a tensor too large for the device's images: the same
    pixel grid stored row after row in a `__global` buffer of float4 (or half4).
    """

    name = "texture.buffer2d"


@irdl_attr_definition
class LayoutAttr(AngleBracketEnum, EnumAttribute[Layout]):
    """How a tensor's elements map to pixels; see `layouts.Layout`."""

    name = "texture.layout"


@irdl_attr_definition
class LimitsAttr(ParametrizedAttribute):
    """
    The device's largest image2d, on a module as `texture.limits`: the verifier
    rejects any image beyond it (a buffer2d takes its place).
    """

    name = "texture.limits"
    max_width: IntAttr
    max_height: IntAttr

    def __init__(self, max_width: int, max_height: int):
        super().__init__(IntAttr(max_width), IntAttr(max_height))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.max_width.data}x{self.max_height.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            dims = parser.parse_dimension_list()
        if len(dims) != 2:
            parser.raise_error("texture.limits takes <max-width x max-height>")
        return [IntAttr(dims[0]), IntAttr(dims[1])]

    def verify(self) -> None:
        if self.max_width.data < 1 or self.max_height.data < 1:
            raise VerifyException("texture.limits: sizes are positive")

    def admits(self, storage: PixelStorageType) -> bool:
        width, height = storage.size
        return width <= self.max_width.data and height <= self.max_height.data


PixelStorage = Image2DType | PixelBufferType


def device_limits(op: Operation) -> LimitsAttr | None:
    """The `texture.limits` of the module around `op`, if any."""
    module = op.get_toplevel_object()
    if isinstance(module, ModuleOp):
        limits = module.attributes.get("texture.limits")
        if isinstance(limits, LimitsAttr):
            return limits
    return None


class StorageOp(IRDLOperation, ABC):
    """An op that makes pixel storage for a tensor of `shape` in `layout`."""

    layout = prop_def(LayoutAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def storage_type(self) -> PixelStorageType:
        raise NotImplementedError

    def tensor_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def verify_(self) -> None:
        storage = self.storage_type()
        check_storage_size(self, self.layout.data, self.tensor_shape(), storage)
        limits = device_limits(self)
        if isinstance(storage, Image2DType) and limits is not None and not limits.admits(storage):
            raise VerifyException(
                f"{self.name}: image {storage.size[0]}x{storage.size[1]} exceeds the device "
                f"limit {limits.max_width.data}x{limits.max_height.data}; use a texture.buffer2d"
            )


def check_storage_size(op: Operation, layout: Layout, shape: Sequence[int],
                       storage: PixelStorageType, what: str = "tensor") -> None:
    """`storage` has the pixels a `shape` tensor takes in `layout`, a layout of its rank."""
    if (why := layout.check_rank(len(shape))) is not None:
        raise VerifyException(f"{op.name}: {why}")
    want = image_size(layout, tuple(shape))
    if storage.size != want:
        raise VerifyException(
            f"{op.name}: a {list(shape)} {what} in {layout.value} takes "
            f"{want[0]}x{want[1]} pixels, not {storage.size[0]}x{storage.size[1]}")


def check_tensor_element(op: Operation, t: TensorType, storage: PixelStorageType) -> None:
    """
    Host tensors of pixel storage are float, or integer/boolean ones held as exact
    integers in f32 pixels (f16 would round integers above 2048).
    """
    element = t.element_type
    if isinstance(element, IntegerType):
        if storage.element_type != f32:
            raise VerifyException(f"{op.name}: integer tensors live in f32 pixels")
    elif element not in (f32, f16):
        raise VerifyException(f"{op.name}: only float, integer and boolean tensors go into images")


@irdl_op_definition
class PackOp(StorageOp):
    """
    Upload a host tensor into new pixel storage in `layout` (padding with zeros);
    integers and booleans become exact float values.
    """

    name = "texture.pack"
    source = operand_def(TensorType)
    result = result_def(PixelStorage)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, layout: Layout, result_type: PixelStorageType):
        super().__init__(
            operands=[source], result_types=[result_type], properties={"layout": LayoutAttr(layout)}
        )

    def storage_type(self):
        return self.result.type

    def tensor_shape(self):
        return tuple(self.source.type.get_shape())

    def verify_(self) -> None:
        check_tensor_element(self, self.source.type, self.storage_type())
        super().verify_()


@irdl_op_definition
class UnpackOp(StorageOp):
    """
    Download pixel storage that holds a tensor in `layout` back into a host tensor
    (rounded to integers for an integer tensor).
    """

    name = "texture.unpack"
    source = operand_def(PixelStorage)
    result = result_def(TensorType)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, layout: Layout, result_type: TensorType):
        super().__init__(
            operands=[source], result_types=[result_type], properties={"layout": LayoutAttr(layout)}
        )

    def storage_type(self):
        return self.source.type

    def tensor_shape(self):
        return tuple(self.result.type.get_shape())

    def verify_(self) -> None:
        check_tensor_element(self, self.result.type, self.storage_type())
        super().verify_()


@irdl_op_definition
class AllocOp(StorageOp):
    """
    New, uninitialised pixel storage for a tensor of `shape` in `layout`. The host
    plan reuses the memory of storage whose last use has passed.
    """

    name = "texture.alloc"
    shape = prop_def(DenseArrayBase.constr(i64))
    remark = opt_prop_def(StringAttr)
    result = result_def(PixelStorage)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, layout: Layout, shape: tuple[int, ...], result_type: PixelStorageType):
        super().__init__(
            result_types=[result_type],
            properties={
                "layout": LayoutAttr(layout),
                "shape": DenseArrayBase.from_list(i64, shape),
            },
        )

    def storage_type(self):
        return self.result.type

    def tensor_shape(self):
        return tuple(self.shape.get_values())


@irdl_op_definition
class RelayoutOp(IRDLOperation):
    """
    The same tensor, stored in another activation layout: an explicit layout change
    between a producer and a consumer in a graph of `onnx` ops, which `onnx-to-texture`
    realises as a copy kernel (none where the pixels already agree). `select-layouts`
    records the layouts of every other value; a solver that changes a layout between two
    ops puts one of these there and counts its copy.
    """

    name = "texture.relayout"
    layout = prop_def(LayoutAttr)
    source = operand_def(TensorType)
    result = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, layout: Layout):
        super().__init__(operands=[source], result_types=[source.type],
                         properties={"layout": LayoutAttr(layout)})

    def verify_(self) -> None:
        if self.source.type != self.result.type:
            raise VerifyException(f"{self.name}: the result is the source's type "
                                  f"{self.source.type}, not {self.result.type}")
        layout = self.layout.data
        if layout not in ACTIVATION_LAYOUTS:
            raise VerifyException(f"{self.name}: a kernel writes "
                                  f"{' or '.join(a.value for a in ACTIVATION_LAYOUTS)}, "
                                  f"not {layout.value}")
        if (why := layout.check_rank(len(self.source.type.get_shape()))) is not None:
            raise VerifyException(f"{self.name}: {why}")


class PixelAccessOp(IRDLOperation, ABC):
    """Kernel-side access to the pixel at integer coordinates (x, y)."""

    storage = operand_def(PixelStorage)
    x = operand_def(i32)
    y = operand_def(i32)


@irdl_op_definition
class ReadOp(PixelAccessOp):
    """The pixel at (x, y) as float4; coordinates must lie inside the storage."""

    name = "texture.read"
    result = result_def(PIXEL_F32)
    traits = traits_def(Pure())
    assembly_format = "$storage `[` $x `,` $y `]` attr-dict `:` type($storage)"

    def __init__(self, storage: SSAValue, x: SSAValue, y: SSAValue):
        super().__init__(operands=[storage, x, y], result_types=[PIXEL_F32])


@irdl_op_definition
class Read16Op(PixelAccessOp):
    """The four pixels (x..x+3, y) as one float16, which must all lie inside the storage:
    a row of sixteen weights that a buffer serves in one load (`hwio4`)."""

    name = "texture.read16"
    result = result_def(PIXELS16_F32)
    traits = traits_def(Pure())
    assembly_format = "$storage `[` $x `,` $y `]` attr-dict `:` type($storage)"

    def __init__(self, storage: SSAValue, x: SSAValue, y: SSAValue):
        super().__init__(operands=[storage, x, y], result_types=[PIXELS16_F32])


@irdl_op_definition
class WriteOp(PixelAccessOp):
    """Store a float4 pixel at (x, y), converting to the storage's element type."""

    name = "texture.write"
    value = operand_def(PIXEL_F32)
    assembly_format = "$value `,` $storage `[` $x `,` $y `]` attr-dict `:` type($storage)"

    def __init__(self, value: SSAValue, storage: SSAValue, x: SSAValue, y: SSAValue):
        super().__init__(operands=[value, storage, x, y])


TEXTURE = Dialect(
    "texture",
    [PackOp, UnpackOp, AllocOp, RelayoutOp, ReadOp, Read16Op, WriteOp],
    [Image2DType, PixelBufferType, LayoutAttr, LimitsAttr],
)
