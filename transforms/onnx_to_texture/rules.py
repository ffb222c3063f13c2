"""The registry of op lowerings: `@lowers(OpClass, ...)` on `rule(ctx, op, epilogue)`."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation

from .context import LoweringContext

Rule = Callable[[LoweringContext, Operation, list[Operation]], None]

RULES: dict[type[Operation], Rule] = {}

FUSES_EPILOGUE: set[type[Operation]] = set()
"""Ops whose kernels run trailing elementwise ops (`KernelContext.store`)."""

INTEGER_OPS: set[type[Operation]] = set()
"""Ops whose kernels also give exact integer and boolean results (`context.is_integer`)."""


def lowers(*ops: type[Operation], epilogue: bool = True,
           integers: bool = False) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for op in ops:
            RULES[op] = rule
            if epilogue:
                FUSES_EPILOGUE.add(op)
            if integers:
                INTEGER_OPS.add(op)
        return rule

    return register
