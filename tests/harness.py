"""
Helpers that several test modules share: lowering a model for PoCL the same way,
and calling `mobile-run` in-process. What the benchmarks share with the tests (inputs,
the onnxruntime oracle, errors) is the package's `checking`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest
from xdsl.passes import ModulePass

from mobile_opt import pipelines
from mobile_opt.checking import make_inputs, run_onnxruntime
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.interpreter import find_function
from mobile_opt.tools import mobile_run

REPO = Path(__file__).resolve().parents[1]

POCL_IMAGE_LIMIT = 8192
"""The image size PoCL reports at the least: tests lower with it so that which tensors
fall back to buffers does not vary from run to run."""

POCL_LIMITS = SimpleNamespace(max_image_width=POCL_IMAGE_LIMIT,
                              max_image_height=POCL_IMAGE_LIMIT)
"""A device as the GPU pipeline reads one (with `tile=False` only its image limits)."""


def lower_for_pocl(path: Path | str, passes: Sequence[str] = (), ace: bool = False,
                   fp16: bool = False):
    """
    `path` imported, through the named onnx passes, and lowered by the GPU pipeline
    with PoCL's least image limits, ready to print: the lowering's fixed kernel
    defaults (no `texture-tile`), and `ace` only if asked, so that a test can apply it;
    `fp16` stores tensors as half.
    """
    module = import_onnx(str(path))
    lowering, _ = pipelines.gpu_pipeline(",".join(passes), POCL_LIMITS, fp16, ace=ace,
                                         tile=False)
    pipelines.apply(module, lowering)
    return module


def run_on_device(path: Path, device, fp16: bool = False, seed: int = 0):
    """
    (our outputs, onnxruntime's) for the model file `path` on the same seeded inputs:
    compiled for `device` (a `DeviceInfo`) through the Python API, as `mobile-run`
    compiles it.
    """
    from mobile_opt import api

    model = api.compile(path, device=device, fp16=fp16)
    feeds = make_inputs(find_function(model.imported, "main_graph"), {}, seed)
    return model.run(feeds), run_onnxruntime(path, feeds)


def run_against_onnxruntime(path: Path, module, device):
    """
    (our outputs, onnxruntime's, each launched kernel's node label) for the lowered
    `module` of the model file `path`, built for `device`, on standard normal inputs.
    """
    import numpy as np
    import onnxruntime as ort

    from mobile_opt.backends.opencl.executor import CompiledModel

    compiled = CompiledModel(module, device)
    session = ort.InferenceSession(str(path))
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32)
             for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds), strict=True))
    result = compiled.run(feeds)
    return result.outputs, expected, [k.node for k in result.kernel_times]


def check_case(name: str, case, run) -> None:
    """Case `name` of a side-by-side model (`prefixed_nodes`) against onnxruntime: each of
    its outputs within 1e-3 of the output's scale, and `case.kernels` kernels launched.
    `run` is `run_against_onnxruntime`'s result."""
    from mobile_opt.checking import relative_error

    outputs, expected, kernel_nodes = run
    for output in case.outputs:
        got, want = outputs[f"{name}.{output}"], expected[f"{name}.{output}"]
        assert got.shape == want.shape
        assert relative_error(got, want) <= 1e-3, output
    launched = [node for node in kernel_nodes if f"'{name}." in node]
    assert len(launched) == case.kernels, launched


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


def run_mobile_run(argv: list[str], capsys) -> tuple[int, str, str]:
    """`mobile-run argv` in-process: (exit status, stdout, stderr)."""
    with pytest.raises(SystemExit) as exit_info:
        mobile_run.main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def assert_one_line_error(status: int, err: str, message: str, code: int = 1) -> None:
    """One line `mobile-run: error: ...` holding `message`, exit status `code` (1 for bad
    input, 2 for a usage error)."""
    assert status == code, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("mobile-run: error: ") and message in err, err


@dataclasses.dataclass(frozen=True)
class MarkViewsPass(ModulePass):
    """Every viewable movement op made a view (`movement.mark_views`): tests of views."""

    name = "test-mark-views"

    def apply(self, ctx, op) -> None:
        from mobile_opt.transforms.onnx_to_texture.movement import mark_views

        mark_views(op)


def with_views(passes: Sequence[ModulePass]) -> list[ModulePass]:
    """`passes` (a GPU pipeline) with every viewable op made a view after select-layouts."""
    from mobile_opt.transforms.select_layouts import SelectLayoutsPass

    at = next(i for i, p in enumerate(passes) if isinstance(p, SelectLayoutsPass))
    return [*passes[:at + 1], MarkViewsPass(), *passes[at + 1:]]
