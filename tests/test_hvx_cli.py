"""`mobile-run --target hexagon` and `mobile-opt -t hexagon-asm` from the command line."""

from __future__ import annotations

import re

import onnx
import pytest

from mobile_opt.checking import quant_models
from harness import assert_one_line_error, run_mobile_run


@pytest.fixture
def conv_model(tmp_path):
    path = tmp_path / "conv.onnx"
    onnx.save(quant_models.conv_model(4, 8, 8, 8, seed=2), path)
    return path


@pytest.mark.usefixtures("hexagon_toolchain")
def test_mobile_run_hexagon_is_bit_exact(conv_model, tmp_path, capsys):
    status, out, err = run_mobile_run(
        ["--target", "hexagon", str(conv_model), "--packets", "--save-dir", str(tmp_path / "out")],
        capsys,
    )
    assert status == 0, err
    assert re.search(r"^y +\[1, 8, 8, 8\] +0 LSB +PASS +0 LSB$", out, re.MULTILINE), out
    assert "packets executed" in out and "k0_conv" in out
    assert (tmp_path / "out" / "program.s").read_text().count("vrmpy") > 0
    assert (tmp_path / "out" / "y.npy").exists()


@pytest.mark.usefixtures("hexagon_toolchain")
def test_mobile_run_hexagon_layout(conv_model, capsys):
    status, out, err = run_mobile_run(["--target", "hexagon", str(conv_model), "--layout", "col1"], capsys)
    assert status == 0, err
    assert "(layout col1, packing sda)" in out


@pytest.mark.usefixtures("hexagon_toolchain")
@pytest.mark.parametrize("packing", ["single", "greedy", "soft-to-hard", "list"])
def test_mobile_run_hexagon_packing(conv_model, packing, tmp_path, capsys):
    status, out, err = run_mobile_run(
        ["--target", "hexagon", str(conv_model), "--packing", packing, "--save-dir", str(tmp_path)],
        capsys,
    )
    assert status == 0, err
    assert f"packing {packing})" in out and "PASS" in out
    # a counted loop's compare-and-branch is one packet whatever the packing
    packets = [line for line in (tmp_path / "program.s").read_text().splitlines()
               if "{" in line and "jump" not in line]
    assert any(";" in line for line in packets) == (packing != "single")


def test_missing_toolchain_is_named_with_its_package(conv_model, capsys, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    status, _, err = run_mobile_run(["--target", "hexagon", str(conv_model)], capsys)
    assert_one_line_error(
        status, err,
        "mobile-run: error: llvm-mc-19 not found: install the Hexagon toolchain with "
        "`apt-get install qemu-user clang-19 lld-19 llvm-19`",
    )


def test_opencl_options_are_refused_for_hexagon(conv_model, capsys):
    status, _, err = run_mobile_run(["--target", "hexagon", str(conv_model), "--fp16"], capsys)
    assert_one_line_error(status, err, "mobile-run: error: --fp16 does not apply to --target "
                          "hexagon", code=2)


def test_unsupported_model_is_one_line(tmp_path, capsys):
    path = tmp_path / "per_channel.onnx"
    onnx.save(quant_models.conv_model(3, 6, 6, 8, per_channel=True), path)
    status, _, err = run_mobile_run(["--target", "hexagon", str(path)], capsys)
    assert_one_line_error(
        status, err,
        f"mobile-run: error: {path}: node 'conv' (Conv): per-channel quantisation (the weight "
        "scale has 8 values) is not supported on the DSP path",
    )


@pytest.mark.usefixtures("hexagon_toolchain")
def test_mobile_run_hexagon_on_ir_with_a_relayout(tmp_path, capsys):
    """An `.mlir` module: the integer reference passes the relayout's values through."""
    import numpy as np
    from pathlib import Path

    source = Path(__file__).parent / "filecheck" / "transforms" / "onnx-to-hvx-relayout.mlir"
    np.save(tmp_path / "a.npy", np.random.default_rng(0).integers(0, 256, (8, 4)).astype(np.uint8))
    status, out, err = run_mobile_run(
        ["--target", "hexagon", str(source), "--input", f"a={tmp_path / 'a.npy'}"], capsys)
    assert status == 0, err
    assert re.search(r"^y +\[8, 4\] +0 LSB +PASS +-$", out, re.MULTILINE), out
