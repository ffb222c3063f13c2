"""
The exact integer reference of a quantized model: QLinear semantics, in numpy.

A quantized operator — a QDQ unit (`DequantizeLinear` of 8-bit activations and
constant weights, a float `Conv`/`MatMul`/`Gemm`/`Add`/`AveragePool`/
`GlobalAveragePool`, optionally `Relu`/`Clip`, then one `QuantizeLinear`) or an
operator-form `QLinearConv`/`QLinearMatMul` — runs in integers:

- Conv, MatMul, Gemm: exact integer accumulation of zero-point-shifted values plus
  the int32 bias, requantised as ONNX's QLinearConv/QLinearMatMul and onnxruntime
  do: `saturate(rint(float32(acc) · m) + y_zero)` with the float32 multiplier
  `m = x_scale · w_scale / y_scale` (per output channel for per-channel weights);
- Add: onnxruntime's QLinearAdd (com.microsoft), in float32 with fused multiply-adds:
  `saturate(rint(fma(a, rA, fma(b, rB, k))))` with `rA = sa/sy`, `rB = sb/sy` and
  `k = zy − fma(rA, za, rB·zb)`; its value depends on the two input bytes only;
- GlobalAveragePool: onnxruntime's QLinearGlobalAveragePool, the integer sum over
  the image requantised with `m = x_scale / (y_scale · H·W)`; AveragePool the same
  over each window with its divisor (`count_include_pad` as ONNX defines it);
- a `Relu`/`Clip` inside a unit clamps the quantized result to its quantized bounds.

Everything else (the host's `QuantizeLinear` of a float input and `DequantizeLinear`
of an output, MaxPool and reshapes between Q/DQ pairs, which are exact in float) runs
on the reference interpreter's float kernels. Where onnxruntime leaves a quantized
node in float (no fusion, e.g. int8 activations on x86 without VNNI) or sums
uint8×int8 pairs in 16 bits with saturation, it can differ from this by an LSB or
more; the DSP path is exact to this reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from mobile_opt.reference.errors import KernelError, ReferenceRunError
from mobile_opt.reference.interpreter import bind_inputs, find_function, run_op
from mobile_opt.reference.kernels import (
    along,
    conv,
    kernel_axes,
    padded_to_fit,
    pool_geometry,
    result_dtype,
    windows,
)
from mobile_opt.dialects.onnx.base import is_none
from mobile_opt.dialects.onnx.graph import graph_io_names

F32 = np.float32

UNITS = {
    "onnx.Conv": "conv",
    "onnx.MatMul": "matmul",
    "onnx.Gemm": "gemm",
    "onnx.Add": "add",
    "onnx.AveragePool": "average_pool",
    "onnx.GlobalAveragePool": "global_average_pool",
}
"""Float ops that run in integers between DequantizeLinear and QuantizeLinear: the
`_Runner` method that computes each."""


# ---------------------------------------------------------------------- arithmetic

def requantize_accumulators(acc, multiplier, zero_point: int, qmin: int, qmax: int) -> np.ndarray:
    """`clip(rint(float32(acc) · multiplier) + zero_point)`: QLinear requantisation of
    int32 accumulators with float32 multipliers (broadcasting), as int64."""
    product = np.asarray(acc, np.int64).astype(F32) * np.asarray(multiplier, F32)
    return np.clip(np.rint(product).astype(np.int64) + zero_point, qmin, qmax)


def fma32(a, b, c) -> np.ndarray:
    """Fused a·b + c of float32 arrays, rounded once to float32 (ties to even)."""
    a64, b64, c64 = (np.asarray(v, F32).astype(np.float64) for v in (a, b, c))
    product = a64 * b64  # exact: 24 + 24 bits
    total = product + c64
    # the error of that float64 sum (two-sum), to settle float32 ties exactly
    back = total - product
    error = (product - (total - back)) + (c64 - back)
    result = total.astype(F32)
    towards = np.nextafter(result, np.where(total > result.astype(np.float64), np.inf, -np.inf))
    gap = np.abs(towards.astype(np.float64) - result.astype(np.float64))
    tie = np.abs(total - result.astype(np.float64)) * 2 == gap
    # at a float32 tie the float64 sum was rounded: the true value is on error's side
    up = tie & (error != 0) & (np.sign(error) == np.sign(towards.astype(np.float64) - total))
    return np.where(up, towards, result).astype(F32)


@dataclass(frozen=True)
class AddParams:
    """The quantisation of a QLinearAdd's operands and result (ONNX zero points)."""

    a_scale: float
    a_zero: int
    b_scale: float
    b_zero: int
    y_scale: float
    y_zero: int
    qmin: int
    qmax: int


def qlinear_add(a, b, q: AddParams) -> np.ndarray:
    """onnxruntime's QLinearAdd of 8-bit values a and b (broadcasting), as int64."""
    ra = F32(F32(q.a_scale) / F32(q.y_scale))
    rb = F32(F32(q.b_scale) / F32(q.y_scale))
    k = F32(F32(q.y_zero) - fma32(ra, F32(q.a_zero), F32(rb * F32(q.b_zero))))
    a32 = np.asarray(a, np.int64).astype(F32)
    b32 = np.asarray(b, np.int64).astype(F32)
    value = fma32(a32, ra, fma32(b32, rb, k))
    return np.clip(np.rint(value).astype(np.int64), q.qmin, q.qmax)


def average_multiplier(x_scale, y_scale, count) -> np.ndarray:
    """`x_scale / (y_scale · count)` in float32, as QLinearGlobalAveragePool computes it."""
    return (F32(x_scale) / (F32(y_scale) * np.asarray(count, np.int64).astype(F32))).astype(F32)


# ---------------------------------------------------------------------- the walk

def _dequantized(value: SSAValue) -> Operation | None:
    owner = value.owner
    return owner if getattr(owner, "name", "") == "onnx.DequantizeLinear" else None


def _single_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _is_8bit(value: np.ndarray) -> bool:
    return value.dtype in (np.int8, np.uint8)


class _Runner:
    def __init__(self, function: func.FuncOp, args: Sequence[np.ndarray]):
        self.function = function
        self.env: dict[SSAValue, np.ndarray | None] = dict(zip(function.body.block.args, args))
        self.done: set[Operation] = set()

    def get(self, value: SSAValue) -> np.ndarray | None:
        return self.env[value]

    def run(self) -> list[np.ndarray]:
        for op in self.function.body.block.ops:
            if isinstance(op, func.ReturnOp):
                return [self.env[v] for v in op.operands]
            if op in self.done:
                continue
            if op.name in UNITS and self.unit(op):
                continue
            if op.name == "hvx.relayout":  # where the DSP keeps a tensor: the same values
                self.env[op.results[0]] = self.get(op.operands[0])
                continue
            if op.name == "onnx.MaxPool" and _is_8bit(self.get(op.X)):
                self.env[op.results[0]] = _integer_max_pool(op, self.get(op.X))
                continue
            try:
                results = run_op(op, [self.get(v) for v in op.operands])  # type: ignore[arg-type]
            except KernelError as e:
                raise ReferenceRunError(str(e)) from e
            self.env.update(zip(op.results, results))
        raise ReferenceRunError(f"@{self.function.sym_name.data} has no return")

    # a QDQ unit: the chain from op to its QuantizeLinear, and the integer value
    def unit(self, op: Operation) -> bool:
        chain = [op]
        user = _single_user(op.results[0])
        if user is not None and user.name in ("onnx.Relu", "onnx.Clip"):
            chain.append(user)
            user = _single_user(user.results[0])
        if user is None or user.name != "onnx.QuantizeLinear":
            return False
        quantize = user
        y_scale = self.get(quantize.y_scale)
        y_zero = 0 if is_none(quantize.y_zero_point) else self.get(quantize.y_zero_point)
        dtype = result_dtype(quantize)
        if y_scale.size != 1 or np.size(y_zero) != 1:
            return False
        params = (F32(y_scale.reshape(())), int(np.asarray(y_zero).reshape(())), dtype)
        value = getattr(self, UNITS[op.name])(op, *params)
        if value is None:
            return False
        info = np.iinfo(dtype)
        low, high = self.clamp(chain[1] if len(chain) > 1 else None, *params)
        value = np.clip(value, max(low, info.min), min(high, info.max))
        self.env[quantize.results[0]] = value.astype(dtype)
        self.done.update([*chain, quantize])
        return True

    def clamp(self, op: Operation | None, scale, zero, dtype) -> tuple[int, int]:
        """A Relu's or Clip's bounds, quantized as QuantizeLinear would."""
        info = np.iinfo(dtype)
        if op is None:
            return info.min, info.max
        bounds = [0.0, np.inf] if op.name == "onnx.Relu" else [-np.inf, np.inf]
        if op.name == "onnx.Clip":
            for i, operand in ((0, op.operands[1]), (1, op.operands[2])):
                if not is_none(operand):
                    bounds[i] = float(np.asarray(self.get(operand)).reshape(()))

        def quantize(v: float) -> int:
            if not np.isfinite(v):
                return info.min if v < 0 else info.max
            return int(np.clip(np.rint(F32(v) / scale) + zero, info.min, info.max))

        return quantize(bounds[0]), quantize(bounds[1])

    def operand(self, value: SSAValue, weight: bool = False):
        """(integer values, scale, zero point, axis) of a DequantizeLinear'd 8-bit operand."""
        dq = _dequantized(value)
        if dq is None:
            return None
        x = self.get(dq.x)
        if x is None or not _is_8bit(x):
            return None
        scale = self.get(dq.x_scale)
        zero = np.zeros(1, np.int64) if is_none(dq.x_zero_point) else self.get(dq.x_zero_point)
        if not weight and scale.size != 1:
            return None
        return x.astype(np.int64), scale.astype(F32), np.asarray(zero, np.int64), \
            dq.int_attr("axis")

    def bias(self, value: SSAValue, expected: np.ndarray):
        """The int32 bias in accumulator units (0 if absent); None if not QLinear."""
        if is_none(value):
            return np.zeros(1, np.int64)
        dq = _dequantized(value)
        if dq is None:
            return None
        raw, scale = self.get(dq.x), self.get(dq.x_scale)
        if raw.dtype != np.int32 or not np.allclose(
            np.broadcast_to(scale, expected.shape), expected, rtol=1e-6, atol=0
        ):
            return None
        zero = 0 if is_none(dq.x_zero_point) else self.get(dq.x_zero_point).astype(np.int64)
        return raw.astype(np.int64) - zero

    def conv(self, op: Operation, y_scale, y_zero, dtype):
        x, w = self.operand(op.X), self.operand(op.W, weight=True)
        if x is None or w is None:
            return None
        (xq, xs, xz, _), (wq, ws, wz, w_axis) = x, w
        if ws.size != 1 and w_axis not in (0, -wq.ndim):
            return None
        ws = ws.reshape(-1)
        bias = self.bias(op.B, (xs.reshape(()) * ws).astype(F32))
        if bias is None:
            return None
        shifted_w = (wq - along(wz, 0, wq.ndim)).astype(np.float64)
        shifted_x = (xq - xz.reshape(())).astype(np.float64)
        bias = np.broadcast_to(bias, (wq.shape[0],)).astype(np.float64)
        acc = np.rint(conv(shifted_x, shifted_w, bias, op)).astype(np.int64)
        m = along((xs.reshape(()) * ws).astype(F32) / y_scale, 1, acc.ndim)
        return _requantized(acc, m, y_zero, dtype)

    def matmul(self, op: Operation, y_scale, y_zero, dtype):
        a, b = self.operand(op.operands[0]), self.operand(op.operands[1], weight=True)
        if a is None or b is None:
            return None
        (aq, as_, az, _), (bq, bs, bz, _) = a, b
        if bs.size != 1 and not (bq.ndim == 2 and bs.size == bq.shape[1]):
            return None
        acc = np.matmul((aq - az.reshape(())).astype(np.float64),
                        (bq - bz.reshape(-1)).astype(np.float64))
        m = (as_.reshape(()) * bs.reshape(-1)).astype(F32) / y_scale
        return _requantized(np.rint(acc).astype(np.int64), m, y_zero, dtype)

    def gemm(self, op: Operation, y_scale, y_zero, dtype):
        if op.float_attr("alpha") != 1.0 or op.float_attr("beta") != 1.0:
            return None
        a, b = self.operand(op.operands[0]), self.operand(op.operands[1], weight=True)
        if a is None or b is None:
            return None
        (aq, as_, az, _), (bq, bs, bz, _) = a, b
        shifted_a = (aq - az.reshape(())).astype(np.float64)
        if op.int_attr("transA"):
            shifted_a = shifted_a.T
        transposed = bool(op.int_attr("transB"))
        n = bq.shape[0] if transposed else bq.shape[1]
        if bs.size not in (1, n):
            return None
        shifted_b = (bq - (bz.reshape(-1, 1) if transposed else bz.reshape(-1))).astype(np.float64)
        if transposed:
            shifted_b = shifted_b.T
        scales = (as_.reshape(()) * bs.reshape(-1)).astype(F32)
        bias = self.bias(op.operands[2], np.broadcast_to(scales, (n,)))
        if bias is None:
            return None
        acc = np.rint(shifted_a @ shifted_b).astype(np.int64) + bias
        return _requantized(acc, scales / y_scale, y_zero, dtype)

    def add(self, op: Operation, y_scale, y_zero, dtype):
        a, b = self.operand(op.operands[0]), self.operand(op.operands[1])
        if a is None or b is None:
            return None
        (aq, as_, az, _), (bq, bs, bz, _) = a, b
        info = np.iinfo(dtype)
        q = AddParams(float(as_.reshape(())), int(az.reshape(())), float(bs.reshape(())),
                      int(bz.reshape(())), float(y_scale), y_zero, info.min, info.max)
        return qlinear_add(aq, bq, q)

    def global_average_pool(self, op: Operation, y_scale, y_zero, dtype):
        x = self.operand(op.X)
        if x is None:
            return None
        xq, xs, xz, _ = x
        axes = tuple(range(2, xq.ndim))
        acc = (xq - xz.reshape(())).sum(axis=axes, keepdims=True)
        count = int(np.prod(xq.shape[2:]))
        m = average_multiplier(xs.reshape(()), y_scale, count)
        return _requantized(acc, m, y_zero, dtype)

    def average_pool(self, op: Operation, y_scale, y_zero, dtype):
        x = self.operand(op.X)
        if x is None:
            return None
        xq, xs, xz, _ = x
        win, out = pool_geometry(op, xq)
        if any(d != 1 for d in win.dilations):
            return None
        shifted = (xq - xz.reshape(())).astype(np.float64)
        padded = padded_to_fit(shifted, win, out, 0.0)
        acc = np.rint(windows(padded, win, out).sum(axis=kernel_axes(xq.ndim)))
        rank = len(win.kernel)
        begins, ends = win.pads[:rank], win.pads[rank:]
        counted = np.zeros((1, 1, *padded.shape[2:]), np.float64)
        if op.int_attr("count_include_pad"):
            region = [slice(0, b + s + e) for b, s, e in zip(begins, xq.shape[2:], ends)]
        else:
            region = [slice(b, b + s) for b, s in zip(begins, xq.shape[2:])]
        counted[(slice(None), slice(None), *region)] = 1
        counts = windows(counted, win, out).sum(axis=kernel_axes(xq.ndim)).astype(np.int64)
        m = average_multiplier(xs.reshape(()), y_scale, counts)
        return _requantized(acc.astype(np.int64), m, y_zero, dtype)


def _integer_max_pool(op: Operation, x: np.ndarray) -> np.ndarray:
    """MaxPool of 8-bit values (onnxruntime's QOperator form): padding never wins."""
    win, out = pool_geometry(op, x)
    padded = padded_to_fit(x, win, out, np.iinfo(x.dtype).min)
    return windows(padded, win, out).max(axis=kernel_axes(x.ndim))


def _requantized(acc, multiplier, zero, dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return requantize_accumulators(acc, multiplier, zero, info.min, info.max)


def run_qlinear(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    function: str = "main_graph",
) -> dict[str, np.ndarray]:
    """
    Run `@function` of `module` (an `onnx` function) with QLinear integer semantics;
    results by ONNX output name. Failures raise `ReferenceRunError` with one line.
    """
    funcop = find_function(module, function)
    args = bind_inputs(funcop, inputs)
    results = _Runner(funcop, args).run()
    _, names = graph_io_names(funcop)
    return {name: np.array(value) for name, value in zip(names, results, strict=True)}


__all__ = [
    "AddParams",
    "average_multiplier",
    "fma32",
    "qlinear_add",
    "requantize_accumulators",
    "run_qlinear",
]
