"""
`-t hexagon-c`: `hvx` kernels as C with HVX intrinsics, the same loops instruction for
instruction, for LLVM to compile (`clang -O3 -mcpu=hexagonv66 -mhvx
-mhvx-length=128b`): the reference our packing is compared with.

Each instruction becomes one intrinsic call or one C expression; a loop becomes a
`for` loop (`#pragma clang loop unroll(disable)`: it keeps the body we gave it, as our
packer does) whose iteration values are variables. Scalars that come from a buffer's
address are `uint8_t *` and the buffers are `restrict` parameters of an always-inlined
body, so LLVM knows what our lowering knows: different buffers never alias.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from io import StringIO
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from mobile_opt.backends.hexagon.printer import NOT_LOWERED
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import PredType, RegPairType, RegType, VecPairType, VecType

PRELUDE = """\
#include <stdint.h>
#include <hexagon_types.h>
#include <hexagon_protos.h>
"""

CLANG_FLAGS = ["--target=hexagon", "-O3", "-mcpu=hexagonv66", "-mhvx", "-mhvx-length=128b",
               "-ffreestanding", "-fno-builtin"]

# intrinsics by op: the operand names in call order
INTRINSICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hvx.vmpy": ("Q6_Wh_vmpy_VubRb", ("u", "t")),
    "hvx.vmpy_acc": ("Q6_Wh_vmpyacc_WhVubRb", ("x", "u", "t")),
    "hvx.vmpy_h_acc": ("Q6_Ww_vmpyacc_WwVhRh", ("x", "u", "t")),
    "hvx.vmpa": ("Q6_Wh_vmpa_WubRb", ("u", "t")),
    "hvx.vmpa_acc": ("Q6_Wh_vmpaacc_WhWubRb", ("x", "u", "t")),
    "hvx.vrmpy": ("Q6_Vw_vrmpy_VubRb", ("u", "t")),
    "hvx.vrmpy_acc": ("Q6_Vw_vrmpyacc_VwVubRb", ("x", "u", "t")),
    "hvx.vtmpy": ("Q6_Wh_vtmpy_WubRb", ("u", "t")),
    "hvx.vmpyi_w": ("Q6_Vw_vmpyi_VwRub", ("u", "t")),
    "hvx.vmpyi_w_acc": ("Q6_Vw_vmpyiacc_VwVwRub", ("x", "u", "t")),
    "hvx.vmpyi_wh_acc": ("Q6_Vw_vmpyiacc_VwVwRh", ("x", "u", "t")),
    "hvx.vmpye": ("Q6_Vw_vmpye_VwVuh", ("u", "v")),
    "hvx.vmpyo_acc": ("Q6_Vw_vmpyoacc_VwVwVh_s1_sat_shift", ("x", "u", "v")),
    "hvx.vadd_w": ("Q6_Vw_vadd_VwVw", ("u", "v")),
    "hvx.vsub_w": ("Q6_Vw_vsub_VwVw", ("u", "v")),
    "hvx.vadd_h": ("Q6_Vh_vadd_VhVh", ("u", "v")),
    "hvx.vmax_w": ("Q6_Vw_vmax_VwVw", ("u", "v")),
    "hvx.vmin_w": ("Q6_Vw_vmin_VwVw", ("u", "v")),
    "hvx.vmax_ub": ("Q6_Vub_vmax_VubVub", ("u", "v")),
    "hvx.vmin_ub": ("Q6_Vub_vmin_VubVub", ("u", "v")),
    "hvx.vsat_h": ("Q6_Vh_vsat_VwVw", ("u", "v")),
    "hvx.vsat_ub": ("Q6_Vub_vsat_VhVh", ("u", "v")),
    "hvx.vround_h": ("Q6_Vh_vround_VwVw_sat", ("u", "v")),
    "hvx.vxor": ("Q6_V_vxor_VV", ("u", "v")),
    "hvx.vadd_widen_acc": ("Q6_Ww_vaddacc_WwVhVh", ("x", "u", "v")),
    "hvx.vzxt_b": ("Q6_Wuh_vzxt_Vub", ("u",)),
    "hvx.vzxt_h": ("Q6_Wuw_vzxt_Vuh", ("u",)),
    "hvx.vmpyie": ("Q6_Vw_vmpyie_VwVuh", ("u", "v")),
    "hvx.vmpyie_acc": ("Q6_Vw_vmpyieacc_VwVwVuh", ("x", "u", "v")),
    "hvx.vasl_w_acc": ("Q6_Vw_vaslacc_VwVwR", ("x", "u", "t")),
    "hvx.vcmp_eq_b": ("Q6_Q_vcmp_eq_VbVb", ("u", "v")),
    "hvx.vcmp_eq_b_and": ("Q6_Q_vcmp_eqand_QVbVb", ("x", "u", "v")),
    "hvx.vadd_b_if": ("Q6_Vb_condacc_QVbVb", ("q", "x", "u")),
    "hvx.vzero": ("Q6_V_vzero", ()),
    "hvx.vsplat": ("Q6_V_vsplat_R", ("t",)),
    "hvx.vcmp_gt_w": ("Q6_Q_vcmp_gt_VwVw", ("u", "v")),
    "hvx.vcmp_eq_w": ("Q6_Q_vcmp_eq_VwVw", ("u", "v")),
    "hvx.vcmp_gt_w_and": ("Q6_Q_vcmp_gtand_QVwVw", ("x", "u", "v")),
    "hvx.vadd_w_if": ("Q6_Vw_condacc_QVwVw", ("q", "x", "u")),
    "hvx.vmux": ("Q6_V_vmux_QVV", ("q", "u", "v")),
    "hvx.vsetq2": ("Q6_Q_vsetq2_R", ("t",)),
    "hvx.vasr_w": ("Q6_Vw_vasr_VwR", ("u", "t")),
    "hvx.vasl_w": ("Q6_Vw_vasl_VwR", ("u", "t")),
    "hvx.valign": ("Q6_V_valign_VVR", ("u", "v", "t")),
    "hvx.vshuff": ("Q6_W_vshuff_VVR", ("u", "v", "t")),
    "hvx.vdeal": ("Q6_W_vdeal_VVR", ("u", "v", "t")),
    "hvx.vcombine": ("Q6_W_vcombine_VV", ("u", "v")),
    "hvx.lo": ("Q6_V_lo_W", ("pair",)),
    "hvx.hi": ("Q6_V_hi_W", ("pair",)),
    "hvx.pair": ("Q6_W_vcombine_VV", ("hi", "lo")),
    "hvx.min": ("Q6_R_min_RR", ("s", "t")),
    "hvx.vassign": ("Q6_V_equals_V", ("u",)),
    "hvx.vand_qr": ("Q6_V_vand_QR", ("q", "t")),
    "hvx.vand_vr": ("Q6_Q_vand_VR", ("u", "t")),
}

POST_INCREMENT = (ops.VmemLoadPostIncOp, ops.VmemStorePostIncOp, ops.LoadWordPostIncOp,
                  ops.LoadDoubleWordPostIncOp)

C_TYPES = {VecType: "HVX_Vector", VecPairType: "HVX_VectorPair", PredType: "HVX_VectorPred",
           RegType: "int32_t", RegPairType: "int64_t"}


def _pointers(func: ops.FuncOp) -> set[SSAValue]:
    """Scalars that hold buffer addresses: from `hvx.address`, through adds and loops."""
    pointers: set[SSAValue] = set()
    changed = True
    while changed:
        changed = False

        def mark(value: SSAValue) -> None:
            nonlocal changed
            if value not in pointers:
                pointers.add(value)
                changed = True

        for op in func.walk():
            if isinstance(op, ops.AddressOp):
                mark(op.d)
            elif isinstance(op, ops.AddImmOp) and op.s in pointers:
                mark(op.d)
            elif isinstance(op, ops.AddOp) and (op.s in pointers or op.t in pointers):
                mark(op.d)
            elif isinstance(op, POST_INCREMENT) and op.base in pointers:
                mark(op.new_base)
            elif isinstance(op, ops.LoopOp):
                yielded = op.body.block.last_op
                for init, arg, out, res in zip(op.inits, op.body.block.args,
                                               yielded.values, op.results):  # type: ignore[union-attr]
                    if init in pointers or out in pointers:
                        for v in (init, arg, out, res):
                            mark(v)
    return pointers


@dataclass
class HexagonCPrinter:
    stream: IO[str]
    names: dict[SSAValue, str] = field(default_factory=dict)
    pointers: set[SSAValue] = field(default_factory=set)
    depth: int = 1
    loops: int = 0

    def line(self, text: str) -> None:
        self.stream.write("    " * self.depth + text + "\n")

    def name(self, value: SSAValue) -> str:
        if value not in self.names:
            self.names[value] = f"t{len(self.names)}"
        return self.names[value]

    def c_type(self, value: SSAValue) -> str:
        if value in self.pointers:
            return "uint8_t *"
        return C_TYPES[type(value.type)]

    def declare(self, value: SSAValue, expression: str) -> None:
        self.line(f"{self.c_type(value)} {self.name(value)} = {expression};")

    def function(self, func: ops.FuncOp, buffers: list[str]) -> None:
        name = func.sym_name.data
        self.pointers = _pointers(func)
        self.names = {}
        used = sorted({op.symbol.root_reference.data for op in func.walk()
                       if isinstance(op, ops.AddressOp)})
        missing = [b for b in used if b not in buffers]
        if missing:
            raise DiagnosticException(f"hexagon-c: @{name} reads unknown buffers {missing}")
        params = ", ".join(f"uint8_t *restrict {b}" for b in used) or "void"
        self.depth = 0
        self.line(f"static inline __attribute__((always_inline)) void {name}_body({params}) {{")
        self.depth = 1
        self.block(func.body.block)
        self.depth = 0
        self.line("}")
        self.line(f"void {name}(void) {{ {name}_body({', '.join(used)}); }}")

    def block(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, ops.LoopOp):
                self.loop(op)
            elif not isinstance(op, ops.YieldOp):
                self.operation(op)

    def loop(self, loop: ops.LoopOp) -> None:
        args = loop.body.block.args
        for init, arg in zip(loop.inits, args):
            self.line(f"{self.c_type(arg)} {self.name(arg)} = {self.name(init)};")
        counter = f"i{self.loops}"
        self.loops += 1
        self.line("#pragma clang loop unroll(disable)")
        self.line(f"for (int {counter} = 0; {counter} < {loop.trip.value.data}; {counter}++) {{")
        self.depth += 1
        self.block(loop.body.block)
        yielded = loop.body.block.last_op
        assert isinstance(yielded, ops.YieldOp)
        # the next values all read this iteration's: through temporaries
        temps = []
        for arg, value in zip(args, yielded.values):
            temp = f"{counter}_next{len(temps)}"
            self.line(f"{self.c_type(arg)} {temp} = {self.name(value)};")
            temps.append(temp)
        for arg, temp in zip(args, temps):
            self.line(f"{self.name(arg)} = {temp};")
        self.depth -= 1
        self.line("}")
        for arg, result in zip(args, loop.results):
            self.names[result] = self.name(arg)

    def operation(self, op: Operation) -> None:
        handler = SCALAR_AND_MEMORY.get(op.name)
        if handler is not None:
            handler(self, op)
            return
        entry = INTRINSICS.get(op.name)
        if entry is None:
            raise DiagnosticException(f"hexagon-c: {op.name} has no C form")
        intrinsic, operand_names = entry
        args = ", ".join(self.name(getattr(op, n)) for n in operand_names)
        self.declare(op.results[0], f"{intrinsic}({args})")


def _vector_address(printer: HexagonCPrinter, op: ops.VectorMemory) -> str:
    return f"({printer.name(op.base)} + {128 * op.offset.value.data})"


def _vector_load(printer: HexagonCPrinter, op: Operation) -> None:
    pointer = "HVX_UVector" if isinstance(op, ops.VmemuLoadOp) else "HVX_Vector"
    post = isinstance(op, ops.VmemLoadPostIncOp)  # loads at the base, then steps it
    at = printer.name(op.base) if post else _vector_address(printer, op)
    printer.declare(op.d, f"*(const {pointer} *){at}")
    if post:
        printer.declare(op.new_base, _vector_address(printer, op))


def _vector_store(printer: HexagonCPrinter, op: Operation) -> None:
    if isinstance(op, ops.VmemStoreIfOp):
        printer.line(f"Q6_vmem_QRIV({printer.name(op.q)}, (HVX_Vector *){_vector_address(printer, op)}, "
                     f"{printer.name(op.s)});")
        return
    pointer = "HVX_UVector" if isinstance(op, ops.VmemuStoreOp) else "HVX_Vector"
    post = isinstance(op, ops.VmemStorePostIncOp)  # stores at the base, then steps it
    at = printer.name(op.base) if post else _vector_address(printer, op)
    printer.line(f"*({pointer} *){at} = {printer.name(op.s)};")
    if post:
        printer.declare(op.new_base, _vector_address(printer, op))


def _scalar_load(printer: HexagonCPrinter, op: Operation) -> None:
    base = printer.name(op.base)
    offset = op.offset.value.data
    post = isinstance(op, (ops.LoadWordPostIncOp, ops.LoadDoubleWordPostIncOp))
    at = base if post else f"({base} + {offset})"
    c_type = "int64_t" if isinstance(op, ops.LoadDoubleWordPostIncOp) else "int32_t"
    printer.declare(op.d, f"*(const {c_type} *){at}")
    if post:
        printer.declare(op.new_base, f"{base} + {offset}")


def _imm(printer: HexagonCPrinter, op: ops.TransferImmOp) -> None:
    printer.declare(op.d, f"(int32_t){op.signed_value()}")


def _add_imm(printer: HexagonCPrinter, op: ops.AddImmOp) -> None:
    printer.declare(op.d, f"{printer.name(op.s)} + {op.value.value.data}")


SCALAR_AND_MEMORY: dict[str, Callable[[HexagonCPrinter, Operation], None]] = {
    "hvx.vmem_load": _vector_load,
    "hvx.vmemu_load": _vector_load,
    "hvx.vmem_load_pi": _vector_load,
    "hvx.vmem_store": _vector_store,
    "hvx.vmemu_store": _vector_store,
    "hvx.vmem_store_pi": _vector_store,
    "hvx.vmem_store_if": _vector_store,
    "hvx.memw_load": _scalar_load,
    "hvx.memw_load_pi": _scalar_load,
    "hvx.memd_load_pi": _scalar_load,
    "hvx.tfri": _imm,  # type: ignore[dict-item]
    "hvx.addi": _add_imm,  # type: ignore[dict-item]
    "hvx.address": lambda p, op: p.declare(op.d, op.symbol.root_reference.data),
    "hvx.add": lambda p, op: p.declare(op.d, f"{p.name(op.s)} + {p.name(op.t)}"),
    "hvx.memw_store": lambda p, op: p.line(
        f"*(int32_t *)({p.name(op.base)} + {op.offset.value.data}) = {p.name(op.t)};"),
    "hvx.memub_load_rr": lambda p, op: p.declare(
        op.d, f"*(const uint8_t *)({p.name(op.base)} + {p.name(op.index)})"),
    "hvx.memb_store_rr": lambda p, op: p.line(
        f"*(uint8_t *)({p.name(op.base)} + {p.name(op.index)}) = (uint8_t){p.name(op.t)};"),
    "hvx.lo_r": lambda p, op: p.declare(op.d, f"(int32_t){p.name(op.pair)}"),
    "hvx.hi_r": lambda p, op: p.declare(op.d, f"(int32_t)({p.name(op.pair)} >> 32)"),
    "hvx.valign_i": lambda p, op: p.declare(
        op.d, f"Q6_V_valign_VVI({p.name(op.u)}, {p.name(op.v)}, {op.shift.value.data})"),
    "hvx.vlalign_i": lambda p, op: p.declare(
        op.d, f"Q6_V_vlalign_VVI({p.name(op.u)}, {p.name(op.v)}, {op.shift.value.data})"),
    "hvx.tfr": lambda p, op: p.declare(op.d, f"(int32_t){p.name(op.s)}"),
    "hvx.memd_load": lambda p, op: p.declare(
        op.d, f"*(const int64_t *)({p.name(op.base)} + {op.offset.value.data})"),
    "hvx.nop": lambda p, op: None,  # nothing to compute
}


def kernels_as_c(funcs: list[ops.FuncOp], buffers: list[str]) -> str:
    """C source of these kernels over buffers of these names (defined elsewhere)."""
    output = StringIO()
    output.write(PRELUDE)
    for name in buffers:
        output.write(f"extern uint8_t {name}[];\n")
    printer = HexagonCPrinter(output)
    for func in funcs:
        output.write("\n")
        printer.function(func, buffers)
    return output.getvalue()


def print_c(module: ModuleOp, output: IO[str]) -> None:
    buffers = [b.sym_name.data for b in module.walk() if isinstance(b, ops.BufferOp)]
    funcs = [f for f in module.walk() if isinstance(f, ops.FuncOp)]
    if not funcs:
        raise DiagnosticException(f"hexagon-c: {NOT_LOWERED}")
    funcs = [f for f in funcs
             if not any(isinstance(op, (ops.CallOp, ops.SyscallOp)) for op in f.walk())]
    if not funcs:
        raise DiagnosticException("hexagon-c: the module has no hvx kernel to print")
    output.write(kernels_as_c(funcs, buffers))


@dataclass(frozen=True)
class HexagonCTarget(Target):
    """`-t hexagon-c`: the kernels (not `_start`) as C with HVX intrinsics."""

    name = "hexagon-c"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        print_c(module, output)
