"""
Quantized ONNX models for the DSP-path tests and benchmarks, built with onnx.helper
(and, for the small CNN, onnxruntime's own quantizer), so no binary fixtures.

Weights default to int8 in [-64, 63]: onnxruntime's x86 u8s8 kernels add pairs of
uint8×int8 products in 16 bits with saturation (`vpmaddubsw`), which is exact only
while |w| ≤ 64; within that range onnxruntime computes the exact integer result that
the DSP kernels compute for any weights.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32


def _model(nodes, inputs, outputs, initializers, opset: int = 21) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "quantized", inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def _scalar(name: str, value, dtype) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def _params(rng: np.random.Generator, prefix: str, signed: bool = False):
    scale = np.float32(rng.uniform(0.01, 0.05))
    zero = int(rng.integers(-20, 20)) if signed else int(rng.integers(100, 156))
    return [
        _scalar(f"{prefix}_scale", scale, np.float32),
        _scalar(f"{prefix}_zero", zero, np.int8 if signed else np.uint8),
    ]


def conv_model(
    channels: int, height: int, width: int, out_channels: int, kernel: int = 3, stride: int = 1,
    pad: int = 1, depthwise: bool = False, seed: int = 0, weight_range: int = 64,
    per_channel: bool = False, signed: bool = False, form: str = "qdq",
) -> onnx.ModelProto:
    """A quantized Conv: QDQ around a float Conv (float in and out), or QLinearConv (8-bit)."""
    rng = np.random.default_rng(seed)
    group = channels if depthwise else 1
    out_channels = channels if depthwise else out_channels
    w = rng.integers(-weight_range, weight_range, (out_channels, channels // group, kernel, kernel))
    b = rng.integers(-2000, 2000, out_channels)
    w_scale = rng.uniform(0.002, 0.01, out_channels if per_channel else ()).astype(np.float32)
    act = I8 if signed else U8
    inits = [
        *_params(rng, "x", signed), *_params(rng, "y", signed),
        numpy_helper.from_array(w.astype(np.int8), "w"),
        numpy_helper.from_array(w_scale, "w_scale"),
        numpy_helper.from_array(np.zeros(w_scale.shape, np.int8), "w_zero"),
        numpy_helper.from_array(b.astype(np.int32), "b"),
    ]
    attrs = dict(pads=[pad] * 4, strides=[stride, stride], group=group)
    oh = (height + 2 * pad - kernel) // stride + 1
    ow = (width + 2 * pad - kernel) // stride + 1
    if form == "qlinear":
        nodes = [helper.make_node(
            "QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale",
                            "y_zero", "b"], ["y"], name="conv", **attrs)]
        inputs = [helper.make_tensor_value_info("x", act, [1, channels, height, width])]
        outputs = [helper.make_tensor_value_info("y", act, [1, out_channels, oh, ow])]
        return _model(nodes, inputs, outputs, inits)
    x_scale = float(numpy_helper.to_array(inits[0]))
    b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
    inits += [numpy_helper.from_array(np.asarray(b_scale, np.float32), "b_scale"),
              numpy_helper.from_array(np.zeros(b_scale.shape, np.int32), "b_zero")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"], name="quantize"),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xf"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wf"], name="dq_w",
                         axis=0),
        helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zero"], ["bf"], name="dq_b",
                         axis=0),
        helper.make_node("Conv", ["xf", "wf", "bf"], ["c"], name="conv", **attrs),
        helper.make_node("QuantizeLinear", ["c", "y_scale", "y_zero"], ["yq"], name="quantize_y"),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"], name="dq_y"),
    ]
    inputs = [helper.make_tensor_value_info("x", F, [1, channels, height, width])]
    outputs = [helper.make_tensor_value_info("y", F, [1, out_channels, oh, ow])]
    return _model(nodes, inputs, outputs, inits)


def matmul_model(rows: int, depth: int, cols: int, seed: int = 0, weight_range: int = 64,
                 signed: bool = False) -> onnx.ModelProto:
    """QLinearMatMul of an 8-bit [rows, depth] input by constant int8 weights [depth, cols]."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-weight_range, weight_range, (depth, cols)).astype(np.int8)
    act = I8 if signed else U8
    inits = [
        *_params(rng, "a", signed), *_params(rng, "y", signed),
        numpy_helper.from_array(w, "w"),
        _scalar("w_scale", rng.uniform(0.002, 0.01), np.float32),
        _scalar("w_zero", 0, np.int8),
    ]
    nodes = [helper.make_node(
        "QLinearMatMul", ["a", "a_scale", "a_zero", "w", "w_scale", "w_zero", "y_scale",
                          "y_zero"], ["y"], name="matmul")]
    inputs = [helper.make_tensor_value_info("a", act, [rows, depth])]
    outputs = [helper.make_tensor_value_info("y", act, [rows, cols])]
    return _model(nodes, inputs, outputs, inits)


def add_model(shape, seed: int = 0, signed: bool = False) -> onnx.ModelProto:
    """A QDQ Add of two 8-bit tensors (onnxruntime runs it as QLinearAdd)."""
    rng = np.random.default_rng(seed)
    act = I8 if signed else U8
    inits = [*_params(rng, "a", signed), *_params(rng, "b", signed), *_params(rng, "y", signed)]
    nodes = [
        helper.make_node("DequantizeLinear", ["a", "a_scale", "a_zero"], ["af"], name="dq_a"),
        helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zero"], ["bf"], name="dq_b"),
        helper.make_node("Add", ["af", "bf"], ["s"], name="add"),
        helper.make_node("QuantizeLinear", ["s", "y_scale", "y_zero"], ["y"], name="quantize"),
    ]
    inputs = [helper.make_tensor_value_info(n, act, list(shape)) for n in ("a", "b")]
    outputs = [helper.make_tensor_value_info("y", act, list(shape))]
    return _model(nodes, inputs, outputs, inits)


def float_cnn(seed: int = 0) -> onnx.ModelProto:
    """A small float CNN: conv-relu, depthwise-relu, 1×1 conv + residual, stride-2 conv, FC."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def conv(name, x, cin, cout, k, stride=1, group=1):
        w = (rng.standard_normal((cout, cin // group, k, k)) * 0.3).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, f"{name}_w"), numpy_helper.from_array(b, f"{name}_b")])
        nodes.append(helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [name], name=name,
                                      pads=[k // 2] * 4, strides=[stride, stride], group=group))
        return name

    conv("c1", "x", 3, 16, 3)
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"], name="relu1"))
    conv("c2", "r1", 16, 16, 3, group=16)
    nodes.append(helper.make_node("Relu", ["c2"], ["r2"], name="relu2"))
    conv("c3", "r2", 16, 16, 1)
    nodes.append(helper.make_node("Add", ["c3", "r1"], ["a1"], name="residual"))
    conv("c4", "a1", 16, 32, 3, stride=2)
    nodes.append(helper.make_node("Relu", ["c4"], ["r4"], name="relu4"))
    nodes.append(helper.make_node("Flatten", ["r4"], ["f"], name="flatten"))
    fc = (rng.standard_normal((32 * 8 * 8, 10)) * 0.05).astype(np.float32)
    inits += [numpy_helper.from_array(fc, "fc_w"),
              numpy_helper.from_array(np.zeros(10, np.float32), "fc_b")]
    nodes.append(helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc"))
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", F, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", F, [1, 10])], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def quantized_cnn(path: str, seed: int = 0, reduce_range: bool = True) -> None:
    """`float_cnn` quantized to QDQ with onnxruntime's static quantizer, saved at `path`.

    `reduce_range` quantizes weights to 7 bits, as onnxruntime advises on x86 (see the
    module docstring); the DSP kernels are exact either way."""
    import tempfile

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType
    from onnxruntime.quantization import quantize_static

    rng = np.random.default_rng(seed)

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
                              for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        onnx.save(float_cnn(seed), f.name)
        quantize_static(
            f.name, path, Calibration(), quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
            reduce_range=reduce_range,
        )


def pool_model(kind: str, channels: int, height: int, width: int, kernel: int = 3,
               stride: int = 1, pad: int = 1, seed: int = 0, signed: bool = False,
               count_include_pad: int = 0) -> onnx.ModelProto:
    """
    A QDQ pool of an 8-bit input: MaxPool (the input's parameters on both sides),
    AveragePool or GlobalAveragePool (its own output parameters); `kind` "max8" is
    the operator form, a MaxPool of the 8-bit tensor itself.
    """
    rng = np.random.default_rng(seed)
    act = I8 if signed else U8
    inits = [*_params(rng, "x", signed), *_params(rng, "y", signed)]
    if kind == "global":
        out = [1, channels, 1, 1]
        attrs = {}
    else:
        attrs = dict(kernel_shape=[kernel, kernel], pads=[pad] * 4, strides=[stride, stride])
        if kind == "average":
            attrs["count_include_pad"] = count_include_pad
        out = [1, channels, (height + 2 * pad - kernel) // stride + 1,
               (width + 2 * pad - kernel) // stride + 1]
    inputs = [helper.make_tensor_value_info("x", act, [1, channels, height, width])]
    outputs = [helper.make_tensor_value_info("y", act, out)]
    if kind == "max8":
        nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="pool", **attrs)]
        return _model(nodes, inputs, outputs, [])
    op = {"max": "MaxPool", "average": "AveragePool", "global": "GlobalAveragePool"}[kind]
    y_params = "x" if kind == "max" else "y"
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero"], ["xf"], name="dq_x"),
        helper.make_node(op, ["xf"], ["pf"], name="pool", **attrs),
        helper.make_node("QuantizeLinear", ["pf", f"{y_params}_scale", f"{y_params}_zero"], ["y"],
                         name="quantize"),
    ]
    return _model(nodes, inputs, outputs, inits)
