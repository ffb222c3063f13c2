"""
Requantisation that matches onnxruntime bit for bit, in integer HVX arithmetic.

onnxruntime (MLAS) requantises a 32-bit accumulator `acc` with a float32 scale `s` as

    y = clip(rint(float32(acc) · s) + zero_point, qmin, qmax)

(float32 product, round half to even). HVX v66 has no vector floating point, so the
kernels compute the exact product with integers instead. With s = ms · 2^-S
(ms the 24-bit mantissa):

    a  = clamp(acc, -A, A)                           vmin / vmax
    t  = floor(a · ml / 2^16) + a · mh + 2^(S-17)    vmpye, vmpyi-accumulate, vadd
    x  = t >> (S - 16)                               vasr: floor((a·ms + 2^(S-1)) / 2^S)
    y  = x + zero_point, saturated to the type       vadd, vsat

where ms = mh · 2^16 + ml. That is acc·s rounded half up, computed exactly; it differs
from onnxruntime's double rounding (to float32, then to an integer) only at a few
accumulator values next to the rounding thresholds. Both are monotone step functions
of acc, so comparing their thresholds finds every such value exactly; each maximal run
becomes a correction interval, applied with two compares and a predicated add. Most
scales need none.

The clamp keeps every intermediate inside 32 bits; it is exact because A·s is past
the largest output. That needs 2^-15 <= s < 128; other scales are rejected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mobile_opt.reference.qlinear import requantize_accumulators

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

MIN_SCALE = 2.0**-15
MAX_SCALE = 128.0


class RequantError(Exception):
    """A scale the HVX requantiser cannot reproduce exactly."""


@dataclass(frozen=True)
class Correction:
    """Add `delta` (+1 or -1) to y where low <= acc <= high."""

    low: int
    high: int
    delta: int


@dataclass(frozen=True)
class Requantizer:
    scale: float
    zero_point: int
    qmin: int
    qmax: int
    clamp: int
    mantissa_high: int
    mantissa_low: int
    shift: int
    """S - 16: the arithmetic shift right after the multiply."""
    corrections: tuple[Correction, ...]
    ties_even: bool = False
    """Round half to even (add 2^(S-1) − 1 and the lowest bit of t >> S) instead of half
    up: exact where the scale has few mantissa bits (0.5, 2^-k) and onnxruntime's
    products land on halves, which would need a correction at every level."""

    @property
    def rounding(self) -> int:
        return 1 << (self.shift - 1)

    def integer_model(self, acc: np.ndarray) -> np.ndarray:
        """The kernel's arithmetic before corrections, lane by lane (int64 numpy)."""
        a = np.clip(np.asarray(acc, np.int64), -self.clamp, self.clamp)
        low = (a * self.mantissa_low) >> 16  # vmpye: arithmetic shift of the 48-bit product
        t = low + a * self.mantissa_high
        if self.ties_even:
            t = t + self.rounding - 1 + ((t >> self.shift) & 1)
        else:
            t = t + self.rounding
        assert np.all((t >= INT32_MIN) & (t <= INT32_MAX)), "requantiser overflows int32"
        x = t >> self.shift
        return np.clip(x + self.zero_point, self.qmin, self.qmax)

    def model(self, acc: np.ndarray) -> np.ndarray:
        """What the kernel computes, corrections included."""
        acc = np.asarray(acc, np.int64)
        y = self.integer_model(acc)
        for c in self.corrections:
            y = y + np.where((acc >= c.low) & (acc <= c.high), c.delta, 0)
        return y


def _thresholds(function, levels: np.ndarray) -> np.ndarray:
    """For a monotone f: int32 → int, the least acc with f(acc) >= level, per level."""
    low = np.full(levels.shape, INT32_MIN, np.int64)
    high = np.full(levels.shape, INT32_MAX + 1, np.int64)
    while np.any(high - low > 1):
        mid = (low + high) // 2
        reached = function(mid) >= levels
        high = np.where(reached, mid, high)
        low = np.where(reached, low, mid)
    first = function(np.full(levels.shape, INT32_MIN, np.int64)) >= levels
    return np.where(first, INT32_MIN, high)


def make_requantizer(scale: float, zero_point: int, qmin: int = 0, qmax: int = 255) -> Requantizer:
    """The integer pipeline and the corrections that reproduce `requantize_accumulators` exactly."""
    scale32 = np.float32(scale)
    s = float(scale32)
    if not (MIN_SCALE <= s < MAX_SCALE):
        raise RequantError(
            f"requantisation scale {s:.3g} is outside the HVX requantiser's range "
            f"[2^-15, 128)"
        )
    mantissa, exponent = np.frexp(scale32)  # s = mantissa · 2^exponent, 0.5 <= mantissa < 1
    ms = int(np.ldexp(np.float64(mantissa), 24))
    big_s = 24 - int(exponent)
    assert ms * 2.0**-big_s == s
    clamp = int(np.ceil((qmax - qmin + 2) / s))
    shift = big_s - 16
    if shift < 1 or clamp * (ms >> 16) + (clamp >> 8) + (1 << shift) >= 2**31:
        raise RequantError(f"requantisation scale {s:.3g} overflows the HVX requantiser")
    levels = np.arange(qmin + 1, qmax + 1, dtype=np.int64)
    ref_t = _thresholds(
        lambda a: requantize_accumulators(a, scale32, zero_point, qmin, qmax), levels)
    candidates = []
    for ties_even in (False, True):  # the rounding that needs fewer corrections
        partial = Requantizer(
            s, zero_point, qmin, qmax, clamp, ms >> 16, ms & 0xFFFF, shift, (), ties_even
        )
        lin_t = _thresholds(partial.integer_model, levels)
        corrections = []
        for r, lin in zip(ref_t.tolist(), lin_t.tolist()):
            if r < lin:  # reference reaches the level first
                corrections.append(Correction(r, lin - 1, +1))
            elif lin < r:
                corrections.append(Correction(lin, r - 1, -1))
        candidates.append((len(corrections), ties_even, lin_t, tuple(corrections)))
    # rounding to even costs about one correction's instructions
    _, ties_even, lin_t, corrections = min(candidates, key=lambda c: (c[0] + c[1], c[1]))
    result = Requantizer(
        s, zero_point, qmin, qmax, clamp, ms >> 16, ms & 0xFFFF, shift, corrections, ties_even
    )
    # the thresholds interleave, so one correction per level suffices; check the edges
    probes = np.unique(
        np.concatenate([ref_t, lin_t, ref_t - 1, lin_t - 1, [INT32_MIN, INT32_MAX, 0, -1, 1]])
    )
    probes = probes[(probes >= INT32_MIN) & (probes <= INT32_MAX)]
    expected = requantize_accumulators(probes, scale32, zero_point, qmin, qmax)
    assert np.array_equal(result.model(probes), expected), "requantiser corrections are wrong"
    return result
