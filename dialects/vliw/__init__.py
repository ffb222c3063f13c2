"""The `vliw` dialect: Hexagon packets of allocated `hvx` instructions."""

from xdsl.ir import Dialect

from .ops import EndOp, PacketOp

VLIW = Dialect("vliw", [PacketOp, EndOp], [])

__all__ = ["VLIW", "EndOp", "PacketOp"]
