"""
The syntax every enum attribute of this project's dialects shares: the value in angle
brackets, `#texture.layout<rows4>`, where xDSL's own `EnumAttribute` prints it bare.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from xdsl.parser import AttrParser
from xdsl.printer import Printer


class AngleBracketEnum:
    """
    A mixin for `EnumAttribute[E]` subclasses, listed before it (xDSL allows no class
    between `EnumAttribute[E]` and the attribute, so this is not one of its subclasses).
    """

    enum_type: ClassVar[type[StrEnum]]
    data: StrEnum

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StrEnum:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(cls.enum_type)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.value}>")
