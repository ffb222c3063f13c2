"""
The OpenCL back end's `-t` targets: `opencl` (the program, with its host plan as a
trailing comment for a lowered module) and `opencl-plan` (the host plan as JSON). They
sit above both the printer and the plan, which do not import each other's targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from mobile_opt.backends.opencl.plan import PlanError, build_plan, is_lowered, plan_comment
from mobile_opt.backends.opencl.printer import LOWER_FIRST, print_opencl


@dataclass(frozen=True)
class OpenCLTarget(Target):
    """
    `-t opencl`: the kernels as one OpenCL C program, followed (for a lowered
    module) by its host plan as a trailing `/* mobile-opt host plan ... */` comment.
    """

    name = "opencl"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if not is_lowered(module) and not any(op.name == "ocl.kernel" for op in module.walk()):
            # the prelude alone would pass for a compiled program
            raise DiagnosticException(f"no OpenCL kernels to print: {LOWER_FIRST}")
        print_opencl(module, output)
        if is_lowered(module):
            output.write("\n" + plan_comment(build_plan(module)))


@dataclass(frozen=True)
class OpenCLPlanTarget(Target):
    """`-t opencl-plan`: the host plan of the module's graph function as JSON."""

    name = "opencl-plan"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if not is_lowered(module):
            raise DiagnosticException(
                f"-t opencl-plan: the module is not lowered: {LOWER_FIRST}"
            )
        try:
            output.write(build_plan(module).dumps() + "\n")
        except PlanError as e:
            raise DiagnosticException(f"-t opencl-plan: {e}") from None
