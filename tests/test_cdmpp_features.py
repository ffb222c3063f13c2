"""CDMPP's compact ASTs of `ocl` kernels, their positional encoding and device features."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from mobile_opt import pipelines
from mobile_opt.dialects import ocl
from mobile_opt.models.cdmpp_features import (
    DEVICE_FIELDS,
    LEAF_FIELDS,
    compact_ast,
    device_features,
    positional_encoding,
)
from mobile_opt.models.device_profile import load_profile

KERNEL = """
ocl.kernel @k(%out: !texture.buffer2d<8x2xf32>, %in: !texture.buffer2d<8x2xf32>) {
  %gx = ocl.global_id 0
  %p = ocl.vload4 %in[%gx] : !texture.buffer2d<8x2xf32>
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %p) -> (vector<4xf32>) : i32 {
    %q = ocl.vload4 %in[%i] : !texture.buffer2d<8x2xf32>
    %w = ocl.vec16 %q, %q, %q, %q
    %s = math.fma %w, %w, %w : vector<16xf32>
    %t = ocl.part4 %s[0]
    %u = arith.addf %t, %a : vector<4xf32>
    scf.yield %u : vector<4xf32>
  }
  %n = scf.for %j = %c0 to %gx step %c1 iter_args(%b = %r) -> (vector<4xf32>) : i32 {
    %v = arith.mulf %b, %b : vector<4xf32>
    scf.yield %v : vector<4xf32>
  }
  ocl.vstore4 %n, %out[%gx] : !texture.buffer2d<8x2xf32>
  ocl.return
}
"""


def _kernel() -> ocl.KernelOp:
    module = Parser(pipelines.context(), KERNEL).parse_module()
    return next(op for op in module.walk() if isinstance(op, ocl.KernelOp))


def _field(row: np.ndarray, name: str) -> float:
    return float(row[LEAF_FIELDS.index(name)])


def log(x: float):
    """log2(1 + x) as the float32 vectors hold it."""
    return pytest.approx(math.log2(1 + x), rel=1e-6)


def test_leaves_and_their_order():
    """Three leaves around two loops: before, in each loop (pre-order, a marker after
    each leaf), and after; their counts in elements, loops and launch."""
    ast = compact_ast(_kernel(), [8, 2], [4, 1], 2)
    assert ast.leaves.shape == (4, len(LEAF_FIELDS)) and len(LEAF_FIELDS) % 2 == 0
    # serialised: leaf0 marker loop leaf1 marker loop leaf2 marker leaf3 marker
    assert ast.order.tolist() == [0, 3, 6, 8]
    before, inner, second, after = ast.leaves
    assert _field(before, "buffer_loads") == log(1) and _field(before, "loop_depth") == 0
    assert _field(before, "buffer_load_bytes") == log(16)
    assert _field(inner, "f_fma") == log(16)
    assert _field(inner, "f_add") == log(4)
    assert _field(inner, "shuffle") == log(16 + 4)
    assert _field(inner, "loop_depth") == 1 and _field(inner, "extent_inner") == log(4)
    assert _field(inner, "trip_product") == log(4) and _field(inner, "dynamic_loops") == 0
    # 16 FMAs (2 FLOPs) and 4 adds, 4 times, over 16 work-items
    assert _field(inner, "total_flops") == log((2 * 16 + 4) * 4 * 16)
    assert _field(second, "dynamic_loops") == 1 and _field(second, "trip_product") == log(1)
    assert _field(after, "buffer_stores") == log(1)
    for row in ast.leaves:
        assert _field(row, "work_items") == log(16) and _field(row, "work_groups") == log(4)
        assert _field(row, "core_share") == 1 and _field(row, "waves") == log(2)


def test_groups_fill_the_cores():
    """One group on eight cores fills an eighth of them; 24 groups take three rounds."""
    one = compact_ast(_kernel(), [8, 2], [8, 2], 8).leaves[0]
    assert _field(one, "core_share") == pytest.approx(1 / 8) and _field(one, "waves") == log(1 / 8)
    many = compact_ast(_kernel(), [48, 4], [2, 4], 8).leaves[0]
    assert _field(many, "core_share") == 1 and _field(many, "waves") == log(3)


def test_driver_chosen_group_and_empty_kernel():
    module = Parser(pipelines.context(), """
      ocl.kernel @e(%out: !texture.buffer2d<8x2xf32>) {
        ocl.return
      }""").parse_module()
    kernel = next(op for op in module.walk() if isinstance(op, ocl.KernelOp))
    ast = compact_ast(kernel, [8], None, 2)
    assert ast.size == 1 and _field(ast.leaves[0], "local_x") == 0
    assert _field(ast.leaves[0], "core_share") == 1  # the driver's groups: taken as filling
    assert _field(ast.leaves[0], "global_y") == log(1)


def test_positional_encoding_is_the_papers_sinusoid():
    encoding = positional_encoding([0, 3, 7], 8, theta=100.0)
    for row, position in zip(encoding, [0, 3, 7]):
        for delta in range(4):
            angle = position / 100.0 ** (2 * delta / 8)
            assert row[2 * delta] == pytest.approx(math.sin(angle), abs=1e-6)
            assert row[2 * delta + 1] == pytest.approx(math.cos(angle), abs=1e-6)
    ast = compact_ast(_kernel(), [8, 2], None, 2)
    encoded = ast.encoded()
    assert encoded.shape == ast.leaves.shape
    assert not np.allclose(encoded - ast.leaves, encoded[0] - ast.leaves[0])  # by position


def test_device_features_tell_devices_apart():
    pocl, h200 = (device_features(load_profile(n)) for n in ("pocl", "nvidia-h200"))
    assert pocl.shape == h200.shape == (len(DEVICE_FIELDS),)
    assert pocl[DEVICE_FIELDS.index("gpu")] == 0 and h200[DEVICE_FIELDS.index("gpu")] == 1
    assert h200[DEVICE_FIELDS.index("peak_gflops")] > pocl[DEVICE_FIELDS.index("peak_gflops")]
    assert np.isfinite(pocl).all() and np.isfinite(h200).all()


def test_shipped_predictor_matches_torch_and_orders_work(tmp_path):
    """The shipped PoCL predictor's numpy pass gives torch's labels for the kernels saved
    with it, and predicts a MatMul of 512³ slower than one of 64³."""
    from mobile_opt.frontend.single_node import save_single_node
    from mobile_opt.models.cdmpp import Predictor
    from harness import lower_for_pocl

    predictor = Predictor.shipped("pocl")
    assert predictor.check() < 1e-4
    device = device_features(load_profile("pocl"))
    seconds = []
    for n in (64, 512):
        path = save_single_node(tmp_path / f"mm{n}.onnx", "MatMul", [(n, n), (n, n)])
        module = lower_for_pocl(path, ["onnx-to-texture{buffers=false}"])
        kernels = {op.sym_name.data: op for op in module.walk() if isinstance(op, ocl.KernelOp)}
        launch = next(op for op in module.walk() if isinstance(op, ocl.LaunchOp))
        ast = compact_ast(kernels[launch.kernel.root_reference.data],
                          launch.global_size.get_values(), None, 2)
        seconds.append(predictor.seconds(ast, device))
    assert 0 < seconds[0] < seconds[1] and all(math.isfinite(s) for s in seconds)


def test_mobile_learn_bad_files_are_one_line(tmp_path, capsys):
    """A missing file, bytes that are no npz, or a dataset given as the weights: one line
    naming the file, exit 1."""
    from mobile_opt.models.cdmpp import shipped_path
    from mobile_opt.tools.mobile_learn import main

    weights = str(shipped_path("pocl"))
    garbage = tmp_path / "garbage.npz"
    garbage.write_text("not a zip")
    older = tmp_path / "older.npz"  # a dataset of another version's leaf fields
    arrays = dict(np.load(Path(__file__).parents[1] / "bench" / "data" / "cdmpp-pocl.npz"))
    np.savez(older, **arrays | {"leaf_fields": arrays["leaf_fields"][:-2]})
    for argv, name, why in (
        (["eval", str(tmp_path / "none.npz"), weights], "none.npz", "no such file"),
        (["eval", weights, str(garbage)], "garbage.npz", "CDMPP dataset"),
        (["eval", weights, weights], "cdmpp-pocl.npz", "no field 'leaf_fields'"),
        (["eval", weights, str(older)], "older.npz", "other fields than this version's"),
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("mobile-learn: error: ")
        assert name in err[0] and why in err[0]
