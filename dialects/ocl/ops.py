"""
The `ocl` dialect: the OpenCL C constructs that kernel bodies need beyond upstream
`arith`, `scf`, `math` and `vector` — kernel functions, work-item ids, image and
buffer pixel access, vector literals, barriers — and the host-side launch.

`backends/opencl` prints kernels of this dialect as OpenCL C, one `__kernel` per
`ocl.kernel`, and turns the host function's `ocl.launch` ops into its host plan.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float16Type,
    Float32Type,
    I64,
    FunctionType,
    IntAttr,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    VectorType,
    f16,
    f32,
    i32,
    i64,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    EqAttrConstraint,
    IRDLOperation,
    irdl_attr_definition,
    param_def,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from mobile_opt.dialects.texture.ops import Image2DType, PixelBufferType

FLOAT4 = VectorType(f32, [4])
HALF4 = VectorType(f16, [4])
FLOAT16 = VectorType(f32, [16])
"""Four pixels side by side: the wide kernels' sixteen output channels (one AVX-512
register on a CPU device)."""


@irdl_op_definition
class KernelOp(IRDLOperation):
    """
    A `__kernel void` function. Its arguments are images and pixel buffers; the
    printer infers each one's access qualifier from the reads and writes in the body.
    `group_size`, where set, is the only work-group size it runs in
    (`reqd_work_group_size`: the compiler may then give each work-item the registers
    of that many, not of the device's largest group); it prints among the attributes.
    """

    name = "ocl.kernel"
    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    group_size = opt_prop_def(DenseArrayBase.constr(i64))
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(self, name: str, arg_types: Sequence[Attribute], region: Region | None = None,
                 group_size: Sequence[int] | None = None):
        function_type = FunctionType.from_lists(arg_types, [])
        if region is None:
            region = Region(Block(arg_types=arg_types))
        super().__init__(
            properties={"sym_name": StringAttr(name), "function_type": function_type,
                        "group_size": None if group_size is None
                        else DenseArrayBase.from_list(i64, group_size)},
            regions=[region],
        )

    def verify_(self) -> None:
        if self.function_type.outputs.data:
            raise VerifyException("ocl.kernel: kernels return nothing")
        if tuple(self.body.block.arg_types) != self.function_type.inputs.data:
            raise VerifyException("ocl.kernel: block arguments differ from the signature")
        for t in self.function_type.inputs.data:
            if not isinstance(t, Image2DType | PixelBufferType):
                raise VerifyException(
                    f"ocl.kernel: arguments are texture.image2d or texture.buffer2d, not {t}"
                )
        if self.group_size is not None:
            sizes = self.group_size.get_values()
            if not 1 <= len(sizes) <= 3 or any(s < 1 for s in sizes):
                raise VerifyException(f"ocl.kernel: bad group size {list(sizes)}")

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, inputs, outputs, region, extra, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        if outputs:
            parser.raise_error("ocl.kernel returns nothing")
        op = KernelOp(name, inputs, region)
        if extra is not None:
            attributes = dict(extra.data)
            op.group_size = attributes.pop("group_size", None)
            op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        attributes = dict(self.attributes)
        if self.group_size is not None:
            attributes["group_size"] = self.group_size
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            attributes,
            reserved_attr_names=("sym_name", "function_type"),
        )


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """The end of a kernel body."""

    name = "ocl.return"
    traits = traits_def(IsTerminator(), HasParent(KernelOp))
    assembly_format = "attr-dict"


class WorkItemQueryOp(IRDLOperation, ABC):
    """An index of this work-item in `dimension` (0, 1 or 2), as a 32-bit int."""

    dimension = prop_def(IntegerAttr[i64])
    result = result_def(i32)
    traits = traits_def(Pure())
    assembly_format = "$dimension attr-dict"

    def __init__(self, dimension: int):
        super().__init__(
            properties={"dimension": IntegerAttr(dimension, i64)}, result_types=[i32]
        )

    def verify_(self) -> None:
        if self.dimension.value.data not in (0, 1, 2):
            raise VerifyException(f"{self.name}: dimension is 0, 1 or 2")


@irdl_op_definition
class GlobalIdOp(WorkItemQueryOp):
    """`get_global_id(dimension)`."""

    name = "ocl.global_id"


@irdl_op_definition
class LocalIdOp(WorkItemQueryOp):
    """`get_local_id(dimension)`."""

    name = "ocl.local_id"


@irdl_op_definition
class GroupIdOp(WorkItemQueryOp):
    """`get_group_id(dimension)`."""

    name = "ocl.group_id"


def check_element_type(op: Operation, storage: SSAValue, want: type, verb: str, kind: str) -> None:
    """`op` only works on storage whose pixels hold `want` elements."""
    if not isinstance(storage.type.element_type, want):
        raise VerifyException(f"{op.name} {verb} {want.name} {kind}, not {storage.type}")


class ImageReadOp(IRDLOperation, ABC):
    """Read the pixel at integer (x, y) of an image through the sampler (no filtering)."""

    image = operand_def(Image2DType)
    x = operand_def(i32)
    y = operand_def(i32)
    traits = traits_def(Pure())
    assembly_format = "$image `[` $x `,` $y `]` attr-dict `:` type($image)"
    STORAGE: ClassVar[type[Attribute]]
    RESULT: ClassVar[VectorType]

    def __init__(self, image: SSAValue, x: SSAValue, y: SSAValue):
        super().__init__(operands=[image, x, y], result_types=[self.RESULT])

    def verify_(self) -> None:
        check_element_type(self, self.image, self.STORAGE, "reads", "images")


@irdl_op_definition
class ReadImageFOp(ImageReadOp):
    """`read_imagef`: a float4 from an f32 image."""

    name = "ocl.read_imagef"
    result = result_def(FLOAT4)
    STORAGE: ClassVar = Float32Type
    RESULT: ClassVar = FLOAT4


@irdl_op_definition
class ReadImageHOp(ImageReadOp):
    """`read_imageh`: a half4 from an f16 image (float4 under the fp16 shim)."""

    name = "ocl.read_imageh"
    result = result_def(HALF4)
    STORAGE: ClassVar = Float16Type
    RESULT: ClassVar = HALF4


class ImageWriteOp(IRDLOperation, ABC):
    """Write one pixel at integer (x, y) of an image."""

    image = operand_def(Image2DType)
    x = operand_def(i32)
    y = operand_def(i32)
    assembly_format = "$value `,` $image `[` $x `,` $y `]` attr-dict `:` type($image)"
    STORAGE: ClassVar[type[Attribute]]

    def __init__(self, value: SSAValue, image: SSAValue, x: SSAValue, y: SSAValue):
        super().__init__(operands=[value, image, x, y])

    def verify_(self) -> None:
        check_element_type(self, self.image, self.STORAGE, "writes", "images")


@irdl_op_definition
class WriteImageFOp(ImageWriteOp):
    """`write_imagef`."""

    name = "ocl.write_imagef"
    value = operand_def(FLOAT4)
    STORAGE: ClassVar = Float32Type


@irdl_op_definition
class WriteImageHOp(ImageWriteOp):
    """`write_imageh`."""

    name = "ocl.write_imageh"
    value = operand_def(HALF4)
    STORAGE: ClassVar = Float16Type


class BufferAccessOp(IRDLOperation, ABC):
    """Access pixel number `offset` (row-major over the grid) of a pixel buffer."""

    buffer = operand_def(PixelBufferType)
    offset = operand_def(i32)
    STORAGE: ClassVar[type[Attribute]]

    def verify_(self) -> None:
        check_element_type(self, self.buffer, self.STORAGE, "accesses", "buffers")


class BufferLoadOp(BufferAccessOp, ABC):
    result = result_def(FLOAT4)
    traits = traits_def(Pure())
    assembly_format = "$buffer `[` $offset `]` attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, offset: SSAValue):
        super().__init__(operands=[buffer, offset], result_types=[FLOAT4])


class BufferStoreOp(BufferAccessOp, ABC):
    value = operand_def(FLOAT4)
    assembly_format = "$value `,` $buffer `[` $offset `]` attr-dict `:` type($buffer)"

    def __init__(self, value: SSAValue, buffer: SSAValue, offset: SSAValue):
        super().__init__(operands=[value, buffer, offset])


@irdl_op_definition
class VLoad4Op(BufferLoadOp):
    """`vload4(offset, buffer)` from an f32 pixel buffer."""

    name = "ocl.vload4"
    STORAGE: ClassVar = Float32Type


@irdl_op_definition
class VLoadHalf4Op(BufferLoadOp):
    """`vload_half4(offset, buffer)`: four halves widened to float4 (core OpenCL)."""

    name = "ocl.vload_half4"
    STORAGE: ClassVar = Float16Type


@irdl_op_definition
class VStore4Op(BufferStoreOp):
    """`vstore4(value, offset, buffer)` into an f32 pixel buffer."""

    name = "ocl.vstore4"
    STORAGE: ClassVar = Float32Type


@irdl_op_definition
class VStoreHalf4Op(BufferStoreOp):
    """`vstore_half4(value, offset, buffer)`: float4 rounded to halves."""

    name = "ocl.vstore_half4"
    STORAGE: ClassVar = Float16Type


class BufferLoad16Op(BufferAccessOp, ABC):
    """The four pixels from `offset` on as one float16 (one load, not four)."""

    result = result_def(FLOAT16)
    traits = traits_def(Pure())
    assembly_format = "$buffer `[` $offset `]` attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, offset: SSAValue):
        super().__init__(operands=[buffer, offset], result_types=[FLOAT16])


@irdl_op_definition
class VLoad16Op(BufferLoad16Op):
    """`vload16(0, buffer + 4 * offset)` from an f32 pixel buffer."""

    name = "ocl.vload16"
    STORAGE: ClassVar = Float32Type


@irdl_op_definition
class VLoadHalf16Op(BufferLoad16Op):
    """`vload_half16(0, buffer + 4 * offset)`: sixteen halves widened to a float16."""

    name = "ocl.vload_half16"
    STORAGE: ClassVar = Float16Type


class BufferLaneLoadOp(BufferAccessOp, ABC):
    """Lane `lane` (0–3, known only at run time) of pixel `offset`: one scalar load, where
    a whole pixel and a run-time pick of its lane would be four loads and selects."""

    lane = operand_def(i32)
    result = result_def(f32)
    traits = traits_def(Pure())
    assembly_format = "$buffer `[` $offset `]` `[` $lane `]` attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, offset: SSAValue, lane: SSAValue):
        super().__init__(operands=[lane, buffer, offset], result_types=[f32])


@irdl_op_definition
class LoadLaneOp(BufferLaneLoadOp):
    """`buffer[4 * offset + lane]` of an f32 pixel buffer."""

    name = "ocl.load_lane"
    STORAGE: ClassVar = Float32Type


@irdl_op_definition
class LoadHalfLaneOp(BufferLaneLoadOp):
    """`vload_half(4 * offset + lane, buffer)`: one half widened to float (core OpenCL)."""

    name = "ocl.load_half_lane"
    STORAGE: ClassVar = Float16Type


@irdl_op_definition
class Vec4Op(IRDLOperation):
    """The vector literal `(float4)(a, b, c, d)`."""

    name = "ocl.vec4"
    x = operand_def(f32)
    y = operand_def(f32)
    z = operand_def(f32)
    w = operand_def(f32)
    result = result_def(FLOAT4)
    traits = traits_def(Pure())
    assembly_format = "$x `,` $y `,` $z `,` $w attr-dict"

    def __init__(self, lanes: Sequence[SSAValue]):
        super().__init__(operands=list(lanes), result_types=[FLOAT4])


@irdl_op_definition
class Vec16Op(IRDLOperation):
    """The vector literal `(float16)(a, b, c, d)` of four float4 pixels."""

    name = "ocl.vec16"
    pixels = var_operand_def(FLOAT4)
    result = result_def(FLOAT16)
    traits = traits_def(Pure())
    assembly_format = "$pixels attr-dict"

    def __init__(self, pixels: Sequence[SSAValue]):
        super().__init__(operands=[list(pixels)], result_types=[FLOAT16])

    def verify_(self) -> None:
        if len(self.pixels) != 4:
            raise VerifyException(f"ocl.vec16 takes four float4 pixels, got {len(self.pixels)}")


@irdl_op_definition
class Part4Op(IRDLOperation):
    """Pixel `index` (0–3) of a float16: its lanes 4·index to 4·index + 3 (`.s0123`, ...)."""

    name = "ocl.part4"
    vector = operand_def(FLOAT16)
    index = prop_def(IntegerAttr[I64])
    result = result_def(FLOAT4)
    traits = traits_def(Pure())
    assembly_format = "$vector `[` $index `]` attr-dict"

    def __init__(self, vector: SSAValue, index: int):
        super().__init__(operands=[vector], result_types=[FLOAT4],
                         properties={"index": IntegerAttr(index, i64)})

    def verify_(self) -> None:
        if not 0 <= self.index.value.data < 4:
            raise VerifyException(f"ocl.part4: index {self.index.value.data} is not in 0..3")


@irdl_op_definition
class LaneOp(IRDLOperation):
    """Lane `lane` (0–3, known only at run time) of a float4."""

    name = "ocl.lane"
    vector = operand_def(FLOAT4)
    lane = operand_def(i32)
    result = result_def(f32)
    traits = traits_def(Pure())
    assembly_format = "$vector `[` $lane `]` attr-dict"

    def __init__(self, vector: SSAValue, lane: SSAValue):
        super().__init__(operands=[vector, lane], result_types=[f32])


@irdl_attr_definition
class LocalArrayType(ParametrizedAttribute, TypeAttribute):
    """`!ocl.local<N>`: `__local float4 name[N]`, an array the work group shares."""

    name = "ocl.local"
    size: IntAttr = param_def(IntAttr)

    def __init__(self, size: int):
        super().__init__(IntAttr(size))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            return [IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False))]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(str(self.size.data))

    def verify(self) -> None:
        if self.size.data < 1:
            raise VerifyException(f"!ocl.local: size {self.size.data} is not positive")


@irdl_op_definition
class LocalArrayOp(IRDLOperation):
    """
    A local-memory array, declared at the top of its kernel (OpenCL allows `__local`
    variables only in a kernel's outermost scope).
    """

    name = "ocl.local_array"
    result = result_def(LocalArrayType)
    traits = traits_def(HasParent(KernelOp))
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, size: int):
        super().__init__(result_types=[LocalArrayType(size)])


class LocalAccessOp(IRDLOperation, ABC):
    """Element `index` (a float4) of a local array. Not pure: barriers order these."""

    array = operand_def(LocalArrayType)
    index = operand_def(i32)


@irdl_op_definition
class LocalLoadOp(LocalAccessOp):
    """`array[index]`."""

    name = "ocl.local_load"
    result = result_def(FLOAT4)
    assembly_format = "$array `[` $index `]` attr-dict `:` type($array)"

    def __init__(self, array: SSAValue, index: SSAValue):
        super().__init__(operands=[array, index], result_types=[FLOAT4])


@irdl_op_definition
class LocalStoreOp(LocalAccessOp):
    """
    `array[index] = value` for a float4; for a float, `index` counts floats (lane
    index % 4 of float4 index / 4), so a group can stage a tile transposed.
    """

    name = "ocl.local_store"
    value = operand_def(EqAttrConstraint(FLOAT4) | EqAttrConstraint(f32))
    assembly_format = "$value `,` $array `[` $index `]` attr-dict `:` type($value) `,` type($array)"

    def __init__(self, value: SSAValue, array: SSAValue, index: SSAValue):
        super().__init__(operands=[value, array, index])


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """`barrier(CLK_LOCAL_MEM_FENCE)`: every work-item of the group waits here."""

    name = "ocl.barrier"
    assembly_format = "attr-dict"


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """
    Host side: run kernel `kernel` over an NDRange of `global_size` work-items in
    groups of `local_size` (the driver picks when absent) on `args`. Kernels write
    their outputs into storage among `args`; launches run in program order.
    """

    name = "ocl.launch"
    kernel = prop_def(SymbolRefAttr)
    global_size = prop_def(DenseArrayBase.constr(i64))
    local_size = opt_prop_def(DenseArrayBase.constr(i64))
    args = var_operand_def(Image2DType | PixelBufferType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$kernel `(` $args `)` attr-dict (`:` type($args)^)?"

    def __init__(
        self,
        kernel: str,
        args: Sequence[SSAValue],
        global_size: Sequence[int],
        local_size: Sequence[int] | None = None,
    ):
        super().__init__(
            operands=[list(args)],
            properties={
                "kernel": SymbolRefAttr(kernel),
                "global_size": DenseArrayBase.from_list(i64, global_size),
                "local_size": None
                if local_size is None
                else DenseArrayBase.from_list(i64, local_size),
            },
        )

    def verify_(self) -> None:
        sizes = self.global_size.get_values()
        if not 1 <= len(sizes) <= 3 or any(s < 1 for s in sizes):
            raise VerifyException(f"ocl.launch: bad global size {list(sizes)}")
        if self.local_size is not None:
            local = self.local_size.get_values()
            if len(local) != len(sizes) or any(l < 1 for l in local):
                raise VerifyException(f"ocl.launch: bad local size {list(local)}")
        kernel = SymbolTable.lookup_symbol(self, self.kernel)
        if kernel is None:
            raise VerifyException(f"ocl.launch: no kernel @{self.kernel.string_value()}")
        if not isinstance(kernel, KernelOp):
            raise VerifyException(f"ocl.launch: @{self.kernel.string_value()} is not an ocl.kernel")
        want = kernel.function_type.inputs.data
        got = tuple(a.type for a in self.args)
        if want != got:
            raise VerifyException(
                f"ocl.launch: @{self.kernel.string_value()} takes {len(want)} arguments of "
                f"types ({', '.join(map(str, want))}), got ({', '.join(map(str, got))})"
            )
        if kernel.group_size is not None:
            required = three_dims(kernel.group_size.get_values())
            local = self.local_size.get_values() if self.local_size else None
            if local is None or three_dims(local) != required:
                got = "the driver's" if local is None else str(list(local))
                raise VerifyException(
                    f"ocl.launch: @{self.kernel.string_value()} runs only in work groups of "
                    f"{list(kernel.group_size.get_values())}, not {got}")


def three_dims(sizes: Sequence[int]) -> tuple[int, ...]:
    """A work-group size in three dimensions (the ones left out are 1)."""
    return (*sizes, 1, 1, 1)[:3]


OCL = Dialect(
    "ocl",
    [
        KernelOp,
        ReturnOp,
        GlobalIdOp,
        LocalIdOp,
        GroupIdOp,
        ReadImageFOp,
        ReadImageHOp,
        WriteImageFOp,
        WriteImageHOp,
        VLoad4Op,
        VLoadHalf4Op,
        VStore4Op,
        VStoreHalf4Op,
        VLoad16Op,
        VLoadHalf16Op,
        LoadLaneOp,
        LoadHalfLaneOp,
        Vec4Op,
        Vec16Op,
        Part4Op,
        LaneOp,
        LocalArrayOp,
        LocalLoadOp,
        LocalStoreOp,
        BarrierOp,
        LaunchOp,
    ],
    [LocalArrayType],
)
