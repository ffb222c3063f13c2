"""
The roofline report (issue 22): FLOP counts of the ONNX ops against hand-computed ones,
the work the host plan records per launch, the roofs and bounds, `mobile-run
--profile-kernels` and `--roofline` on a shipped model, `bench/e2e.py --roofline`, and
the peak-FLOP/s probe on PoCL.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from harness import REPO, assert_one_line_error, lower_for_pocl, run_mobile_run
from onnx import TensorProto, helper, numpy_helper, save

from mobile_opt.backends.opencl.devices import choose_device
from mobile_opt.backends.opencl.plan import build_plan
from mobile_opt.backends.opencl.probe import archprobe
from mobile_opt.backends.opencl.probe.runner import Runner
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.models.device_profile import PROFILE_DIR, load_profile
from mobile_opt.models.roofline import LaunchWork, Peaks, kernel_flops, op_flops
from mobile_opt.tools import mobile_probe, roofline_report


def save_graph(path: Path, nodes, inputs, output, weights=()) -> Path:
    """A one-output float model of `nodes` with inputs and output given as (name, shape)."""
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(output[0], TensorProto.FLOAT, output[1])],
        initializer=[numpy_helper.from_array(w, n) for n, w in weights],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                           ir_version=10), path)
    return path


def onnx_ops(path: Path) -> dict[str, object]:
    """The imported model's onnx ops by op type."""
    return {op.name.split(".", 1)[1]: op for op in import_onnx(str(path)).walk()
            if op.name.startswith("onnx.") and op.name not in ("onnx.Weight", "onnx.Constant")}


def weight(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)


# ---------------------------------------------------------------- FLOP counts


def test_batched_matmul_counts_2mnk_per_batch(tmp_path: Path):
    path = save_graph(tmp_path / "mm.onnx", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                      [("a", [2, 3, 4, 5]), ("b", [5, 6])], ("y", [2, 3, 4, 6]))
    assert op_flops(onnx_ops(path)["MatMul"]) == 2 * (2 * 3) * 4 * 6 * 5


@pytest.mark.parametrize("trans_a, a_shape", [(0, [4, 5]), (1, [5, 4])])
def test_gemm_counts_2mnk_whichever_way_a_lies(tmp_path: Path, trans_a, a_shape):
    node = helper.make_node("Gemm", ["a", "w", "c"], ["y"], transA=trans_a, alpha=0.5)
    path = save_graph(tmp_path / "gemm.onnx", [node], [("a", a_shape)], ("y", [4, 6]),
                      [("w", weight(5, 6)), ("c", weight(6))])
    assert op_flops(onnx_ops(path)["Gemm"]) == 2 * 4 * 6 * 5  # M=4, N=6, K=5; bias left out


@pytest.mark.parametrize("group, strides, pads, out_hw", [
    (1, [1, 1], [1, 1, 1, 1], 10),  # same size
    (2, [2, 2], [1, 1, 1, 1], 5),  # grouped and strided: floor((10 + 2 - 3) / 2) + 1
    (8, [1, 1], [0, 0, 0, 0], 8),  # depthwise, unpadded
])
def test_conv_counts_2_n_cout_hw_cin_per_group_kernel(tmp_path: Path, group, strides, pads,
                                                      out_hw):
    cout = 8 if group == 8 else 12
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=group, strides=strides, pads=pads)
    path = save_graph(tmp_path / "conv.onnx", [node], [("x", [2, 8, 10, 10])],
                      ("y", [2, cout, out_hw, out_hw]), [("w", weight(cout, 8 // group, 3, 3))])
    conv = onnx_ops(path)["Conv"]
    assert op_flops(conv) == 2 * 2 * cout * out_hw * out_hw * (8 // group) * 3 * 3


def test_fused_epilogue_and_other_ops(tmp_path: Path):
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Reshape", ["g", "shape"], ["y"]),
    ]
    path = save_graph(tmp_path / "net.onnx", nodes, [("x", [1, 3, 9, 9])], ("y", [1, 4]),
                      [("w", weight(4, 3, 3, 3)), ("shape", np.array([1, 4], np.int64))])
    ops = onnx_ops(path)
    conv = 2 * (4 * 9 * 9) * 3 * 3 * 3
    assert kernel_flops(ops["Conv"], [ops["Relu"]]) == conv + 4 * 9 * 9
    assert op_flops(ops["MaxPool"]) == (4 * 4 * 4) * 9  # one per window element of an output
    assert op_flops(ops["GlobalAveragePool"]) == 4 * 4 * 4  # one per input element
    assert op_flops(ops["Reshape"]) == 0


def test_the_plan_carries_each_launchs_flops_and_bytes(tmp_path: Path):
    """A fused Conv + Relu kernel counts both; its bytes are its arguments' storage."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["y"])]
    path = save_graph(tmp_path / "conv_relu.onnx", nodes, [("x", [1, 3, 8, 8])],
                      ("y", [1, 4, 4, 4]), [("w", weight(4, 3, 3, 3))])
    plan = build_plan(lower_for_pocl(path, ["onnx-fuse"]))
    (launch,) = plan.launches
    assert launch.flops == 2 * (4 * 4 * 4) * 3 * 3 * 3 + 4 * 4 * 4
    slots = {s.value: s for s in plan.storage}
    assert launch.nbytes == sum(slots[a["value"]].nbytes for a in launch.args) > 0
    assert plan.to_json()["launches"][0]["flops"] == launch.flops


# ---------------------------------------------------------------- roofs and the table


def test_roofs_and_bounds():
    peaks = Peaks("device", 100.0, 10.0, 2.0)
    assert peaks.gbs(["buffer"]) == 10.0 and peaks.gbs(["image"]) == 2.0
    assert peaks.gbs(["buffer", "image"]) == peaks.gbs() == 10.0  # unsure: the larger
    assert peaks.ridge(["buffer"]) == 10.0 and peaks.ridge(["image"]) == 50.0
    low = LaunchWork("k", "", 1e-3, 5_000_000, 1_000_000, ("buffer",))
    high = LaunchWork("k", "", 1e-3, 20_000_000, 1_000_000, ("buffer",))
    assert low.intensity == 5.0 and low.gflops == 5.0 and low.gbs == 1.0
    assert low.bound(peaks) == "memory" and high.bound(peaks) == "compute"
    assert LaunchWork("k", "", 1e-3, 20_000_000, 1_000_000, ("image",)).bound(peaks) == "memory"
    assert low.bound(Peaks("device", None, 10.0, 2.0)) is None


def test_table_without_a_peak_flops_says_so():
    works = [LaunchWork("conv_0", "node 'c' (Conv)", 2e-3, 4_000_000, 1_000_000, ("buffer",))]
    measured = roofline_report.table(works, Peaks("d", 100.0, 10.0, None), "p").splitlines()
    assert measured[0].split()[-1] == "bound" and "% peak FLOP/s" in measured[0]
    assert measured[1].split()[-3:] == ["2.0", "5.0", "memory"]  # 2 GFLOP/s, 0.5 GB/s
    unmeasured = roofline_report.table(works, Peaks("d", None, 10.0, None), "p").splitlines()
    assert "% peak FLOP/s" not in unmeasured[0] and "bound" not in unmeasured[0]
    assert "% peak B/s" in unmeasured[0] and unmeasured[1].split()[-1] == "5.0"
    assert unmeasured[-1].startswith("profile 'p' has no peak FLOP/s")


# ---------------------------------------------------------------- mobile-run and the bench

ROW = re.compile(r"^(\w+_(\d+))\s")


def test_profile_kernels_and_roofline_on_a_shipped_model(pocl_device, tmp_path: Path, capsys):
    png = tmp_path / "roofline.png"
    status, out, err = run_mobile_run(["onnx:squeezenet", "--device", "pocl",
                                       "--profile-kernels", "--roofline", str(png)], capsys)
    assert status == 0, err
    launches = int(re.search(r"total \((\d+) launches\)", out).group(1))
    table = out[out.index("roofline per launch"):].splitlines()[1:]
    header = table[0]
    assert header.split()[:6] == ["kernel", "onnx", "node(s)", "us", "GFLOP/s", "GB/s"]
    assert "% peak FLOP/s" in header and header.split()[-1] == "bound"
    rows = [line for line in table[1:] if ROW.match(line)]
    assert len(rows) == launches > 10
    assert [int(ROW.match(r).group(2)) for r in rows] == sorted(
        int(ROW.match(r).group(2)) for r in rows)  # program order
    gflops = {ROW.match(r).group(1): float(r.split(")")[1].split()[1]) for r in rows}
    assert all(v > 0 for k, v in gflops.items() if not k.startswith("reshape"))
    assert any(r.split()[-1] == "compute" for r in rows)
    assert table[launches + 1].startswith(f"total ({launches} launches)")
    assert "peaks of profile 'pocl'" in table[launches + 2]
    assert png.read_bytes().startswith(b"\x89PNG")
    pixels = matplotlib.image.imread(png)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 500


def test_roofline_applies_to_the_opencl_run(tmp_path: Path, capsys):
    status, _, err = run_mobile_run(["--reference", "onnx:squeezenet", "--roofline",
                                     str(tmp_path / "r.png")], capsys)
    assert_one_line_error(status, err, "--roofline applies to the OpenCL run of one model",
                          code=2)
    status, _, err = run_mobile_run(["onnx:squeezenet", "--roofline",
                                     str(tmp_path / "none" / "r.png")], capsys)
    assert_one_line_error(status, err, "does not exist")


def test_bench_e2e_saves_a_roofline_per_model(pocl_device, tmp_path: Path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    model = save_graph(tmp_path / "tiny.onnx", nodes, [("x", [1, 8, 16, 16])],
                       ("y", [1, 8, 16, 16]), [("w", weight(8, 8, 3, 3))])
    out, plots = tmp_path / "e2e.json", tmp_path / "plots"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "e2e.py"), "--device", "pocl", "--models",
         str(model), "--repeat", "2", "--roofline", str(plots), "--out", str(out)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(out.read_text())["rows"]
    assert row["status"] == "ok", row
    (launch,) = row["roofline"]
    assert launch["flops"] == 2 * 8 * 16 * 16 * 8 * 3 * 3 + 8 * 16 * 16
    assert launch["gflops"] > 0 and launch["gbs"] > 0 and launch["peak_gflops"] > 0
    assert launch["bound"] in ("compute", "memory")
    assert (plots / "tiny.png").read_bytes().startswith(b"\x89PNG")


# ---------------------------------------------------------------- the peak-FLOP/s probe


def test_peak_flops_probe_on_pocl(pocl_device):
    sweep, result = archprobe.probe_peak_flops(Runner(choose_device("pocl")),
                                               archprobe.Effort(quick=True))
    assert result["peak_gflops"] > 0
    assert result["peak_gflops"] == max(result["gflops_by_width"].values())
    assert len(sweep.series) == len(archprobe.FMA_WIDTHS)
    assert all(rate > 0 for points in sweep.series.values() for _, rate in points)


def test_peak_flops_update_of_a_profile(pocl_device, tmp_path: Path, capsys):
    out = tmp_path / "pocl.json"
    earlier = load_profile("pocl")
    del earlier["compute"]["peak_gflops"]  # to be measured again
    out.write_text(json.dumps(earlier))
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "peak-flops", "--quick", "--update", "-o", str(out)])
    assert exit.value.code == 0
    profile = json.loads(out.read_text())
    assert profile["compute"]["peak_gflops"] > 0
    assert profile["identity"]["reprobed"]["peak-flops"] == datetime.date.today().isoformat()
    assert profile["bandwidth_gbs"] == earlier["bandwidth_gbs"]  # the rest as it was
    assert "peak fp32" in capsys.readouterr().out


def test_shipped_pocl_profile_has_its_peak():
    assert json.loads((PROFILE_DIR / "pocl.json").read_text())["compute"]["peak_gflops"] > 0
    assert Peaks.of_profile(load_profile("pocl")).ridge(["buffer"]) > 1
