"""
The GPU half of `select-layouts` for the solvers that choose every layout together: the
graph's `LayoutProblem` (to be built: issue 20).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException


def gpu_layout_problem(module: ModuleOp):
    raise DiagnosticException("select-layouts: target=gpu has only solver=local so far")
