"""
`evaluate`, the kernels' public entry point, on ops built directly: coverage of
the dialect, its error reporting, fused ops against their unfused composition,
and the numerics that need their own check (erf, exact quantisation ties).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    NoneType,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.utils.test_value import create_ssa_value

from mobile_opt.reference.errors import KernelError
from mobile_opt.reference.kernels import ACTIVATIONS, KERNELS, erf, evaluate
from mobile_opt.dialects.onnx import ONNX_OPS, OnnxOp
from mobile_opt.dialects.onnx.constants import ConstantOp, NoneOp, WeightOp
from mobile_opt.dialects.onnx.elementwise import (
    ClipOp,
    GeluOp,
    HardSigmoidOp,
    HardSwishOp,
    IdentityOp,
    LeakyReluOp,
    ReluOp,
    SigmoidOp,
    TanhOp,
)
from mobile_opt.dialects.onnx.fused import (
    ACTIVATION_PARAMS,
    FusedConvOp,
    FusedGemmOp,
    FusedMatMulOp,
)
from mobile_opt.dialects.onnx.nn import ConvOp, GemmOp, MatMulOp
from mobile_opt.dialects.onnx.quant import QuantizeLinearOp
from mobile_opt.dialects.onnx.types import element_type_of, ui8

RNG = np.random.default_rng(7)


def tensor_of(array: np.ndarray) -> TensorType:
    return TensorType(element_type_of(array.dtype), array.shape)


def build(
    cls: type[OnnxOp],
    inputs: Sequence[np.ndarray | None],
    result: Attribute | Sequence[Attribute],
    **props,
):
    """An op of `cls` over placeholder operands typed like `inputs`, verified."""
    operands = [create_ssa_value(NoneType() if v is None else tensor_of(v)) for v in inputs]
    results = list(result) if isinstance(result, Sequence) else [result]
    op = cls.create(operands=operands, result_types=results, properties=props)
    op.verify()
    return op


def test_every_dialect_op_has_a_kernel():
    missing = sorted(name for name, cls in ONNX_OPS.items() if cls not in KERNELS)
    assert not missing


def test_fused_activations_match_the_dialect():
    assert set(ACTIVATIONS) == set(ACTIVATION_PARAMS)


@irdl_op_definition
class OrphanOp(OnnxOp):
    """An op of the dialect's kind that has no kernel."""

    name = "onnx.TestOrphan"
    X = operand_def(TensorType)
    Y = result_def(TensorType)


def test_op_without_kernel_is_named():
    x = np.zeros(3, np.float32)
    with pytest.raises(KernelError, match=r"onnx\.TestOrphan: the reference backend has no kernel"):
        evaluate(build(OrphanOp, [x], tensor_of(x)), [x])


def test_operand_values_are_checked_against_the_types():
    x = np.zeros((2, 3), np.float32)
    op = build(ReluOp, [x], tensor_of(x))
    with pytest.raises(KernelError, match=r"operand #0 is tensor<2x3xf32>, got float32\[3, 2\]"):
        evaluate(op, [np.zeros((3, 2), np.float32)])
    with pytest.raises(KernelError, match="operand #0 .* got int32"):
        evaluate(op, [np.zeros((2, 3), np.int32)])
    with pytest.raises(KernelError, match="got 2 operand values for 1 operands"):
        evaluate(op, [x, x])


def test_none_and_constants():
    assert evaluate(NoneOp(), []) == [None]
    value = np.arange(6, dtype=np.int64).reshape(2, 3)
    (result,) = evaluate(ConstantOp(value), [])
    np.testing.assert_array_equal(result, value)


def test_any_kernel_failure_is_a_kernel_error_naming_the_op(tmp_path):
    op = WeightOp(str(tmp_path / "absent.npy"), "w", TensorType(f32, [2]))
    with pytest.raises(KernelError, match=r"^onnx\.Weight: WeightStoreError: .*absent\.npy"):
        evaluate(op, [])


def test_results_have_the_declared_type():
    x = np.array([1.5, -2.5], np.float32)
    (y,) = evaluate(build(IdentityOp, [x], tensor_of(x)), [x])
    assert y.dtype == np.float32 and y.shape == (2,)


def test_a_wrong_result_shape_is_reported():
    x = np.zeros((2, 3), np.float32)
    op = build(ReluOp, [x], tensor_of(x))
    op.results[0]._type = TensorType(f32, [3, 2])  # as a bad rewrite could leave it
    with pytest.raises(KernelError, match=r"result #0 came out as \[2, 3\]"):
        evaluate(op, [x])


def test_inputs_are_not_written():
    x = RNG.uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32)
    w = RNG.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32)
    b = RNG.uniform(-1, 1, 3).astype(np.float32)
    for a in (x, w, b):
        a.setflags(write=False)  # numpy raises if a kernel writes in place
    op = build(
        ConvOp,
        [x, w, b],
        TensorType(f32, [1, 3, 5, 5]),
        pads=DenseArrayBase.from_list(i64, [1, 1, 1, 1]),
    )
    evaluate(op, [x, w, b])


def test_erf_against_math_erf():
    x = np.concatenate([np.linspace(-7, 7, 20001), RNG.normal(0, 2, 1000), [0.0, -0.0, 3.0, -3.0]])
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), want, rtol=1e-12, atol=1e-14)
    assert erf(np.float32([0.5])).dtype == np.float32


def test_quantize_rounds_half_to_even_and_saturates():
    x = np.array([0.5, 1.5, 2.5, -0.5, 254.5, 255.5, 300.0, -3.0], np.float32)
    scale, zero = np.array(1.0, np.float32), np.array(0, np.uint8)
    op = build(QuantizeLinearOp, [x, scale, zero], TensorType(ui8, x.shape))
    (y,) = evaluate(op, [x, scale, zero])
    np.testing.assert_array_equal(y, np.array([0, 2, 2, 0, 254, 255, 255, 0], np.uint8))


def _activation_op(name: str, params: Sequence[float], y: np.ndarray) -> tuple[OnnxOp, list]:
    """The standalone op equal to fused activation `name`, and its operand values."""
    t = tensor_of(y)
    f = lambda v: FloatAttr(v, f32)  # noqa: E731
    if name == "LeakyRelu":
        return build(LeakyReluOp, [y], t, alpha=f(params[0])), [y]
    if name == "HardSigmoid":
        return build(HardSigmoidOp, [y], t, alpha=f(params[0]), beta=f(params[1])), [y]
    if name == "Clip":
        bounds = [np.array(p, np.float32) for p in params]
        return build(ClipOp, [y, *bounds], t), [y, *bounds]
    simple = {
        "Relu": ReluOp,
        "Sigmoid": SigmoidOp,
        "Tanh": TanhOp,
        "HardSwish": HardSwishOp,
        "Gelu": GeluOp,
    }
    return build(simple[name], [y], t), [y]


PARAMS = {"LeakyRelu": [0.1], "Clip": [-0.3, 0.4], "HardSigmoid": [0.3, 0.45]}


def _fused_props(name: str) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {"activation": StringAttr(name)}
    if PARAMS.get(name):
        props["activation_params"] = DenseArrayBase.from_list(f32, PARAMS[name])
    return props


def _compose(base: OnnxOp, inputs: list, activation: str) -> np.ndarray:
    (y,) = evaluate(base, inputs)
    if not activation:
        return y
    op, values = _activation_op(activation, PARAMS.get(activation, []), y)
    return evaluate(op, values)[0]


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_fused_conv_is_conv_then_activation(activation: str):
    x = RNG.uniform(-1, 1, (2, 4, 6, 5)).astype(np.float32)
    w = RNG.uniform(-1, 1, (6, 2, 3, 3)).astype(np.float32)
    b = RNG.uniform(-1, 1, 6).astype(np.float32)
    out = TensorType(f32, [2, 6, 3, 2])
    geometry = {
        "group": IntegerAttr(2, 64),
        "strides": DenseArrayBase.from_list(i64, [2, 2]),
        "pads": DenseArrayBase.from_list(i64, [1, 0, 0, 1]),
    }
    fused = build(FusedConvOp, [x, w, b], out, **geometry, **_fused_props(activation))
    want = _compose(build(ConvOp, [x, w, b], out, **geometry), [x, w, b], activation)
    np.testing.assert_allclose(evaluate(fused, [x, w, b])[0], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_fused_gemm_is_gemm_then_activation(activation: str):
    a = RNG.uniform(-1, 1, (5, 3)).astype(np.float32)
    b = RNG.uniform(-1, 1, (4, 5)).astype(np.float32)
    c = RNG.uniform(-1, 1, 4).astype(np.float32)
    out = TensorType(f32, [3, 4])
    attrs = {
        "transA": IntegerAttr(1, 64),
        "transB": IntegerAttr(1, 64),
        "alpha": FloatAttr(0.7, f32),
    }
    fused = build(FusedGemmOp, [a, b, c], out, **attrs, **_fused_props(activation))
    want = _compose(build(GemmOp, [a, b, c], out, **attrs), [a, b, c], activation)
    np.testing.assert_allclose(evaluate(fused, [a, b, c])[0], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_fused_matmul_is_matmul_bias_then_activation(activation: str):
    a = RNG.uniform(-1, 1, (2, 3, 5)).astype(np.float32)
    b = RNG.uniform(-1, 1, (5, 4)).astype(np.float32)
    bias = RNG.uniform(-1, 1, 4).astype(np.float32)
    out = TensorType(f32, [2, 3, 4])
    fused = build(FusedMatMulOp, [a, b, bias], out, **_fused_props(activation))
    (product,) = evaluate(build(MatMulOp, [a, b], out), [a, b])
    biased = product + bias
    if activation:
        op, values = _activation_op(activation, PARAMS.get(activation, []), biased)
        biased = evaluate(op, values)[0]
    np.testing.assert_allclose(evaluate(fused, [a, b, bias])[0], biased, rtol=1e-6, atol=1e-6)
