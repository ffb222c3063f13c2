"""
Reference kernels against ONNX Runtime, one single-node opset-21 model per case.

ONNX's own node tests skip operators whose version changed after opset 21 (Conv,
the pools, ConvTranspose, QuantizeLinear, Cast, ...), and the light CNNs run with
constant weights; these cases cover that geometry and those semantics with random
data instead: every auto_pad, stride, dilation, group, ceil_mode and padding
variant, every Resize coordinate and rounding mode, every Pad mode, per-axis
quantisation, and so on. Inputs named in `constants` become initializers, so the
importer sees them as constants (shape operands must be).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from mobile_opt.reference.interpreter import run_reference
from mobile_opt.frontend.onnx_import import import_onnx

RNG = np.random.default_rng(2024)


def rand(*shape: int, dtype=np.float32, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(dtype)


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def quant(*shape: int, dtype=np.uint8) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def u8s8_weights(*shape: int) -> np.ndarray:
    """
    int8 weights for a uint8 activation: within ±64, because onnxruntime's x86
    u8s8 kernels without VNNI add product pairs in saturating 16 bits.
    """
    return RNG.integers(-64, 65, shape).astype(np.int8)


@dataclass
class Case:
    """One node: `inputs` are graph inputs, `constants` initializers (both in ONNX input order)."""

    id: str
    op: str
    inputs: dict[str, np.ndarray | None]
    attrs: dict[str, Any] = field(default_factory=dict)
    constants: tuple[str, ...] = ()
    outputs: int = 1
    out_types: tuple[int, ...] | None = None
    rtol: float = 1e-3
    atol: float = 1e-4


def c(
    id: str, op: str, inputs: dict[str, np.ndarray | None], constants: tuple[str, ...] = (), **kw
) -> Case:
    attrs = kw.pop("attrs", {})
    return Case(id, op, inputs, attrs, constants, **kw)


def image(n: int = 1, ch: int = 3, *spatial: int) -> np.ndarray:
    return rand(n, ch, *(spatial or (7, 7)))


CONV = [
    c(
        "conv_3x3_pad1",
        "Conv",
        {"x": image(1, 3, 8, 8), "w": rand(4, 3, 3, 3), "b": rand(4)},
        attrs={"pads": [1, 1, 1, 1]},
    ),
    c(
        "conv_stride2_asym_pads",
        "Conv",
        {"x": image(2, 3, 9, 8), "w": rand(5, 3, 3, 2)},
        attrs={"strides": [2, 2], "pads": [0, 1, 2, 0]},
    ),
    c(
        "conv_dilated",
        "Conv",
        {"x": image(1, 2, 11, 10), "w": rand(3, 2, 3, 3), "b": rand(3)},
        attrs={"dilations": [2, 3]},
    ),
    c(
        "conv_group2",
        "Conv",
        {"x": image(1, 4, 6, 6), "w": rand(6, 2, 3, 3), "b": rand(6)},
        attrs={"group": 2, "pads": [1, 1, 1, 1]},
    ),
    c(
        "conv_depthwise",
        "Conv",
        {"x": image(1, 8, 9, 9), "w": rand(8, 1, 3, 3)},
        attrs={"group": 8, "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    c(
        "conv_depthwise_multiplier",
        "Conv",
        {"x": image(1, 3, 6, 6), "w": rand(6, 1, 3, 3)},
        attrs={"group": 3},
    ),
    c(
        "conv_same_upper_s2",
        "Conv",
        {"x": image(1, 3, 10, 9), "w": rand(4, 3, 4, 3)},
        attrs={"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    ),
    c(
        "conv_same_lower_s2",
        "Conv",
        {"x": image(1, 3, 10, 9), "w": rand(4, 3, 4, 3)},
        attrs={"auto_pad": "SAME_LOWER", "strides": [2, 2]},
    ),
    c(
        "conv_valid",
        "Conv",
        {"x": image(1, 3, 7, 7), "w": rand(2, 3, 3, 3)},
        attrs={"auto_pad": "VALID", "strides": [2, 1]},
    ),
    c("conv_1x1", "Conv", {"x": image(2, 16, 5, 5), "w": rand(8, 16, 1, 1), "b": rand(8)}),
    c(
        "conv_1x1_stride2",
        "Conv",
        {"x": image(1, 4, 6, 6), "w": rand(8, 4, 1, 1)},
        attrs={"strides": [2, 2]},
    ),
    c(
        "conv_1d",
        "Conv",
        {"x": rand(2, 3, 12), "w": rand(4, 3, 5), "b": rand(4)},
        attrs={"pads": [2, 1], "strides": [2]},
    ),
    c(
        "conv_3d",
        "Conv",
        {"x": rand(1, 2, 5, 6, 7), "w": rand(3, 2, 3, 2, 3)},
        attrs={"pads": [1, 0, 1, 1, 1, 0], "dilations": [1, 2, 1]},
    ),
    c(
        "conv_kernel_shape_attr",
        "Conv",
        {"x": image(1, 2, 6, 6), "w": rand(2, 2, 2, 2)},
        attrs={"kernel_shape": [2, 2]},
    ),
]

CONV_TRANSPOSE = [
    c(
        "convT_stride2",
        "ConvTranspose",
        {"x": image(1, 3, 4, 5), "w": rand(3, 2, 3, 3), "b": rand(2)},
        attrs={"strides": [2, 2]},
    ),
    c(
        "convT_pads_outpad",
        "ConvTranspose",
        {"x": image(1, 2, 5, 5), "w": rand(2, 3, 3, 3)},
        attrs={"strides": [2, 2], "pads": [1, 0, 1, 2], "output_padding": [1, 1]},
    ),
    c(
        "convT_group_dilation",
        "ConvTranspose",
        {"x": image(2, 4, 4, 4), "w": rand(4, 3, 2, 3)},
        attrs={"group": 2, "dilations": [2, 1], "strides": [1, 2]},
    ),
    c(
        "convT_output_shape",
        "ConvTranspose",
        {"x": image(1, 2, 3, 3), "w": rand(2, 2, 3, 3)},
        attrs={"strides": [3, 2], "output_shape": [10, 8]},
    ),
    c(
        "convT_output_shape_odd_crop",
        "ConvTranspose",
        {"x": image(1, 2, 3, 4), "w": rand(2, 2, 3, 3)},
        attrs={"strides": [2, 2], "output_shape": [6, 8]},
    ),
    c(
        "convT_output_shape_same_upper",
        "ConvTranspose",
        {"x": image(1, 2, 3, 4), "w": rand(2, 2, 3, 3)},
        attrs={"strides": [2, 2], "output_shape": [6, 8], "auto_pad": "SAME_UPPER"},
    ),
    c(
        "convT_same_upper",
        "ConvTranspose",
        {"x": image(1, 2, 4, 3), "w": rand(2, 3, 3, 3)},
        attrs={"strides": [2, 2], "auto_pad": "SAME_UPPER"},
    ),
    c(
        "convT_same_lower",
        "ConvTranspose",
        {"x": image(1, 2, 4, 3), "w": rand(2, 3, 4, 3)},
        attrs={"strides": [2, 2], "auto_pad": "SAME_LOWER"},
    ),
    c(
        "convT_1d",
        "ConvTranspose",
        {"x": rand(1, 3, 6), "w": rand(3, 2, 4), "b": rand(2)},
        attrs={"strides": [3], "pads": [1, 2]},
    ),
    c(
        "convT_depthwise",
        "ConvTranspose",
        {"x": image(1, 4, 5, 5), "w": rand(4, 1, 3, 3)},
        attrs={"group": 4, "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
]

POOL = [
    c(
        "maxpool_k3s2p1",
        "MaxPool",
        {"x": image(1, 3, 9, 9)},
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    c(
        "maxpool_ceil",
        "MaxPool",
        {"x": image(1, 2, 8, 7)},
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    ),
    c(
        "maxpool_ceil_pads",
        "MaxPool",
        {"x": image(1, 2, 10, 9)},
        attrs={"kernel_shape": [3, 2], "strides": [3, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1},
    ),
    c(
        "maxpool_dilated",
        "MaxPool",
        {"x": image(1, 2, 9, 9)},
        attrs={"kernel_shape": [2, 2], "dilations": [2, 2]},
    ),
    c(
        "maxpool_same_upper",
        "MaxPool",
        {"x": image(1, 2, 7, 8)},
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    ),
    c(
        "maxpool_same_lower",
        "MaxPool",
        {"x": image(1, 2, 7, 8)},
        attrs={"kernel_shape": [2, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
    ),
    c("maxpool_1d", "MaxPool", {"x": rand(2, 3, 11)}, attrs={"kernel_shape": [3], "strides": [2]}),
    c(
        "maxpool_3d",
        "MaxPool",
        {"x": rand(1, 2, 5, 6, 7)},
        attrs={"kernel_shape": [2, 2, 3], "strides": [1, 2, 2], "pads": [0, 1, 1, 1, 0, 1]},
    ),
    c(
        "avgpool_exclude_pad",
        "AveragePool",
        {"x": image(1, 3, 7, 7)},
        attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    ),
    c(
        "avgpool_include_pad",
        "AveragePool",
        {"x": image(1, 3, 7, 7)},
        attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    ),
    c(
        "avgpool_ceil",
        "AveragePool",
        {"x": image(1, 2, 8, 7)},
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    ),
    c(
        "avgpool_ceil_include_pad",
        "AveragePool",
        {"x": image(1, 2, 8, 9)},
        attrs={
            "kernel_shape": [3, 3],
            "strides": [2, 2],
            "pads": [1, 1, 1, 1],
            "ceil_mode": 1,
            "count_include_pad": 1,
        },
    ),
    c(
        "avgpool_ceil_exclude_pad",
        "AveragePool",
        {"x": image(1, 2, 8, 9)},
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 0, 1], "ceil_mode": 1},
    ),
    c(
        "avgpool_same_upper",
        "AveragePool",
        {"x": image(1, 2, 7, 8)},
        attrs={"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    ),
    c(
        "avgpool_1d",
        "AveragePool",
        {"x": rand(1, 3, 10)},
        attrs={"kernel_shape": [4], "strides": [3], "pads": [1, 2]},
    ),
    c("global_avgpool", "GlobalAveragePool", {"x": image(2, 3, 5, 6)}),
    c("global_maxpool", "GlobalMaxPool", {"x": rand(2, 3, 4, 5, 3)}),
]

NORM = [
    c("lrn_size3", "LRN", {"x": image(1, 6, 4, 4)}, attrs={"size": 3}),
    c(
        "lrn_size5_params",
        "LRN",
        {"x": image(2, 7, 3, 3)},
        attrs={"size": 5, "alpha": 0.01, "beta": 0.6, "bias": 2.0},
    ),
    c(
        "batchnorm",
        "BatchNormalization",
        {"x": image(2, 3, 4, 4), "s": rand(3), "b": rand(3), "m": rand(3), "v": rand(3, low=0.1)},
        constants=("s", "b", "m", "v"),
        attrs={"epsilon": 1e-3},
    ),
    c(
        "layernorm_last",
        "LayerNormalization",
        {"x": rand(2, 5, 8), "s": rand(8), "b": rand(8)},
        constants=("s", "b"),
    ),
    c(
        "layernorm_axis1",
        "LayerNormalization",
        {"x": rand(2, 3, 4, 5), "s": rand(3, 4, 5)},
        constants=("s",),
        attrs={"axis": 1, "epsilon": 1e-2},
    ),
    c("softmax_axis1", "Softmax", {"x": rand(2, 5, 3, low=-20, high=20)}, attrs={"axis": 1}),
    c("logsoftmax_last", "LogSoftmax", {"x": rand(3, 7, low=-30, high=30)}),
]

MATRIX = [
    c("gemm_plain", "Gemm", {"a": rand(3, 5), "b": rand(5, 4)}),
    c(
        "gemm_trans_alpha_beta",
        "Gemm",
        {"a": rand(5, 3), "b": rand(4, 5), "c": rand(4)},
        attrs={"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0},
    ),
    c(
        "gemm_c_column",
        "Gemm",
        {"a": rand(3, 5), "b": rand(5, 4), "c": rand(3, 1)},
        attrs={"beta": -1.0},
    ),
    c("matmul_batched_bcast", "MatMul", {"a": rand(2, 1, 3, 4), "b": rand(3, 4, 5)}),
    c("matmul_vec_mat", "MatMul", {"a": rand(4), "b": rand(2, 4, 3)}),
    c(
        "matmul_int32",
        "MatMul",
        {
            "a": RNG.integers(-5, 5, (3, 4)).astype(np.int32),
            "b": RNG.integers(-5, 5, (4, 2)).astype(np.int32),
        },
    ),
]

ELEMENTWISE = [
    c("gelu_erf", "Gelu", {"x": rand(4, 50, low=-6, high=6)}),
    c("gelu_tanh", "Gelu", {"x": rand(4, 50, low=-6, high=6)}, attrs={"approximate": "tanh"}),
    c("erf", "Erf", {"x": rand(200, low=-5, high=5)}),
    c("sigmoid_wide", "Sigmoid", {"x": rand(100, low=-100, high=100)}),
    c("hardswish", "HardSwish", {"x": rand(100, low=-5, high=5)}),
    c(
        "hardsigmoid",
        "HardSigmoid",
        {"x": rand(100, low=-5, high=5)},
        attrs={"alpha": 0.3, "beta": 0.4},
    ),
    c("leakyrelu", "LeakyRelu", {"x": rand(50)}, attrs={"alpha": 0.2}),
    c("shrink", "Shrink", {"x": rand(50, low=-2, high=2)}, attrs={"bias": 0.3, "lambd": 0.7}),
    c("tanh", "Tanh", {"x": rand(50, low=-5, high=5)}),
    c("reciprocal", "Reciprocal", {"x": rand(50, low=0.5, high=3)}),
    c("exp", "Exp", {"x": rand(50, low=-3, high=3)}),
    c(
        "div_int32_trunc",
        "Div",
        {
            "a": RNG.integers(-20, 20, (30,)).astype(np.int32),
            "b": np.array([-7, -3, 2, 5, 9] * 6, np.int32),
        },
    ),
    c(
        "div_int64_bcast",
        "Div",
        {
            "a": RNG.integers(-50, 50, (3, 4)).astype(np.int64),
            "b": np.array([-4, 3, 7, -1], np.int64),
        },
    ),
    c(
        "pow_float_int",
        "Pow",
        {"x": rand(20, low=0.1, high=2), "y": RNG.integers(0, 4, (20,)).astype(np.int64)},
    ),
    c("pow_bcast", "Pow", {"x": rand(3, 4, low=0.1, high=2), "y": rand(4, low=-2, high=2)}),
    c(
        "clip_bounds",
        "Clip",
        {
            "x": rand(40, low=-3, high=3),
            "lo": np.array(-0.5, np.float32),
            "hi": np.array(1.5, np.float32),
        },
        constants=("lo", "hi"),
    ),
    c(
        "clip_int8_max_only",
        "Clip",
        {"x": quant(30, dtype=np.int8), "lo": None, "hi": np.array(10, np.int8)},
        constants=("hi",),
    ),
    c("sum3_bcast", "Sum", {"a": rand(2, 3, 4), "b": rand(3, 1), "c": rand(4)}),
    c("max3_bcast", "Max", {"a": rand(2, 3, 4), "b": rand(3, 1), "c": rand(4)}),
    c("min_int64", "Min", {"a": RNG.integers(-9, 9, (5,)), "b": RNG.integers(-9, 9, (5,))}),
    c("sign_int32", "Sign", {"x": RNG.integers(-3, 3, (10,)).astype(np.int32)}),
    c("abs_neg_int8", "Abs", {"x": quant(20, dtype=np.int8)}),
]

CAST = [
    c(
        f"cast_{src.__name__}_to_{TensorProto.DataType.Name(to).lower()}",
        "Cast",
        {"x": x},
        attrs={"to": to},
        out_types=(to,),
    )
    for src, x, to in [
        (np.float32, rand(30, low=-100, high=100), TensorProto.INT32),
        (np.float32, rand(30, low=-100, high=100), TensorProto.INT64),
        (np.float32, rand(30, low=-100, high=100), TensorProto.FLOAT16),
        (np.float32, np.array([0, -0.0, 1.5, -2, 0.001], np.float32), TensorProto.BOOL),
        (np.int64, RNG.integers(-1000, 1000, (20,)), TensorProto.FLOAT),
        (np.int32, RNG.integers(0, 255, (20,)).astype(np.int32), TensorProto.UINT8),
        (np.bool_, np.array([True, False, True]), TensorProto.FLOAT),
        (np.float16, rand(20, dtype=np.float16), TensorProto.DOUBLE),
    ]
]

def small_ints(*shape: int, dtype=np.float32) -> np.ndarray:
    """Values in -3..3: comparisons meet ties."""
    return RNG.integers(-3, 4, shape).astype(dtype)


def bools(*shape: int) -> np.ndarray:
    return RNG.integers(0, 2, shape).astype(np.bool_)


BOOL = (TensorProto.BOOL,)

LOGIC = [
    *[
        c(f"{op.lower()}_{name}", op, inputs, out_types=BOOL)
        for op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")
        for name, inputs in [
            ("float_bcast", {"a": small_ints(3, 4), "b": small_ints(4)}),
            ("int64", {"a": small_ints(2, 5, dtype=np.int64),
                       "b": small_ints(2, 5, dtype=np.int64)}),
        ]
    ],
    c("equal_bool", "Equal", {"a": bools(6), "b": bools(2, 6)}, out_types=BOOL),
    *[
        c(f"{op.lower()}_bcast", op, {"a": bools(3, 1, 4), "b": bools(2, 1)}, out_types=BOOL)
        for op in ("And", "Or", "Xor")
    ],
    c("not", "Not", {"x": bools(3, 5)}, out_types=BOOL),
    c(
        "isnan",
        "IsNaN",
        {"x": np.array([0, np.nan, np.inf, -np.inf, -1.5, np.nan], np.float32)},
        out_types=BOOL,
    ),
    *[
        c(
            f"isinf_{name}",
            "IsInf",
            {"x": np.array([0, np.nan, np.inf, -np.inf, 3e38, -2], np.float32)},
            attrs=attrs,
            out_types=BOOL,
        )
        for name, attrs in [
            ("both", {}),
            ("negative", {"detect_positive": 0}),
            ("positive", {"detect_negative": 0}),
        ]
    ],
    c(
        "where_float_bcast",
        "Where",
        {"c": bools(3, 1), "x": rand(3, 4), "y": rand(4)},
        out_types=(TensorProto.FLOAT,),
    ),
    c(
        "where_int64_mask",
        "Where",
        {
            "c": bools(2, 1, 5),
            "x": small_ints(3, 5, dtype=np.int64),
            "y": small_ints(1, dtype=np.int64),
        },
        out_types=(TensorProto.INT64,),
    ),
    c(
        "where_inf_fill",
        "Where",
        {"c": bools(4, 4), "x": np.array(-np.inf, np.float32), "y": np.array(0, np.float32)},
        constants=("x", "y"),
        out_types=(TensorProto.FLOAT,),
    ),
    *[
        c(
            f"mod_int64_fmod{fmod}",
            "Mod",
            {
                "a": RNG.integers(-20, 21, (4, 6)).astype(np.int64),
                "b": np.array([-7, -3, 2, 5, 9, -1], np.int64),
            },
            attrs={"fmod": fmod},
        )
        for fmod in (0, 1)
    ],
    c(
        "mod_int32_bcast",
        "Mod",
        {"a": small_ints(3, 4, dtype=np.int32), "b": np.array([2, -3], np.int32).reshape(2, 1, 1)},
    ),
    c(
        "mod_float_fmod1",
        "Mod",
        {"a": rand(30, low=-10, high=10), "b": rand(30, low=0.5, high=3) * np.sign(rand(30))},
        attrs={"fmod": 1},
    ),
    c(
        "range_int64",
        "Range",
        {"s": np.array(-3, np.int64), "l": np.array(17, np.int64), "d": np.array(4, np.int64)},
        constants=("s", "l", "d"),
    ),
    c(
        "range_int32_down",
        "Range",
        {"s": np.array(10, np.int32), "l": np.array(-2, np.int32), "d": np.array(-3, np.int32)},
        constants=("s", "l", "d"),
    ),
    c(
        "range_empty",
        "Range",
        {"s": np.array(5, np.int64), "l": np.array(5, np.int64), "d": np.array(1, np.int64)},
        constants=("s", "l", "d"),
    ),
    c(
        "range_float",
        "Range",
        {
            "s": np.array(0.5, np.float32),
            "l": np.array(3.75, np.float32),
            "d": np.array(0.25, np.float32),
        },
        constants=("s", "l", "d"),
    ),
    c("trilu_upper", "Trilu", {"x": rand(2, 4, 6)}),
    c("trilu_lower_k", "Trilu", {"x": rand(5, 3), "k": np.array(-1, np.int64)}, attrs={"upper": 0}),
    c(
        "trilu_upper_k_input",
        "Trilu",
        {"x": small_ints(3, 5, 5, dtype=np.int64), "k": np.array(2, np.int64)},
    ),
    c(
        "trilu_bool_far_k",
        "Trilu",
        {"x": bools(4, 4), "k": np.array(7, np.int64)},
        constants=("k",),
    ),
]

REDUCE = [
    c(
        "reducemean_axes",
        "ReduceMean",
        {"x": rand(2, 3, 4, 5), "axes": ints(1, 3)},
        constants=("axes",),
    ),
    c(
        "reducesum_negative_axis_nokeep",
        "ReduceSum",
        {"x": rand(2, 3, 4), "axes": ints(-1)},
        constants=("axes",),
        attrs={"keepdims": 0},
    ),
    c("reducesum_all", "ReduceSum", {"x": rand(3, 4)}),
    c(
        "reducemax_axes_nokeep",
        "ReduceMax",
        {"x": rand(2, 3, 4), "axes": ints(0, 2)},
        constants=("axes",),
        attrs={"keepdims": 0},
    ),
    c(
        "reducemax_noop",
        "ReduceMax",
        {"x": rand(2, 3), "axes": np.zeros(0, np.int64)},
        constants=("axes",),
        attrs={"noop_with_empty_axes": 1},
    ),
]

MOVEMENT = [
    c(
        "reshape_zero_minus1",
        "Reshape",
        {"x": rand(2, 3, 4), "s": ints(0, -1, 2)},
        constants=("s",),
    ),
    c("transpose_perm", "Transpose", {"x": rand(2, 3, 4, 5)}, attrs={"perm": [0, 3, 1, 2]}),
    c("transpose_default", "Transpose", {"x": rand(2, 3, 4)}),
    c("flatten_axis0", "Flatten", {"x": rand(2, 3, 4)}, attrs={"axis": 0}),
    c("flatten_axis_neg", "Flatten", {"x": rand(2, 3, 4, 5)}, attrs={"axis": -2}),
    c("squeeze_axes", "Squeeze", {"x": rand(1, 3, 1, 4), "axes": ints(0, -2)}, constants=("axes",)),
    c("squeeze_all", "Squeeze", {"x": rand(1, 3, 1, 4)}),
    c("unsqueeze", "Unsqueeze", {"x": rand(3, 4), "axes": ints(0, 3)}, constants=("axes",)),
    c(
        "concat_neg_axis",
        "Concat",
        {"a": rand(2, 3, 4), "b": rand(2, 3, 1), "c": rand(2, 3, 2)},
        attrs={"axis": -1},
    ),
    c("split_uneven_num_outputs", "Split", {"x": rand(7, 4)}, attrs={"num_outputs": 3}, outputs=3),
    c(
        "split_sizes_axis1",
        "Split",
        {"x": rand(2, 9), "s": ints(2, 3, 4)},
        constants=("s",),
        attrs={"axis": 1},
        outputs=3,
    ),
    c(
        "slice_neg_steps",
        "Slice",
        {
            "x": rand(6, 7, 8),
            "st": ints(-1, 5, 1),
            "en": ints(-100, 0, 100),
            "ax": ints(0, 1, 2),
            "sp": ints(-2, -1, 3),
        },
        constants=("st", "en", "ax", "sp"),
    ),
    c(
        "slice_clamped",
        "Slice",
        {"x": rand(5, 6), "st": ints(-10, 2), "en": ints(3, 2**62)},
        constants=("st", "en"),
    ),
    c(
        "gather_neg_2d",
        "Gather",
        {"x": rand(5, 4, 3), "i": np.array([[0, -1], [2, -3]], np.int64)},
        constants=("i",),
        attrs={"axis": 1},
    ),
    c("gather_scalar", "Gather", {"x": rand(5, 4), "i": np.array(3, np.int64)}, constants=("i",)),
    c("expand", "Expand", {"x": rand(3, 1), "s": ints(2, 1, 4)}, constants=("s",)),
    c(
        "shape_slice",
        "Shape",
        {"x": rand(2, 3, 4, 5)},
        attrs={"start": 1, "end": -1},
        out_types=(TensorProto.INT64,),
    ),
    c(
        "constant_of_shape_int",
        "ConstantOfShape",
        {"s": ints(2, 3)},
        constants=("s",),
        attrs={"value": numpy_helper.from_array(np.array([7], np.int32))},
        out_types=(TensorProto.INT32,),
    ),
    c("dropout_inference", "Dropout", {"x": rand(4, 5)}),
    c("identity", "Identity", {"x": rand(3)}),
]

PAD = [
    c(
        f"pad_{mode}",
        "Pad",
        {"x": rand(1, 2, 4, 5), "p": ints(0, 0, 1, 2, 0, 1, 2, 3)},
        constants=("p",),
        attrs={"mode": mode},
    )
    for mode in ("constant", "reflect", "edge", "wrap")
] + [
    c(
        "pad_constant_value_axes",
        "Pad",
        {"x": rand(3, 4), "p": ints(2, 1), "v": np.array(1.5, np.float32), "a": ints(-1)},
        constants=("p", "v", "a"),
    ),
    c("pad_negative_crop", "Pad", {"x": rand(4, 6), "p": ints(-1, 2, 1, -2)}, constants=("p",)),
    c(
        "pad_int64_edge",
        "Pad",
        {"x": RNG.integers(0, 9, (3, 3)), "p": ints(1, 1, 1, 1)},
        constants=("p",),
        attrs={"mode": "edge"},
    ),
]


def _resize(id: str, x: np.ndarray, *, scales=None, sizes=None, roi=None, **attrs) -> Case:
    inputs: dict[str, np.ndarray | None] = {"x": x, "roi": roi, "scales": scales, "sizes": sizes}
    constants = tuple(k for k in ("roi", "scales", "sizes") if inputs[k] is not None)
    if sizes is None:
        del inputs["sizes"]
    return c(id, "Resize", inputs, constants, attrs={"mode": "nearest", **attrs})


F = lambda *v: np.array(v, np.float32)  # noqa: E731

RESIZE = [
    _resize(
        f"resize_{ctm}_{nm}_{tag}",
        image(1, 2, 4, 5),
        coordinate_transformation_mode=ctm,
        nearest_mode=nm,
        **geometry,
    )
    for ctm in (
        "half_pixel",
        "half_pixel_symmetric",
        "pytorch_half_pixel",
        "align_corners",
        "asymmetric",
        "tf_half_pixel_for_nn",
    )
    for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
    for tag, geometry in (
        ("up", {"scales": F(1, 1, 2.5, 1.5)}),
        ("down", {"scales": F(1, 1, 0.6, 0.5)}),
        ("sizes", {"sizes": ints(1, 2, 7, 3)}),
    )
] + [
    _resize(
        "resize_sizes_not_larger",
        image(1, 2, 4, 6),
        sizes=ints(5, 7),
        axes=[2, 3],
        keep_aspect_ratio_policy="not_larger",
    ),
    _resize(
        "resize_sizes_not_smaller",
        image(1, 2, 4, 6),
        sizes=ints(5, 7),
        axes=[2, 3],
        keep_aspect_ratio_policy="not_smaller",
    ),
    _resize("resize_axes_scales", image(1, 2, 4, 6), scales=F(3, 2), axes=[3, 2]),
    _resize(
        "resize_tf_crop",
        image(1, 1, 6, 6),
        roi=F(0, 0, 0.2, 0.1, 1, 1, 0.9, 1.3),
        sizes=ints(1, 1, 4, 5),
        coordinate_transformation_mode="tf_crop_and_resize",
        extrapolation_value=-3.0,
    ),
]


def _scale(value: float) -> np.ndarray:
    return np.array(value, np.float32)


QUANT = [
    c(
        "quantize_uint8_ties",
        "QuantizeLinear",
        {
            "x": np.array([-1, 0.5, 1.5, 2.5, 3.5, 254.5, 300, -2.5], np.float32),
            "s": _scale(1.0),
            "z": np.array(0, np.uint8),
        },
        constants=("s", "z"),
        out_types=(TensorProto.UINT8,),
    ),
    c(
        "quantize_int8",
        "QuantizeLinear",
        {"x": rand(3, 20, low=-3, high=3), "s": _scale(0.02), "z": np.array(-3, np.int8)},
        constants=("s", "z"),
        out_types=(TensorProto.INT8,),
    ),
    c(
        "quantize_per_axis",
        "QuantizeLinear",
        {
            "x": rand(2, 3, 4, low=-2, high=2),
            "s": F(0.01, 0.02, 0.05),
            "z": np.array([0, 10, 250], np.uint8),
        },
        constants=("s", "z"),
        attrs={"axis": 1},
        out_types=(TensorProto.UINT8,),
    ),
    c(
        "quantize_default_zero_point",
        "QuantizeLinear",
        {"x": rand(10, low=-1, high=3), "s": _scale(0.01)},
        constants=("s",),
        out_types=(TensorProto.UINT8,),
    ),
    c(
        "dequantize_int8",
        "DequantizeLinear",
        {"x": quant(4, 5, dtype=np.int8), "s": _scale(0.1), "z": np.array(-4, np.int8)},
        constants=("s", "z"),
        out_types=(TensorProto.FLOAT,),
    ),
    c(
        "dequantize_per_axis",
        "DequantizeLinear",
        {"x": quant(3, 4), "s": F(0.1, 0.2, 0.3, 0.4), "z": np.array([1, 2, 3, 4], np.uint8)},
        constants=("s", "z"),
        attrs={"axis": -1},
        out_types=(TensorProto.FLOAT,),
    ),
    c(
        "dequantize_int32",
        "DequantizeLinear",
        {"x": RNG.integers(-100000, 100000, (10,)).astype(np.int32), "s": _scale(0.001)},
        constants=("s",),
        out_types=(TensorProto.FLOAT,),
    ),
    c(
        "qlinearconv_per_tensor",
        "QLinearConv",
        {
            "x": quant(1, 3, 7, 7),
            "xs": _scale(0.02),
            "xz": np.array(120, np.uint8),
            "w": u8s8_weights(4, 3, 3, 3),
            "ws": _scale(0.01),
            "wz": np.array(0, np.int8),
            "ys": _scale(0.3),
            "yz": np.array(100, np.uint8),
            "b": RNG.integers(-500, 500, (4,)).astype(np.int32),
        },
        constants=("xs", "xz", "w", "ws", "wz", "ys", "yz", "b"),
        attrs={"pads": [1, 1, 1, 1], "strides": [2, 2]},
        out_types=(TensorProto.UINT8,),
        rtol=0,
        atol=1,
    ),
    c(
        "qlinearconv_per_channel_group",
        "QLinearConv",
        {
            "x": quant(1, 4, 6, 6, dtype=np.int8),
            "xs": _scale(0.05),
            "xz": np.array(-2, np.int8),
            "w": quant(4, 2, 3, 3, dtype=np.int8),
            "ws": F(0.01, 0.02, 0.005, 0.03),
            "wz": np.zeros(4, np.int8),
            "ys": _scale(0.5),
            "yz": np.array(5, np.int8),
        },
        constants=("xs", "xz", "w", "ws", "wz", "ys", "yz"),
        attrs={"group": 2},
        out_types=(TensorProto.INT8,),
        rtol=0,
        atol=1,
    ),
    c(
        "qlinearmatmul_uint8",
        "QLinearMatMul",
        {
            "a": quant(2, 3, 8),
            "as": _scale(0.03),
            "az": np.array(128, np.uint8),
            "b": quant(8, 5),
            "bs": _scale(0.02),
            "bz": np.array(100, np.uint8),
            "ys": _scale(0.4),
            "yz": np.array(90, np.uint8),
        },
        constants=("as", "az", "bs", "bz", "ys", "yz"),
        out_types=(TensorProto.UINT8,),
        rtol=0,
        atol=1,
    ),
    c(
        "qlinearmatmul_int8_per_column",
        "QLinearMatMul",
        {
            "a": quant(4, 6, dtype=np.int8),
            "as": _scale(0.03),
            "az": np.array(1, np.int8),
            "b": quant(6, 3, dtype=np.int8),
            "bs": F(0.02, 0.01, 0.04),
            "bz": np.zeros(3, np.int8),
            "ys": _scale(0.2),
            "yz": np.array(-1, np.int8),
        },
        constants=("as", "az", "b", "bs", "bz", "ys", "yz"),
        out_types=(TensorProto.INT8,),
        rtol=0,
        atol=1,
    ),
]


def random_geometry(seed: int) -> Case:
    """
    A random conv, transposed conv or pool with explicit pads, strides, dilations
    and groups. It keeps to geometry where ONNX Runtime follows the ONNX spec: no
    auto_pad (ONNX Runtime ignores dilations when it computes SAME pads for
    pools) and no ceil_mode (ONNX's shape inference keeps windows that start
    past the input, which the spec drops).
    """
    r = random.Random(seed)
    op = r.choice(["Conv", "ConvTranspose", "MaxPool", "AveragePool"])
    rank = r.choice([1, 2, 2, 3])
    kernel = [r.randint(1, 4) for _ in range(rank)]
    strides = [r.randint(1, 3) for _ in range(rank)]
    dilations = [r.randint(1, 2) for _ in range(rank)]
    pads = [r.randint(0, k - 1) for k in kernel] * 2
    pads = [r.randint(0, p) for p in pads]
    # inputs large enough that every window fits the padded input
    spatial = [r.randint((k - 1) * d + 1, 9) for k, d in zip(kernel, dilations)]
    channels = r.choice([1, 2, 4])
    x = rand(r.randint(1, 2), channels, *spatial)
    attrs: dict[str, Any] = {"strides": strides, "dilations": dilations, "pads": pads}
    inputs: dict[str, np.ndarray | None] = {"x": x}
    if op in ("MaxPool", "AveragePool"):
        attrs["kernel_shape"] = kernel
        if op == "AveragePool":
            attrs["count_include_pad"] = r.randint(0, 1)
    else:
        group = r.choice([1, channels])
        outputs = r.choice([1, 2]) * group
        if op == "Conv":
            inputs["w"] = rand(outputs, channels // group, *kernel)
        else:
            inputs["w"] = rand(channels, outputs // group, *kernel)
            attrs["output_padding"] = [
                r.randint(0, s - 1) for s in strides
            ]  # ONNX Runtime: below stride
        attrs["group"] = group
        if r.random() < 0.5:
            inputs["b"] = rand(outputs)
    return c(
        f"random_{op}_{seed}",
        op,
        inputs,
        constants=tuple(k for k in ("w", "b") if k in inputs),
        attrs=attrs,
    )


F16 = [
    c(
        "conv_f16",
        "Conv",
        {
            "x": image(1, 3, 6, 6).astype(np.float16),
            "w": rand(4, 3, 3, 3, dtype=np.float16),
            "b": rand(4, dtype=np.float16),
        },
        attrs={"pads": [1, 1, 1, 1]},
        rtol=1e-2,
        atol=1e-2,
    ),
    c(
        "maxpool_f16",
        "MaxPool",
        {"x": image(1, 3, 6, 6).astype(np.float16)},
        attrs={"kernel_shape": [3, 3], "strides": [2, 2]},
    ),
    c(
        "softmax_f16",
        "Softmax",
        {"x": rand(3, 9, low=-5, high=5, dtype=np.float16)},
        rtol=1e-2,
        atol=1e-3,
    ),
    c(
        "gemm_f64",
        "Gemm",
        {
            "a": rand(3, 5, dtype=np.float64),
            "b": rand(5, 4, dtype=np.float64),
            "c": rand(4, dtype=np.float64),
        },
        attrs={"alpha": 0.5},
    ),
    c(
        "sigmoid_f16",
        "Sigmoid",
        {"x": rand(40, low=-8, high=8, dtype=np.float16)},
        rtol=1e-2,
        atol=1e-3,
    ),
    c(
        "resize_f16_nearest",
        "Resize",
        {"x": image(1, 1, 3, 4).astype(np.float16), "roi": None, "scales": F(1, 1, 2, 1.5)},
        constants=("scales",),
        attrs={"mode": "nearest"},
    ),
    c(
        "quantize_f16_input",
        "QuantizeLinear",
        {
            "x": rand(12, low=-1, high=1, dtype=np.float16),
            "s": np.array(0.01, np.float16),
            "z": np.array(128, np.uint8),
        },
        constants=("s", "z"),
        out_types=(TensorProto.UINT8,),
        rtol=0,
        atol=1,
    ),
]

RANDOM_GEOMETRY = [random_geometry(seed) for seed in range(80)]

CASES = (
    CONV
    + CONV_TRANSPOSE
    + POOL
    + NORM
    + MATRIX
    + ELEMENTWISE
    + CAST
    + LOGIC
    + REDUCE
    + MOVEMENT
    + PAD
    + RESIZE
    + QUANT
    + F16
    + RANDOM_GEOMETRY
)


def build_model(case: Case) -> onnx.ModelProto:
    """The single-node model of `case`, with outputs typed and shaped by ONNX shape inference."""
    names = [name if value is not None else "" for name, value in case.inputs.items()]
    while names and not names[-1]:
        names.pop()
    outputs = [f"out{i}" for i in range(case.outputs)]
    node = helper.make_node(case.op, names, outputs, **case.attrs)
    first = next(v for v in case.inputs.values() if v is not None)
    out_types = case.out_types or (helper.np_dtype_to_tensor_dtype(first.dtype),) * case.outputs
    graph = helper.make_graph(
        [node],
        case.id,
        [
            helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for k, v in case.inputs.items()
            if v is not None and k not in case.constants
        ],
        [helper.make_tensor_value_info(o, t, None) for o, t in zip(outputs, out_types)],
        initializer=[
            numpy_helper.from_array(case.inputs[k], k)  # type: ignore[arg-type]
            for k in case.constants
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_kernel_matches_onnxruntime(case: Case, tmp_path: Path):
    path = tmp_path / f"{case.id}.onnx"
    onnx.save(build_model(case), path)
    feeds = {k: v for k, v in case.inputs.items() if v is not None and k not in case.constants}
    for value in feeds.values():
        value.setflags(write=False)  # a kernel that writes its inputs in place fails here
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    got = run_reference(import_onnx(path), feeds)
    assert list(got) == [f"out{i}" for i in range(case.outputs)]
    for value, want in zip(got.values(), expected):
        assert value.dtype == want.dtype and value.shape == want.shape
        if want.dtype.kind in "iub":
            diff = np.abs(value.astype(np.int64) - want.astype(np.int64))
            assert diff.max(initial=0) <= case.atol, f"max difference {diff.max()}"
        else:
            np.testing.assert_allclose(value, want, rtol=case.rtol, atol=case.atol)


def test_ids_are_unique():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
