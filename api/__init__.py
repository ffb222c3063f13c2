"""
The Python API, the layer every entry point stands on: `compile` a model for the GPU
(OpenCL) or the DSP (Hexagon HVX), run it, save it and `load` it back (`compiled.py`);
bad input raises the one error type, `UserError` (`errors.py`); files appear whole or
not at all (`files.py`). The tools, the benchmarks and the tests call it; it is the one
place where a pipeline (`pipelines.py`) is chosen and run.
"""

from __future__ import annotations

from typing import Any

_COMPILED = ("Compiled", "Report", "compile", "load", "read_model")


def __getattr__(name: str) -> Any:
    # lazily: the tools import errors.py and files.py alone, without the pipelines
    if name in _COMPILED:
        from mobile_opt.api import compiled

        return getattr(compiled, name)
    raise AttributeError(f"module 'mobile_opt.api' has no attribute '{name}'")
