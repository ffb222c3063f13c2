"""
The named pipelines `gpu-pipeline` and `dsp-pipeline`: they stand for the very lists the
tools build (`pipelines.gpu_pipeline`, `pipelines.dsp_pipeline`), their options are
mobile-run's with mobile-run's defaults, and a bad option value, an unknown device or a
code target with nothing lowered to print is one line, exit status 1, no traceback.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mobile_opt import pass_lists, pipelines
from mobile_opt.checking import quant_models
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.models.solvers import SOLVERS
from mobile_opt.pass_lists import (
    GRAPH_PASSES,
    PACKINGS,
    DspPipelinePass,
    GpuPipelinePass,
    PipelineError,
)
from mobile_opt.tools import mobile_opt, mobile_run
from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass
from mobile_opt.transforms.onnx_to_hvx.selection import LAYOUT_CHOICES
from mobile_opt.universe import MOBILE_OPT_UNIVERSE

STUB = SimpleNamespace(max_image_width=8192, max_image_height=4096, name="pthread-stub",
                       platform="Portable Computing Language")
"""A device as the GPU list reads one: PoCL's, so its shipped profile applies."""

LIST_DEVICE = SimpleNamespace(**{**vars(STUB), "name": "pthread-stub-cpu"})


@pytest.fixture
def stub_device(monkeypatch: pytest.MonkeyPatch) -> list:
    """`device=` resolves to `STUB` (no OpenCL needed); the specs asked for, in order."""
    asked: list = []

    def resolve(spec):
        asked.append(spec)
        return STUB

    monkeypatch.setattr(pass_lists, "resolve_device", resolve)
    return asked


@pytest.fixture
def models(tmp_path: Path) -> SimpleNamespace:
    """A float Conv+Relu model (the GPU's) and a quantized Conv (the DSP's), as files."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
    w = numpy_helper.from_array(np.linspace(-1, 1, 216, dtype=np.float32).reshape(8, 3, 3, 3),
                                "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu1")], "g", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    conv = tmp_path / "conv.onnx"
    onnx.save(model, conv)
    qconv = tmp_path / "qconv.onnx"
    onnx.save(quant_models.conv_model(3, 6, 6, 8, seed=1), qconv)
    return SimpleNamespace(conv=conv, qconv=qconv, folder=tmp_path)


# options -------------------------------------------------------------------------------
def _action(parser, option: str):
    return next(a for a in parser._actions if option in a.option_strings)


def test_options_are_mobile_runs_with_its_defaults_and_choices():
    parser = mobile_run.build_parser()
    defaults = parser.parse_args(["model.onnx"])
    gpu, dsp = GpuPipelinePass(), DspPipelinePass()
    assert (gpu.device, gpu.fp16, gpu.solver, gpu.memory_budget) == (
        defaults.device, defaults.fp16, defaults.solver, defaults.memory_budget)
    assert (dsp.layout, dsp.packing, dsp.solver, dsp.function) == (
        defaults.layout, defaults.packing, defaults.solver, defaults.function)
    assert tuple(_action(parser, "--layout").choices) == LAYOUT_CHOICES
    assert tuple(_action(parser, "--packing").choices) == PACKINGS
    assert tuple(_action(parser, "--solver").choices) == SOLVERS


@pytest.mark.parametrize("spec, expected", [
    ("gpu-pipeline", GpuPipelinePass()),
    ("gpu-pipeline{device=intel fp16=true solver=local memory-budget=200MB}",
     GpuPipelinePass(device="intel", fp16=True, solver="local", memory_budget="200MB")),
    ('gpu-pipeline{device="AMD EPYC" memory_budget=4096}',
     GpuPipelinePass(device="AMD EPYC", memory_budget=4096)),
    ("dsp-pipeline", DspPipelinePass()),
    ("dsp-pipeline{layout=col2 packing=greedy solver=local function=f}",
     DspPipelinePass(layout="col2", packing="greedy", solver="local", function="f")),
])
def test_specs_parse_to_the_named_passes(spec: str, expected):
    assert pipelines.parse_passes(spec) == [expected]


@pytest.mark.parametrize("spec, reason", [
    ("gpu-pipeline{solver=best}",
     "solver must be one of local, chain, pbqp, gcd2, exact, not 'best'"),
    ("gpu-pipeline{memory-budget=lots}",
     "memory-budget expects a size such as 200MB or 1.5GB, not 'lots'"),
    ("gpu-pipeline{memory-budget=0}", "memory-budget expects a size"),
    ("gpu-pipeline{memory-budget=2000TB}", "at most 1.0 PiB"),
    ("gpu-pipeline{fp16=3}", "Incompatible types"),
    ("gpu-pipeline{layout=col1}", 'Provided arguments ["layout"] not found'),
    ("dsp-pipeline{layout=col3}", "layout must be one of auto, col1, col2, col4, not 'col3'"),
    ("dsp-pipeline{packing=best}", "packing must be one of sda, soft-to-hard, soft-to-none, "
     "list, greedy, single, not 'best'"),
    ("dsp-pipeline{solver=best}", "solver must be one of"),
])
def test_bad_option_values_are_one_line(spec: str, reason: str):
    with pytest.raises(PipelineError) as e:
        pipelines.parse_passes(spec)
    assert str(e.value).startswith(f"-p {spec}: ") and reason in str(e.value)
    assert "\n" not in str(e.value)


# one definition of each list -----------------------------------------------------------
@pytest.mark.parametrize("options", [
    {}, {"device": "pocl"}, {"fp16": True}, {"solver": "local"},
    {"memory_budget": "200MB"}, {"memory_budget": 1 << 20, "fp16": True, "device": "cpu"},
])
def test_gpu_pipeline_is_the_tools_gpu_list(stub_device: list, options: dict):
    named = GpuPipelinePass(**options)
    budget = named.budget_bytes()
    stream = None if budget is None else FlashMemPlanPass(budget_mb=budget / (1 << 20))
    expected, _ = pipelines.gpu_pipeline(GRAPH_PASSES, STUB, named.fp16, solver=named.solver,
                                         stream=stream)
    assert named.passes() == expected
    assert stub_device == [options.get("device")]
    assert named.expansion()[0] == "pthread-stub [Portable Computing Language]"


@pytest.mark.parametrize("options", [
    {}, {"layout": "col4"}, {"packing": "greedy"}, {"packing": "list", "solver": "pbqp"},
    {"function": "g", "layout": "col1", "packing": "single"},
])
def test_dsp_pipeline_is_the_tools_dsp_list(options: dict):
    named = DspPipelinePass(**options)
    expected = pipelines.dsp_pipeline("", named.layout, named.function, named.packing,
                                      solver=named.solver)
    assert named.passes() == expected
    assert named.expansion()[0] == ""


def test_applying_the_named_pass_is_applying_its_list(stub_device: list, models):
    by_name, by_list = import_onnx(str(models.conv)), import_onnx(str(models.conv))
    pipelines.apply(by_name, [GpuPipelinePass()])
    pipelines.apply(by_list, GpuPipelinePass().passes())
    assert str(by_name) == str(by_list)
    assert any(op.name == "ocl.kernel" for op in by_name.walk())


def test_an_unknown_device_is_one_line():
    # the real device list: whatever this host has, it has no such device
    with pytest.raises(PipelineError, match="no OpenCL device matches 'no-such-device'") as e:
        GpuPipelinePass(device="no-such-device").passes()
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("build", [
    lambda: pipelines.gpu_pipeline("onnx-fuse,gpu-pipeline", STUB),
    lambda: pipelines.dsp_pipeline("dsp-pipeline"),
])
def test_a_tools_own_pipeline_takes_no_named_pipeline_as_a_stage(build):
    with pytest.raises(PipelineError, match="is a whole pipeline"):
        build()


def test_the_universe_publishes_them():
    passes = MOBILE_OPT_UNIVERSE.all_passes
    assert passes["gpu-pipeline"]() is GpuPipelinePass
    assert passes["dsp-pipeline"]() is DspPipelinePass
    assert {"gpu-pipeline", "dsp-pipeline"} <= set(pipelines.universe().all_passes)


# the driver ----------------------------------------------------------------------------
def _main(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        mobile_opt.main(args)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_mobile_opt_prints_the_kernels_of_a_named_pipeline(stub_device: list, models,
                                                           capsys):
    code, named, err = _main([str(models.conv), "-p", "gpu-pipeline", "-t", "opencl"], capsys)
    assert (code, err) == (0, "")
    assert "__kernel void conv_0(" in named and "mobile-opt host plan" in named
    # the same text as the list it stands for, spelt out as -p
    spec = ",".join(mobile_opt._spec(p) for p in GpuPipelinePass().passes())
    code, spelt, _ = _main([str(models.conv), "-p", spec, "-t", "opencl"], capsys)
    assert code == 0 and spelt == named

    code, asm, err = _main([str(models.qconv), "-p", "dsp-pipeline", "-t", "hexagon-asm"],
                           capsys)
    assert (code, err) == (0, "")
    assert "_start:" in asm and "k0_conv:" in asm and "vmem(" in asm


@pytest.mark.parametrize("model, args, line", [
    ("conv", ["-p", "gpu-pipeline{device=no-such-device}", "-t", "opencl"],
     "pass pipeline 'gpu-pipeline{device=no-such-device}': no OpenCL device matches "
     "'no-such-device'"),
    ("conv", ["-p", "gpu-pipeline{solver=best}", "-t", "opencl"],
     "pass pipeline 'gpu-pipeline{solver=best}': solver must be one of"),
    ("conv", ["-p", "onnx-fuse,gpu-pipeline{memory-budget=2x}"],
     "pass pipeline 'onnx-fuse,gpu-pipeline{memory-budget=2x}': memory-budget expects a size"),
    ("qconv", ["-p", "dsp-pipeline{packing=best}", "-t", "hexagon-asm"],
     "pass pipeline 'dsp-pipeline{packing=best}': packing must be one of"),
    ("conv", ["-t", "opencl"], "{model}: no OpenCL kernels to print: lower the model first, "
     "e.g. -p 'gpu-pipeline{device=pocl}'"),
    ("conv", ["-t", "opencl-plan"], "{model}: -t opencl-plan: the module is not lowered: "
     "lower the model first, e.g. -p 'gpu-pipeline{device=pocl}'"),
    ("qconv", ["-t", "hexagon-asm"], "{model}: hexagon-asm: no HVX kernels to print: "
     "lower the model first, e.g. -p dsp-pipeline"),
    ("qconv", ["-t", "hexagon-c"], "{model}: hexagon-c: no HVX kernels to print: "
     "lower the model first, e.g. -p dsp-pipeline"),
    ("conv", ["-p", "gpu-pipeline{device=no-such-device}", "-o", "{out}"],
     "pass pipeline 'gpu-pipeline{device=no-such-device}': no OpenCL device"),
    ("conv", ["-t", "opencl", "-o", "{out}"], "{model}: no OpenCL kernels to print"),
])
def test_mobile_opt_errors_are_one_line(models, capsys, model: str, args: list[str],
                                        line: str):
    path, out = getattr(models, model), models.folder / "out.txt"
    args = [a.replace("{out}", str(out)) for a in args]
    code, stdout, err = _main([str(path), *args], capsys)
    assert code == 1
    assert stdout == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("mobile-opt: error: " + line.replace("{model}", str(path)))
    assert not out.exists()  # nothing half-written


def test_list_pipelines(monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setattr(pass_lists, "resolve_device", lambda spec: LIST_DEVICE)
    code, out, err = _main(["--list-pipelines"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    for kind in pass_lists.NAMED_PIPELINES:
        at = lines.index(f"{kind.name}: {kind.summary}")
        block = lines[at + 1 : at + 4 + len(dataclasses.fields(kind))]
        assert block[0] == "  options:"
        for f, shown in zip(dataclasses.fields(kind), block[1:], strict=False):
            default = f.metadata["shown"] or str(f.default).lower()
            assert shown == (f"    {f.name.replace('_', '-')} (default {default}): "
                             f"{f.metadata['help']}")
        built_for, passes = kind().expansion()
        heading = block[-2]
        assert heading == ("  passes with the defaults"
                           + (f" (on {built_for}):" if built_for else ":"))
        # the list printed is a -p spec that gives the same passes back
        assert pipelines.parse_passes(block[-1].strip()) == passes
    assert "on pthread-stub-cpu [Portable Computing Language]" in out


def test_list_pipelines_without_an_opencl_device(monkeypatch: pytest.MonkeyPatch, capsys):
    def none_here(spec):
        raise PipelineError("no OpenCL device matches 'pocl'; available: none")

    monkeypatch.setattr(pass_lists, "resolve_device", none_here)
    code, out, _ = _main(["--list-pipelines"], capsys)
    assert code == 0
    assert "    (none here: no OpenCL device matches 'pocl'; available: none)" in out
    assert "select-layouts{target=\"dsp\"" in out  # the DSP list does not need one
