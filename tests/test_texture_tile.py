"""
`texture-tile` and `prune-configs`: every configuration of the space computes the same
product (run on PoCL against numpy), the pruning criteria of Romou's Table 1, the
searches, and the default GPU pipeline's use of the model.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.context import Context

from mobile_opt.backends.opencl.devices import choose_device
from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.tools.tuning import measure, random_feeds
from mobile_opt.dialects.texture import Layout, pack
from mobile_opt.dialects.texture.layouts import pixel_coordinates
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.models import texture_kernels
from mobile_opt.models.texture_kernels import MatMulKernel
from mobile_opt.models.tmmodel import FEATURES
from mobile_opt.pipelines import apply, gpu_pipeline
from mobile_opt.transforms.prune_configs import (
    HardwareLimits,
    kernel_of,
    prune_reason,
    surviving,
)
from mobile_opt.transforms.texture_tile import TextureTilePass
from mobile_opt.dialects.onnx import ONNX
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.parser import Parser

SOURCE = """
builtin.module {
  func.func @main_graph(%a: tensor<40x36xf32>, %b: tensor<36x24xf32>) -> tensor<40x24xf32> {
    %y = onnx.MatMul %a, %b : (tensor<40x36xf32>, tensor<36x24xf32>) -> tensor<40x24xf32> loc("mm")
    func.return %y : tensor<40x24xf32>
  }
}
"""
SHAPE = MatMulKernel(40, 36, 24)


def _module(source: str = SOURCE):
    ctx = Context()
    for dialect in (Builtin, Func, ONNX):
        ctx.load_dialect(dialect)
    return Parser(ctx, source).parse_module()


def _run(module, device) -> np.ndarray:
    """The module through the GPU pipeline, its recorded configurations as they are."""
    feeds = random_feeds(module, seed=5)
    passes, _ = gpu_pipeline("", choose_device("pocl"), tile=False)
    apply(module, passes)
    got = CompiledModel(module, device).run(feeds).outputs
    return next(iter(got.values())), feeds


def test_every_configuration_computes_the_product(pocl_device):
    device = choose_device("pocl")
    space = list(texture_kernels.candidates(SHAPE, 64))
    rows = {c.rows for c in space}
    assert rows == {1, 2, 4, 8} and any(c.group for c in space)
    picked = [c for c in space if c.group in (None, (2, 4), (6, 5), (3, 10), (1, 1))]
    assert len(picked) >= 8
    for config in picked:
        module = _module()
        node = next(op for op in module.walk() if op.name == "onnx.MatMul")
        config.apply(node)
        got, feeds = _run(module, device)
        a, b = feeds.values()
        want = a @ b
        assert np.allclose(got, want, rtol=1e-4, atol=1e-4), config.describe()


GEMM_TRANS_B = """
builtin.module {
  func.func @main_graph(%a: tensor<33x17xf32>, %b: tensor<9x17xf32>,
                        %c: tensor<9xf32>) -> tensor<33x9xf32> {
    %y = onnx.Gemm %a, %b, %c {transB = 1 : i64}
      : (tensor<33x17xf32>, tensor<9x17xf32>, tensor<9xf32>) -> tensor<33x9xf32> loc("mm")
    func.return %y : tensor<33x9xf32>
  }
}
"""


@pytest.mark.parametrize("source, trans_b", [(SOURCE, False), (GEMM_TRANS_B, True)])
def test_every_access_pattern_computes_the_product(pocl_device, source, trans_b):
    """B packed by the host in each layout (axpy and dot forms, ragged K and N)."""
    device = choose_device("pocl")
    for layout in texture_kernels.B_LAYOUTS:
        for tile in ((1, 1), (1, 4)):
            module = _module(source)
            node = next(op for op in module.walk() if op.name in ("onnx.MatMul", "onnx.Gemm"))
            kernel = kernel_of(node)
            assert kernel.trans_b == trans_b and kernel.layouts() == texture_kernels.B_LAYOUTS
            TileConfig(tile, None, layout).apply(node)
            got, feeds = _run(module, device)
            a, b, *c = feeds.values()
            want = a @ (b.T if trans_b else b) + sum(c)
            assert np.allclose(got, want, rtol=1e-4, atol=1e-4), (layout, tile)


def test_only_a_host_packed_b_takes_a_pattern():
    module = _module(SOURCE.replace("%y = onnx.MatMul %a, %b", "%y = onnx.MatMul %a, %r").replace(
        "    %y", "    %r = onnx.Relu %b : (tensor<36x24xf32>) -> tensor<36x24xf32>\n    %y", 1))
    node = next(op for op in module.walk() if op.name == "onnx.MatMul")
    assert kernel_of(node).layouts() == (None,)
    assert {c.layout for c in texture_kernels.candidates(kernel_of(node), 64)} == {None}
    weights = kernel_of(next(op for op in _module().walk() if op.name == "onnx.MatMul"))
    space = list(texture_kernels.candidates(weights, 64))
    assert {c.layout for c in space} == set(texture_kernels.B_LAYOUTS)
    assert len(space) == 5 * len([c for c in space if c.layout is None])


def test_patterns_the_model_sees():
    """B's trace per layout: where its pixels lie, the reuse and the dot form's registers."""
    kernel = MatMulKernel(64, 64, 64, False, texture_kernels.B_LAYOUTS)
    column = kernel.model_inputs(TileConfig((1, 4)))
    strips = {layout: kernel.model_inputs(TileConfig((1, 4), None, layout))
              for layout in texture_kernels.B_LAYOUTS[1:]}
    assert column.inputs[1].reuse_lines == 0  # one-pixel column: the warp fills the lines
    assert all(s.inputs[1].reuse_lines == 2 for s in strips.values())
    assert strips[Layout.COLS4].footprint == column.footprint + 12 * 4  # a float4 per lane
    assert strips[Layout.BLOCK4].footprint == column.footprint
    features = dict(zip(FEATURES, column.inputs[1].features))
    assert features["x2x2"] == 0 and features["y2x2"] > 0.4  # down a column: crosses along y
    block2 = dict(zip(FEATURES, strips[Layout.BLOCK2].inputs[1].features))
    assert block2["x2x2"] == 0 and block2["y2x2"] < features["y2x2"]
    block4 = dict(zip(FEATURES, strips[Layout.BLOCK4].inputs[1].features))
    # four pixels along a row a step: a new row each step, not each read
    assert block4["x2x2"] > 0.4 and block4["y4x4"] < features["y4x4"] / 2
    # the same pixels, transposed content: cols4 reads where block4 does
    assert np.allclose(strips[Layout.COLS4].inputs[1].features,
                       strips[Layout.BLOCK4].inputs[1].features)


@pytest.mark.parametrize("layout", [Layout.ROWS4, Layout.COLS4, Layout.BLOCK2, Layout.BLOCK4,
                                    Layout.BLOCK8])
def test_pixel_coordinates_follow_the_layout(layout):
    array = np.arange(1, 11 * 7 + 1, dtype=np.float64).reshape(11, 7)
    pixels = pack(layout, array)
    where = pixel_coordinates(layout, array.shape)
    for (i, j), value in np.ndenumerate(array):
        x, y = where[i, j]
        assert value in pixels[y, x]


def test_a_pattern_survives_the_attribute_round_trip():
    config = TileConfig((1, 8), (4, 2), Layout.BLOCK4)
    assert TileConfig.from_attribute(config.attribute()) == config
    assert config.describe() == "T=1x8 G=4x2 B=block4"
    assert TileConfig.from_attribute(TileConfig((1, 2)).attribute()).layout is None


def test_groups_tile_the_range():
    for config in texture_kernels.candidates(SHAPE, 64):
        gx, gy = SHAPE.global_size(config)
        if config.group:
            assert gx % config.group[0] == 0 and gy % config.group[1] == 0
            assert config.group[0] * config.group[1] <= 64


def test_pruning_criteria():
    limits = HardwareLimits(warp=32, registers_per_core=4096, l1_bytes=16384, max_group=1024)
    described = MatMulKernel(256, 256, 256).model_inputs(TileConfig((1, 4)))
    assert described.footprint == 4 * 4 + 4 * 4 + 24 and described.loaded_bytes == 16 * 8
    assert prune_reason(limits, described, TileConfig((1, 4), (4, 4))) == "warp"
    assert prune_reason(limits, described, TileConfig((1, 4), (32, 4))) == "registers"
    roomy = HardwareLimits(32, 2**20, 16384, 1024)
    assert prune_reason(roomy, described, TileConfig((1, 4), (32, 8))) == "L1"
    assert prune_reason(roomy, described, TileConfig((1, 4), (32, 2))) is None
    assert prune_reason(limits, described, TileConfig((1, 4))) is None  # the driver's group
    kept = surviving(limits, MatMulKernel(256, 256, 256),
                     texture_kernels.candidates(MatMulKernel(256, 256, 256), 1024))
    assert kept and all(prune_reason(limits, MatMulKernel(256, 256, 256).model_inputs(c), c)
                        is None for c in kept)


def _matmul_onnx(folder) -> str:
    """A one-MatMul model (node `mm`, [16, 8] x [8, 16]) saved in `folder`."""
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [16, 8]),
                      helper.make_tensor_value_info("B", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [16, 16])])
    path = folder / "mm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return str(path)


def test_random_search_takes_the_fastest_it_measured(pocl_device, tmp_path, monkeypatch):
    """mobile-tune's random search: `samples` candidates measured, the fastest recorded."""
    from mobile_opt.tools import mobile_tune, tuning

    seen = {}

    def fake_measure(module, node, configs, device, **_):
        results = [tuning.Measurement(c, 1.0 + i, 0.0) for i, c in enumerate(configs)]
        seen["configs"] = configs
        return list(reversed(results))

    monkeypatch.setattr(tuning, "measure", fake_measure)
    monkeypatch.setattr(tuning, "retime", lambda module, node, configs, device, **_:
                        fake_measure(module, node, configs, device)[::-1])
    mlir = tmp_path / "tuned.mlir"
    with pytest.raises(SystemExit) as exit:
        mobile_tune.main([_matmul_onnx(tmp_path), "--search", "random", "--samples", "3",
                          "--seed", "1", "-o", str(tmp_path / "t.json"),
                          "--save-mlir", str(mlir)])
    assert exit.value.code == 0
    node = next(op for op in _module(mlir.read_text()).walk() if op.name == "onnx.MatMul")
    assert len(seen["configs"]) == 3 and TileConfig.of(node) == seen["configs"][0]


def test_measure_times_the_node(pocl_device):
    results = measure(_module(), "mm", [TileConfig((1, 2)), TileConfig((1, 8), (2, 5))],
                      choose_device("pocl"), repeat=1)
    assert all(r.seconds > 0 and r.cost_seconds > r.seconds for r in results)


def test_time_kernels_gives_each_kernel_its_launch_and_runs(pocl_device):
    """CDMPP's samples: the node's kernel under each configuration, with the group it was
    launched in and each run's time."""
    from mobile_opt.tools.tuning import time_kernels

    configs = [TileConfig((1, 2)), TileConfig((1, 8), (2, 5))]
    timings = list(time_kernels(_module(), "mm", configs, choose_device("pocl"), repeat=3))
    assert [t.config for t in timings] == configs
    assert [t.local_size for t in timings] == [None, (2, 5)]
    assert all(len(t.seconds) == 3 and min(t.seconds) > 0 for t in timings)
    assert all(t.kernel.sym_name.data.startswith("matmul") for t in timings)


@pytest.mark.parametrize("reason", ["OUT_OF_RESOURCES", "INVALID_WORK_GROUP_SIZE"])
def test_a_launch_the_driver_refuses_is_no_measurement(reason, monkeypatch):
    """A configuration the driver will not launch (NVIDIA's INVALID_WORK_GROUP_SIZE for a
    group too large for the kernel's registers) is never picked, and no sample; any other
    failure still stops the measurement."""
    from mobile_opt.backends.opencl.executor import OpenCLRunError
    from mobile_opt.tools import tuning

    class Refused:
        def run(self, feeds):
            raise OpenCLRunError(f"launching matmul_0 failed: clEnqueueNDRangeKernel failed: "
                                 f"{reason}")

        def with_local_size(self, launches, local_size):
            return self

    assert tuning._node_seconds(Refused(), {}, "mm") == math.inf
    monkeypatch.setattr(tuning, "_build", lambda *args: Refused())
    assert list(tuning.time_kernels(_module(), "mm", [TileConfig((1, 2))], None)) == []

    class Broken:
        def run(self, feeds):
            raise OpenCLRunError("launching matmul_0 failed: INVALID_KERNEL_ARGS")

    with pytest.raises(OpenCLRunError):
        tuning._node_seconds(Broken(), {}, "mm")


def test_configurations_of_one_tile_share_a_build(pocl_device, monkeypatch):
    """A work group is only a launch parameter: one build per (tile, layout), each
    configuration launched in its own group, computing the same product."""
    from mobile_opt.tools import tuning
    from mobile_opt.backends.opencl.executor import OpenCLRunError

    device = choose_device("pocl")
    built, launched = [], []
    real_build = tuning._build
    monkeypatch.setattr(tuning, "_build", lambda module, node, config, dev:
                        built.append(config) or real_build(module, node, config, dev))
    real_time = tuning._node_seconds

    def node_seconds(compiled, feeds, node):
        launched.append([local for _, _, _, local in compiled._launches])
        outputs.append(next(iter(compiled.run(feeds).outputs.values())))
        return real_time(compiled, feeds, node)

    outputs = []
    monkeypatch.setattr(tuning, "_node_seconds", node_seconds)
    configs = [TileConfig((1, 2), g) for g in (None, (2, 4), (6, 5), (3, 10))]
    configs += [TileConfig((1, 4), (2, 2)), TileConfig((1, 4), (6, 5), Layout.BLOCK4)]
    measure(_module(), "mm", configs, device, repeat=1)
    assert built == [TileConfig((1, 2)), TileConfig((1, 4)), TileConfig((1, 4), None,
                                                                          Layout.BLOCK4)]
    assert launched[::2] == [[c.group] for c in configs]  # a warm-up run, then one
    feeds = random_feeds(_module())
    a, b = feeds.values()
    assert all(np.allclose(o, a @ b, rtol=1e-4, atol=1e-4) for o in outputs)
    base = real_build(_module(), "mm", TileConfig((1, 2)), device)
    with pytest.raises(OpenCLRunError, match=r"work group \[4, 4\] does not tile the range"):
        base.with_local_size(lambda launch: True, (4, 4))


def test_retime_interleaves_the_configurations(pocl_device, monkeypatch):
    from mobile_opt.tools import tuning

    order = []
    real = tuning._node_seconds
    monkeypatch.setattr(tuning, "_node_seconds",
                        lambda compiled, feeds, node: order.append(compiled) or
                        real(compiled, feeds, node))
    configs = [TileConfig((1, 2)), TileConfig((1, 8), (2, 5))]
    results = tuning.retime(_module(), "mm", configs, choose_device("pocl"), rounds=2)
    assert [r.config for r in results] == configs
    assert all(0 < r.seconds < r.cost_seconds for r in results)
    # a round runs each configuration once before the next round begins
    assert len(order) == 6 and order[0] is order[2] is order[4] and order[1] is order[3]


def test_a_measured_search_confirms_its_leaders(pocl_device, monkeypatch):
    from mobile_opt.tools import tuning

    configs = [TileConfig((1, t), (2, 4)) for t in (1, 2, 4, 8)]
    scan_times = {c: 1.0 + i for i, c in enumerate(configs)}  # the scan favours the first
    monkeypatch.setattr(tuning, "measure", lambda module, node, pool, device, **_: [
        tuning.Measurement(c, scan_times[c], 0.5) for c in pool])
    again = []
    monkeypatch.setattr(tuning, "retime", lambda module, node, pool, device, **_: again.extend(
        pool) or [tuning.Measurement(c, 2.0 if c == configs[0] else 1.5, 0.25) for c in pool])
    scan, best = tuning.fastest(_module(), "mm", configs, choose_device("pocl"))
    assert again == configs[:tuning.CONFIRMED_FASTEST] and len(scan) == 4
    # timed again, the scan's fastest is not: the next one wins
    assert best.config == configs[1] and best.seconds == 1.5 and best.cost_seconds == 1.0


def test_default_gpu_pipeline_uses_the_model(pocl_device):
    """With images, the default pipeline tiles by TMModel (on PoCL's profile); PoCL's own
    default, buffers, runs the wide kernels, which take no configuration."""
    device = choose_device("pocl")
    passes, _ = gpu_pipeline("onnx-canonicalize", device, fp16=False)
    assert not any(isinstance(p, TextureTilePass) for p in passes)
    passes, _ = gpu_pipeline("onnx-canonicalize,onnx-to-texture{buffers=false}", device,
                             fp16=False)
    tiles = [p for p in passes if isinstance(p, TextureTilePass)]
    assert len(tiles) == 1 and tiles[0].device == "pocl" and tiles[0].cost_model == "tmmodel"
    names = [p.name for p in passes]
    assert names.index("texture-tile") < names.index("onnx-to-texture")


def test_mobile_tune_measures_and_records(pocl_device, tmp_path, capsys):
    import json

    from mobile_opt.tools import mobile_tune

    model = _matmul_onnx(tmp_path)
    out, mlir = tmp_path / "tuned.json", tmp_path / "tuned.mlir"
    with pytest.raises(SystemExit) as exit:
        mobile_tune.main([str(model), "--search", "random", "--samples", "3", "-o", str(out),
                          "--save-mlir", str(mlir)])
    assert exit.value.code == 0
    report = json.loads(out.read_text())
    entry = report["nodes"][0]
    assert entry["node"] == "mm" and entry["measured"] == 3 and len(entry["configs"]) == 3
    # the best is one of the measured, with the time it was timed again at
    assert entry["best"] in {c["config"] for c in entry["configs"]} and entry["best_ms"] > 0
    assert "texture.tile" in mlir.read_text()
    # the default pipeline keeps the tuned configuration
    from mobile_opt.tools.mobile_run import main as mobile_run

    with pytest.raises(SystemExit) as exit:
        mobile_run([str(mlir), "--save-dir", str(tmp_path / "run")])
    assert exit.value.code == 0
    plan = json.loads((tmp_path / "run" / "plan.json").read_text())
    best = entry["best"]
    rows = int(best.split("x")[1].split()[0])
    assert plan["launches"][0]["global_size"][1] == 16 // rows


@pytest.mark.parametrize("args, message, code", [
    (["--samples", "0", "--search", "random"], "--samples must be at least 1, not 0", 2),
    (["--save-mlir", "/nonexistent-folder/t.mlir"], "folder /nonexistent-folder does not exist",
     1),
])
def test_mobile_tune_checks_options_before_measuring(pocl_device, tmp_path, capsys, args,
                                                     message, code):
    from mobile_opt.tools import mobile_tune

    with pytest.raises(SystemExit) as exit:
        mobile_tune.main([str(tmp_path / "none.onnx"), "-o", str(tmp_path / "t.json"), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == code and len(err) == 1 and message in err[0]
    assert not (tmp_path / "t.json").exists()


def test_mobile_tune_without_products_is_one_line(pocl_device, tmp_path, capsys):
    import onnx
    from onnx import TensorProto, helper

    from mobile_opt.tools import mobile_tune

    node = helper.make_node("Relu", ["A"], ["Y"], name="r")
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("A", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])])
    model = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), model)
    with pytest.raises(SystemExit) as exit:
        mobile_tune.main([str(model), "-o", str(tmp_path / "t.json")])
    assert exit.value.code == 1
    assert "no node texture-tile can configure" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()


def test_mobile_run_tiles_products_and_matches_onnxruntime(pocl_device, tmp_path, capsys):
    """The default pipeline's TMModel choices compute what onnxruntime computes."""
    import json

    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from mobile_opt.tools.mobile_run import main as mobile_run

    rng = np.random.default_rng(9)
    weight = numpy_helper.from_array(rng.standard_normal((24, 40)).astype(np.float32), "W")
    bias = numpy_helper.from_array(rng.standard_normal((24,)).astype(np.float32), "C")
    nodes = [helper.make_node("MatMul", ["A", "B"], ["P"], name="mm"),
             helper.make_node("Gemm", ["P", "W", "C"], ["Y"], name="gemm", transB=1)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [48, 32]),
                     helper.make_tensor_value_info("B", TensorProto.FLOAT, [32, 40])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [48, 24])], [weight, bias])
    model = tmp_path / "products.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), model)
    with pytest.raises(SystemExit) as exit:
        mobile_run([str(model), "--save-dir", str(tmp_path / "run"),
                    "-p", "onnx-fuse,onnx-to-texture{buffers=false}"])
    out = capsys.readouterr().out
    assert exit.value.code == 0 and "PASS" in out
    launches = json.loads((tmp_path / "run" / "plan.json").read_text())["launches"]
    assert all(launch["local_size"] for launch in launches)  # the model set every group
