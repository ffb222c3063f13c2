"""
Convolution, depthwise and matrix-product kernels in every SIMD layout, run under
qemu-hexagon and compared bit for bit with the exact quantized arithmetic of
onnxruntime (numpy), over a hypothesis sweep of shapes. The cycle model must predict
the packets QEMU executes exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_opt.checking.hvx_kernels import ConvCase, run_conv_kernel
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS, SimdLayout
from mobile_opt.pipelines import dsp_back_end
from mobile_opt.transforms.onnx_to_hvx.conv import ConvShape

pytestmark = pytest.mark.usefixtures("hexagon_toolchain")
SWEEP = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(layout, shape, seed, weight_range=128, scale=None):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (shape.channels, shape.height, shape.width)).astype(np.uint8)
    per_input = 1 if shape.depthwise else shape.channels
    kh, kw = shape.kernel
    w = rng.integers(-weight_range, weight_range, (shape.out_channels, per_input, kh, kw))
    bias = rng.integers(-5000, 5000, shape.out_channels)
    drawn = float(np.float32(rng.uniform(4e-4, 1e-2)))
    scale = drawn if scale is None else scale
    case = ConvCase(shape, x, w.astype(np.int8), bias, int(rng.integers(0, 256)), scale,
                    int(rng.integers(0, 256)))
    run = run_conv_kernel(layout, case, dsp_back_end)
    differ = int((run.got != run.expected).sum())
    assert differ == 0, f"{differ} of {run.got.size} outputs differ"
    assert run.counted_packets == run.predicted.packets


@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
@SWEEP
@given(m=st.integers(1, 200), k=st.integers(1, 96), n=st.integers(1, 40), seed=st.integers(0, 99))
def test_matmul_sweep(layout: SimdLayout, m: int, k: int, n: int, seed: int):
    # weights within ±64 keep vmpa's 16-bit pair sums exact; full range is tested below
    _check(layout, ConvShape(k, 1, m, n), seed, weight_range=64)


@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
@SWEEP
@given(
    c=st.integers(1, 12), h=st.integers(1, 12), w=st.integers(1, 40), n=st.integers(1, 12),
    kernel=st.sampled_from([1, 3, 5]), stride=st.sampled_from([1, 2]), seed=st.integers(0, 99),
)
def test_conv_sweep(layout, c, h, w, n, kernel, stride, seed):
    pad = kernel // 2
    if (h + 2 * pad - kernel) < 0 or (w + 2 * pad - kernel) < 0:
        return
    _check(layout, ConvShape(c, h, w, n, (kernel, kernel), (stride, stride), (pad, pad)), seed, 64)


@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
@SWEEP
@given(c=st.integers(1, 12), h=st.integers(3, 12), w=st.integers(3, 70),
       stride=st.sampled_from([1, 2]), seed=st.integers(0, 99))
def test_depthwise_sweep(layout, c, h, w, stride, seed):
    _check(layout, ConvShape(c, h, w, c, (3, 3), (stride, stride), (1, 1), depthwise=True), seed)


@pytest.mark.parametrize("layout", [SimdLayout.COL1, SimdLayout.COL4], ids=str)
def test_full_range_weights(layout):
    """vmpy chunks and vrmpy stay exact with int8 weights over their whole range."""
    _check(layout, ConvShape(16, 6, 9, 8, (3, 3), (1, 1), (1, 1)), seed=3, weight_range=128)


def test_seven_by_seven_stride_two():
    """ResNet-50's first convolution shape, scaled down: 7×7, stride 2, pad 3, 3 channels."""
    _check(SimdLayout.COL4, ConvShape(3, 20, 20, 8, (7, 7), (2, 2), (3, 3)), seed=4)


@pytest.mark.parametrize("layout", MATRIX_LAYOUTS, ids=str)
def test_dyadic_scale_rounds_half_to_even(layout):
    """A scale of 2^-9 puts every other accumulator on a half: rounded to even."""
    _check(layout, ConvShape(8, 5, 7, 8, (3, 3), (1, 1), (1, 1)), seed=5, weight_range=64,
           scale=2.0**-9)
