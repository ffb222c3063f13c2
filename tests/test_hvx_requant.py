"""
The requantiser's integer pipeline plus corrections equals onnxruntime's float32
requantisation for every int32 accumulator (checked at its thresholds, around them
and at random), and unsupported scales are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_opt.reference.qlinear import requantize_accumulators
from mobile_opt.transforms.onnx_to_hvx.requant import (
    INT32_MAX,
    INT32_MIN,
    RequantError,
    make_requantizer,
)


@settings(max_examples=200, deadline=None)
@given(
    scale=st.floats(2.0**-15, 100.0, allow_nan=False).map(lambda s: float(np.float32(s))),
    zero=st.integers(0, 255),
    seed=st.integers(0, 2**16),
)
def test_matches_onnxruntime_everywhere(scale, zero, seed):
    r = make_requantizer(scale, zero)
    rng = np.random.default_rng(seed)
    reach = int(min(INT32_MAX, 300 / scale))
    acc = np.concatenate([
        rng.integers(-reach, reach, 20000),
        rng.integers(INT32_MIN, INT32_MAX, 1000),
        # every point next to a rounding threshold of the exact product
        np.round((np.arange(-256, 257) + 0.5) / scale).astype(np.int64)[:, None] + np.arange(-2, 3),
    ], axis=None)
    acc = np.clip(acc, INT32_MIN, INT32_MAX)
    want = requantize_accumulators(acc, np.float32(scale), zero, 0, 255)
    assert np.array_equal(r.model(acc), want)


def test_round_scales_round_half_to_even():
    """0.003·1500 is 4.5 in float32: onnxruntime rounds it to even, and so does the kernel
    (rounding half up needed a correction there)."""
    r = make_requantizer(0.003, 0)
    assert r.ties_even
    assert r.model(np.array([1500]))[0] == 4


def test_double_rounding_needs_corrections():
    """0.005·300 is just below 1.5 exactly, but 1.5 in float32: onnxruntime rounds it to 2."""
    r = make_requantizer(0.005, 0)
    assert any(c.low <= 300 <= c.high for c in r.corrections)
    assert r.model(np.array([300]))[0] == 2


def test_clamp_bounds():
    r = make_requantizer(0.01, 10, qmin=10, qmax=200)
    acc = np.arange(-5000, 30000, 7)
    assert np.array_equal(r.model(acc), requantize_accumulators(acc, np.float32(0.01), 10, 10, 200))


@pytest.mark.parametrize("scale", [1e-6, 2.0**-16, 200.0])
def test_out_of_range_scales_are_refused(scale):
    with pytest.raises(RequantError, match="outside the HVX requantiser's range"):
        make_requantizer(scale, 0)


@pytest.mark.parametrize("scale", [2.0**-10, 0.25, 0.5, 0.75, 1.5])
def test_scales_with_few_mantissa_bits_round_half_to_even(scale):
    """onnxruntime's products land exactly on halves: the kernel rounds them to even
    (half up needed a correction at every other level)."""
    r = make_requantizer(scale, 7)
    assert r.ties_even and not r.corrections
    acc = np.arange(-70000, 70000)
    assert np.array_equal(r.model(acc), requantize_accumulators(acc, np.float32(scale), 7, 0, 255))
