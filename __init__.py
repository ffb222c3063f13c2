"""
mobile-opt: an xDSL compiler that maps ONNX models onto mobile GPUs and DSPs.

The Python API (`mobile_opt.api`) loads on first use, so that `import mobile_opt` stays
cheap: `mobile_opt.compile`, `mobile_opt.load`, `mobile_opt.Compiled`, `mobile_opt.Report`
and `mobile_opt.UserError`, the one error type of bad input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Compiled", "Report", "UserError", "compile", "load"]

if TYPE_CHECKING:
    from mobile_opt.api.compiled import Compiled, Report, compile, load
    from mobile_opt.frontend.errors import UserError


def __getattr__(name: str) -> Any:
    if name == "UserError":
        from mobile_opt.frontend.errors import UserError

        return UserError
    if name in __all__:
        from mobile_opt.api import compiled

        return getattr(compiled, name)
    raise AttributeError(f"module 'mobile_opt' has no attribute '{name}'")
