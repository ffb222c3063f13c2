"""
The blocked product as configurations `texture-tile` chooses among: the recorded block
(`texture.tile`) round-trips and is checked, TMModel describes blocked kernels and picks
them for large products and convs on the H100's profile (not for small ones, and not in
buffers), and `onnx-to-texture` realises a recorded plan rather than its fixed rule (run on
PoCL in images against onnxruntime).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from harness import POCL_LIMITS
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, i64
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt import pipelines
from mobile_opt.backends.opencl.devices import choose_device
from mobile_opt.backends.opencl.executor import CompiledModel
from mobile_opt.checking import make_inputs, relative_error, run_onnxruntime
from mobile_opt.dialects import ocl
from mobile_opt.dialects.texture.tiling import (
    GEMM_BLOCKS,
    GemmPlan,
    TileConfig,
    gemm_plans,
    plan_gemm,
)
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.models import texture_kernels, tmmodel
from mobile_opt.models.device_profile import load_profile, texture_constants
from mobile_opt.models.texture_kernels import ConvKernel, MatMulKernel, TMModel
from mobile_opt.reference.interpreter import describe_location, find_function
from mobile_opt.transforms.prune_configs import HardwareLimits, kernel_of, surviving

SMALL = GEMM_BLOCKS[-1]  # 64x64x16, 4x4 a work-item


def test_a_block_survives_the_attribute_round_trip():
    for plan in (GemmPlan(GEMM_BLOCKS[0]), GemmPlan(SMALL, 4)):
        config = TileConfig.blocked(plan)
        assert TileConfig.from_attribute(config.attribute()) == config
    config = TileConfig.blocked(GemmPlan(SMALL, 4))
    assert config.tile == (1, 4) and config.group == (16, 16)
    assert config.describe() == "T=1x4 G=16x16 block=64x64x16/4x4 split=4"
    # the block alone says the rest
    only = DictionaryAttr({"block": DenseArrayBase.from_list(i64, (128, 128, 8, 8, 8))})
    assert TileConfig.from_attribute(only) == TileConfig.blocked(GemmPlan(GEMM_BLOCKS[1]))


@pytest.mark.parametrize("block, entries, message", [
    ((64, 64, 16, 4, 6), {}, "tm and tn must be multiples of 4"),
    ((64, 64, 8, 4, 4), {}, "must stage whole pixels of A (128) and B (128)"),
    ((64, 64, 16, 4), {}, "block must be array<i64: bm, bn, bk, tm, tn>"),
    ((64, 64, 16, 4, 4), {"tile": (1, 8)}, "takes tile [1, 4] and group [16, 16]"),
    ((64, 64, 16, 0, 4), {}, "its sizes must be positive"),
])
def test_an_invalid_block_is_a_clear_error(block, entries, message):
    attr = DictionaryAttr({"block": DenseArrayBase.from_list(i64, block),
                           **{k: DenseArrayBase.from_list(i64, v) for k, v in entries.items()}})
    with pytest.raises(DiagnosticException, match="texture.tile: .*" + message.replace(
            "[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)")):
        TileConfig.from_attribute(attr)


def test_the_fixed_rule_is_the_first_candidate():
    assert plan_gemm(2048, 2048, 2048) == GemmPlan(GEMM_BLOCKS[0])
    assert list(gemm_plans(2048, 2048, 2048)) == [GemmPlan(b) for b in GEMM_BLOCKS]
    # 196 x 256: 16 blocks of the smallest; K (2304) split into 8 (the rule) or 16 slices
    assert list(gemm_plans(196, 256, 2304, split=True)) == [GemmPlan(SMALL, 8),
                                                            GemmPlan(SMALL, 16)]
    assert plan_gemm(196, 256, 1152) is None and plan_gemm(8, 64, 64, split=True) is None


def _choice(kernel, profile: str = "nvidia-h100") -> tuple[TileConfig, float, float]:
    """The model's choice among the pruned space; the least cost blocked and one-pixel."""
    loaded = load_profile(profile)
    limits, model = HardwareLimits.of(loaded), TMModel(texture_constants(loaded))
    kept = surviving(limits, kernel, texture_kernels.candidates(kernel, limits.max_group))
    cost = {c: model.cost((kernel, c)) for c in kept}
    blocked = min((v for c, v in cost.items() if c.plan), default=math.inf)
    return model.choose(kernel, kept), blocked, min(v for c, v in cost.items() if not c.plan)


def _conv(channels: int, out: int, side: int, kernel: int, stride: int = 1):
    from mobile_opt.models.conv_shape import ConvShape

    pad = kernel // 2
    o = (side + 2 * pad - kernel) // stride + 1
    return ConvShape((1, channels, side, side), (1, out, o, o), (kernel, kernel),
                     (stride, stride), (1, 1), (pad, pad), 1, False)


def test_the_h100_model_blocks_large_products_and_convs():
    product = MatMulKernel(2048, 2048, 2048, plans=tuple(gemm_plans(2048, 2048, 2048)))
    config, blocked, one_pixel = _choice(product)
    assert config.plan is not None and blocked < one_pixel / 4
    # ResNet-50's 3x3 conv of 256 channels at 14x14: 64x64 blocks, K split
    geometry = _conv(256, 256, 14, 3)
    conv = ConvKernel(geometry, tuple(gemm_plans(196, 256, 9 * 256, split=True)))
    config, blocked, one_pixel = _choice(conv)
    assert config.plan is not None and config.plan.block == SMALL and config.plan.split > 1
    # a small product has no plan (too few blocks) and keeps a one-pixel tile
    small = MatMulKernel(8, 64, 64, plans=tuple(gemm_plans(8, 64, 64)))
    assert small.plans == () and _choice(small)[0].plan is None


def test_a_blocked_kernel_as_the_model_sees_it():
    plan = GemmPlan(GEMM_BLOCKS[1])  # 128x128x8, 8x8
    described = MatMulKernel(1024, 1024, 1024).model_inputs(TileConfig.blocked(plan))
    a, b = described.inputs
    # per K step one pixel of A and one of B a work-item; 128 steps
    assert (a.accesses, b.accesses) == (128, 128) and a.reuse_lines == b.reuse_lines == 0
    assert described.local_bytes == 2 * 8 * (128 + 128) // 4 * 16
    assert described.local_loads == 128 * 8 * (8 + 8) // 4
    assert described.footprint == 64 + 4 * 2 + 4 * 4 + 8
    assert described.output == (256, 1024) and described.slices == 1
    # A's pixel moves along x (two K pixels a step: every 2x2 block, every other 4x4 one),
    # B's down y (eight K rows a step)
    assert list(a.features[1:4]) == pytest.approx([1.0, 0.0, 0.5], abs=0.01)
    assert list(b.features[1:3]) == pytest.approx([0.0, 1.0])
    split = ConvKernel(_conv(256, 256, 14, 3)).model_inputs(
        TileConfig.blocked(GemmPlan(SMALL, 8)))
    assert split.slices == 8 and len(split.inputs) == 3  # the partial sums read back


def test_local_memory_limits_occupancy():
    constants = tmmodel.TextureConstants((10.0,) + (0.0,) * 8, 1.0, 1, 2, 65536, 32,
                                         local_memory=49152)
    assert tmmodel.occupancy(constants, 32, 256) == 8
    assert tmmodel.occupancy(constants, 32, 256, local_bytes=16384) == 3
    assert tmmodel.occupancy_groups(constants, 12, 32, 256, local_bytes=16384) == 2
    assert tmmodel.occupancy_groups(constants, 12, 32, 256, local_bytes=65536) == math.inf


SOURCE = """
builtin.module {
  func.func @main_graph(%a: tensor<1100x20xf32>) -> tensor<1100x2000xf32> {
    %b = onnx.Constant {value = dense<0.5> : tensor<20x2000xf32>} : tensor<20x2000xf32>
    %c = onnx.MatMul %a, %b : (tensor<1100x20xf32>, tensor<20x2000xf32>) -> tensor<1100x2000xf32>
    func.return %c : tensor<1100x2000xf32>
  }
}
"""


def test_no_blocked_candidates_in_buffers_or_when_off(pocl_device):
    from test_texture_tile import _module

    op = next(o for o in _module(SOURCE).walk() if o.name == "onnx.MatMul")
    assert kernel_of(op, (16384, 16384)).plans == (GemmPlan(GEMM_BLOCKS[1]),
                                                   GemmPlan(GEMM_BLOCKS[2]))
    assert kernel_of(op).plans == ()  # blocked off (texture-tile{blocked=false})
    # PoCL's profile puts tensors in buffers: its pipeline runs no texture-tile, and the
    # lowering's wide kernels stage nothing in local memory
    module = _module(SOURCE)
    passes, lowering = pipelines.gpu_pipeline("", choose_device("pocl"))
    assert lowering.buffers
    pipelines.apply(module, passes)
    assert not any(isinstance(o, ocl.LocalArrayOp) for o in module.walk())


def _model(path) -> None:
    """A MatMul (600x40 by 40x700) and a deep conv (128 channels at 14x14 to 256)."""
    rng = np.random.default_rng(3)

    def weight(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)

    nodes = [helper.make_node("MatMul", ["a", "b"], ["mm"], name="mm"),
             helper.make_node("Conv", ["x", "w", "bias"], ["conv"], name="conv",
                              pads=[1, 1, 1, 1])]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [600, 40]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128, 14, 14])],
        [helper.make_tensor_value_info("mm", TensorProto.FLOAT, [600, 700]),
         helper.make_tensor_value_info("conv", TensorProto.FLOAT, [1, 256, 14, 14])],
        [weight("b", 40, 700), weight("w", 256, 128, 3, 3), weight("bias", 256)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)


@pytest.mark.parametrize("recorded", [
    {"mm": GemmPlan(SMALL), "conv": GemmPlan(SMALL, 4)},  # neither the fixed rule's
    {"mm": None, "conv": None},  # one-pixel kernels where the rule would block
])
def test_the_lowering_realises_a_recorded_plan(pocl_device, tmp_path, recorded):
    path = tmp_path / "m.onnx"
    _model(path)
    module = import_onnx(str(path))
    for op in module.walk():
        name = describe_location(op.location) if op.name.startswith("onnx.") else None
        if name in recorded:
            plan = recorded[name]
            one_pixel = TileConfig((2, 1) if name == "conv" else (1, 2))
            (TileConfig.blocked(plan) if plan else one_pixel).apply(op)
    feeds = make_inputs(find_function(module, "main_graph"), {}, 0)
    passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, POCL_LIMITS, tile=False)
    pipelines.apply(module, passes)
    launches = {op.kernel.root_reference.data: op for op in module.walk()
                if isinstance(op, ocl.LaunchOp)}
    groups = {name: tuple(g // n for g, n in zip(op.global_size.get_values(),
                                                 op.local_size.get_values()))
              for name, op in launches.items() if op.local_size is not None}
    if recorded["mm"]:
        # 600 x 700 in 64x64 blocks (the rule: none, 50 < 128) and K of the conv in 4
        # slices (the rule: 8)
        assert groups["matmul_0"] == (11, 10) and groups["conv_slices_2"] == (4, 4, 4)
    else:
        assert not any(isinstance(o, ocl.LocalArrayOp) for o in module.walk())
    got = CompiledModel(module, pocl_device).run(feeds).outputs
    want = run_onnxruntime(path, feeds)
    for name, expected in want.items():
        assert relative_error(got[name], expected) <= 1e-3, name


def test_mobile_tune_measures_blocked_configurations(tmp_path):
    """`tools/tuning.measure` builds a blocked configuration in images and launches it in
    its own group (a split conv's two kernels both timed), beside one-pixel ones."""
    from mobile_opt.tools.tuning import measure

    path = tmp_path / "m.onnx"
    _model(path)
    module = import_onnx(str(path))
    device = choose_device("pocl")
    mm = measure(module, "mm", [TileConfig.blocked(GemmPlan(SMALL)), TileConfig((1, 2), (5, 4))],
                 device, repeat=1)
    conv = measure(module, "conv", [TileConfig.blocked(GemmPlan(SMALL, 4))], device, repeat=1)
    assert all(0 < m.seconds < math.inf for m in (*mm, *conv))


def test_a_configuration_over_the_devices_image_limit_is_left_out(tmp_path):
    """A device whose image limit is below its profile's (Debian's PoCL takes 8192 rows,
    the `pocl` profile's 16384) cannot build a split conv whose partial sums need more rows:
    `tools/tuning` times it as infinite (`measure`, `retime`) or leaves it out
    (`time_kernels`), and the configurations it can build are timed as before."""
    import dataclasses

    from mobile_opt.tools.tuning import build, measure, retime, time_kernels

    path = tmp_path / "m.onnx"
    _model(path)
    module = import_onnx(str(path))
    # the conv's weight is 1152 rows, so its product fits; 8 slices of 196 rows do not
    device = dataclasses.replace(choose_device("pocl"), max_image_height=1200)
    over, under = TileConfig.blocked(GemmPlan(SMALL, 8)), TileConfig.blocked(GemmPlan(SMALL, 2))
    configs = [over, under, TileConfig((2, 1), (8, 2))]
    refused = import_onnx(str(path))
    over.apply(next(op for op in refused.walk() if op.name == "onnx.Conv"))
    with pytest.raises(DiagnosticException, match="over the limit 1200"):
        build(refused, device)  # the lowering refuses it
    for timed in (measure(module, "conv", configs, device, repeat=1),
                  retime(module, "conv", configs, device, rounds=1)):
        assert [math.isfinite(m.seconds) for m in timed] == [False, True, True]
    kept = {t.config for t in time_kernels(module, "conv", configs, device, repeat=1)}
    assert kept == set(configs[1:])


def test_a_recorded_plan_whose_product_is_over_the_limit_is_refused(tmp_path):
    """A recorded blocked plan whose product's images are over the device's limit is a
    one-line error, not a one-pixel kernel timed under the plan's label: `tools/tuning`
    then times it as infinite. The one-pixel configurations still build."""
    import dataclasses

    from mobile_opt.tools.tuning import build, measure

    path = tmp_path / "m.onnx"
    _model(path)
    # the conv's hwio4 weight is 1152 rows: its product does not fit; its one-pixel
    # kernel's images do
    device = dataclasses.replace(choose_device("pocl"), max_image_height=1000)
    blocked, one_pixel = TileConfig.blocked(GemmPlan(SMALL)), TileConfig((2, 1), (8, 2))
    refused = import_onnx(str(path))
    blocked.apply(next(op for op in refused.walk() if op.name == "onnx.Conv"))
    # the device's own width: pip's PoCL takes 16384, Debian's 8192
    with pytest.raises(DiagnosticException, match=r"node 'conv' \(Conv\): the recorded .*: "
                       "the blocked product's images are over the limit "
                       f"{device.max_image_width}x1000"):
        build(refused, device)
    timed = measure(import_onnx(str(path)), "conv", [blocked, one_pixel], device, repeat=1)
    assert [math.isfinite(m.seconds) for m in timed] == [False, True]


def test_bench_scores_and_rescores_blocked_configurations(tmp_path):
    """bench/tmmodel.py's rows keep a blocked configuration's block and split, so that
    `--rescore` finds them again; the model takes the blocked one the scan found fastest."""
    import json

    from test_texture_tile_kernels import _bench

    from mobile_opt.checking.tile_search import Case, choose, score

    profile = load_profile("nvidia-h100")
    kernel = MatMulKernel(1024, 64, 512, plans=tuple(gemm_plans(1024, 512, 64)))
    assert kernel.plans == (GemmPlan(SMALL),)
    case = Case("matmul", "MatMul", ((1024, 64), (64, 512)))
    space = list(texture_kernels.candidates(kernel, 1024))
    scan = {c: (1.0 if c.plan else 2.0 + i / len(space), 0.1) for i, c in enumerate(space)}
    picks = choose(kernel, profile, {c: t for c, (t, _) in scan.items()})
    assert picks.model == picks.tile_only == TileConfig.blocked(GemmPlan(SMALL))
    row = score(case, kernel, profile, scan)
    assert row["top1"] and row["exhaustive_choice"] == "T=1x4 G=16x16 block=64x64x16/4x4"
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"device": "dev [platform]", "host": "h", "profile": "nvidia-h100",
                               "rows": [row]}))
    out = tmp_path / "again.json"
    done = _bench("tmmodel", "--rescore", str(run), "--out", str(out))
    assert done.returncode == 0, done.stderr
    again = json.loads(out.read_text())["rows"][0]
    assert again["model_choice"] == row["model_choice"] and again["top1"]
    # no H100 dataset, so no noise floor: no row is left out of that summary
    above = json.loads(out.read_text())["summary"]["above_noise_floor"]
    assert above["noise_floor_s"] is None and above["kernels"] == 1
    assert not again["under_noise_floor"]
