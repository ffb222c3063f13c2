"""
Attributes of the `hvx` dialect: SIMD layouts and the implementations a quantized
operator can run with on the DSP.

`select-layouts{target=dsp}` records its choices under these keys on the `onnx` ops
(and graph inputs) that `onnx-to-hvx` lowers, which realises them.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr, StringAttr
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from mobile_opt.dialects.enum_syntax import AngleBracketEnum

from .layouts import SimdLayout

IMPLEMENTATION = "hvx.implementation"
"""On an op with a multiply kernel (Conv, MatMul, Gemm, AveragePool, ...): the chosen
`#hvx.implementation`."""
IMPLEMENTATIONS = "hvx.implementations"
"""Beside it: every candidate `#hvx.implementation`, with its cost."""
LAYOUT = "hvx.layout"
"""On an op whose result a layout-only kernel writes (Add, MaxPool, reshapes, and the
last step of GlobalAveragePool), and on a graph input's argument: the `#hvx.layout` of
the result (the input)."""


@irdl_attr_definition
class LayoutAttr(AngleBracketEnum, EnumAttribute[SimdLayout]):
    """A SIMD layout: `#hvx.layout<col4>`; see `layouts.SimdLayout`."""

    name = "hvx.layout"


@irdl_attr_definition
class ImplementationAttr(ParametrizedAttribute):
    """
    One way to run an operator on HVX, its implementation:
    `#hvx.implementation<col4, vrmpy, 1234 packets, 1500 cycles>`. The layout is that of
    the operator's activation inputs and output, the instruction its multiply; packets
    and cycles are the machine-description estimate for the whole kernel.
    """

    name = "hvx.implementation"

    layout: LayoutAttr
    instruction: StringAttr
    packets: IntAttr
    cycles: IntAttr

    def __init__(self, layout: SimdLayout, instruction: str, packets: int, cycles: int):
        super().__init__(
            LayoutAttr(layout), StringAttr(instruction), IntAttr(packets), IntAttr(cycles)
        )

    def verify(self) -> None:
        if self.packets.data < 0 or self.cycles.data < self.packets.data:
            raise VerifyException("hvx.implementation: needs 0 <= packets <= cycles")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            layout = parser.parse_str_enum(SimdLayout)
            parser.parse_punctuation(",")
            instruction = parser.parse_identifier()
            parser.parse_punctuation(",")
            packets = parser.parse_integer(allow_negative=False)
            parser.parse_keyword("packets")
            parser.parse_punctuation(",")
            cycles = parser.parse_integer(allow_negative=False)
            parser.parse_keyword("cycles")
        return (LayoutAttr(layout), StringAttr(instruction), IntAttr(packets), IntAttr(cycles))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<{self.layout.data.value}, {self.instruction.data}, "
            f"{self.packets.data} packets, {self.cycles.data} cycles>"
        )
