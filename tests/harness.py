"""
Helpers that several test modules share: lowering a model for PoCL the same way,
the relative error every OpenCL test measures, `bench/` scripts as modules, and
calling `mobile-run` in-process.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.tools import mobile_run
from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass
from mobile_opt.transforms.select_layouts import SelectLayoutsPass
from mobile_opt.transforms.texture_to_ocl import TextureToOclPass
from mobile_opt.universe import PASSES

REPO = Path(__file__).resolve().parents[1]

POCL_IMAGE_LIMIT = 8192
"""The image size PoCL reports at the least: tests lower with it so that which tensors
fall back to buffers does not vary from run to run."""


def lower_for_pocl(path: Path | str, passes: Sequence[str] = (), remarks: bool = True,
                   cse: bool = False):
    """`path` imported, through the named onnx passes, lowered and ready to print."""
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    module = import_onnx(str(path))
    ctx = Context()
    for name in passes:
        PASSES[name]()().apply(ctx, module)
    SelectLayoutsPass(target="gpu").apply(ctx, module)
    OnnxToTexturePass(max_image_width=POCL_IMAGE_LIMIT, max_image_height=POCL_IMAGE_LIMIT,
                      remarks=remarks).apply(ctx, module)
    TextureToOclPass().apply(ctx, module)
    if cse:
        CommonSubexpressionElimination().apply(ctx, module)
    module.verify()
    return module


def prefixed_nodes(prefix: str, nodes) -> list:
    """Copies of `nodes` whose names and values are prefixed `prefix.`: cases side by side."""
    renamed = []
    for i, node in enumerate(nodes):
        node = copy.deepcopy(node)
        node.input[:] = [f"{prefix}.{n}" if n else n for n in node.input]
        node.output[:] = [f"{prefix}.{n}" for n in node.output]
        node.name = f"{prefix}.{i}"
        renamed.append(node)
    return renamed


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want| (the scale floored at 1e-6)."""
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-6))


def load_bench(name: str):
    """`bench/NAME.py` imported as a module (bench/ is no package)."""
    module_name = f"mobile_opt_bench_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, REPO / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # its dataclasses look themselves up there
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def run_mobile_run(argv: list[str], capsys) -> tuple[int, str, str]:
    """`mobile-run argv` in-process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_info:
        mobile_run.main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def assert_one_line_error(status: int, err: str, message: str) -> None:
    assert status == 1
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("mobile-run: error: ") and message in err, err
