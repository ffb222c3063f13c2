"""
`-t opencl`: print a lowered module's `ocl.kernel`s as one OpenCL C program.

Each SSA value becomes a `const` local named after its hint; constants print
inline; `scf.for`/`scf.if` become C loops and branches whose carried values are
mutable locals. Image arguments get the access qualifier their uses imply. A
prelude maps `half4`/`read_imageh`/`write_imageh` to float when the device lacks
`cl_khr_fp16`, so one source builds everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import singledispatchmethod
from typing import IO

from xdsl.dialects import arith, math, scf, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
    f32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.base_printer import BasePrinter
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.dialects import ocl, texture

PRELUDE = """\
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#else
// no cl_khr_fp16: half pixels are read and written as float (images keep half storage)
#define half4 float4
#define read_imageh read_imagef
#define write_imageh write_imagef
#define convert_half4 convert_float4
#endif

__constant sampler_t SMP = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

// lane k (known at run time) of a pixel
inline float mo_lane(float4 v, int k) { return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w; }
"""


_BUILTINS = (
    "exp log tanh erf sqrt rsqrt fabs floor ceil sin cos round pow fma fmax fmin max min "
    "copysign "
    "select dot mad clamp vload4 vstore4 vload_half4 vstore_half4 vload_half vload16 "
    "vload_half16 read_imagef write_imagef "
    "read_imageh write_imageh convert_float4 convert_half4 barrier get_global_id "
    "get_local_id get_group_id"
)
_KEYWORDS = (
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while bool half uchar ushort uint ulong size_t "
    "kernel global local constant private read_only write_only read_write image2d_t "
    "sampler_t event_t true false SMP mo_lane"
)
RESERVED = frozenset(
    _KEYWORDS.split()
    + _BUILTINS.split()
    + [f"{t}{n}" for t in ("float", "half", "int", "uint", "char", "uchar", "short", "bool")
       for n in (2, 3, 4, 8, 16)]
)
"""Names a value may not take: C/OpenCL keywords, types, builtins and the prelude's."""


class OpenCLPrintError(DiagnosticException):
    """The module holds something the OpenCL printer cannot express."""


def unique_name(base: str, used: set[str], separator: str = "") -> str:
    """`base`, or `base` with the first number that makes it new; recorded in `used`."""
    name, n = base, 0
    while name in used:
        n += 1
        name = f"{base}{separator}{n}"
    used.add(name)
    return name


def c_type(t: Attribute) -> str:
    match t:
        case IntegerType() if t.width.data == 1:
            return "bool"
        case IntegerType():
            return "int"
        case Float32Type():
            return "float"
        case Float16Type():
            return "half"
        case VectorType():
            return c_type(t.element_type) + str(t.get_shape()[0])
    raise OpenCLPrintError(f"no OpenCL type for {t}")


def float_literal(x: float) -> str:
    if x != x:
        return "NAN"
    if x in (float("inf"), float("-inf")):
        return "INFINITY" if x > 0 else "(-INFINITY)"
    text = repr(float(x))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f" if not text.startswith("-") else f"({text}f)"


_BINARY = {
    arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.DivSIOp: "/",
    arith.RemSIOp: "%", arith.AndIOp: "&&", arith.OrIOp: "||", arith.AddfOp: "+",
    arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
}
_CALLS = {
    arith.MaxnumfOp: "fmax", arith.MinnumfOp: "fmin", arith.MaxSIOp: "max",
    arith.MinSIOp: "min", math.ExpOp: "exp", math.LogOp: "log", math.TanhOp: "tanh",
    math.ErfOp: "erf", math.SqrtOp: "sqrt", math.RsqrtOp: "rsqrt", math.AbsFOp: "fabs",
    math.FloorOp: "floor", math.CeilOp: "ceil", math.SinOp: "sin", math.CosOp: "cos",
    math.RoundOp: "round", math.TruncOp: "trunc", math.PowFOp: "pow", math.FmaOp: "fma",
    math.CopySignOp: "copysign",
}
_PREDICATES = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
               "oeq": "==", "une": "!=", "olt": "<", "ole": "<=", "ogt": ">", "oge": ">="}
_CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
         "ult", "ule", "une", "uno", "true"]


def _is_constant(value: SSAValue) -> bool:
    """A constant, or a constant broadcast to a vector."""
    owner = value.owner
    if isinstance(owner, vector.BroadcastOp):
        owner = owner.source.owner
    return isinstance(owner, arith.ConstantOp)


def _is_nan_constant(value: SSAValue) -> bool:
    owner = value.owner
    if isinstance(owner, vector.BroadcastOp):
        owner = owner.source.owner
    attr = owner.value
    values = attr.get_values() if isinstance(attr, DenseIntOrFPElementsAttr) else [attr.value.data]
    return any(v != v for v in values)


def access_qualifier(arg: SSAValue) -> str:
    """read_only, write_only or read_write from the arg's uses."""
    reads = writes = False
    for use in arg.uses:
        op = use.operation
        if isinstance(op, ocl.ImageReadOp | ocl.BufferLoadOp | texture.ReadOp):
            reads = True
        elif isinstance(op, ocl.ImageWriteOp | ocl.BufferStoreOp | texture.WriteOp):
            writes = True
    if reads and writes:
        return "read_write"
    return "write_only" if writes else "read_only"


@dataclass(eq=False, repr=False)
class OpenCLPrinter(BasePrinter):
    names: dict[SSAValue, str] = field(default_factory=dict, init=False)
    used: set[str] = field(default_factory=lambda: set(RESERVED), init=False)

    # names and expressions --------------------------------------------------------
    def fresh(self, value: SSAValue, hint: str | None = None) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint or value.name_hint or "v")
        if base[0].isdigit():
            base = "v" + base
        name = unique_name(base, self.used)
        self.names[value] = name
        return name

    def expr(self, value: SSAValue) -> str:
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return self.constant(owner)
        if value not in self.names:
            raise OpenCLPrintError(f"value {value} used before definition")
        return self.names[value]

    def constant(self, op: arith.ConstantOp) -> str:
        attr = op.value
        if isinstance(attr, IntegerAttr):
            if attr.type.width.data == 1:
                return "true" if attr.value.data else "false"
            return str(attr.value.data)
        if isinstance(attr, FloatAttr):
            return float_literal(attr.value.data)
        if isinstance(attr, DenseIntOrFPElementsAttr):
            values = attr.get_values()
            t = c_type(op.result.type)
            if len(set(values)) == 1:
                return f"(({t})({float_literal(values[0])}))"
            return f"(({t})({', '.join(float_literal(v) for v in values)}))"
        raise OpenCLPrintError(f"no OpenCL literal for {attr}")

    # module and kernels -----------------------------------------------------------
    def print_module(self, module: ModuleOp) -> None:
        self.print_string(PRELUDE)
        for op in module.body.block.ops:
            if isinstance(op, ocl.KernelOp):
                self.print_string("\n")
                self.print_kernel(op)

    def arg_decl(self, arg: SSAValue) -> str:
        name = self.fresh(arg)
        t = arg.type
        if isinstance(t, texture.Image2DType):
            return f"__{access_qualifier(arg)} image2d_t {name}"
        if isinstance(t, texture.PixelBufferType):
            const = "const " if access_qualifier(arg) == "read_only" else ""
            element = "half" if isinstance(t.element_type, Float16Type) else "float"
            return f"__global {const}{element}* restrict {name}"
        raise OpenCLPrintError(f"kernel argument of type {t}")

    def print_kernel(self, kernel: ocl.KernelOp) -> None:
        self.names.clear()
        self.used = set(RESERVED)
        node = kernel.attributes.get("onnx.node")
        if node is not None:
            self.print_string(f"// {node.data}\n")
        args = ",\n    ".join(self.arg_decl(a) for a in kernel.body.block.args)
        required = ""
        if kernel.group_size is not None:
            sizes = ocl.three_dims(kernel.group_size.get_values())
            required = f"__attribute__((reqd_work_group_size({', '.join(map(str, sizes))})))\n"
        self.print_string(f"{required}__kernel void {kernel.sym_name.data}(\n    {args}) {{")
        with self.indented():
            for op in kernel.body.block.ops:
                self.print_op(op)
        self.print_string("\n}\n")

    def print_block(self, ops) -> None:
        with self.indented():
            for op in ops:
                self.print_op(op)

    def stmt(self, text: str) -> None:
        self.print_string("\n" + text)

    # ops ----------------------------------------------------------------------------
    @singledispatchmethod
    def print_op(self, op: Operation) -> None:
        kind = type(op)
        if kind in _BINARY:
            a, b = (self.expr(v) for v in op.operands)
            return self.assign(op.results[0], f"{a} {_BINARY[kind]} {b}")
        if kind in _CALLS:
            args = ", ".join(self.expr(v) for v in op.operands)
            return self.assign(op.results[0], f"{_CALLS[kind]}({args})")
        raise OpenCLPrintError(f"the OpenCL printer has no rule for {op.name}")

    def assign(self, value: SSAValue, text: str) -> None:
        name = self.fresh(value)
        self.stmt(f"const {c_type(value.type)} {name} = {text};")

    @print_op.register
    def _(self, op: arith.ConstantOp) -> None:
        pass  # printed inline where used

    @print_op.register
    def _(self, op: arith.CmpiOp) -> None:
        pred = _PREDICATES.get(_CMPI[op.predicate.value.data])
        if pred is None:
            raise OpenCLPrintError(f"no OpenCL form for unsigned comparison {_CMPI[op.predicate.value.data]}")
        self.assign(op.result, f"{self.expr(op.lhs)} {pred} {self.expr(op.rhs)}")

    @print_op.register
    def _(self, op: arith.CmpfOp) -> None:
        pred = _PREDICATES.get(_CMPF[op.predicate.value.data])
        if pred is None:
            raise OpenCLPrintError(f"no OpenCL form for float comparison {_CMPF[op.predicate.value.data]}")
        self.assign(op.result, f"{self.expr(op.lhs)} {pred} {self.expr(op.rhs)}")

    @print_op.register
    def _(self, op: arith.MaximumfOp | arith.MinimumfOp) -> None:
        # NaN-propagating, as `arith` defines them (and onnxruntime's Relu, Max, Clip... do):
        # `fmax`/`fmin` return the other operand of a NaN. Against a constant c that is
        # no NaN, max is `x < c ? c : x` (x NaN: x), as fast as `fmax` on PoCL; of two
        # values a NaN y is tested too (5% over fmin(fmax(..)) for Clip + Max there, where
        # isless()/isnan() took 14%). Signed zeros: either.
        toward = "<" if isinstance(op, arith.MaximumfOp) else ">"
        a, b = op.lhs, op.rhs
        if _is_constant(a) and not _is_constant(b):
            a, b = b, a
        x, y = self.expr(a), self.expr(b)
        if _is_constant(b) and not _is_nan_constant(b):
            return self.assign(op.result, f"select({x}, {y}, {x} {toward} {y})")
        self.assign(op.result, f"select({x}, {y}, ({x} {toward} {y}) | ({y} != {y}))")

    @print_op.register
    def _(self, op: arith.SelectOp) -> None:
        c, a, b = (self.expr(v) for v in op.operands)
        self.assign(op.result, f"{c} ? {a} : {b}")

    @print_op.register
    def _(self, op: arith.NegfOp) -> None:
        self.assign(op.result, f"-{self.expr(op.operand)}")

    @print_op.register
    def _(self, op: arith.SIToFPOp) -> None:
        self.assign(op.result, f"(float){self.expr(op.input)}")

    @print_op.register
    def _(self, op: arith.FPToSIOp) -> None:
        self.assign(op.result, f"(int){self.expr(op.input)}")

    @print_op.register
    def _(self, op: arith.ExtFOp) -> None:
        self.assign(op.result, f"convert_{c_type(op.result.type)}({self.expr(op.input)})")

    @print_op.register
    def _(self, op: arith.TruncFOp) -> None:
        self.assign(op.result, f"convert_{c_type(op.result.type)}({self.expr(op.input)})")

    @print_op.register
    def _(self, op: vector.BroadcastOp) -> None:
        self.assign(op.vector, f"({c_type(op.vector.type)})({self.expr(op.source)})")

    @print_op.register
    def _(self, op: vector.ExtractOp) -> None:
        (k,) = op.static_position.get_values()
        self.assign(op.result, f"{self.expr(op.vector)}.{'xyzw'[k]}")

    @print_op.register
    def _(self, op: ocl.Vec4Op) -> None:
        lanes = ", ".join(self.expr(v) for v in op.operands)
        self.assign(op.result, f"(float4)({lanes})")

    @print_op.register
    def _(self, op: ocl.Vec16Op) -> None:
        pixels = ", ".join(self.expr(v) for v in op.pixels)
        self.assign(op.result, f"(float16)({pixels})")

    @print_op.register
    def _(self, op: ocl.Part4Op) -> None:
        lanes = ("s0123", "s4567", "s89ab", "scdef")[op.index.value.data]
        self.assign(op.result, f"{self.expr(op.vector)}.{lanes}")

    @print_op.register
    def _(self, op: ocl.LaneOp) -> None:
        self.assign(op.result, f"mo_lane({self.expr(op.vector)}, {self.expr(op.lane)})")

    @print_op.register
    def _(self, op: ocl.WorkItemQueryOp) -> None:
        fn = {"ocl.global_id": "get_global_id", "ocl.local_id": "get_local_id",
              "ocl.group_id": "get_group_id"}[op.name]
        self.assign(op.result, f"(int){fn}({op.dimension.value.data})")

    @print_op.register
    def _(self, op: ocl.ImageReadOp) -> None:
        fn = "read_imagef" if isinstance(op, ocl.ReadImageFOp) else "read_imageh"
        self.assign(op.result, f"{fn}({self.expr(op.image)}, SMP, (int2)({self.expr(op.x)}, {self.expr(op.y)}))")

    @print_op.register
    def _(self, op: ocl.ImageWriteOp) -> None:
        fn = "write_imagef" if isinstance(op, ocl.WriteImageFOp) else "write_imageh"
        self.stmt(f"{fn}({self.expr(op.image)}, (int2)({self.expr(op.x)}, {self.expr(op.y)}), {self.expr(op.value)});")

    @print_op.register
    def _(self, op: ocl.BufferLoadOp) -> None:
        fn = "vload4" if isinstance(op, ocl.VLoad4Op) else "vload_half4"
        self.assign(op.result, f"{fn}({self.expr(op.offset)}, {self.expr(op.buffer)})")

    @print_op.register
    def _(self, op: ocl.BufferLoad16Op) -> None:
        fn = "vload16" if isinstance(op, ocl.VLoad16Op) else "vload_half16"
        self.assign(op.result, f"{fn}(0, {self.expr(op.buffer)} + 4 * {self.expr(op.offset)})")

    @print_op.register
    def _(self, op: ocl.BufferLaneLoadOp) -> None:
        element = f"4 * {self.expr(op.offset)} + {self.expr(op.lane)}"
        if isinstance(op, ocl.LoadLaneOp):
            self.assign(op.result, f"{self.expr(op.buffer)}[{element}]")
        else:
            self.assign(op.result, f"vload_half({element}, {self.expr(op.buffer)})")

    @print_op.register
    def _(self, op: ocl.BufferStoreOp) -> None:
        fn = "vstore4" if isinstance(op, ocl.VStore4Op) else "vstore_half4"
        self.stmt(f"{fn}({self.expr(op.value)}, {self.expr(op.offset)}, {self.expr(op.buffer)});")

    @print_op.register
    def _(self, op: ocl.LocalArrayOp) -> None:
        name = self.fresh(op.result, op.result.name_hint or "shared")
        self.stmt(f"__local float4 {name}[{op.result.type.size.data}];")

    @print_op.register
    def _(self, op: ocl.LocalLoadOp) -> None:
        self.assign(op.result, f"{self.expr(op.array)}[{self.expr(op.index)}]")

    @print_op.register
    def _(self, op: ocl.LocalStoreOp) -> None:
        array = self.expr(op.array)
        if op.value.type == f32:
            array = f"((__local float *){array})"
        self.stmt(f"{array}[{self.expr(op.index)}] = {self.expr(op.value)};")

    @print_op.register
    def _(self, op: ocl.BarrierOp) -> None:
        self.stmt("barrier(CLK_LOCAL_MEM_FENCE);")

    @print_op.register
    def _(self, op: ocl.ReturnOp) -> None:
        pass  # the kernel's closing brace

    @print_op.register
    def _(self, op: scf.ForOp) -> None:
        body = op.body.block
        carried = []
        for arg, init, result in zip(body.args[1:], op.iter_args, op.res, strict=True):
            name = self.fresh(result, arg.name_hint or result.name_hint or "acc")
            self.names[arg] = name
            carried.append(name)
            self.stmt(f"{c_type(result.type)} {name} = {self.expr(init)};")
        i = self.fresh(body.args[0], body.args[0].name_hint or "i")
        lb, ub, step = self.expr(op.lb), self.expr(op.ub), self.expr(op.step)
        inc = f"{i}++" if step == "1" else f"{i} += {step}"
        self.stmt(f"for (int {i} = {lb}; {i} < {ub}; {inc}) {{")
        self.print_block(body.ops)
        self.print_string("\n}")

    @print_op.register
    def _(self, op: scf.IfOp) -> None:
        names = []
        for result in op.results:
            name = self.fresh(result, result.name_hint or "sel")
            names.append(name)
            self.stmt(f"{c_type(result.type)} {name};")
        self.stmt(f"if ({self.expr(op.cond)}) {{")
        self._yield_targets = names
        self.print_block(op.true_region.block.ops)
        if op.false_region.blocks and (names or len(op.false_region.block.ops) > 1):
            self.print_string("\n} else {")
            self._yield_targets = names
            self.print_block(op.false_region.block.ops)
        self.print_string("\n}")

    @print_op.register
    def _(self, op: scf.YieldOp) -> None:
        parent = op.parent_op()
        if isinstance(parent, scf.ForOp):
            targets = [self.names[a] for a in parent.body.block.args[1:]]
        else:
            targets = [self.names[r] for r in parent.results]
        values = [self.expr(v) for v in op.operands]
        # a swap among carried values needs the old values first
        if any(v in targets and v != t for v, t in zip(values, targets)):
            temps = [f"{t}_next" for t in targets]
            for tmp, v, r in zip(temps, values, parent.results):
                self.stmt(f"const {c_type(r.type)} {tmp} = {v};")
            values = temps
        for t, v in zip(targets, values, strict=True):
            if t != v:
                self.stmt(f"{t} = {v};")


LOWER_FIRST = "lower the model first, e.g. -p 'gpu-pipeline{device=pocl}'"
"""What an OpenCL target says of a module with nothing lowered (an ONNX graph, say)."""


def print_opencl(module: ModuleOp, stream: IO[str]) -> None:
    OpenCLPrinter(stream=stream).print_module(module)


def opencl_source(module: ModuleOp) -> str:
    import io

    out = io.StringIO()
    print_opencl(module, out)
    return out.getvalue()
