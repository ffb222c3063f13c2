"""
Quantized elementwise Add and the byte-gather kernel behind reshapes and relayouts.

Add. onnxruntime's QLinearAdd (what its QDQ `Add` fusion runs) computes, on x86 with
FMA, y = sat(rint(fma(a, rA, fma(b, rB, k)))) in float32, with rA = sa/sy, rB = sb/sy
and k = zy − fma(rA, za, rB·zb). Its value depends only on the two input bytes, so
the compiler tabulates all 65536 cases exactly and fits an integer formula

    y = clamp(floor((a·MA + b·MB + C) / 2^F), lo, hi)

that HVX computes in 32-bit lanes (zero-extend the bytes twice, `vmpyi` for the high
16 bits of the multipliers, `vmpyie` for the low ones), rounding half up or, where the
scale ratios are dyadic and onnxruntime's sums fall on halves (e.g. two inputs at
twice the output's scale... or half), half to even. The few (a, b) where the table and
the formula still differ are patched with byte compares and a predicated add, their
constants in registers when they fit and made in place otherwise. Every
tensor is one buffer of the same geometry, so the kernel runs over whole vectors,
halo and padding included (their zero points add to the output's zero point).

Where the formula needs more than `TABLE_CORRECTIONS` corrections (scale ratios that
are simple fractions, e.g. 0.03/0.1, put onnxruntime's float32 sums next to halves
at thousands of pairs), the Add looks each result up in its 64 KiB table instead: a
vector kernel writes (256·a + b, e) for every byte e and the gather kernel copies
`y[e] = table[256·a + b]`.

Gather. A reshape (Flatten) or a change of SIMD layout moves bytes; the kernel copies
`dst[j] = src[i]` for a table of (i, j) offset pairs, one byte a step; the table is
compile-time data, or what a table Add's first kernel wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mobile_opt.reference.qlinear import AddParams, qlinear_add
from mobile_opt.dialects.hvx import ops
from mobile_opt.transforms.onnx_to_hvx.builder import KernelBuilder

VECTOR = 128


@dataclass(frozen=True)
class AddQuant:
    a_scale: float
    a_zero: int
    b_scale: float
    b_zero: int
    y_scale: float
    y_zero: int
    signed: bool
    """int8 tensors (stored internally as value + 128)."""
    clamp: tuple[int, int] = (0, 255)


def reference_add_table(q: AddQuant) -> np.ndarray:
    """y for every internal (uint8) a, b: onnxruntime's QLinearAdd, clamped."""
    offset = 128 if q.signed else 0
    a = np.arange(256, dtype=np.int64)[:, None] - offset
    b = np.arange(256, dtype=np.int64)[None, :] - offset
    qmin, qmax = (-128, 127) if q.signed else (0, 255)
    params = AddParams(q.a_scale, q.a_zero - offset, q.b_scale, q.b_zero - offset, q.y_scale,
                       q.y_zero - offset, qmin, qmax)
    return np.clip(qlinear_add(a, b, params) + offset, *q.clamp)


@dataclass(frozen=True)
class AddFormula:
    multiplier_a: int
    multiplier_b: int
    constant: int
    shift: int
    clamp: tuple[int, int]
    corrections: tuple[tuple[int, int, int], ...]
    """(a, b, delta): add delta to y where the inputs are a and b."""
    ties_even: bool = False
    """Round half to even (t + 2^(F-1) − 1 + the lowest bit of t >> F) instead of
    `constant` carrying the half: exact where the scale ratios are dyadic and
    onnxruntime's float32 sums land on halves."""

    def total(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The 32-bit lane value before the shift (int64 numpy)."""
        total = (np.asarray(a, np.int64) * self.multiplier_a
                 + np.asarray(b, np.int64) * self.multiplier_b + self.constant)
        if self.ties_even:
            total = total + (1 << (self.shift - 1)) - 1 + ((total >> self.shift) & 1)
        assert np.all(np.abs(total) < 2**31), "the Add formula overflows 32 bits"
        return total

    def model(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        y = np.clip(self.total(a, b) >> self.shift, *self.clamp)
        for ca, cb, delta in self.corrections:
            y = y + np.where((a == ca) & (b == cb), delta, 0)
        return y


def fit_add(q: AddQuant) -> AddFormula:
    """
    The integer formula closest to the table, rounding half up or half to even (the
    one with fewer corrections), and the corrections that make it exact.
    """
    table = reference_add_table(q)
    ra, rb = np.float32(q.a_scale) / np.float32(q.y_scale), np.float32(q.b_scale) / np.float32(q.y_scale)
    biggest = max(float(ra), float(rb), 1.0)
    shift = 21 - int(np.ceil(np.log2(biggest)))
    a = np.arange(256, dtype=np.int64)[:, None]
    b = np.arange(256, dtype=np.int64)[None, :]
    # in internal (uint8) units the +128 of int8 cancels: y = ra(a − za) + rb(b − zb) + zy
    k = q.y_zero - float(ra) * q.a_zero - float(rb) * q.b_zero
    ma, mb = round(float(ra) * 2**shift), round(float(rb) * 2**shift)
    best = None
    for ties_even in (False, True):
        for nudge in range(-4, 5):
            constant = round((k + (0 if ties_even else 0.5)) * 2**shift) + nudge
            formula = AddFormula(ma, mb, constant, shift, q.clamp, (), ties_even)
            diff = table - formula.model(a, b)
            count = int(np.count_nonzero(diff))
            if best is None or count < best[0]:
                best = (count, formula, diff)
    _, formula, diff = best
    where = np.argwhere(diff != 0)
    corrections = tuple((int(i), int(j), int(diff[i, j])) for i, j in where)
    formula = AddFormula(ma, mb, formula.constant, shift, q.clamp, corrections, formula.ties_even)
    assert np.array_equal(formula.model(a, b), table)
    return formula


HOISTED_CORRECTIONS = 4
"""Add corrections whose constants are tried in registers for the whole kernel."""

TABLE_CORRECTIONS = 64
"""Beyond this many corrections an Add looks its result up in the 64 KiB table instead:
three instructions a byte against three a correction for 128 bytes."""

QUAD_ORDER = (0, 2, 1, 3)
"""Word lane l of quad q of a zero-extended vector holds byte 4·l + QUAD_ORDER[q]."""


def add_kernel(name: str, size: int, a: str, b: str, y: str, formula: AddFormula) -> ops.FuncOp:
    """
    y = a + b over `size` bytes (whole vectors) of three same-geometry buffers: with the
    correction constants in registers throughout where they fit, else made where each
    is used (any number of corrections fits).
    """
    from mobile_opt.transforms.hvx_regalloc import RegisterAllocationError, allocate_registers

    if len(formula.corrections) <= HOISTED_CORRECTIONS:
        kernel = _add_kernel(name, size, a, b, y, formula, hoisted=True)
        try:
            allocate_registers(kernel.clone())
            return kernel
        except RegisterAllocationError:
            pass
    return _add_kernel(name, size, a, b, y, formula, hoisted=False)


def _add_kernel(name: str, size: int, a: str, b: str, y: str, formula: AddFormula,
                hoisted: bool) -> ops.FuncOp:
    kb = KernelBuilder(name)
    high = lambda m: kb.const((m >> 16) * 0x01010101)  # noqa: E731 — vmpyi takes bytes
    low = lambda m: kb.splat(m & 0xFFFF)  # noqa: E731
    ma_high, mb_high = high(formula.multiplier_a), high(formula.multiplier_b)
    ma_low, mb_low = low(formula.multiplier_a), low(formula.multiplier_b)
    constant, shift16 = kb.splat(formula.constant), kb.const(16)
    shift = kb.const(formula.shift)
    lo, hi = formula.clamp

    def splat(value: int):
        return kb.splat(value) if hoisted else kb(ops.VsplatOp(kb.fresh_const(value)))

    pointers = [kb(ops.AddressOp(sym)) for sym in (a, b, y)]
    with kb.loop(size // VECTOR, "counted", pointers) as loop:
        pa, pb, py = loop.args
        va = kb(ops.VmemLoadOp(pa, 0, region=a))
        vb = kb(ops.VmemLoadOp(pb, 0, region=b))
        words = []
        for v in (va, vb):
            halves = kb(ops.VzxtByteOp(v))
            quad = []
            for view in (ops.LoOp, ops.HiOp):
                pair = kb(ops.VzxtHalfOp(kb(view(halves))))
                quad += [kb(ops.LoOp(pair)), kb(ops.HiOp(pair))]
            words.append(quad)
        results = []
        # quad order: pixels ≡ 0, 2, 1, 3 (mod 4), what the vsat packing wants
        for wa, wb in zip(*words):
            top = kb(ops.VmpyiWordOp(wa, ma_high))
            top = kb(ops.VmpyiWordAccOp(top, wb, mb_high))
            total = kb(ops.VmpyieOp(wa, ma_low))
            total = kb(ops.VmpyieAccOp(total, wb, mb_low))
            total = kb(ops.VaslWAccOp(total, top, shift16))
            total = kb(ops.VaddWOp(total, constant))
            if formula.ties_even:
                # minus the lowest bit of total >> F: (x << 31) >> 31 is 0 or −1
                odd = kb(ops.VaslWOp(kb(ops.VasrWOp(total, shift)), kb.const(31)))
                odd = kb(ops.VasrWOp(odd, kb.const(31)))
                total = kb(ops.VaddWOp(total, kb.splat((1 << (formula.shift - 1)) - 1)))
                total = kb(ops.VsubWOp(total, odd))
            results.append(kb(ops.VasrWOp(total, shift)))
        packed = kb(ops.VsatUbOp(kb(ops.VsatHOp(results[3], results[2])),
                                 kb(ops.VsatHOp(results[1], results[0]))))
        if lo > 0:
            packed = kb(ops.VmaxUbOp(packed, kb.splat(lo * 0x01010101)))
        if hi < 255:
            packed = kb(ops.VminUbOp(packed, kb.splat(hi * 0x01010101)))
        for ca, cb, delta in formula.corrections:
            q = kb(ops.VcmpEqBOp(va, splat(ca * 0x01010101)))
            q = kb(ops.VcmpEqBAndOp(q, vb, splat(cb * 0x01010101)))
            packed = kb(ops.VaddBIfOp(q, packed, splat((delta & 0xFF) * 0x01010101)))
        kb.add(ops.VmemStoreOp(py, packed, 0, region=y))
        loop.next(*(kb(ops.AddImmOp(p, VECTOR)) for p in (pa, pb, py)))
    return kb.func


def add_table(formula_table: np.ndarray) -> np.ndarray:
    """The 64 KiB lookup table: byte 256·a + b is y for internal inputs a and b."""
    return np.asarray(formula_table, np.uint8).reshape(-1)


def add_lane_offsets() -> np.ndarray:
    """Four vectors of words: the byte each word lane of each quad stands for."""
    lanes = np.arange(VECTOR // 4)
    return np.concatenate([4 * lanes + q for q in QUAD_ORDER]).astype(np.int32)


def add_index_kernel(name: str, size: int, a: str, b: str, pairs: str, lanes: str) -> ops.FuncOp:
    """
    The first half of a table Add: for every byte e of the buffers, the pair
    (256·a[e] + b[e], e) that `gather_kernel` then looks up in the table and stores.
    """
    kb = KernelBuilder(name)
    shift8 = kb.const(8)
    lane_base = kb(ops.AddressOp(lanes))
    offsets = [kb(ops.VmemLoadOp(lane_base, q, region=lanes)) for q in range(4)]
    pointers = [kb(ops.AddressOp(sym)) for sym in (a, b, pairs)]
    with kb.loop(size // VECTOR, "counted", [*pointers, kb.fresh_const(0)]) as loop:
        pa, pb, pp, base = loop.args
        words = []
        for pointer, region in ((pa, a), (pb, b)):
            halves = kb(ops.VzxtByteOp(kb(ops.VmemLoadOp(pointer, 0, region=region))))
            quad = []
            for view in (ops.LoOp, ops.HiOp):
                pair = kb(ops.VzxtHalfOp(kb(view(halves))))
                quad += [kb(ops.LoOp(pair)), kb(ops.HiOp(pair))]
            words.append(quad)
        splat = kb(ops.VsplatOp(base))
        for q, (wa, wb) in enumerate(zip(*words)):
            index = kb(ops.VaddWOp(kb(ops.VaslWOp(wa, shift8)), wb))
            target = kb(ops.VaddWOp(splat, offsets[q]))
            interleaved = kb(ops.VshuffOp(target, index, kb.const(-4)))
            kb.add(ops.VmemStoreOp(pp, kb(ops.LoOp(interleaved)), 2 * q, region=pairs))
            kb.add(ops.VmemStoreOp(pp, kb(ops.HiOp(interleaved)), 2 * q + 1, region=pairs))
        loop.next(kb(ops.AddImmOp(pa, VECTOR)), kb(ops.AddImmOp(pb, VECTOR)),
                  kb(ops.AddImmOp(pp, 8 * VECTOR)), kb(ops.AddImmOp(base, VECTOR)))
    return kb.func


def gather_kernel(name: str, source: str, target: str, table: str, count: int) -> ops.FuncOp:
    """`target[j] = source[i]` for the `count` (i, j) word pairs of buffer `table`."""
    kb = KernelBuilder(name)
    src = kb(ops.AddressOp(source))
    dst = kb(ops.AddressOp(target))
    pointer = kb(ops.AddressOp(table))
    with kb.loop(count, "counted", [pointer]) as loop:
        (pointer,) = loop.args
        load = ops.LoadDoubleWordPostIncOp(pointer, 8, region=table)
        kb.add(load)
        i = kb(ops.LoOfPairOp(load.d))
        j = kb(ops.HiOfPairOp(load.d))
        byte = kb(ops.LoadByteIndexedOp(src, i, region=source))
        kb.add(ops.StoreByteIndexedOp(dst, j, byte, region=target))
        loop.next(load.new_base)
    return kb.func


def gather_table(source_offsets: np.ndarray, target_offsets: np.ndarray) -> np.ndarray:
    """The (i, j) int32 pairs `gather_kernel` streams."""
    pairs = np.stack([np.ravel(source_offsets), np.ravel(target_offsets)], axis=1)
    return pairs.astype(np.int32)
