"""
numpy kernels for every op of the `onnx` dialect: the reference semantics that
the other backends are checked against.

`evaluate(op, inputs)` computes an op's results from its operand values alone
(`None` stands for a `none` operand); the op contributes only its properties and
declared result types. It never looks at the op's neighbours in the IR, so a pass
may call it on any op whose operands it knows, e.g. to fold constants.

Each kernel is a small function registered for one or more op classes; families
share one helper: one elementwise table, one convolution core (im2col + matmul),
one pooling core, one requantisation step. Float tensors are computed in their
own precision (float16 in float32, as ONNX Runtime does), and every result is
returned with exactly the element type and shape the op declares.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects.builtin import NoneType, TensorType

from mobile_opt.reference.errors import KernelError
from mobile_opt.dialects.onnx import OnnxOp, shapes
from mobile_opt.dialects.onnx.constants import (
    ConstantOfShapeOp,
    ConstantOp,
    NoneOp,
    WeightOp,
)
from mobile_opt.dialects.onnx.elementwise import (
    AbsOp,
    AddOp,
    AndOp,
    CastOp,
    ClipOp,
    DivOp,
    EqualOp,
    ErfOp,
    ExpOp,
    GeluOp,
    GreaterOp,
    GreaterOrEqualOp,
    HardSigmoidOp,
    HardSwishOp,
    IdentityOp,
    IsInfOp,
    IsNaNOp,
    LeakyReluOp,
    LessOp,
    LessOrEqualOp,
    LogOp,
    MaxOp,
    MinOp,
    ModOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PowOp,
    ReciprocalOp,
    ReluOp,
    ShrinkOp,
    SigmoidOp,
    SignOp,
    SqrtOp,
    SubOp,
    SumOp,
    TanhOp,
    WhereOp,
    XorOp,
)
from mobile_opt.dialects.onnx.fused import FusedConvOp, FusedGemmOp, FusedMatMulOp
from mobile_opt.dialects.onnx.nn import (
    AveragePoolOp,
    BatchNormalizationOp,
    ConvOp,
    ConvTransposeOp,
    DropoutOp,
    GemmOp,
    GlobalAveragePoolOp,
    GlobalMaxPoolOp,
    LayerNormalizationOp,
    LogSoftmaxOp,
    LRNOp,
    MatMulOp,
    MaxPoolOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceSumOp,
    SoftmaxOp,
    Window,
)
from mobile_opt.dialects.onnx.quant import (
    DequantizeLinearOp,
    QLinearConvOp,
    QLinearMatMulOp,
    QuantizeLinearOp,
)
from mobile_opt.dialects.onnx.shapes import ShapeError
from mobile_opt.dialects.onnx.tensor import (
    ConcatOp,
    ExpandOp,
    FlattenOp,
    GatherOp,
    PadOp,
    RangeOp,
    ReshapeOp,
    ResizeOp,
    ShapeOp,
    SliceOp,
    SplitOp,
    SqueezeOp,
    TransposeOp,
    TriluOp,
    UnsqueezeOp,
)
from mobile_opt.dialects.onnx.types import dtype_of

Value = np.ndarray | None
Kernel = Callable[[Any, Sequence[Value]], np.ndarray | Sequence[Value]]

KERNELS: dict[type[OnnxOp], Kernel] = {}
"""The kernel of each op class."""


def kernel(*op_types: type[OnnxOp]) -> Callable[[Kernel], Kernel]:
    """Registers the decorated function as the kernel of `op_types`."""

    def register(function: Kernel) -> Kernel:
        for op_type in op_types:
            KERNELS[op_type] = function
        return function

    return register


def evaluate(op: OnnxOp, inputs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """
    The results of `op` for operand values `inputs` (None for `none` operands).

    Results have the element type and shape the op declares; they may share
    memory with the inputs, so neither may be written to afterwards. The `none`
    result of `onnx.None` is None. Every failure (no kernel, operand values that
    do not fit the op, a kernel rejecting them) raises `KernelError`, whose
    one-line message starts with the op's name.
    """
    function = KERNELS.get(type(op))
    if function is None:
        raise KernelError(f"{op.name}: the reference backend has no kernel for this op")
    if len(inputs) != len(op.operands):
        raise KernelError(
            f"{op.name}: got {len(inputs)} operand values for {len(op.operands)} operands"
        )
    for index, (operand, value) in enumerate(zip(op.operands, inputs)):
        _check_operand(op, index, operand.type, value)
    # ONNX defines inf/NaN results, not errors, for overflow and division by zero
    with np.errstate(all="ignore"):
        try:
            produced = function(op, inputs)
        except KernelError:
            raise
        except ShapeError as e:
            raise KernelError(f"{op.name}: {e}") from e
        except Exception as e:  # e.g. a weight store that cannot be read, or numpy rejecting values
            lines = str(e).strip().splitlines()
            detail = f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__
            raise KernelError(f"{op.name}: {detail}") from e
    # a kernel gives one array (numpy reductions may give a scalar) or a list of them
    values = list(produced) if isinstance(produced, list | tuple) else [produced]
    if len(values) != len(op.results):
        raise KernelError(f"{op.name}: kernel gave {len(values)} results for {len(op.results)}")
    return [_conform(op, i, v) for i, v in enumerate(values)]


def _check_operand(op: OnnxOp, index: int, declared: Any, value: Value) -> None:
    if isinstance(declared, NoneType) or value is None:
        if isinstance(declared, NoneType) != (value is None):
            raise KernelError(f"{op.name}: operand #{index} is {declared}, got {_describe(value)}")
        return
    if isinstance(declared, TensorType) and not _fits(op, declared, value):
        raise KernelError(f"{op.name}: operand #{index} is {declared}, got {_describe(value)}")


def _fits(op: OnnxOp, declared: TensorType, value: np.ndarray) -> bool:
    shape = declared.get_shape()
    return (
        len(shape) == value.ndim
        and all(d < 0 or d == s for d, s in zip(shape, value.shape))
        and value.dtype == _dtype(op, declared)
    )


def _describe(value: Value) -> str:
    return "none" if value is None else f"{value.dtype}{list(value.shape)}"


def _dtype(op: OnnxOp, t: TensorType) -> np.dtype:
    try:
        return dtype_of(t.element_type)
    except KeyError:
        raise KernelError(f"{op.name}: element type {t.element_type} has no numpy dtype") from None


def _conform(op: OnnxOp, index: int, value: Value) -> np.ndarray:
    """`value` as the result type declares it; a shape it does not declare is a kernel bug."""
    declared = op.results[index].type
    if isinstance(declared, NoneType):
        return value  # type: ignore[return-value]
    assert isinstance(declared, TensorType)
    array = np.asarray(value)
    dtype = _dtype(op, declared)
    if array.dtype != dtype:
        array = array.astype(dtype)
    shape = declared.get_shape()
    if len(shape) != array.ndim or any(d >= 0 and d != s for d, s in zip(shape, array.shape)):
        raise KernelError(
            f"{op.name}: result #{index} came out as {list(array.shape)}, "
            f"but the op declares {declared}"
        )
    return array


def result_dtype(op: OnnxOp, index: int = 0) -> np.dtype:
    """The numpy dtype of the op's declared result `index`."""
    t = op.results[index].type
    assert isinstance(t, TensorType)
    return _dtype(op, t)


def compute_dtype(*arrays: np.ndarray) -> np.dtype:
    """The float type to compute in: float16 widens to float32, float64 stays."""
    return np.result_type(*(a.dtype for a in arrays), np.float32)


def ints(value: Value) -> tuple[int, ...] | None:
    """A 1-D integer operand as Python ints (None stays None)."""
    return None if value is None else tuple(int(v) for v in np.asarray(value).reshape(-1))


def scalar(x: np.ndarray, value: float) -> Any:
    """`value` as a scalar of x's dtype, so that it does not widen float32 math."""
    return x.dtype.type(value)


# ---------------------------------------------------------------------------
# Activations and unary math
# ---------------------------------------------------------------------------


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, scalar(x, 0))


def leaky_relu(x: np.ndarray, alpha: float) -> np.ndarray:
    return np.where(x >= 0, x, x * scalar(x, alpha))


def sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a non-positive argument only, so neither side overflows
    e = np.exp(-np.abs(x))
    one = scalar(x, 1)
    return np.where(x >= 0, one / (one + e), e / (one + e))


def hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    return np.clip(x * scalar(x, alpha) + scalar(x, beta), scalar(x, 0), scalar(x, 1))


def hard_swish(x: np.ndarray) -> np.ndarray:
    return x * hard_sigmoid(x, 1 / 6, 0.5)


def clip(x: np.ndarray, low: Any | None, high: Any | None) -> np.ndarray:
    """
    Clamp to [low, high]; the lower bound is applied first, so low > high yields high.
    As onnxruntime: an absent bound is the type's extreme (ONNX's default: a float's
    infinity is clipped to the largest finite value), a NaN bound none, a NaN x stays NaN.
    """
    floating = x.dtype.kind == "f"
    extremes = (None, None)  # an integer's are no bound at all
    if floating:
        extremes = (np.finfo(x.dtype).min, np.finfo(x.dtype).max)
    for bound, default, extremum in ((low, extremes[0], np.maximum),
                                     (high, extremes[1], np.minimum)):
        value = default if bound is None else np.asarray(bound, dtype=x.dtype).reshape(())
        if value is not None and not (floating and np.isnan(value)):
            x = extremum(x, np.asarray(value, dtype=x.dtype))
    return x


_ERF_SERIES_TERMS = 60
_ERF_FRACTION_DEPTH = 60


def erf(x: np.ndarray) -> np.ndarray:
    """
    The Gauss error function, computed in float64 to about 1e-13 and rounded to x's type.

    Below |x| = 3 it sums the Maclaurin series
    `2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))`; above, it uses the continued
    fraction `erfc z = exp(-z^2)/sqrt(pi) / (z + (1/2)/(z + 1/(z + (3/2)/(z + ...))))`.
    """
    z = np.abs(x.astype(np.float64))
    result = np.empty_like(z)
    small = z < 3.0
    zs = z[small]
    zz = zs * zs
    term = zs.copy()  # x^(2n+1) (-1)^n / n!
    total = zs.copy()
    for n in range(1, _ERF_SERIES_TERMS):
        term *= -zz / n
        total += term / (2 * n + 1)
    result[small] = total * (2 / math.sqrt(math.pi))
    zl = z[~small]
    fraction = zl.copy()
    for k in range(_ERF_FRACTION_DEPTH, 0, -1):
        fraction = zl + (k / 2) / fraction
    result[~small] = 1.0 - np.exp(-zl * zl) / math.sqrt(math.pi) / fraction
    return (np.sign(x.astype(np.float64)) * result).astype(x.dtype)


def gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    half, one = scalar(x, 0.5), scalar(x, 1)
    if approximate == "tanh":
        inner = scalar(x, math.sqrt(2 / math.pi)) * (x + scalar(x, 0.044715) * x * x * x)
        return half * x * (one + np.tanh(inner))
    return half * x * (one + erf(x * scalar(x, 1 / math.sqrt(2))))


def shrink(x: np.ndarray, bias: float, lambd: float) -> np.ndarray:
    wide = x.astype(np.float64) if x.dtype.kind in "iub" else x
    shrunk = np.where(wide < -lambd, wide + bias, np.where(wide > lambd, wide - bias, 0))
    return shrunk.astype(x.dtype)


UNARY: dict[type[OnnxOp], Callable[[Any, np.ndarray], np.ndarray]] = {
    ReluOp: lambda op, x: relu(x),
    LeakyReluOp: lambda op, x: leaky_relu(x, op.float_attr("alpha")),
    SigmoidOp: lambda op, x: sigmoid(x),
    TanhOp: lambda op, x: np.tanh(x),
    ErfOp: lambda op, x: erf(x),
    GeluOp: lambda op, x: gelu(x, op.str_attr("approximate")),
    HardSigmoidOp: lambda op, x: hard_sigmoid(x, op.float_attr("alpha"), op.float_attr("beta")),
    HardSwishOp: lambda op, x: hard_swish(x),
    ShrinkOp: lambda op, x: shrink(x, op.float_attr("bias"), op.float_attr("lambd")),
    SignOp: lambda op, x: np.sign(x),
    AbsOp: lambda op, x: np.abs(x),
    NegOp: lambda op, x: np.negative(x),
    ExpOp: lambda op, x: np.exp(x),
    LogOp: lambda op, x: np.log(x),
    SqrtOp: lambda op, x: np.sqrt(x),
    ReciprocalOp: lambda op, x: np.reciprocal(x),
    IdentityOp: lambda op, x: x,
}
"""Elementwise unary ops: `Y = f(X)`."""


@kernel(*UNARY)
def _unary(op: OnnxOp, inputs: Sequence[Value]) -> np.ndarray:
    return UNARY[type(op)](op, inputs[0])


ACTIVATIONS: dict[str, Callable[[np.ndarray, Sequence[float]], np.ndarray]] = {
    "": lambda x, p: x,
    "Relu": lambda x, p: relu(x),
    "LeakyRelu": lambda x, p: leaky_relu(x, p[0]),
    "Clip": lambda x, p: clip(x, p[0], p[1]),
    "Sigmoid": lambda x, p: sigmoid(x),
    "Tanh": lambda x, p: np.tanh(x),
    "HardSigmoid": lambda x, p: hard_sigmoid(x, p[0], p[1]),
    "HardSwish": lambda x, p: hard_swish(x),
    "Gelu": lambda x, p: gelu(x, "none"),
}
"""The trailing activation of a fused op, by its `activation` name."""


def activate(op: OnnxOp, y: np.ndarray) -> np.ndarray:
    name = op.str_attr("activation")
    if name not in ACTIVATIONS:
        raise KernelError(f"{op.name}: unknown activation '{name}'")
    return ACTIVATIONS[name](y, op.floats_attr("activation_params") or ())


# ---------------------------------------------------------------------------
# Broadcasting binaries, variadics, Clip, Cast
# ---------------------------------------------------------------------------


def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Float division, or integer division truncating toward zero as C does."""
    if a.dtype.kind == "f":
        return a / b
    quotient = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        # floor and truncation differ where the division is inexact and signs differ
        inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        quotient = quotient + inexact.astype(quotient.dtype)
    return quotient


BINARY: dict[type[OnnxOp], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    AddOp: np.add,
    SubOp: np.subtract,
    MulOp: np.multiply,
    DivOp: divide,
}
"""Broadcasting binary ops over one element type: `C = A op B`."""


@kernel(*BINARY)
def _binary(op: OnnxOp, inputs: Sequence[Value]) -> np.ndarray:
    a, b = inputs
    return BINARY[type(op)](a, b)


@kernel(PowOp)
def _pow(op: PowOp, inputs: Sequence[Value]) -> np.ndarray:
    x, y = inputs
    assert x is not None and y is not None
    if x.dtype.kind == "f":
        return np.power(x, y.astype(x.dtype))
    if y.dtype.kind in "iu" and not (y < 0).any():
        return np.power(x, y.astype(x.dtype))
    # an integer base with a float or negative exponent: compute in float64, truncate
    return np.power(x.astype(np.float64), y.astype(np.float64))


VARIADIC: dict[type[OnnxOp], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    SumOp: np.add,
    MaxOp: np.maximum,
    MinOp: np.minimum,
}
"""Elementwise reductions over any number of broadcast inputs."""


@kernel(*VARIADIC)
def _variadic(op: OnnxOp, inputs: Sequence[Value]) -> np.ndarray:
    return reduce(VARIADIC[type(op)], inputs)


@kernel(ClipOp)
def _clip(op: ClipOp, inputs: Sequence[Value]) -> np.ndarray:
    x, low, high = inputs
    assert x is not None
    return clip(x, low, high)


@kernel(CastOp)
def _cast(op: CastOp, inputs: Sequence[Value]) -> np.ndarray:
    x = inputs[0]
    assert x is not None
    return x.astype(result_dtype(op))


@kernel(ModOp)
def _mod(op: ModOp, inputs: Sequence[Value]) -> np.ndarray:
    """fmod = 1: the dividend's sign (C's fmod); fmod = 0: the divisor's (Python's %)."""
    a, b = inputs
    assert a is not None and b is not None
    if b.dtype.kind in "iu" and not b.all():
        raise KernelError(f"{op.name}: integer division by zero")
    return np.fmod(a, b) if op.int_attr("fmod") else np.mod(a, b)


COMPARISONS: dict[type[OnnxOp], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    EqualOp: np.equal,
    LessOp: np.less,
    LessOrEqualOp: np.less_equal,
    GreaterOp: np.greater,
    GreaterOrEqualOp: np.greater_equal,
    AndOp: np.logical_and,
    OrOp: np.logical_or,
    XorOp: np.logical_xor,
}
"""Broadcasting comparisons and boolean logic: `C = A op B`, a boolean tensor."""


@kernel(*COMPARISONS)
def _compare(op: OnnxOp, inputs: Sequence[Value]) -> np.ndarray:
    a, b = inputs
    return COMPARISONS[type(op)](a, b)


@kernel(NotOp)
def _not(op: NotOp, inputs: Sequence[Value]) -> np.ndarray:
    return np.logical_not(inputs[0])


@kernel(IsNaNOp)
def _is_nan(op: IsNaNOp, inputs: Sequence[Value]) -> np.ndarray:
    return np.isnan(inputs[0])


@kernel(IsInfOp)
def _is_inf(op: IsInfOp, inputs: Sequence[Value]) -> np.ndarray:
    x = inputs[0]
    assert x is not None
    positive = (x == np.inf) if op.int_attr("detect_positive") else np.zeros(x.shape, bool)
    negative = (x == -np.inf) if op.int_attr("detect_negative") else np.zeros(x.shape, bool)
    return positive | negative


@kernel(WhereOp)
def _where(op: WhereOp, inputs: Sequence[Value]) -> np.ndarray:
    condition, x, y = inputs
    return np.where(condition, x, y)


# ---------------------------------------------------------------------------
# Sliding windows: convolutions and pools
# ---------------------------------------------------------------------------


def pad_spatial(
    x: np.ndarray, begins: Sequence[int], ends: Sequence[int], value: Any = 0
) -> np.ndarray:
    """x (N, C, ...) padded by `begins`/`ends` along the spatial dims."""
    if not any(begins) and not any(ends):
        return x
    widths = [(0, 0), (0, 0), *zip(begins, ends)]
    return np.pad(x, widths, constant_values=value)


def windows(x: np.ndarray, win: Window, out: Sequence[int]) -> np.ndarray:
    """
    A read-only view (N, C, *out, *kernel) of the padded x (N, C, ...): element
    `[n, c, o..., k...]` is `x[n, c, o*stride + k*dilation ...]`.
    """
    spatial = x.strides[2:]
    return as_strided(
        x,
        shape=(*x.shape[:2], *out, *win.kernel),
        strides=(
            *x.strides[:2],
            *(s * st for s, st in zip(spatial, win.strides)),
            *(s * d for s, d in zip(spatial, win.dilations)),
        ),
        writeable=False,
    )


def padded_to_fit(x: np.ndarray, win: Window, out: Sequence[int], value: Any) -> np.ndarray:
    """
    x padded with `value` so that all `out` windows lie inside it: the leading
    pads as declared, trailing ones as far as the last window reaches (which a
    ceil-mode window may take past the declared pads).
    """
    n = len(win.kernel)
    begins = win.pads[:n]
    ends = tuple(
        max((o - 1) * s + (k - 1) * d + 1 - size - b, 0)
        for o, s, k, d, size, b in zip(
            out, win.strides, win.kernel, win.dilations, x.shape[2:], begins
        )
    )
    return pad_spatial(x, begins, ends, value)


def convolve(x: np.ndarray, w: np.ndarray, win: Window, group: int) -> np.ndarray:
    """
    Grouped N-d cross-correlation of x (N, C, ...) with w (M, C/group, k...), as
    one matrix product per group over an im2col matrix (C/group * K, P).
    """
    n, c = x.shape[:2]
    m = w.shape[0]
    rank = len(win.kernel)
    out = shapes.window(x.shape[2:], win.kernel, win.strides, win.dilations, win.pads)
    positions = math.prod(out)
    depth = c // group * math.prod(win.kernel)
    rows = w.reshape(group, m // group, depth)
    if all(k == 1 for k in win.kernel) and all(s == 1 for s in win.strides) and not any(win.pads):
        columns = x.reshape(n, group, depth, positions)  # a 1x1 conv needs no im2col
        return np.matmul(rows, columns).reshape(n, m, *out)
    channels_kernel_first = (0, 1, *range(2 + rank, 2 + 2 * rank), *range(2, 2 + rank))

    def im2col(a: np.ndarray) -> np.ndarray:
        view = windows(padded_to_fit(a, win, out, 0), win, out)  # (N, C, *out, *kernel)
        return view.transpose(channels_kernel_first).reshape(a.shape[0], -1, positions)

    columns = im2col(x).reshape(n, group, depth, positions)
    unfinite = ~np.isfinite(rows)
    if not unfinite.any():  # 0 * w is 0: the padding's zeros add nothing
        return np.matmul(rows, columns).reshape(n, m, *out)
    # a tap on the padding adds nothing whatever its weight, as onnxruntime's x86 kernels
    # have it (not 0 * NaN): the non-finite weights meet only the input
    product = np.matmul(np.where(unfinite, 0, rows), columns)  # (N, group, M/group, P)
    inside = im2col(np.ones((1, c // group, *x.shape[2:]), x.dtype))[0] != 0  # (depth, P)
    for g, d in zip(*np.nonzero(unfinite.any(axis=1))):
        terms = rows[g, :, d, None] * columns[:, g, None, d, :]  # (N, M/group, P)
        product[:, g] += np.where(unfinite[g, :, d, None] & inside[d], terms, 0)
    return product.reshape(n, m, *out)


def conv(x: np.ndarray, w: np.ndarray, b: Value, op: Any) -> np.ndarray:
    """Conv's value: float16 computes in float32."""
    dtype = compute_dtype(x, w)
    win = op.window(x.shape[2:], w.shape[2:])
    y = convolve(
        x.astype(dtype, copy=False), w.astype(dtype, copy=False), win, op.int_attr("group")
    )
    if b is not None:
        y += per_channel(b.astype(dtype, copy=False), y.ndim)
    return y


def per_channel(values: np.ndarray, rank: int) -> np.ndarray:
    """A (C,) vector shaped to broadcast along dim 1 of a rank-`rank` tensor."""
    return values.reshape(-1, *(1,) * (rank - 2))


@kernel(ConvOp)
def _conv(op: ConvOp, inputs: Sequence[Value]) -> np.ndarray:
    x, w, b = inputs
    return conv(x, w, b, op)  # type: ignore[arg-type]


@kernel(FusedConvOp)
def _fused_conv(op: FusedConvOp, inputs: Sequence[Value]) -> np.ndarray:
    x, w, b = inputs
    return activate(op, conv(x, w, b, op))  # type: ignore[arg-type]


@kernel(ConvTransposeOp)
def _conv_transpose(op: ConvTransposeOp, inputs: Sequence[Value]) -> np.ndarray:
    """
    Every input pixel scatters its kernel-weighted copy into the output: one matrix
    product gives all (output channel, kernel offset) contributions, then each
    kernel offset is added into the output at its strided, dilated, cropped place.
    """
    x, w, b = inputs
    assert x is not None and w is not None
    dtype = compute_dtype(x, w)
    x, w = x.astype(dtype, copy=False), w.astype(dtype, copy=False)
    win, _, out = op.transposed_window(x.shape, w.shape)
    group = op.int_attr("group")
    n, c = x.shape[:2]
    rank = x.ndim - 2
    spatial = x.shape[2:]
    m_group = w.shape[1]
    kernel_size = math.prod(win.kernel)
    xs = x.reshape(n, group, c // group, math.prod(spatial))
    ws = w.reshape(group, c // group, m_group * kernel_size).transpose(0, 2, 1)
    contributions = np.matmul(ws, xs).reshape(n, group * m_group, *win.kernel, *spatial)
    y = np.zeros((n, group * m_group, *out), dtype)
    for offset in itertools.product(*(range(k) for k in win.kernel)):
        target, source = [], []
        for d in range(rank):
            # output position of input i: i * stride + offset * dilation - pad_begin
            shift = offset[d] * win.dilations[d] - win.pads[d]
            stride = win.strides[d]
            first = max(0, -(shift // stride)) if shift < 0 else 0
            last = min(spatial[d] - 1, (out[d] - 1 - shift) // stride)
            if first > last:
                break
            source.append(slice(first, last + 1))
            target.append(slice(first * stride + shift, last * stride + shift + 1, stride))
        else:
            y[(slice(None), slice(None), *target)] += contributions[
                (slice(None), slice(None), *offset, *source)
            ]
    if b is not None:
        y += per_channel(b.astype(dtype, copy=False), y.ndim)
    return y


def pool_geometry(op: Any, x: np.ndarray) -> tuple[Window, tuple[int, ...]]:
    win = op.window(x.shape[2:])
    out = shapes.window(
        x.shape[2:],
        win.kernel,
        win.strides,
        win.dilations,
        win.pads,
        bool(op.int_attr("ceil_mode")),
    )
    return win, out


def kernel_axes(rank: int) -> tuple[int, ...]:
    """The kernel axes of a `windows` view of a rank-`rank` tensor."""
    return tuple(range(rank, 2 * rank - 2))


@kernel(MaxPoolOp)
def _max_pool(op: MaxPoolOp, inputs: Sequence[Value]) -> np.ndarray:
    x = inputs[0]
    assert x is not None
    win, out = pool_geometry(op, x)
    padded = padded_to_fit(x, win, out, -np.inf)
    return windows(padded, win, out).max(axis=kernel_axes(x.ndim))


@kernel(AveragePoolOp)
def _average_pool(op: AveragePoolOp, inputs: Sequence[Value]) -> np.ndarray:
    """
    Window sums over the divisor: the window's elements inside the input, or with
    `count_include_pad` inside the input and its declared pads (never the extra
    trailing room of ceil mode).
    """
    x = inputs[0]
    assert x is not None
    dtype = compute_dtype(x)
    win, out = pool_geometry(op, x)
    padded = padded_to_fit(x.astype(dtype, copy=False), win, out, 0)
    sums = windows(padded, win, out).sum(axis=kernel_axes(x.ndim))
    rank = len(win.kernel)
    begins, declared_ends = win.pads[:rank], win.pads[rank:]
    counted = np.zeros((1, 1, *padded.shape[2:]), dtype)
    if op.int_attr("count_include_pad"):
        region = [slice(0, b + size + e) for b, size, e in zip(begins, x.shape[2:], declared_ends)]
    else:
        region = [slice(b, b + size) for b, size in zip(begins, x.shape[2:])]
    counted[(slice(None), slice(None), *region)] = 1
    counts = windows(counted, win, out).sum(axis=kernel_axes(x.ndim))
    return sums / counts


@kernel(GlobalAveragePoolOp)
def _global_average_pool(op: GlobalAveragePoolOp, inputs: Sequence[Value]) -> np.ndarray:
    x = inputs[0]
    assert x is not None
    return x.astype(compute_dtype(x), copy=False).mean(axis=tuple(range(2, x.ndim)), keepdims=True)


@kernel(GlobalMaxPoolOp)
def _global_max_pool(op: GlobalMaxPoolOp, inputs: Sequence[Value]) -> np.ndarray:
    x = inputs[0]
    assert x is not None
    return x.max(axis=tuple(range(2, x.ndim)), keepdims=True)


# ---------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------


def gemm(op: Any, a: np.ndarray, b: np.ndarray, c: Value) -> np.ndarray:
    """`alpha * op(A) op(B) + beta * C`, in the operands' type (float16 in float32)."""
    dtype = compute_dtype(a, b) if a.dtype.kind == "f" else np.dtype(np.float64)
    a = a.astype(dtype, copy=False)
    b = b.astype(dtype, copy=False)
    if op.int_attr("transA"):
        a = a.T
    if op.int_attr("transB"):
        b = b.T
    y = a @ b
    alpha, beta = op.float_attr("alpha"), op.float_attr("beta")
    if alpha != 1:
        y *= dtype.type(alpha)
    if c is not None and beta != 0:
        y = y + dtype.type(beta) * c.astype(dtype, copy=False)
    return y


@kernel(GemmOp)
def _gemm(op: GemmOp, inputs: Sequence[Value]) -> np.ndarray:
    a, b, c = inputs
    return gemm(op, a, b, c)  # type: ignore[arg-type]


@kernel(FusedGemmOp)
def _fused_gemm(op: FusedGemmOp, inputs: Sequence[Value]) -> np.ndarray:
    a, b, c = inputs
    return activate(op, gemm(op, a, b, c))  # type: ignore[arg-type]


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy.matmul; float16 computes in float32."""
    if a.dtype == np.float16:
        return np.matmul(a.astype(np.float32), b.astype(np.float32))
    return np.matmul(a, b)


@kernel(MatMulOp)
def _matmul(op: MatMulOp, inputs: Sequence[Value]) -> np.ndarray:
    a, b = inputs
    return matmul(a, b)  # type: ignore[arg-type]


@kernel(FusedMatMulOp)
def _fused_matmul(op: FusedMatMulOp, inputs: Sequence[Value]) -> np.ndarray:
    a, b, bias = inputs
    assert a is not None and b is not None
    y = matmul(a, b)
    if bias is not None:
        y = y + bias.astype(y.dtype, copy=False)
    return activate(op, y)


# ---------------------------------------------------------------------------
# Normalisation, softmax, reductions
# ---------------------------------------------------------------------------


@kernel(LRNOp)
def _lrn(op: LRNOp, inputs: Sequence[Value]) -> np.ndarray:
    """`x / (bias + alpha/size * sum of squares over the size channels around c)^beta`."""
    x = inputs[0]
    assert x is not None
    dtype = compute_dtype(x)
    xf = x.astype(dtype, copy=False)
    size = op.int_attr("size")
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    squares = np.pad(xf * xf, [(0, 0), (before, after), *[(0, 0)] * (x.ndim - 2)])
    channels = x.shape[1]
    window_sum = reduce(np.add, (squares[:, i : i + channels] for i in range(size)))
    alpha, beta, bias = (dtype.type(op.float_attr(a)) for a in ("alpha", "beta", "bias"))
    return xf / (bias + alpha / dtype.type(size) * window_sum) ** beta


@kernel(BatchNormalizationOp)
def _batch_normalization(op: BatchNormalizationOp, inputs: Sequence[Value]) -> np.ndarray:
    """Inference form: `scale (x - mean) / sqrt(var + epsilon) + B` per channel."""
    x, scale, bias, mean, var = inputs
    assert x is not None
    dtype = compute_dtype(x)
    rank = x.ndim

    def channel(v: Value) -> np.ndarray:
        return per_channel(v.astype(dtype, copy=False), rank)  # type: ignore[union-attr]

    epsilon = dtype.type(op.float_attr("epsilon"))
    return (x.astype(dtype, copy=False) - channel(mean)) / np.sqrt(
        channel(var) + epsilon
    ) * channel(scale) + channel(bias)


@kernel(LayerNormalizationOp)
def _layer_normalization(op: LayerNormalizationOp, inputs: Sequence[Value]) -> np.ndarray:
    """Normalise over dims `axis`.. (in float32 for `stash_type` 1), then scale and shift."""
    x, scale, bias = inputs
    assert x is not None and scale is not None
    axis = shapes.normalize_axis(op.int_attr("axis"), x.ndim)
    stash = np.float32 if op.int_attr("stash_type") == 1 else compute_dtype(x)
    dtype = np.result_type(stash, x.dtype)
    xs = x.astype(dtype, copy=False)
    axes = tuple(range(axis, x.ndim))
    mean = xs.mean(axis=axes, keepdims=True)
    centred = xs - mean
    variance = (centred * centred).mean(axis=axes, keepdims=True)
    normal = centred / np.sqrt(variance + dtype.type(op.float_attr("epsilon")))
    y = normal * scale.astype(dtype, copy=False)
    if bias is not None:
        y = y + bias.astype(dtype, copy=False)
    return y


def softmax(x: np.ndarray, axis: int, log: bool) -> np.ndarray:
    dtype = compute_dtype(x)
    shifted = x.astype(dtype, copy=False) - x.max(axis=axis, keepdims=True).astype(dtype)
    exps = np.exp(shifted)
    total = exps.sum(axis=axis, keepdims=True)
    return shifted - np.log(total) if log else exps / total


@kernel(SoftmaxOp, LogSoftmaxOp)
def _softmax(op: Any, inputs: Sequence[Value]) -> np.ndarray:
    x = inputs[0]
    assert x is not None
    axis = shapes.normalize_axis(op.int_attr("axis"), x.ndim)
    return softmax(x, axis, isinstance(op, LogSoftmaxOp))


@kernel(DropoutOp)
def _dropout(op: DropoutOp, inputs: Sequence[Value]) -> np.ndarray:
    """Identity; a training-mode dropout with a non-zero ratio is random, so refused."""
    data, ratio, training = inputs
    if training is not None and bool(np.asarray(training).reshape(-1)[0]):
        if ratio is None or float(np.asarray(ratio).reshape(-1)[0]) != 0:
            raise KernelError(
                f"{op.name}: training-mode dropout is random; the reference cannot run it"
            )
    return data  # type: ignore[return-value]


def lowest(dtype: np.dtype) -> Any:
    """The identity of max: -inf, the type's minimum, or False."""
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def accumulator(x: np.ndarray) -> np.dtype:
    """Sums of float16 accumulate in float32; other types in their own."""
    return compute_dtype(x) if x.dtype.kind == "f" else x.dtype


def mean_type(x: np.ndarray) -> np.dtype:
    return compute_dtype(x) if x.dtype.kind == "f" else np.dtype(np.float64)


REDUCTIONS: dict[type[OnnxOp], Callable[[np.ndarray, tuple[int, ...] | None, bool], np.ndarray]] = {
    ReduceSumOp: lambda x, axes, keep: np.sum(x, axis=axes, keepdims=keep, dtype=accumulator(x)),
    ReduceMeanOp: lambda x, axes, keep: np.mean(x, axis=axes, keepdims=keep, dtype=mean_type(x)),
    ReduceMaxOp: lambda x, axes, keep: np.max(x, axis=axes, keepdims=keep, initial=lowest(x.dtype)),
}
"""Reductions over a set of axes; an empty set reduces to the identity (or NaN for Mean)."""


@kernel(*REDUCTIONS)
def _reduce(op: Any, inputs: Sequence[Value]) -> np.ndarray:
    data, axes = inputs
    assert data is not None
    chosen = op.reduction_axes(ints(axes))
    if chosen == ():
        return data
    return REDUCTIONS[type(op)](data, chosen, bool(op.int_attr("keepdims")))


# ---------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------


@kernel(ReshapeOp)
def _reshape(op: ReshapeOp, inputs: Sequence[Value]) -> np.ndarray:
    data, shape = inputs
    assert data is not None
    target = ints(shape) or ()
    return data.reshape(shapes.reshape(data.shape, target, bool(op.int_attr("allowzero"))))


@kernel(TransposeOp)
def _transpose(op: TransposeOp, inputs: Sequence[Value]) -> np.ndarray:
    return np.transpose(inputs[0], op.ints_attr("perm"))  # type: ignore[arg-type]


@kernel(FlattenOp)
def _flatten(op: FlattenOp, inputs: Sequence[Value]) -> np.ndarray:
    x = inputs[0]
    assert x is not None
    return x.reshape(shapes.flatten(x.shape, op.int_attr("axis")))


@kernel(SqueezeOp)
def _squeeze(op: SqueezeOp, inputs: Sequence[Value]) -> np.ndarray:
    data, axes = inputs
    assert data is not None
    return data.reshape(shapes.squeeze(data.shape, ints(axes)))


@kernel(UnsqueezeOp)
def _unsqueeze(op: UnsqueezeOp, inputs: Sequence[Value]) -> np.ndarray:
    data, axes = inputs
    assert data is not None
    return data.reshape(shapes.unsqueeze(data.shape, ints(axes)))  # type: ignore[arg-type]


@kernel(ConcatOp)
def _concat(op: ConcatOp, inputs: Sequence[Value]) -> np.ndarray:
    axis = shapes.normalize_axis(op.int_attr("axis"), inputs[0].ndim)  # type: ignore[union-attr]
    return np.concatenate(inputs, axis=axis)  # type: ignore[arg-type]


@kernel(SplitOp)
def _split(op: SplitOp, inputs: Sequence[Value]) -> list[np.ndarray]:
    data, split = inputs
    assert data is not None
    axis = shapes.normalize_axis(op.int_attr("axis"), data.ndim)
    count = op.int_attr("num_outputs") if op.num_outputs is not None else len(op.results)
    sizes = shapes.split_sizes(data.shape[axis], ints(split), count)
    return np.split(data, np.cumsum(sizes)[:-1], axis=axis)


@kernel(SliceOp)
def _slice(op: SliceOp, inputs: Sequence[Value]) -> np.ndarray:
    data, starts, ends, axes, steps = inputs
    assert data is not None
    _, slices = shapes.slice_dims(
        data.shape, ints(starts) or (), ints(ends) or (), ints(axes), ints(steps)
    )
    return data[tuple(slices)]


@kernel(GatherOp)
def _gather(op: GatherOp, inputs: Sequence[Value]) -> np.ndarray:
    data, indices = inputs
    assert data is not None and indices is not None
    axis = shapes.normalize_axis(op.int_attr("axis"), data.ndim)
    size = data.shape[axis]
    if indices.size and (indices.min() < -size or indices.max() >= size):
        raise KernelError(f"{op.name}: an index is out of range [{-size}, {size - 1}]")
    return np.take(data, indices.astype(np.int64), axis=axis)


PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}
"""ONNX Pad modes and the numpy.pad modes with the same meaning."""


@kernel(PadOp)
def _pad(op: PadOp, inputs: Sequence[Value]) -> np.ndarray:
    """Negative pads crop first; the remaining positive pads are filled by `mode`."""
    data, pads, constant_value, axes = inputs
    assert data is not None
    rank = data.ndim
    chosen = [shapes.normalize_axis(a, rank) for a in ints(axes) or range(rank)]
    amounts = ints(pads) or ()
    if len(amounts) != 2 * len(chosen):
        raise KernelError(f"{op.name}: pads has {len(amounts)} values for {len(chosen)} axes")
    widths = [(0, 0)] * rank
    for i, a in enumerate(chosen):
        widths[a] = (amounts[i], amounts[i + len(chosen)])
    crop = tuple(slice(max(-b, 0), size - max(-e, 0)) for (b, e), size in zip(widths, data.shape))
    cropped = data[crop]
    grow = [(max(b, 0), max(e, 0)) for b, e in widths]
    mode = op.mode.data
    if mode not in PAD_MODES:
        raise KernelError(f"{op.name}: unknown mode '{mode}'")
    if mode == "constant":
        fill = 0 if constant_value is None else np.asarray(constant_value).reshape(-1)[0]
        return np.pad(cropped, grow, mode="constant", constant_values=fill)
    if any(g != (0, 0) for g in grow) and 0 in cropped.shape:
        raise KernelError(f"{op.name}: cannot pad an empty tensor in mode '{mode}'")
    return np.pad(cropped, grow, mode=PAD_MODES[mode])  # type: ignore[call-overload]


@kernel(ExpandOp)
def _expand(op: ExpandOp, inputs: Sequence[Value]) -> np.ndarray:
    data, shape = inputs
    assert data is not None
    return np.broadcast_to(data, shapes.expand(data.shape, ints(shape)))  # type: ignore[arg-type]


@kernel(RangeOp)
def _range(op: RangeOp, inputs: Sequence[Value]) -> np.ndarray:
    """`start + i * delta` for i < max(ceil((limit - start) / delta), 0)."""
    start, limit, delta = (np.asarray(v).reshape(())[()] for v in inputs)
    count = shapes.range_length(start, limit, delta)
    return (start + np.arange(count, dtype=result_dtype(op)) * delta).astype(result_dtype(op))


@kernel(TriluOp)
def _trilu(op: TriluOp, inputs: Sequence[Value]) -> np.ndarray:
    """Zero below (upper) or above (lower) diagonal k of the last two axes."""
    x, k = inputs
    assert x is not None
    diagonal = 0 if k is None else int(np.asarray(k).reshape(()))
    return np.triu(x, diagonal) if op.int_attr("upper") else np.tril(x, diagonal)


@kernel(ShapeOp)
def _shape(op: ShapeOp, inputs: Sequence[Value]) -> np.ndarray:
    data = inputs[0]
    assert data is not None
    end = op.int_attr("end") if op.end is not None else data.ndim
    # python slicing clamps negative and out-of-range bounds exactly as ONNX does
    return np.array(data.shape[op.int_attr("start") : end], dtype=np.int64)


def resize_scales_and_sizes(
    op: ResizeOp, x_shape: Sequence[int], scales: Value, sizes: Value
) -> tuple[list[np.float32], list[int], list[int]]:
    """
    Per-dim float32 scales and output sizes from the operand values, and the
    resized axes. Sizes follow the dialect's shape rule; scales derived from
    `sizes` are float32 quotients, as ONNX Runtime computes them.
    """
    rank = len(x_shape)
    axes = [shapes.normalize_axis(a, rank) for a in (op.ints_attr("axes") or range(rank))]
    factors = [np.float32(1)] * rank
    out = list(x_shape)
    if sizes is not None and sizes.size:
        wanted = ints(sizes) or ()
        if len(wanted) != len(axes):
            raise KernelError(f"{op.name}: sizes has {len(wanted)} values for {len(axes)} axes")
        ratios = [np.float32(size) / np.float32(x_shape[a]) for a, size in zip(axes, wanted)]
        policy = op.keep_aspect_ratio_policy.data
        if policy == "stretch":
            for a, size, ratio in zip(axes, wanted, ratios):
                factors[a], out[a] = ratio, size
        else:
            ratio = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                factors[a], out[a] = ratio, int(math.floor(float(ratio) * x_shape[a] + 0.5))
    elif scales is not None and scales.size:
        values = [np.float32(v) for v in scales.reshape(-1)]
        if len(values) != len(axes):
            raise KernelError(f"{op.name}: scales has {len(values)} values for {len(axes)} axes")
        for a, factor in zip(axes, values):
            factors[a], out[a] = factor, int(math.floor(x_shape[a] * float(factor)))
    else:
        raise KernelError(f"{op.name}: one of scales and sizes is required")
    return factors, out, axes


def source_coordinates(
    mode: str, out_size: int, in_size: int, scale: np.float32, roi: tuple[float, float]
) -> np.ndarray:
    """
    Where each output index of one axis samples the input, per
    `coordinate_transformation_mode`. Computed in float32 and in ONNX Runtime's
    order of operations, so coordinates that land next to a rounding boundary
    round the same way.
    """
    f = np.float32
    resized = np.arange(out_size, dtype=f)
    length_in, length_out = f(in_size), f(out_size)
    if scale == 1 and mode != "tf_crop_and_resize":
        return resized  # an axis that is not resized maps one to one
    if mode == "half_pixel":
        return (resized + f(0.5)) / scale - f(0.5)
    if mode == "half_pixel_symmetric":
        adjustment = length_out / (scale * length_in)
        offset = length_in / f(2) * (f(1) - adjustment)
        # ONNX Runtime evaluates this sum in double and rounds it once
        unshifted = (resized.astype(np.float64) + 0.5) / np.float64(scale) - 0.5
        return (np.float64(offset) + unshifted).astype(f)
    if mode == "pytorch_half_pixel":
        return (resized + f(0.5)) / scale - f(0.5) if out_size > 1 else np.zeros(out_size, f)
    if mode == "align_corners":
        return (
            resized * (length_in - f(1)) / (length_out - f(1))
            if out_size > 1
            else np.zeros(out_size, f)
        )
    if mode == "asymmetric":
        return resized / scale
    if mode == "tf_half_pixel_for_nn":  # opset 11 only; converted models may keep it
        return (resized + f(0.5)) / scale
    if mode == "tf_crop_and_resize":
        start, end = f(roi[0]), f(roi[1])
        if out_size == 1:
            return np.full(out_size, 0.5 * (float(start) + float(end)) * (in_size - 1), f)
        return start * (length_in - f(1)) + resized * (end - start) * (length_in - f(1)) / (
            length_out - f(1)
        )
    raise KernelError(f"onnx.Resize: unknown coordinate_transformation_mode '{mode}'")


def _round_half(x: np.ndarray, up: bool) -> np.ndarray:
    """Round to nearest; exact halves go up or down (computed without rounding error)."""
    whole = np.floor(x)
    fraction = x - whole
    return whole + ((fraction >= 0.5) if up else (fraction > 0.5))


NEAREST: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "round_prefer_floor": lambda x: _round_half(x, up=False),
    "round_prefer_ceil": lambda x: _round_half(x, up=True),
    "floor": np.floor,
    "ceil": np.ceil,
}
"""`nearest_mode`: which input index a fractional coordinate rounds to."""


@kernel(ResizeOp)
def _resize(op: ResizeOp, inputs: Sequence[Value]) -> np.ndarray:
    """
    Nearest-neighbour resize, separable per axis: each output index picks one input
    index; `tf_crop_and_resize` samples outside the input give `extrapolation_value`.
    """
    x, roi, scales, sizes = inputs
    assert x is not None
    if op.mode.data != "nearest" or op.antialias.value.data:
        raise KernelError(f"{op.name}: only nearest resizing without antialias has a kernel")
    ctm = op.coordinate_transformation_mode.data
    rounding = NEAREST.get(op.nearest_mode.data)
    if rounding is None:
        raise KernelError(f"{op.name}: unknown nearest_mode '{op.nearest_mode.data}'")
    factors, out, axes = resize_scales_and_sizes(op, x.shape, scales, sizes)
    boxes = [(0.0, 1.0)] * x.ndim
    if ctm == "tf_crop_and_resize" and roi is not None and roi.size:
        values = [float(v) for v in roi.reshape(-1)]
        for i, a in enumerate(axes):
            boxes[a] = (values[i], values[i + len(axes)])
    indices, valid = [], np.ones((1,) * x.ndim, bool)
    for d in range(x.ndim):
        coords = source_coordinates(ctm, out[d], x.shape[d], factors[d], boxes[d])
        indices.append(np.clip(rounding(coords), 0, x.shape[d] - 1).astype(np.int64))
        inside = (coords >= 0) & (coords <= x.shape[d] - 1)
        valid = valid & inside.reshape([-1 if i == d else 1 for i in range(x.ndim)])
    y = x[np.ix_(*indices)]
    if ctm == "tf_crop_and_resize":
        y = np.where(valid, y, np.asarray(op.extrapolation_value.value.data, dtype=x.dtype))
    return y


# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------


@kernel(ConstantOp, WeightOp)
def _constant(op: Any, inputs: Sequence[Value]) -> np.ndarray:
    return op.array()


@kernel(NoneOp)
def _none(op: NoneOp, inputs: Sequence[Value]) -> list[Value]:
    return [None]


@kernel(ConstantOfShapeOp)
def _constant_of_shape(op: ConstantOfShapeOp, inputs: Sequence[Value]) -> np.ndarray:
    shape = ints(inputs[0]) or ()
    if any(d < 0 for d in shape):
        raise KernelError(f"{op.name}: negative dimension in {list(shape)}")
    fill = op.fill()
    return np.full(shape, fill, dtype=fill.dtype)


# ---------------------------------------------------------------------------
# Quantisation
# ---------------------------------------------------------------------------


def along(param: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """A per-tensor or per-axis parameter shaped to broadcast along `axis` (of `rank` dims)."""
    if param.size == 1:
        return param.reshape(())
    shape = [1] * rank
    shape[shapes.normalize_axis(axis, rank)] = param.size
    return param.reshape(shape)


def saturate_round(values: np.ndarray, zero_point: Any, dtype: np.dtype) -> np.ndarray:
    """`saturate(round_half_even(values) + zero_point)` into the integer `dtype`."""
    info = np.iinfo(dtype)
    return np.clip(np.rint(values) + zero_point, info.min, info.max).astype(dtype)


def zero_point_of(value: Value) -> Any:
    return 0 if value is None else value.astype(np.int32)


@kernel(QuantizeLinearOp)
def _quantize_linear(op: QuantizeLinearOp, inputs: Sequence[Value]) -> np.ndarray:
    x, scale, zero_point = inputs
    assert x is not None and scale is not None
    dtype = compute_dtype(x, scale)
    axis = op.int_attr("axis")
    scaled = x.astype(dtype, copy=False) / along(scale.astype(dtype, copy=False), axis, x.ndim)
    zp = along(np.asarray(zero_point_of(zero_point)), axis, x.ndim)
    return saturate_round(scaled, zp.astype(dtype), result_dtype(op))


@kernel(DequantizeLinearOp)
def _dequantize_linear(op: DequantizeLinearOp, inputs: Sequence[Value]) -> np.ndarray:
    x, scale, zero_point = inputs
    assert x is not None and scale is not None
    axis = op.int_attr("axis")
    zp = along(np.asarray(zero_point_of(zero_point), dtype=np.int64), axis, x.ndim)
    dtype = compute_dtype(scale)
    shifted = (x.astype(np.int64) - zp).astype(dtype)
    return shifted * along(scale.astype(dtype, copy=False), axis, x.ndim)


def requantize(
    accumulated: np.ndarray, multiplier: np.ndarray, zero_point: np.ndarray, dtype: np.dtype
) -> np.ndarray:
    """An exact integer accumulation scaled in float32 and rounded into `dtype`, as ORT does."""
    scaled = accumulated.astype(np.float32) * multiplier
    return saturate_round(scaled, zero_point.astype(np.float32), dtype)


def real_multiplier(*scales: np.ndarray) -> np.ndarray:
    """`a_scale * b_scale / y_scale` in float32."""
    a, b, y = (s.astype(np.float32) for s in scales)
    return a * b / y


@kernel(QLinearConvOp)
def _qlinear_conv(op: QLinearConvOp, inputs: Sequence[Value]) -> np.ndarray:
    """Convolution of zero-point-shifted integers (exact in float64), plus bias, requantised."""
    x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias = inputs
    assert x is not None and w is not None and x_zp is not None and w_zp is not None
    xs = x.astype(np.float64) - along(x_zp.astype(np.float64), 1, x.ndim)
    ws = w.astype(np.float64) - along(w_zp.astype(np.float64), 0, w.ndim)
    accumulated = conv(xs, ws, bias, op)
    multiplier = real_multiplier(x_scale, w_scale, y_scale)  # type: ignore[arg-type]
    multiplier = along(multiplier, 1, x.ndim)
    return requantize(accumulated, multiplier, y_zp, result_dtype(op))  # type: ignore[arg-type]


@kernel(QLinearMatMulOp)
def _qlinear_matmul(op: QLinearMatMulOp, inputs: Sequence[Value]) -> np.ndarray:
    """
    Product of zero-point-shifted integers (exact in float64), requantised; a's
    parameters may be per row, b's per column.
    """
    a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp = inputs
    assert a is not None and b is not None and a_zp is not None and b_zp is not None
    assert a_scale is not None and b_scale is not None and y_scale is not None
    shifted_a = a.astype(np.float64) - per_row(a_zp.astype(np.float64))
    shifted_b = b.astype(np.float64) - per_column(b_zp.astype(np.float64))
    accumulated = np.matmul(shifted_a, shifted_b)
    multiplier = per_row(a_scale.astype(np.float32)) * per_column(b_scale.astype(np.float32))
    multiplier = multiplier / y_scale.astype(np.float32)
    return requantize(accumulated, multiplier, y_zp, result_dtype(op))  # type: ignore[arg-type]


def per_row(param: np.ndarray) -> np.ndarray:
    """A per-tensor or per-row (dim -2) parameter of a matrix, shaped to broadcast against it."""
    return param.reshape(()) if param.size == 1 else param.reshape(-1, 1)


def per_column(param: np.ndarray) -> np.ndarray:
    """A per-tensor or per-column (dim -1) parameter of a matrix, shaped to broadcast against it."""
    return param.reshape(()) if param.size == 1 else param.reshape(-1)


__all__ = ["ACTIVATIONS", "KERNELS", "KernelError", "evaluate", "kernel"]
