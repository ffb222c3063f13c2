"""
`select-layouts{target=gpu|dsp solver=local layout=...}`: choose how each value is laid
out for the target and record it in the IR, where the lowering (`onnx-to-texture`,
`onnx-to-hvx`) realises it without choosing anything itself, so that one solver can be
swapped for another.

- `target=gpu`: each value's texture layout (`dialects/texture/value_layouts.py`: the
  `texture.layouts` attribute of an op, one per result, and `texture.layout` on a
  graph argument). `solver=local` follows today's rules value by value
  (`transforms/onnx_to_texture/layouts.py`).
- `target=dsp`: each quantized op's instruction and SIMD layout (`layout`: auto, col1,
  col2, col4).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.transforms.onnx_to_texture.layouts import select_local

TARGETS = ("gpu", "dsp")
SOLVERS = ("local",)


@dataclass(frozen=True)
class SelectLayoutsPass(ModulePass):
    """Record a layout for every value (`gpu`) or quantized op (`dsp`) of each graph."""

    name = "select-layouts"

    target: str = "gpu"
    solver: str = "local"
    """`local`: each value by the rules the lowerings followed before (no global view)."""
    layout: str = "auto"
    """`dsp` only: the SIMD layout to use, or `auto`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.target not in TARGETS:
            raise DiagnosticException(f"select-layouts: target must be one of "
                                      f"{', '.join(TARGETS)}, not '{self.target}'")
        if self.solver not in SOLVERS:
            raise DiagnosticException(f"select-layouts: solver must be one of "
                                      f"{', '.join(SOLVERS)}, not '{self.solver}'")
        if self.target == "gpu":
            if self.layout != "auto":
                raise DiagnosticException("select-layouts: layout is an option of target=dsp")
            select_local(op)
        else:
            raise DiagnosticException("select-layouts: target=dsp is not in this branch "
                                      "(it arrives with onnx-to-hvx's side)")
