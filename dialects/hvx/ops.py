"""
The `hvx` dialect: Hexagon V66 scalar and HVX (128-byte) instructions as SSA ops over
register-typed values, plus the structure a kernel needs (functions, hardware and
counted loops, data and buffers).

Each instruction op carries its assembly `SYNTAX`; its slots, HVX resources and latency
come from the machine description (`mobile_opt.dialects.vliw.machine`), keyed by the
op name. An accumulating form (`Vx.w += vrmpy(...)`) takes the old accumulator as an
operand and gives the new one as a result tied to the same register; post-increment
loads tie the new base pointer to the old one likewise.

Lane notation in the docstrings: `.ub/.b` bytes, `.uh/.h` halfwords, `.w` words of a
vector; a pair `Vdd` is `lo` (the even register) then `hi`. All arithmetic wraps unless
the op says it saturates.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.backend.assembly_printer import OneLineAssemblyPrintable
from xdsl.dialects.builtin import (
    SymbolNameConstraint,
    I64,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from .attributes import LayoutAttr
from .layouts import SimdLayout
from .registers import HexagonRegisterType, PredType, RegPairType, RegType, VecPairType, VecType


def _imm(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


class HvxOperation(IRDLOperation, ABC):
    """Shared textual form: `%r = hvx.op %a, %b {props} : (types) -> types`."""

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)


class Instruction(HvxOperation, OneLineAssemblyPrintable, ABC):
    """
    One Hexagon instruction. `SYNTAX` is its assembly with `{field}` for each operand,
    result and immediate property; `TIED` pairs an operand with the result that must
    share its register (accumulators, post-incremented pointers).
    """

    SYNTAX: ClassVar[str]
    TIED: ClassVar[tuple[tuple[str, str], ...]] = ()
    MEMORY: ClassVar[str | None] = None
    """`load` or `store` for memory instructions."""
    LOW_SCALARS: ClassVar[tuple[str, ...]] = ()
    """Operands whose encoding only reaches r0..r7 (`Rt8`)."""

    def asm_fields(self) -> dict[str, str]:
        definition = type(self).get_irdl_definition()
        fields: dict[str, str] = {}
        for name, _ in (*definition.operands, *definition.results):
            value = getattr(self, name)
            if isinstance(value, SSAValue):  # variadic groups have no field in the syntax
                assert isinstance(value.type, HexagonRegisterType)
                fields[name] = value.type.asm_name()
        for name in definition.properties:
            prop = self.properties.get(name)
            if isinstance(prop, IntegerAttr):
                fields[name] = str(prop.value.data)
            elif isinstance(prop, SymbolRefAttr):
                fields[name] = prop.root_reference.data
        return fields

    def assembly_line(self) -> str | None:
        return "    " + self.SYNTAX.format(**self.asm_fields())

    def packet_line(self, new: set[str] = frozenset(), current: bool = False) -> str:
        """
        The instruction inside a packet: operands in `new` read the value another
        instruction of the packet makes (`.new`); `current` marks a load whose vector
        the packet reads (`.cur`).
        """
        if not new and not current:
            line = self.assembly_line()
            assert line is not None
            return line.strip()
        fields = self.asm_fields()
        for name in new:
            fields[name] += ".new"
        if current:
            fields["d"] += ".cur"
        return self.SYNTAX.format(**fields)

    def needs_extender(self) -> bool:
        """Whether the encoding needs a constant-extender word (a 32-bit immediate)."""
        return False

    def tied_values(self) -> list[tuple[SSAValue, SSAValue]]:
        return [(getattr(self, a), getattr(self, b)) for a, b in self.TIED]

    def verify_(self) -> None:
        for operand, result in self.tied_values():
            if operand.type != result.type:
                raise VerifyException(
                    f"{self.name}: tied operand and result types differ "
                    f"({operand.type} vs {result.type})"
                )


# ----------------------------------------------------------------------------
# Shapes of HVX instructions: D = destination, X = accumulator (read and written),
# V/W = vector/pair source, R = scalar source, Q = predicate.
# ----------------------------------------------------------------------------


class VdVuVv(Instruction, ABC):
    """Vd = op(Vu, Vv)."""

    u = operand_def(VecType)
    v = operand_def(VecType)
    d = result_def(VecType)

    def __init__(self, u: SSAValue, v: SSAValue, d: VecType = VecType.unallocated()):
        super().__init__(operands=[u, v], result_types=[d])


class VdVuRt(Instruction, ABC):
    """Vd = op(Vu, Rt)."""

    u = operand_def(VecType)
    t = operand_def(RegType)
    d = result_def(VecType)

    def __init__(self, u: SSAValue, t: SSAValue, d: VecType = VecType.unallocated()):
        super().__init__(operands=[u, t], result_types=[d])


class VxVuRt(Instruction, ABC):
    """Vx op= f(Vu, Rt)."""

    x = operand_def(VecType)
    u = operand_def(VecType)
    t = operand_def(RegType)
    d = result_def(VecType)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("x", "d"),)

    def __init__(self, x: SSAValue, u: SSAValue, t: SSAValue):
        super().__init__(operands=[x, u, t], result_types=[x.type])


class WdVuRt(Instruction, ABC):
    """Vdd = op(Vu, Rt)."""

    u = operand_def(VecType)
    t = operand_def(RegType)
    d = result_def(VecPairType)

    def __init__(self, u: SSAValue, t: SSAValue, d: VecPairType = VecPairType.unallocated()):
        super().__init__(operands=[u, t], result_types=[d])


class WxVuRt(Instruction, ABC):
    """Vxx op= f(Vu, Rt)."""

    x = operand_def(VecPairType)
    u = operand_def(VecType)
    t = operand_def(RegType)
    d = result_def(VecPairType)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("x", "d"),)

    def __init__(self, x: SSAValue, u: SSAValue, t: SSAValue):
        super().__init__(operands=[x, u, t], result_types=[x.type])


class WdWuRt(Instruction, ABC):
    """Vdd = op(Vuu, Rt)."""

    u = operand_def(VecPairType)
    t = operand_def(RegType)
    d = result_def(VecPairType)

    def __init__(self, u: SSAValue, t: SSAValue, d: VecPairType = VecPairType.unallocated()):
        super().__init__(operands=[u, t], result_types=[d])


class WxWuRt(Instruction, ABC):
    """Vxx op= f(Vuu, Rt)."""

    x = operand_def(VecPairType)
    u = operand_def(VecPairType)
    t = operand_def(RegType)
    d = result_def(VecPairType)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("x", "d"),)

    def __init__(self, x: SSAValue, u: SSAValue, t: SSAValue):
        super().__init__(operands=[x, u, t], result_types=[x.type])


class WxVuVv(Instruction, ABC):
    """Vxx op= f(Vu, Vv)."""

    x = operand_def(VecPairType)
    u = operand_def(VecType)
    v = operand_def(VecType)
    d = result_def(VecPairType)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("x", "d"),)

    def __init__(self, x: SSAValue, u: SSAValue, v: SSAValue):
        super().__init__(operands=[x, u, v], result_types=[x.type])


class VdVuVvRt(Instruction, ABC):
    """Vd = op(Vu, Vv, Rt)."""

    u = operand_def(VecType)
    v = operand_def(VecType)
    t = operand_def(RegType)
    d = result_def(VecType)

    def __init__(
        self, u: SSAValue, v: SSAValue, t: SSAValue, d: VecType = VecType.unallocated()
    ):
        super().__init__(operands=[u, v, t], result_types=[d])


class WdVuVvRt(Instruction, ABC):
    """Vdd = op(Vu, Vv, Rt)."""

    u = operand_def(VecType)
    v = operand_def(VecType)
    t = operand_def(RegType)
    d = result_def(VecPairType)

    def __init__(
        self, u: SSAValue, v: SSAValue, t: SSAValue, d: VecPairType = VecPairType.unallocated()
    ):
        super().__init__(operands=[u, v, t], result_types=[d])


class VxVuVv(Instruction, ABC):
    """Vx op= f(Vu, Vv)."""

    x = operand_def(VecType)
    u = operand_def(VecType)
    v = operand_def(VecType)
    d = result_def(VecType)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("x", "d"),)

    def __init__(self, x: SSAValue, u: SSAValue, v: SSAValue):
        super().__init__(operands=[x, u, v], result_types=[x.type])


class WdVu(Instruction, ABC):
    """Vdd = op(Vu)."""

    u = operand_def(VecType)
    d = result_def(VecPairType)

    def __init__(self, u: SSAValue):
        super().__init__(operands=[u], result_types=[VecPairType.unallocated()])


class QdVuVv(Instruction, ABC):
    """Qd = compare(Vu, Vv)."""

    u = operand_def(VecType)
    v = operand_def(VecType)
    d = result_def(PredType)

    def __init__(self, u: SSAValue, v: SSAValue):
        super().__init__(operands=[u, v], result_types=[PredType.unallocated()])


class QxVuVv(Instruction, ABC):
    """Qx &= compare(Vu, Vv)."""

    x = operand_def(PredType)
    u = operand_def(VecType)
    v = operand_def(VecType)
    d = result_def(PredType)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("x", "d"),)

    def __init__(self, x: SSAValue, u: SSAValue, v: SSAValue):
        super().__init__(operands=[x, u, v], result_types=[x.type])


class VxQVu(Instruction, ABC):
    """if (Qv) Vx op= Vu."""

    q = operand_def(PredType)
    x = operand_def(VecType)
    u = operand_def(VecType)
    d = result_def(VecType)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("x", "d"),)

    def __init__(self, q: SSAValue, x: SSAValue, u: SSAValue):
        super().__init__(operands=[q, x, u], result_types=[x.type])


# ----------------------------------------------------------------------------
# Multiplies (GCD²'s three instructions and their helpers)
# ----------------------------------------------------------------------------


@irdl_op_definition
class VmpyOp(WdVuRt):
    """
    `Vdd.h = vmpy(Vu.ub, Rt.b)`: lo.h[i] = u.ub[2i]·t.b[(2i)%4],
    hi.h[i] = u.ub[2i+1]·t.b[(2i+1)%4].
    """

    name = "hvx.vmpy"
    SYNTAX: ClassVar[str] = "{d}.h = vmpy({u}.ub,{t}.b)"


@irdl_op_definition
class VmpyAccOp(WxVuRt):
    """`Vxx.h += vmpy(Vu.ub, Rt.b)`: the products of `hvx.vmpy` added to x's halfwords."""

    name = "hvx.vmpy_acc"
    SYNTAX: ClassVar[str] = "{d}.h += vmpy({u}.ub,{t}.b)"


@irdl_op_definition
class VmpyHalfAccOp(WxVuRt):
    """`Vxx.w += vmpy(Vu.h, Rt.h)`: lo.w[i] += u.h[2i]·t.h[0], hi.w[i] += u.h[2i+1]·t.h[1]."""

    name = "hvx.vmpy_h_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vmpy({u}.h,{t}.h)"


@irdl_op_definition
class VmpaOp(WdWuRt):
    """
    `Vdd.h = vmpa(Vuu.ub, Rt.b)`: lo.h[i] = u.lo.ub[2i]·t.b[0] + u.hi.ub[2i]·t.b[1],
    hi.h[i] = u.lo.ub[2i+1]·t.b[2] + u.hi.ub[2i+1]·t.b[3].
    """

    name = "hvx.vmpa"
    SYNTAX: ClassVar[str] = "{d}.h = vmpa({u}.ub,{t}.b)"


@irdl_op_definition
class VmpaAccOp(WxWuRt):
    """`Vxx.h += vmpa(Vuu.ub, Rt.b)`: the sums of `hvx.vmpa` added to x's halfwords."""

    name = "hvx.vmpa_acc"
    SYNTAX: ClassVar[str] = "{d}.h += vmpa({u}.ub,{t}.b)"


@irdl_op_definition
class VrmpyOp(VdVuRt):
    """`Vd.w = vrmpy(Vu.ub, Rt.b)`: d.w[i] = Σ_j u.ub[4i+j]·t.b[j], j = 0..3."""

    name = "hvx.vrmpy"
    SYNTAX: ClassVar[str] = "{d}.w = vrmpy({u}.ub,{t}.b)"


@irdl_op_definition
class VrmpyAccOp(VxVuRt):
    """`Vx.w += vrmpy(Vu.ub, Rt.b)`: the dot products of `hvx.vrmpy` added to x."""

    name = "hvx.vrmpy_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vrmpy({u}.ub,{t}.b)"


@irdl_op_definition
class VtmpyOp(WdWuRt):
    """
    `Vdd.h = vtmpy(Vuu.ub, Rt.b)`: a 3-tap filter; lo.h[i] = u.lo.ub[2i]·t.b[0] +
    u.lo.ub[2i+1]·t.b[1] + u.hi.ub[2i], and hi likewise one byte further.
    """

    name = "hvx.vtmpy"
    SYNTAX: ClassVar[str] = "{d}.h = vtmpy({u}.ub,{t}.b)"


@irdl_op_definition
class VmpyiWordOp(VdVuRt):
    """`Vd.w = vmpyi(Vu.w, Rt.ub)`: d.w[i] = u.w[i]·t.ub[i%4], low 32 bits."""

    name = "hvx.vmpyi_w"
    SYNTAX: ClassVar[str] = "{d}.w = vmpyi({u}.w,{t}.ub)"


@irdl_op_definition
class VmpyiWordAccOp(VxVuRt):
    """`Vx.w += vmpyi(Vu.w, Rt.ub)`: x.w[i] += u.w[i]·t.ub[i%4], low 32 bits."""

    name = "hvx.vmpyi_w_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vmpyi({u}.w,{t}.ub)"


@irdl_op_definition
class VmpyiWordHalfAccOp(VxVuRt):
    """`Vx.w += vmpyi(Vu.w, Rt.h)`: x.w[i] += u.w[i]·t.h[i%2], low 32 bits."""

    name = "hvx.vmpyi_wh_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vmpyi({u}.w,{t}.h)"


@irdl_op_definition
class VmpyeOp(VdVuVv):
    """`Vd.w = vmpye(Vu.w, Vv.uh)`: d.w[i] = (u.w[i]·v.uh[2i]) >> 16, arithmetic."""

    name = "hvx.vmpye"
    SYNTAX: ClassVar[str] = "{d}.w = vmpye({u}.w,{v}.uh)"


@irdl_op_definition
class VmpyoAccOp(VxVuVv):
    """
    `Vx.w += vmpyo(Vu.w, Vv.h):<<1:sat:shift`: x.w[i] = sat32(((x.w[i] >> 16) +
    u.w[i]·v.h[2i+1]·2) ... see the requantiser; the high word of a 32×32 product.
    """

    name = "hvx.vmpyo_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vmpyo({u}.w,{v}.h):<<1:sat:shift"


# ----------------------------------------------------------------------------
# Vector ALU
# ----------------------------------------------------------------------------


@irdl_op_definition
class VaddWOp(VdVuVv):
    """`Vd.w = vadd(Vu.w, Vv.w)`."""

    name = "hvx.vadd_w"
    SYNTAX: ClassVar[str] = "{d}.w = vadd({u}.w,{v}.w)"


@irdl_op_definition
class VsubWOp(VdVuVv):
    """`Vd.w = vsub(Vu.w, Vv.w)`."""

    name = "hvx.vsub_w"
    SYNTAX: ClassVar[str] = "{d}.w = vsub({u}.w,{v}.w)"


@irdl_op_definition
class VaddHOp(VdVuVv):
    """`Vd.h = vadd(Vu.h, Vv.h)`."""

    name = "hvx.vadd_h"
    SYNTAX: ClassVar[str] = "{d}.h = vadd({u}.h,{v}.h)"


@irdl_op_definition
class VmaxWOp(VdVuVv):
    """`Vd.w = vmax(Vu.w, Vv.w)`, signed."""

    name = "hvx.vmax_w"
    SYNTAX: ClassVar[str] = "{d}.w = vmax({u}.w,{v}.w)"


@irdl_op_definition
class VminWOp(VdVuVv):
    """`Vd.w = vmin(Vu.w, Vv.w)`, signed."""

    name = "hvx.vmin_w"
    SYNTAX: ClassVar[str] = "{d}.w = vmin({u}.w,{v}.w)"


@irdl_op_definition
class VmaxUbOp(VdVuVv):
    """`Vd.ub = vmax(Vu.ub, Vv.ub)`."""

    name = "hvx.vmax_ub"
    SYNTAX: ClassVar[str] = "{d}.ub = vmax({u}.ub,{v}.ub)"


@irdl_op_definition
class VminUbOp(VdVuVv):
    """`Vd.ub = vmin(Vu.ub, Vv.ub)`."""

    name = "hvx.vmin_ub"
    SYNTAX: ClassVar[str] = "{d}.ub = vmin({u}.ub,{v}.ub)"


@irdl_op_definition
class VsatHOp(VdVuVv):
    """`Vd.h = vsat(Vu.w, Vv.w)`: d.h[2i] = sat16(v.w[i]), d.h[2i+1] = sat16(u.w[i])."""

    name = "hvx.vsat_h"
    SYNTAX: ClassVar[str] = "{d}.h = vsat({u}.w,{v}.w)"


@irdl_op_definition
class VsatUbOp(VdVuVv):
    """`Vd.ub = vsat(Vu.h, Vv.h)`: d.ub[2i] = usat8(v.h[i]), d.ub[2i+1] = usat8(u.h[i])."""

    name = "hvx.vsat_ub"
    SYNTAX: ClassVar[str] = "{d}.ub = vsat({u}.h,{v}.h)"


@irdl_op_definition
class VroundHOp(VdVuVv):
    """
    `Vd.h = vround(Vu.w, Vv.w):sat`: each word rounded to its high half,
    sat16((w + 0x8000) >> 16); d.h[2i] from v.w[i], d.h[2i+1] from u.w[i].
    """

    name = "hvx.vround_h"
    SYNTAX: ClassVar[str] = "{d}.h = vround({u}.w,{v}.w):sat"


@irdl_op_definition
class VxorOp(VdVuVv):
    """`Vd = vxor(Vu, Vv)`."""

    name = "hvx.vxor"
    SYNTAX: ClassVar[str] = "{d} = vxor({u},{v})"


@irdl_op_definition
class VaddWidenAccOp(WxVuVv):
    """
    `Vxx.w += vadd(Vu.h, Vv.h)`: lo.w[i] += u.h[2i] + v.h[2i],
    hi.w[i] += u.h[2i+1] + v.h[2i+1].
    """

    name = "hvx.vadd_widen_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vadd({u}.h,{v}.h)"


@irdl_op_definition
class VzxtByteOp(WdVu):
    """`Vdd.uh = vzxt(Vu.ub)`: lo.uh[i] = u.ub[2i], hi.uh[i] = u.ub[2i+1]."""

    name = "hvx.vzxt_b"
    SYNTAX: ClassVar[str] = "{d}.uh = vzxt({u}.ub)"


@irdl_op_definition
class VzxtHalfOp(WdVu):
    """`Vdd.uw = vzxt(Vu.uh)`: lo.uw[i] = u.uh[2i], hi.uw[i] = u.uh[2i+1]."""

    name = "hvx.vzxt_h"
    SYNTAX: ClassVar[str] = "{d}.uw = vzxt({u}.uh)"


@irdl_op_definition
class VmpyieOp(VdVuVv):
    """`Vd.w = vmpyie(Vu.w, Vv.uh)`: d.w[i] = u.w[i]·v.uh[2i], low 32 bits."""

    name = "hvx.vmpyie"
    SYNTAX: ClassVar[str] = "{d}.w = vmpyie({u}.w,{v}.uh)"


@irdl_op_definition
class VmpyieAccOp(VxVuVv):
    """`Vx.w += vmpyie(Vu.w, Vv.uh)`."""

    name = "hvx.vmpyie_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vmpyie({u}.w,{v}.uh)"


@irdl_op_definition
class VaslWAccOp(VxVuRt):
    """`Vx.w += vasl(Vu.w, Rt)`: x.w[i] += u.w[i] << (t mod 32)."""

    name = "hvx.vasl_w_acc"
    SYNTAX: ClassVar[str] = "{d}.w += vasl({u}.w,{t})"


@irdl_op_definition
class VcmpEqBOp(QdVuVv):
    """`Qd = vcmp.eq(Vu.b, Vv.b)`: byte lane i is set iff u.b[i] == v.b[i]."""

    name = "hvx.vcmp_eq_b"
    SYNTAX: ClassVar[str] = "{d} = vcmp.eq({u}.b,{v}.b)"


@irdl_op_definition
class VcmpEqBAndOp(QxVuVv):
    """`Qx &= vcmp.eq(Vu.b, Vv.b)`."""

    name = "hvx.vcmp_eq_b_and"
    SYNTAX: ClassVar[str] = "{d} &= vcmp.eq({u}.b,{v}.b)"


@irdl_op_definition
class VaddBIfOp(VxQVu):
    """`if (Qv) Vx.b += Vu.b`: byte lanes whose predicate is set add u (wrapping)."""

    name = "hvx.vadd_b_if"
    SYNTAX: ClassVar[str] = "if ({q}) {d}.b += {u}.b"


@irdl_op_definition
class VzeroOp(Instruction):
    """`Vd = vxor(Vd, Vd)`: all lanes zero."""

    name = "hvx.vzero"
    assembly_format = "attr-dict `:` type($d)"
    SYNTAX: ClassVar[str] = "{d} = vxor({d},{d})"
    d = result_def(VecType)

    def __init__(self, d: VecType = VecType.unallocated()):
        super().__init__(result_types=[d])


@irdl_op_definition
class VsplatOp(Instruction):
    """`Vd = vsplat(Rt)`: every word lane holds t."""

    name = "hvx.vsplat"
    SYNTAX: ClassVar[str] = "{d} = vsplat({t})"
    t = operand_def(RegType)
    d = result_def(VecType)

    def __init__(self, t: SSAValue, d: VecType = VecType.unallocated()):
        super().__init__(operands=[t], result_types=[d])


@irdl_op_definition
class VcmpGtWOp(QdVuVv):
    """`Qd = vcmp.gt(Vu.w, Vv.w)`: the four byte lanes of word i are set iff u.w[i] > v.w[i]."""

    name = "hvx.vcmp_gt_w"
    SYNTAX: ClassVar[str] = "{d} = vcmp.gt({u}.w,{v}.w)"


@irdl_op_definition
class VcmpEqWOp(QdVuVv):
    """`Qd = vcmp.eq(Vu.w, Vv.w)`: the byte lanes of word i are set iff u.w[i] == v.w[i]."""

    name = "hvx.vcmp_eq_w"
    SYNTAX: ClassVar[str] = "{d} = vcmp.eq({u}.w,{v}.w)"


@irdl_op_definition
class VcmpGtWAndOp(QxVuVv):
    """`Qx &= vcmp.gt(Vu.w, Vv.w)`."""

    name = "hvx.vcmp_gt_w_and"
    SYNTAX: ClassVar[str] = "{d} &= vcmp.gt({u}.w,{v}.w)"


@irdl_op_definition
class VaddWIfOp(VxQVu):
    """`if (Qv) Vx.w += Vu.w`: word lanes whose predicate bytes are set add u."""

    name = "hvx.vadd_w_if"
    SYNTAX: ClassVar[str] = "if ({q}) {d}.w += {u}.w"


@irdl_op_definition
class VmuxOp(Instruction):
    """`Vd = vmux(Qt, Vu, Vv)`: byte lane i is u's where the predicate is set, else v's."""

    name = "hvx.vmux"
    SYNTAX: ClassVar[str] = "{d} = vmux({q},{u},{v})"
    q = operand_def(PredType)
    u = operand_def(VecType)
    v = operand_def(VecType)
    d = result_def(VecType)

    def __init__(self, q: SSAValue, u: SSAValue, v: SSAValue, d: VecType = VecType.unallocated()):
        super().__init__(operands=[q, u, v], result_types=[d])


@irdl_op_definition
class Vsetq2Op(Instruction):
    """`Qd = vsetq2(Rt)`: byte lane i is set iff i <= (t - 1) mod 128 (t = 1..128 lanes)."""

    name = "hvx.vsetq2"
    SYNTAX: ClassVar[str] = "{d} = vsetq2({t})"
    t = operand_def(RegType)
    d = result_def(PredType)

    def __init__(self, t: SSAValue, d: PredType = PredType.unallocated()):
        super().__init__(operands=[t], result_types=[d])


@irdl_op_definition
class VassignOp(Instruction):
    """`Vd = Vu`: a copy of u."""

    name = "hvx.vassign"
    SYNTAX: ClassVar[str] = "{d} = {u}"
    u = operand_def(VecType)
    d = result_def(VecType)

    def __init__(self, u: SSAValue, d: VecType = VecType.unallocated()):
        super().__init__(operands=[u], result_types=[d])


@irdl_op_definition
class VandPredOp(Instruction):
    """`Vd = vand(Qu, Rt)`: byte lane i is t.ub[i%4] where the predicate is set, else 0."""

    name = "hvx.vand_qr"
    SYNTAX: ClassVar[str] = "{d} = vand({q},{t})"
    q = operand_def(PredType)
    t = operand_def(RegType)
    d = result_def(VecType)

    def __init__(self, q: SSAValue, t: SSAValue, d: VecType = VecType.unallocated()):
        super().__init__(operands=[q, t], result_types=[d])


@irdl_op_definition
class VandToPredOp(Instruction):
    """`Qd = vand(Vu, Rt)`: byte lane i is set iff u.ub[i] & t.ub[i%4] is not zero."""

    name = "hvx.vand_vr"
    SYNTAX: ClassVar[str] = "{d} = vand({u},{t})"
    u = operand_def(VecType)
    t = operand_def(RegType)
    d = result_def(PredType)

    def __init__(self, u: SSAValue, t: SSAValue, d: PredType = PredType.unallocated()):
        super().__init__(operands=[u, t], result_types=[d])


# ----------------------------------------------------------------------------
# Shifts and permutes
# ----------------------------------------------------------------------------


@irdl_op_definition
class VasrWOp(VdVuRt):
    """`Vd.w = vasr(Vu.w, Rt)`: arithmetic shift right by t mod 32."""

    name = "hvx.vasr_w"
    SYNTAX: ClassVar[str] = "{d}.w = vasr({u}.w,{t})"


@irdl_op_definition
class VaslWOp(VdVuRt):
    """`Vd.w = vasl(Vu.w, Rt)`: shift left by t mod 32."""

    name = "hvx.vasl_w"
    SYNTAX: ClassVar[str] = "{d}.w = vasl({u}.w,{t})"


@irdl_op_definition
class ValignOp(VdVuVvRt):
    """`Vd = valign(Vu, Vv, Rt)`: bytes t mod 128 .. t mod 128 + 127 of the 256-byte u:v (v low)."""

    name = "hvx.valign"
    SYNTAX: ClassVar[str] = "{d} = valign({u},{v},{t})"
    LOW_SCALARS: ClassVar[tuple[str, ...]] = ("t",)


@irdl_op_definition
class VshuffOp(WdVuVvRt):
    """`Vdd = vshuff(Vu, Vv, Rt)`: interleave elements of |t| bytes, v's first."""

    name = "hvx.vshuff"
    SYNTAX: ClassVar[str] = "{d} = vshuff({u},{v},{t})"
    LOW_SCALARS: ClassVar[tuple[str, ...]] = ("t",)


@irdl_op_definition
class VdealOp(WdVuVvRt):
    """`Vdd = vdeal(Vu, Vv, Rt)`: the inverse of `vshuff`: even elements to lo, odd to hi."""

    name = "hvx.vdeal"
    SYNTAX: ClassVar[str] = "{d} = vdeal({u},{v},{t})"
    LOW_SCALARS: ClassVar[tuple[str, ...]] = ("t",)


class PairView(HvxOperation, ABC):
    """A half of a pair; allocation places it there, so it prints nothing."""

    pair = operand_def(VecPairType)
    d = result_def(VecType)
    HALF: ClassVar[int]

    def __init__(self, pair: SSAValue):
        super().__init__(operands=[pair], result_types=[VecType.unallocated()])


@irdl_op_definition
class LoOp(PairView):
    """The even vector of a pair."""

    name = "hvx.lo"
    HALF: ClassVar[int] = 0


@irdl_op_definition
class HiOp(PairView):
    """The odd vector of a pair."""

    name = "hvx.hi"
    HALF: ClassVar[int] = 1


@irdl_op_definition
class PairOp(HvxOperation):
    """
    Two vectors seen as a pair (`lo` the even register); allocation places them in the
    pair's halves, so it prints nothing. Each vector may join one pair only.
    """

    name = "hvx.pair"
    lo = operand_def(VecType)
    hi = operand_def(VecType)
    d = result_def(VecPairType)

    def __init__(self, lo: SSAValue, hi: SSAValue):
        super().__init__(operands=[lo, hi], result_types=[VecPairType.unallocated()])


@irdl_op_definition
class VcombineOp(Instruction):
    """`Vdd = vcombine(Vu, Vv)`: hi = u, lo = v."""

    name = "hvx.vcombine"
    SYNTAX: ClassVar[str] = "{d} = vcombine({u},{v})"
    u = operand_def(VecType)
    v = operand_def(VecType)
    d = result_def(VecPairType)

    def __init__(self, u: SSAValue, v: SSAValue):
        super().__init__(operands=[u, v], result_types=[VecPairType.unallocated()])


class VdVuVvImm(Instruction, ABC):
    """Vd = op(Vu, Vv, #shift), shift in 0..7."""

    u = operand_def(VecType)
    v = operand_def(VecType)
    shift = prop_def(IntegerAttr[I64])
    d = result_def(VecType)

    def __init__(self, u: SSAValue, v: SSAValue, shift: int, d: VecType = VecType.unallocated()):
        super().__init__(operands=[u, v], properties={"shift": _imm(shift)}, result_types=[d])

    def verify_(self) -> None:
        super().verify_()
        if not 0 <= self.shift.value.data <= 7:
            raise VerifyException(f"{self.name}: shift {self.shift.value.data} outside [0, 7]")


@irdl_op_definition
class ValignImmOp(VdVuVvImm):
    """`Vd = valign(Vu, Vv, #shift)`: bytes shift .. shift + 127 of the 256-byte u:v (v low)."""

    name = "hvx.valign_i"
    SYNTAX: ClassVar[str] = "{d} = valign({u},{v},#{shift})"


@irdl_op_definition
class VlalignImmOp(VdVuVvImm):
    """
    `Vd = vlalign(Vu, Vv, #shift)`: bytes 128 - shift .. 255 - shift of the 256-byte
    u:v (v low): d.ub[i] = v.ub[128 - shift + i] for i < shift, else u.ub[i - shift].
    """

    name = "hvx.vlalign_i"
    SYNTAX: ClassVar[str] = "{d} = vlalign({u},{v},#{shift})"


# ----------------------------------------------------------------------------
# Vector memory
# ----------------------------------------------------------------------------


class VectorMemory(Instruction, ABC):
    """`offset` counts whole vectors; `region` names the buffer, for alias facts."""

    offset = prop_def(IntegerAttr[I64], default_value=_imm(0))
    region = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        super().verify_()
        low, high = self.OFFSET_RANGE
        if not low <= self.offset.value.data <= high:
            raise VerifyException(
                f"{self.name}: offset {self.offset.value.data} outside [{low}, {high}]"
            )

    OFFSET_RANGE: ClassVar[tuple[int, int]] = (-8, 7)


def _memory_props(offset: int, region: str | None) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {"offset": _imm(offset)}
    if region is not None:
        props["region"] = StringAttr(region)
    return props


@irdl_op_definition
class VmemLoadOp(VectorMemory):
    """`Vd = vmem(Rt+#offset)`: an aligned 128-byte load (the address's low bits are ignored)."""

    name = "hvx.vmem_load"
    SYNTAX: ClassVar[str] = "{d} = vmem({base}+#{offset})"
    MEMORY: ClassVar[str | None] = "load"
    base = operand_def(RegType)
    d = result_def(VecType)

    def __init__(self, base: SSAValue, offset: int = 0, region: str | None = None):
        super().__init__(
            operands=[base], result_types=[VecType.unallocated()],
            properties=_memory_props(offset, region),
        )


@irdl_op_definition
class VmemuLoadOp(VectorMemory):
    """`Vd = vmemu(Rt+#offset)`: an unaligned 128-byte load."""

    name = "hvx.vmemu_load"
    SYNTAX: ClassVar[str] = "{d} = vmemu({base}+#{offset})"
    MEMORY: ClassVar[str | None] = "load"
    base = operand_def(RegType)
    d = result_def(VecType)

    def __init__(self, base: SSAValue, offset: int = 0, region: str | None = None):
        super().__init__(
            operands=[base], result_types=[VecType.unallocated()],
            properties=_memory_props(offset, region),
        )


@irdl_op_definition
class VmemLoadPostIncOp(VectorMemory):
    """`Vd = vmem(Rx++#offset)`: aligned load at x, then x += offset vectors."""

    name = "hvx.vmem_load_pi"
    SYNTAX: ClassVar[str] = "{d} = vmem({base}++#{offset})"
    MEMORY: ClassVar[str | None] = "load"
    OFFSET_RANGE: ClassVar[tuple[int, int]] = (-4, 3)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("base", "new_base"),)
    base = operand_def(RegType)
    d = result_def(VecType)
    new_base = result_def(RegType)

    def __init__(self, base: SSAValue, offset: int = 1, region: str | None = None):
        super().__init__(
            operands=[base], result_types=[VecType.unallocated(), base.type],
            properties=_memory_props(offset, region),
        )


@irdl_op_definition
class VmemStoreOp(VectorMemory):
    """`vmem(Rt+#offset) = Vs`: an aligned 128-byte store."""

    name = "hvx.vmem_store"
    assembly_format = "operands attr-dict `:` type(operands)"
    SYNTAX: ClassVar[str] = "vmem({base}+#{offset}) = {s}"
    MEMORY: ClassVar[str | None] = "store"
    base = operand_def(RegType)
    s = operand_def(VecType)

    def __init__(self, base: SSAValue, s: SSAValue, offset: int = 0, region: str | None = None):
        super().__init__(operands=[base, s], properties=_memory_props(offset, region))


@irdl_op_definition
class VmemuStoreOp(VectorMemory):
    """`vmemu(Rt+#offset) = Vs`: an unaligned 128-byte store."""

    name = "hvx.vmemu_store"
    assembly_format = "operands attr-dict `:` type(operands)"
    SYNTAX: ClassVar[str] = "vmemu({base}+#{offset}) = {s}"
    MEMORY: ClassVar[str | None] = "store"
    base = operand_def(RegType)
    s = operand_def(VecType)

    def __init__(self, base: SSAValue, s: SSAValue, offset: int = 0, region: str | None = None):
        super().__init__(operands=[base, s], properties=_memory_props(offset, region))


@irdl_op_definition
class VmemStorePostIncOp(VectorMemory):
    """`vmem(Rx++#offset) = Vs`: aligned store at x, then x += offset vectors."""

    name = "hvx.vmem_store_pi"
    SYNTAX: ClassVar[str] = "vmem({base}++#{offset}) = {s}"
    MEMORY: ClassVar[str | None] = "store"
    OFFSET_RANGE: ClassVar[tuple[int, int]] = (-4, 3)
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("base", "new_base"),)
    base = operand_def(RegType)
    s = operand_def(VecType)
    new_base = result_def(RegType)

    def __init__(self, base: SSAValue, s: SSAValue, offset: int = 1, region: str | None = None):
        super().__init__(
            operands=[base, s], result_types=[base.type], properties=_memory_props(offset, region)
        )


@irdl_op_definition
class VmemStoreIfOp(VectorMemory):
    """`if (Qv) vmem(Rt+#offset) = Vs`: only the bytes whose predicate is set are written."""

    name = "hvx.vmem_store_if"
    assembly_format = "operands attr-dict `:` type(operands)"
    SYNTAX: ClassVar[str] = "if ({q}) vmem({base}+#{offset}) = {s}"
    MEMORY: ClassVar[str | None] = "store"
    q = operand_def(PredType)
    base = operand_def(RegType)
    s = operand_def(VecType)

    def __init__(
        self, q: SSAValue, base: SSAValue, s: SSAValue, offset: int = 0, region: str | None = None
    ):
        super().__init__(operands=[q, base, s], properties=_memory_props(offset, region))


# ----------------------------------------------------------------------------
# Scalar instructions
# ----------------------------------------------------------------------------


@irdl_op_definition
class TransferImmOp(Instruction):
    """`Rd = #value` (values outside 16 bits use a constant extender, `##`)."""

    name = "hvx.tfri"
    assembly_format = "attr-dict `:` type($d)"
    SYNTAX: ClassVar[str] = "{d} = ##{value}"
    value = prop_def(IntegerAttr[I64])
    d = result_def(RegType)

    def __init__(self, value: int, d: RegType = RegType.unallocated()):
        super().__init__(properties={"value": _imm(value)}, result_types=[d])

    def verify_(self) -> None:
        if not -(2**31) <= self.value.value.data < 2**32:
            raise VerifyException(f"{self.name}: {self.value.value.data} does not fit 32 bits")

    def signed_value(self) -> int:
        value = self.value.value.data
        return value - 2**32 if value >= 2**31 else value

    def needs_extender(self) -> bool:
        return not -(2**15) <= self.signed_value() < 2**15

    def assembly_line(self) -> str | None:
        hashes = "##" if self.needs_extender() else "#"
        return f"    {self.d.type.asm_name()} = {hashes}{self.signed_value()}"


@irdl_op_definition
class AddressOp(Instruction):
    """`Rd = ##symbol`: the address of a buffer or data block."""

    name = "hvx.address"
    assembly_format = "attr-dict `:` type($d)"
    SYNTAX: ClassVar[str] = "{d} = ##{symbol}"
    symbol = prop_def(SymbolRefAttr)
    d = result_def(RegType)

    def __init__(self, symbol: str, d: RegType = RegType.unallocated()):
        super().__init__(properties={"symbol": SymbolRefAttr(symbol)}, result_types=[d])

    def needs_extender(self) -> bool:
        return True


@irdl_op_definition
class AddImmOp(Instruction):
    """`Rd = add(Rs, #value)`."""

    name = "hvx.addi"
    SYNTAX: ClassVar[str] = "{d} = add({s},##{value})"
    s = operand_def(RegType)
    value = prop_def(IntegerAttr[I64])
    d = result_def(RegType)

    def __init__(self, s: SSAValue, value: int, d: RegType = RegType.unallocated()):
        super().__init__(operands=[s], properties={"value": _imm(value)}, result_types=[d])

    def needs_extender(self) -> bool:
        return not -(2**15) <= self.value.value.data < 2**15

    def assembly_line(self) -> str | None:
        hashes = "##" if self.needs_extender() else "#"
        value = self.value.value.data
        return f"    {self.d.type.asm_name()} = add({self.s.type.asm_name()},{hashes}{value})"


@irdl_op_definition
class AddOp(Instruction):
    """`Rd = add(Rs, Rt)`."""

    name = "hvx.add"
    SYNTAX: ClassVar[str] = "{d} = add({s},{t})"
    s = operand_def(RegType)
    t = operand_def(RegType)
    d = result_def(RegType)

    def __init__(self, s: SSAValue, t: SSAValue, d: RegType = RegType.unallocated()):
        super().__init__(operands=[s, t], result_types=[d])


@irdl_op_definition
class MinOp(Instruction):
    """`Rd = min(Rs, Rt)`, signed."""

    name = "hvx.min"
    SYNTAX: ClassVar[str] = "{d} = min({s},{t})"
    s = operand_def(RegType)
    t = operand_def(RegType)
    d = result_def(RegType)

    def __init__(self, s: SSAValue, t: SSAValue, d: RegType = RegType.unallocated()):
        super().__init__(operands=[s, t], result_types=[d])


class ScalarMemory(Instruction, ABC):
    """`offset` counts bytes; `region` names the buffer, for alias facts."""

    offset = prop_def(IntegerAttr[I64], default_value=_imm(0))
    region = opt_prop_def(StringAttr)
    ALIGN: ClassVar[int] = 4
    OFFSET_BITS: ClassVar[int | None] = 11
    """
    Signed bits of the encoded offset, which counts ALIGN-byte units (`#s11:2` for memw,
    `#s11:3` for memd); beyond them an extender word carries it. None: a post-increment
    step, which has no extended form.
    """

    def needs_extender(self) -> bool:
        if self.OFFSET_BITS is None:
            return False
        limit = 2 ** (self.OFFSET_BITS - 1) * self.ALIGN
        return not -limit <= self.offset.value.data < limit

    def verify_(self) -> None:
        super().verify_()
        if self.offset.value.data % self.ALIGN:
            raise VerifyException(f"{self.name}: offset must be a multiple of {self.ALIGN}")


@irdl_op_definition
class LoadWordOp(ScalarMemory):
    """`Rd = memw(Rs+#offset)`."""

    name = "hvx.memw_load"
    SYNTAX: ClassVar[str] = "{d} = memw({base}+#{offset})"
    MEMORY: ClassVar[str | None] = "load"
    base = operand_def(RegType)
    d = result_def(RegType)

    def __init__(self, base: SSAValue, offset: int = 0, region: str | None = None):
        super().__init__(
            operands=[base], result_types=[RegType.unallocated()],
            properties=_memory_props(offset, region),
        )


@irdl_op_definition
class LoadWordPostIncOp(ScalarMemory):
    """`Rd = memw(Rx++#offset)`: load at x, then x += offset bytes."""

    name = "hvx.memw_load_pi"
    SYNTAX: ClassVar[str] = "{d} = memw({base}++#{offset})"
    MEMORY: ClassVar[str | None] = "load"
    OFFSET_BITS: ClassVar[int | None] = None
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("base", "new_base"),)
    base = operand_def(RegType)
    d = result_def(RegType)
    new_base = result_def(RegType)

    def __init__(self, base: SSAValue, offset: int = 4, region: str | None = None):
        super().__init__(
            operands=[base], result_types=[RegType.unallocated(), base.type],
            properties=_memory_props(offset, region),
        )


@irdl_op_definition
class LoadDoubleWordPostIncOp(ScalarMemory):
    """`Rdd = memd(Rx++#offset)`: load 8 bytes at x, then x += offset bytes."""

    name = "hvx.memd_load_pi"
    SYNTAX: ClassVar[str] = "{d} = memd({base}++#{offset})"
    MEMORY: ClassVar[str | None] = "load"
    ALIGN: ClassVar[int] = 8
    OFFSET_BITS: ClassVar[int | None] = None
    TIED: ClassVar[tuple[tuple[str, str], ...]] = (("base", "new_base"),)
    base = operand_def(RegType)
    d = result_def(RegPairType)
    new_base = result_def(RegType)

    def __init__(self, base: SSAValue, offset: int = 8, region: str | None = None):
        super().__init__(
            operands=[base], result_types=[RegPairType.unallocated(), base.type],
            properties=_memory_props(offset, region),
        )


@irdl_op_definition
class StoreWordOp(ScalarMemory):
    """`memw(Rs+#offset) = Rt`."""

    name = "hvx.memw_store"
    assembly_format = "operands attr-dict `:` type(operands)"
    SYNTAX: ClassVar[str] = "memw({base}+#{offset}) = {t}"
    MEMORY: ClassVar[str | None] = "store"
    base = operand_def(RegType)
    t = operand_def(RegType)

    def __init__(self, base: SSAValue, t: SSAValue, offset: int = 0, region: str | None = None):
        super().__init__(operands=[base, t], properties=_memory_props(offset, region))


@irdl_op_definition
class LoadByteIndexedOp(Instruction):
    """`Rd = memub(Rs+Rt<<#0)`: the unsigned byte at s + t."""

    name = "hvx.memub_load_rr"
    SYNTAX: ClassVar[str] = "{d} = memub({base}+{index}<<#0)"
    MEMORY: ClassVar[str | None] = "load"
    base = operand_def(RegType)
    index = operand_def(RegType)
    d = result_def(RegType)
    region = opt_prop_def(StringAttr)

    def __init__(self, base: SSAValue, index: SSAValue, region: str | None = None):
        props = {"region": StringAttr(region)} if region else {}
        super().__init__(
            operands=[base, index], result_types=[RegType.unallocated()], properties=props
        )


@irdl_op_definition
class StoreByteIndexedOp(Instruction):
    """`memb(Rs+Ru<<#0) = Rt`: store the low byte of t at s + u."""

    name = "hvx.memb_store_rr"
    SYNTAX: ClassVar[str] = "memb({base}+{index}<<#0) = {t}"
    MEMORY: ClassVar[str | None] = "store"
    assembly_format = "operands attr-dict `:` type(operands)"
    base = operand_def(RegType)
    index = operand_def(RegType)
    t = operand_def(RegType)
    region = opt_prop_def(StringAttr)

    def __init__(self, base: SSAValue, index: SSAValue, t: SSAValue, region: str | None = None):
        props = {"region": StringAttr(region)} if region else {}
        super().__init__(operands=[base, index, t], properties=props)


class ScalarPairView(HvxOperation, ABC):
    """A half of a scalar pair; allocation places it there, so it prints nothing."""

    pair = operand_def(RegPairType)
    d = result_def(RegType)
    HALF: ClassVar[int]

    def __init__(self, pair: SSAValue):
        super().__init__(operands=[pair], result_types=[RegType.unallocated()])


@irdl_op_definition
class LoOfPairOp(ScalarPairView):
    """The even scalar of a pair."""

    name = "hvx.lo_r"
    HALF: ClassVar[int] = 0


@irdl_op_definition
class HiOfPairOp(ScalarPairView):
    """The odd scalar of a pair."""

    name = "hvx.hi_r"
    HALF: ClassVar[int] = 1


@irdl_op_definition
class SyscallOp(Instruction):
    """`trap0(#1)`: a Linux system call, number in r6, arguments in r0..r5, result in r0."""

    name = "hvx.syscall"
    SYNTAX: ClassVar[str] = "trap0(#1)"
    args = var_operand_def(RegType)
    result = var_result_def(RegType)

    def __init__(self, args: Sequence[SSAValue], result: RegType):
        super().__init__(operands=[args], result_types=[[result]])


@irdl_op_definition
class TransferOp(Instruction):
    """`Rd = Rs`: a copy of s."""

    name = "hvx.tfr"
    SYNTAX: ClassVar[str] = "{d} = {s}"
    s = operand_def(RegType)
    d = result_def(RegType)

    def __init__(self, s: SSAValue, d: RegType = RegType.unallocated()):
        super().__init__(operands=[s], result_types=[d])


@irdl_op_definition
class LoadDoubleWordOp(ScalarMemory):
    """`Rdd = memd(Rs+#offset)`: the 8 bytes at s + offset (little-endian, lo first)."""

    name = "hvx.memd_load"
    SYNTAX: ClassVar[str] = "{d} = memd({base}+#{offset})"
    MEMORY: ClassVar[str | None] = "load"
    ALIGN: ClassVar[int] = 8
    base = operand_def(RegType)
    d = result_def(RegPairType)

    def __init__(self, base: SSAValue, offset: int = 0, region: str | None = None):
        super().__init__(
            operands=[base], result_types=[RegPairType.unallocated()],
            properties=_memory_props(offset, region),
        )

@irdl_op_definition
class NopOp(Instruction):
    """`nop`: does nothing (it fills a slot)."""

    name = "hvx.nop"
    assembly_format = "attr-dict"
    SYNTAX: ClassVar[str] = "nop"

    def __init__(self):
        super().__init__()


# ----------------------------------------------------------------------------
# Structure
# ----------------------------------------------------------------------------

PAIR_VIEWS = (PairView, ScalarPairView)
"""Ops whose result is a half of their operand pair."""


@irdl_op_definition
class YieldOp(HvxOperation):
    """Ends a loop body, giving the values the next iteration (or the loop's results) take."""

    name = "hvx.yield"
    assembly_format = "attr-dict ($values^ `:` type($values))?"
    values = var_operand_def(HexagonRegisterType)
    traits = traits_def(IsTerminator())

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


LOOP_KINDS = ("loop0", "loop1", "counted")


@irdl_op_definition
class LoopOp(IRDLOperation):
    """
    A loop run `trip` times (at least once). `loop0`/`loop1` are Hexagon's zero-overhead
    hardware loops (`loop0` innermost). A `counted` loop is a software loop: its first
    iteration value is the count of iterations left, which the body decrements; the
    loop branches back while the yielded count is positive.

    Iteration values are the body block's arguments: `inits` on entry, the yielded
    values after; the last yielded values are the loop's results. Each keeps one
    register throughout.
    """

    name = "hvx.loop"
    trip = prop_def(IntegerAttr[I64])
    kind = prop_def(StringAttr)
    inits = var_operand_def(HexagonRegisterType)
    results_ = var_result_def(HexagonRegisterType)
    body = region_def("single_block")

    assembly_format = (
        "(`iter` `(` $inits^ `:` type($inits) `)`)? $body attr-dict (`->` type($results_)^)?"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, trip: int, kind: str, inits: Sequence[SSAValue], body: Region):
        super().__init__(
            operands=[inits],
            result_types=[[v.type for v in inits]],
            properties={"trip": _imm(trip), "kind": StringAttr(kind)},
            regions=[body],
        )

    @staticmethod
    def empty_body(inits: Sequence[SSAValue]) -> Region:
        return Region(Block(arg_types=[v.type for v in inits]))

    def verify_(self) -> None:
        kind = self.kind.data
        if kind not in LOOP_KINDS:
            raise VerifyException(f"hvx.loop: kind must be one of {', '.join(LOOP_KINDS)}")
        trip = self.trip.value.data
        if trip < 1:
            raise VerifyException("hvx.loop: trip count must be at least 1")
        if kind != "counted" and trip > 1023:
            raise VerifyException(f"hvx.loop: a hardware loop runs at most 1023 times, not {trip}")
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inits]:
            raise VerifyException("hvx.loop: body arguments must match the iteration values")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("hvx.loop: body must end with hvx.yield")
        if [v.type for v in terminator.values] != [v.type for v in self.inits]:
            raise VerifyException("hvx.loop: yielded values must match the iteration values")
        if kind == "counted" and (not self.inits or not isinstance(self.inits[0].type, RegType)):
            raise VerifyException("hvx.loop: a counted loop's first iteration value is its counter")
        for inner in block.walk():
            if not isinstance(inner, LoopOp) or inner is self:
                continue
            if kind == "loop0":
                raise VerifyException("hvx.loop: a loop0 body holds no loops")
            if kind == "loop1" and inner.kind.data == "loop1":
                raise VerifyException("hvx.loop: a loop1 body holds no loop1")


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A kernel: a label, its body, and a return (`jumpr r31`) unless it is `_start`."""

    name = "hvx.func"
    sym_name = prop_def(SymbolNameConstraint())
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), NoTerminator())

    assembly_format = "$sym_name $body attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, name: str, body: Region | None = None):
        super().__init__(
            properties={"sym_name": StringAttr(name)}, regions=[body or Region(Block())]
        )


@irdl_op_definition
class CallOp(Instruction):
    """`call callee`: run a kernel; it may overwrite every allocatable register."""

    name = "hvx.call"
    assembly_format = "$callee attr-dict"
    SYNTAX: ClassVar[str] = "call {callee}"
    callee = prop_def(SymbolRefAttr)

    def __init__(self, callee: str):
        super().__init__(properties={"callee": SymbolRefAttr(callee)})


@irdl_op_definition
class BufferOp(IRDLOperation):
    """
    A 128-byte aligned buffer of `size` bytes. With `store` and `key` it is read-only
    data, the raw bytes of that weight-store entry (a uint8 `.npy`); with `file`, the
    bytes of that file, supplied when the program is assembled (the model inputs);
    otherwise it is zero-initialised storage.
    """

    name = "hvx.buffer"
    sym_name = prop_def(SymbolNameConstraint())
    size = prop_def(IntegerAttr[I64])
    store = opt_prop_def(StringAttr)
    key = opt_prop_def(StringAttr)
    file = opt_prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())

    assembly_format = "$sym_name attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        name: str,
        size: int,
        store: str | None = None,
        key: str | None = None,
        file: str | None = None,
    ):
        props: dict[str, Attribute] = {"sym_name": StringAttr(name), "size": _imm(size)}
        if store is not None:
            props["store"] = StringAttr(store)
            props["key"] = StringAttr(key or "")
        if file is not None:
            props["file"] = StringAttr(file)
        super().__init__(properties=props)

    @property
    def read_only(self) -> bool:
        return self.store is not None or self.file is not None

    def verify_(self) -> None:
        if self.size.value.data < 1:
            raise VerifyException(f"hvx.buffer @{self.sym_name.data}: size must be positive")
        if (self.store is None) != (self.key is None):
            raise VerifyException(f"hvx.buffer @{self.sym_name.data}: store and key go together")
        if self.store is not None and self.file is not None:
            raise VerifyException(
                f"hvx.buffer @{self.sym_name.data}: data comes from a store or a file")


@irdl_op_definition
class RelayoutOp(IRDLOperation):
    """
    A quantized activation moving between SIMD layouts (GCD²'s layout transformation);
    the values do not change. `select-layouts` places it where a reader wants another
    layout than the producer wrote; `onnx-to-hvx` turns it into a gather kernel.
    """

    name = "hvx.relayout"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    source = prop_def(LayoutAttr)
    target = prop_def(LayoutAttr)

    assembly_format = (
        "$input `from` $source `to` $target attr-dict `:` type($input) `->` type($output)"
    )
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, input: SSAValue, source: SimdLayout, target: SimdLayout):
        super().__init__(
            operands=[input], result_types=[input.type],
            properties={"source": LayoutAttr(source), "target": LayoutAttr(target)},
        )

    def verify_(self) -> None:
        if self.input.type != self.output.type:
            raise VerifyException("hvx.relayout: input and output types differ")
        element = self.input.type.element_type
        if not (isinstance(element, IntegerType) and element.width.data == 8):
            raise VerifyException("hvx.relayout: moves 8-bit quantized tensors only")
        if self.source == self.target:
            raise VerifyException("hvx.relayout: source and target layouts are the same")
        if SimdLayout.ROW in (self.source.data, self.target.data):
            raise VerifyException("hvx.relayout: moves between col1, col2 and col4")


@irdl_op_definition
class ArgOp(HvxOperation):
    """
    A register live on entry to its function, holding what the caller put there (code
    imported from assembly reads registers it never wrote). It prints nothing.
    """

    name = "hvx.arg"
    d = result_def(HexagonRegisterType)

    assembly_format = "attr-dict `:` type($d)"

    def __init__(self, d: HexagonRegisterType):
        super().__init__(result_types=[d])

    def verify_(self) -> None:
        reg = self.d.type
        assert isinstance(reg, HexagonRegisterType)
        if not reg.is_allocated:
            raise VerifyException(f"hvx.arg: the register must be allocated, not {reg}")
        if not isinstance(self.parent_op(), FuncOp):
            raise VerifyException("hvx.arg: must be in the body of an hvx.func")
        previous = self.prev_op
        if previous is not None and not isinstance(previous, ArgOp):
            raise VerifyException("hvx.arg: must come before the other ops of its function")
