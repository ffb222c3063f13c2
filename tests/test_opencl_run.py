"""
`mobile-run` on OpenCL (PoCL by default), its host plan and the `opencl` and
`opencl-plan` targets, on small elementwise models.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from harness import assert_one_line_error, run_mobile_run
from mobile_opt.backends.opencl.plan import parse_plan_comment
from mobile_opt.models.storage import Storage, assign_slots
from mobile_opt.tools import mobile_opt
from onnx import TensorProto, helper, numpy_helper, save
from mobile_opt.tools.cli import MANIFEST

NO_FUSION = "onnx-to-texture{fuse=false}"


def save_model(path: Path, nodes, inputs, outputs, initializers=()) -> Path:
    graph = helper.make_graph(nodes, path.stem, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    save(model, path)
    return path


@pytest.fixture
def chain(tmp_path: Path) -> Path:
    """Relu, Add (per-channel broadcast), Mul (by a weight), Sigmoid, Add (back to x)."""
    w = np.random.default_rng(1).uniform(-2, 2, (1, 6, 5, 7)).astype(np.float32)
    return save_model(
        tmp_path / "chain.onnx",
        [
            helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Add", ["a", "b"], ["c"], name="add"),
            helper.make_node("Mul", ["c", "w"], ["d"], name="mul"),
            helper.make_node("Sigmoid", ["d"], ["e"], name="sigmoid"),
            helper.make_node("Add", ["e", "x"], ["y"], name="residual"),
        ],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 5, 7]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 6, 1, 1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 5, 7])],
        [numpy_helper.from_array(w, "w")],
    )


run = run_mobile_run


def test_default_run_on_pocl_matches_onnxruntime(chain: Path, pocl_device, capsys):
    status, out, err = run([str(chain), "--repeat", "2"], capsys)
    assert status == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("device: ") and "Portable Computing Language" in lines[0]
    assert lines[1].split()[:3] == ["output", "shape", "max"]
    assert lines[2].split()[0] == "y" and lines[2].endswith("PASS")
    assert "kernel time (median of runs 2..2, profiling events):" in out
    assert any(line.startswith("total (1 launches)") for line in lines)  # all five fused
    assert "relu (Relu) + add (Add)" in out
    assert any(line.startswith("wall time per run (ms): ") for line in lines)
    assert any(re.fullmatch(r"compile \d+\.\d s \(passes\), \d+\.\d s more to build the "
                            r"program and upload the weights", line) for line in lines)
    assert lines[-1].startswith("storage: ")


def test_save_dir_holds_a_program_that_builds_again(
    chain: Path, tmp_path: Path, pocl_device, capsys
):
    import onnxruntime
    import pyopencl as cl

    folder = tmp_path / "saved"
    x = np.linspace(-3, 3, 6 * 5 * 7, dtype=np.float32).reshape(1, 6, 5, 7)
    np.save(tmp_path / "x.npy", x)
    status, out, err = run(
        [
            str(chain),
            "--input",
            f"x={tmp_path / 'x.npy'}",
            "--seed",
            "3",
            "--save-dir",
            str(folder),
        ],
        capsys,
    )
    assert status == 0, out + err
    assert {p.name for p in folder.iterdir()} == {
        "model.cl", "plan.json", "model.mlir", "weights.json", "compiled.json", "y.npy", MANIFEST}
    source = (folder / "model.cl").read_text()
    cl.Program(cl.Context([pocl_device]), source).build()  # the plan trailer is a comment
    plan = json.loads((folder / "plan.json").read_text())
    assert parse_plan_comment(source) == plan
    assert sorted(i["name"] for i in plan["inputs"]) == ["b", "x"]
    assert plan["weights"][0]["source"] == {"store": str(chain), "key": "w"}
    b = np.random.default_rng(3).uniform(-1, 1, (1, 6, 1, 1)).astype(np.float32)
    session = onnxruntime.InferenceSession(str(chain), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x, "b": b})
    np.testing.assert_allclose(np.load(folder / "y.npy"), want, rtol=1e-5, atol=1e-6)


def lifetimes(plan: dict) -> dict[str, tuple[int, int]]:
    """(defined, last use) of each storage value, from the plan's records alone."""
    spans = {r["value"]: [r["step"], r["step"]] for r in plan["inputs"] + plan["allocs"]}
    for launch in plan["launches"]:
        for arg in launch["args"]:
            if arg["value"] in spans:
                spans[arg["value"]][1] = max(spans[arg["value"]][1], launch["step"])
    for out in plan["outputs"]:
        if out.get("value") in spans:
            spans[out["value"]][1] = max(spans[out["value"]][1], out["step"])
    return {k: (a, b) for k, (a, b) in spans.items()}


def test_plan_reuses_storage_without_overlap(chain: Path, tmp_path: Path, pocl_device, capsys):
    folder = tmp_path / "saved"
    status, out, err = run([str(chain), "-p", NO_FUSION, "--save-dir", str(folder)], capsys)
    assert status == 0, out + err
    assert "total (5 launches)" in out
    plan = json.loads((folder / "plan.json").read_text())
    assert len(plan["allocs"]) == 5 and len(plan["launches"]) == 5
    transient = [s for s in plan["slots"] if not s["permanent"]]
    assert len(transient) < len(plan["allocs"]) + len(plan["inputs"])
    memory = plan["memory"]
    assert memory["bytes_with_reuse"] < memory["bytes_without_reuse"]
    assert memory["bytes_with_reuse"] >= memory["live_peak_bytes"]
    # values that share a slot never live at the same time, and no kernel reads its output slot
    spans = lifetimes(plan)
    for slot in transient:
        held = sorted(spans[v] for v in slot["values"])
        assert all(a[1] < b[0] for a, b in itertools.pairwise(held)), slot
    for launch in plan["launches"]:
        slots = [a["slot"] for a in launch["args"]]
        assert len(set(slots)) == len(slots), launch


def test_buffer_slots_take_the_smallest_that_fits():
    def buffer(name: str, nbytes_pixels: int, defined: int, last_use: int) -> Storage:
        return Storage(
            name,
            "buffer",
            nbytes_pixels,
            1,
            "f32",
            "rows4",
            [4 * nbytes_pixels],
            defined,
            last_use,
            False,
        )

    storage = [
        buffer("a", 10, 0, 1),
        buffer("b", 4, 1, 1),
        buffer("c", 3, 2, 3),  # a and b are free: b (4 pixels) is the tighter fit
        buffer("d", 20, 4, 5),  # nothing free is big enough
    ]
    slots = assign_slots(storage)
    assert [s.slot for s in storage] == [0, 1, 1, 2]
    assert slots[1].values == ["b", "c"] and slots[2].nbytes == 20 * 16


def test_fp16_runs_on_pocl_with_half_images(chain: Path, tmp_path: Path, pocl_device, capsys):
    folder = tmp_path / "saved"
    status, out, err = run([str(chain), "--fp16", "--save-dir", str(folder)], capsys)
    assert status == 0, out + err
    assert "[fp16 storage]" in out.splitlines()[0]
    plan = json.loads((folder / "plan.json").read_text())
    assert {s["element_type"] for s in plan["slots"]} == {"f16"}
    source = (folder / "model.cl").read_text()
    assert "read_imageh" in source and "#define read_imageh read_imagef" in source


def test_buffer_fallback_remarks_go_to_stderr(chain: Path, pocl_device, capsys):
    status, out, err = run([str(chain), "-p", "onnx-to-texture{max-image-width=4 buffers=false}",
                            "--solver", "local"], capsys)
    assert status == 0, out + err
    remarks = err.splitlines()
    assert remarks and all(r.startswith("remark: ") and "buffer" in r for r in remarks)
    assert any(r.startswith("remark: x@nc4hw4: ") for r in remarks), err
    assert "remark" not in out


def test_the_selection_avoids_a_buffer_where_a_layout_fits(chain: Path, pocl_device, capsys):
    """gcd2 knows the image limit: x in rows4 (2 pixels wide) fits where nc4hw4 (14) does not;
    only the weight, packed by the host in its reader's layout, still lives in a buffer
    (images chosen over PoCL's profile, which would put every tensor in a buffer)."""
    status, out, err = run([str(chain), "-p", "onnx-to-texture{max-image-width=4 buffers=false}"],
                           capsys)
    assert status == 0, out + err
    remarks = err.splitlines()
    assert not any(r.startswith("remark: x@") for r in remarks), err
    assert any(r.startswith("remark: w@nc4hw4: ") for r in remarks), err


def test_unknown_device_is_one_line(chain: Path, pocl_device, capsys):
    status, _, err = run([str(chain), "--device", "no-such-device-xyz"], capsys)
    assert_one_line_error(status, err, "no OpenCL device matches 'no-such-device-xyz'")
    assert "available: " in err and "Portable Computing Language" in err


def test_unsupported_op_is_one_line(tmp_path: Path, pocl_device, capsys):
    model = save_model(
        tmp_path / "quant.onnx",
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4, 3, 3])],
        [
            numpy_helper.from_array(np.array(0.1, np.float32), "s"),
            numpy_helper.from_array(np.array(3, np.uint8), "z"),
        ],
    )
    status, _, err = run([str(model)], capsys)
    assert_one_line_error(status, err, "node 'q' (QuantizeLinear)")


@pytest.mark.parametrize(
    "extra, message, code",
    [
        (["--reference", "--fp16"], "--fp16 applies to the OpenCL run", 2),
        (["--repeat", "0"], "--repeat expects N >= 1", 2),
        (["-p", "onnx-to-texture{"], "-p onnx-to-texture{: Expected argument name here", 1),
        (["-p", "onnx-to-texture{storage=f8}"], "storage is f32 or f16, not f8", 1),
    ],
)
def test_bad_options_are_one_line(chain: Path, pocl_device, capsys, extra, message, code):
    status, _, err = run([str(chain), *extra], capsys)
    assert_one_line_error(status, err, message, code)


def test_opencl_targets_print_the_plan(chain: Path, capsys):
    pipeline = "select-layouts,onnx-to-texture,texture-to-ocl,cse"
    with pytest.raises(SystemExit) as exit_info:
        mobile_opt.main([str(chain), "-p", pipeline, "-t", "opencl"])
    assert exit_info.value.code == 0
    source, _ = capsys.readouterr()
    assert "__kernel void eltwise_0(" in source
    assert source.rstrip().endswith("*/")
    with_source = parse_plan_comment(source)
    with pytest.raises(SystemExit) as exit_info:
        mobile_opt.main([str(chain), "-p", pipeline, "-t", "opencl-plan"])
    assert exit_info.value.code == 0
    plan_only, _ = capsys.readouterr()
    assert json.loads(plan_only) == with_source
    assert [launch["kernel"] for launch in with_source["launches"]] == ["eltwise_0"]
    with pytest.raises(SystemExit) as exit_info:
        mobile_opt.main([str(chain), "-t", "opencl-plan"])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 1 and "the module is not lowered" in err


def test_intel_cpu_runtime_when_installed(chain: Path):
    """`--device intel` uses the pip Intel CPU runtime (real half); skipped without it."""
    from mobile_opt.backends.opencl.devices import intel_cpu_runtime

    if intel_cpu_runtime() is None:
        pytest.skip("the Intel CPU OpenCL runtime is not installed (pip install intel-opencl-rt)")
    # a fresh process: the ICD loader reads OCL_ICD_VENDORS at its first platform query
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mobile_opt.tools.mobile_run",
            str(chain),
            "--device",
            "intel",
            "--fp16",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert "Intel(R) OpenCL" in first and "; cl_khr_fp16)" in first and "[fp16 storage]" in first


def test_a_platform_name_wins_over_a_device_name(monkeypatch):
    """On an Intel host PoCL's CPU device is called "...Intel(R) Xeon(R)...": `--device
    intel` still means Intel's runtime, listed after it or not."""
    from mobile_opt.backends.opencl import devices

    def info(platform, name):
        return devices.DeviceInfo(None, platform, name, "CPU", 16384, 16384, False)

    pocl = info(devices.POCL_PLATFORM, "pthread-skylake-avx512-Intel(R) Xeon(R) Processor")
    intel = info("Intel(R) OpenCL", "Intel(R) Xeon(R) Processor")
    monkeypatch.setattr(devices, "available_devices", lambda: [pocl, intel])
    monkeypatch.setattr(devices, "build_problem", lambda _: None)
    assert devices.choose_device("intel") is intel
    assert devices.choose_device("xeon") is pocl  # only device names match: the first
    assert devices.choose_device("pocl") is pocl
