"""The registry of op lowerings: `@lowers(OpClass, ...)` on `rule(ctx, op, epilogue)`."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation

from .context import LoweringContext

Rule = Callable[[LoweringContext, Operation, list[Operation]], None]

RULES: dict[type[Operation], Rule] = {}

FUSES_EPILOGUE: set[type[Operation]] = set()
"""Ops whose kernels run trailing elementwise ops (`KernelContext.store`)."""


def lowers(*ops: type[Operation], epilogue: bool = True) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for op in ops:
            RULES[op] = rule
            if epilogue:
                FUSES_EPILOGUE.add(op)
        return rule

    return register
