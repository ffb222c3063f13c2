"""
Hexagon register types: HVX vectors (`v0`..`v31`, 128 bytes), vector pairs (`w0`..`w15`,
printed `v1:0`..`v31:30` in assembly), HVX predicates (`q0`..`q3`), scalar registers
(`r0`..`r31`) and scalar pairs (`d0`..`d15`, printed `r1:0`..`r31:30`).

An unallocated register (`!hvx.vec`) is a virtual one; `hvx-regalloc` gives it a name
(`!hvx.vec<v3>`). A pair's halves alias two vectors of the same pool, so pairs and
vectors share one pool key and a pair is allocated to an even/odd couple.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.backend.register_type import RegisterType
from xdsl.irdl import irdl_attr_definition


class HexagonRegisterType(RegisterType, ABC):
    """A Hexagon register; `WIDTH` is how many pool entries it occupies."""

    WIDTH: ClassVar[int] = 1
    POOL_SIZE: ClassVar[int] = 32
    PREFIX: ClassVar[str] = ""
    POOL: ClassVar[str] = ""
    """Registers of one pool alias: a pair covers two of its entries."""

    @classmethod
    def register_pool_key(cls) -> str:
        return cls.POOL or cls.name

    @classmethod
    def index_by_name(cls) -> dict[str, int]:
        return {f"{cls.PREFIX}{i}": i for i in range(cls.POOL_SIZE // cls.WIDTH)}

    @classmethod
    def infinite_register_prefix(cls) -> str:
        return f"{cls.PREFIX}virt"

    @property
    def units(self) -> tuple[int, ...]:
        """The pool entries (vector or scalar register numbers) this register covers."""
        assert self.is_allocated, f"{self} is not allocated"
        index = self.index.data  # type: ignore[union-attr]
        return tuple(range(index * self.WIDTH, index * self.WIDTH + self.WIDTH))

    def asm_name(self) -> str:
        """The name assembly uses."""
        return self.register_name.data


@irdl_attr_definition
class VecType(HexagonRegisterType):
    """One HVX vector register: 128 bytes, viewed as ub/b, uh/h or uw/w lanes."""

    name = "hvx.vec"
    PREFIX = "v"
    POOL = "hvx.vector"


@irdl_attr_definition
class VecPairType(HexagonRegisterType):
    """An HVX vector pair `Vdd`: an odd/even couple of vectors, the even one its low half."""

    name = "hvx.vecpair"
    PREFIX = "w"
    WIDTH = 2
    POOL = "hvx.vector"

    def asm_name(self) -> str:
        low = self.units[0]
        return f"v{low + 1}:{low}"


@irdl_attr_definition
class PredType(HexagonRegisterType):
    """An HVX vector predicate `Q`: one bit per byte lane."""

    name = "hvx.pred"
    PREFIX = "q"
    POOL_SIZE = 4


@irdl_attr_definition
class RegType(HexagonRegisterType):
    """A 32-bit scalar register."""

    name = "hvx.reg"
    PREFIX = "r"
    POOL = "hexagon.scalar"


@irdl_attr_definition
class RegPairType(HexagonRegisterType):
    """A 64-bit scalar pair `Rdd`: an odd/even couple of scalar registers."""

    name = "hvx.regpair"
    PREFIX = "d"
    WIDTH = 2
    POOL = "hexagon.scalar"

    def asm_name(self) -> str:
        low = self.units[0]
        return f"r{low + 1}:{low}"


RESERVED_SCALARS = frozenset({29, 30, 31})
"""sp, fp and lr: never allocated."""

REGISTER_TYPES = (VecType, VecPairType, PredType, RegType, RegPairType)


def require_allocated(func, who: str) -> None:
    """A one-line error unless every register `func` (an `hvx.func`) uses is allocated."""
    from xdsl.utils.exceptions import DiagnosticException

    for op in func.walk():
        for value in (*op.operands, *op.results):
            if not getattr(value.type, "is_allocated", True):
                raise DiagnosticException(
                    f"{who}: @{func.sym_name.data} has unallocated registers (run hvx-regalloc first)"
                )
