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
        inits.extend([numpy_helper.from_array(w, f"{name}_w"),
                      numpy_helper.from_array(b, f"{name}_b")])
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


def small_resnet(seed: int = 0, size: int = 16, width: int = 16, head: bool = True
                 ) -> onnx.ModelProto:
    """
    ResNet in miniature, float: conv 3x3 s2 + relu, MaxPool 3x3 s2 p1, a basic block
    (two 3x3 convs, residual Add, relu), a strided block with a 1x1 downsample, then
    (`head`) GlobalAveragePool, Flatten, Gemm, else the feature map is the output.
    Weights are scaled so activations stay O(1).
    """
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def conv(name, x, cin, cout, k, stride=1, relu=True):
        w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)))
        b = rng.standard_normal(cout) * 0.1
        inits.extend([numpy_helper.from_array(w.astype(np.float32), f"{name}_w"),
                      numpy_helper.from_array(b.astype(np.float32), f"{name}_b")])
        nodes.append(helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [name], name=name,
                                      pads=[k // 2] * 4, strides=[stride, stride]))
        if not relu:
            return name
        nodes.append(helper.make_node("Relu", [name], [f"{name}_relu"], name=f"{name}_relu"))
        return f"{name}_relu"

    def block(name, x, cin, cout, stride):
        h = conv(f"{name}_conv1", x, cin, cout, 3, stride)
        h = conv(f"{name}_conv2", h, cout, cout, 3, relu=False)
        identity = x if stride == 1 else conv(f"{name}_down", x, cin, cout, 1, stride, False)
        nodes.append(helper.make_node("Add", [h, identity], [f"{name}_add"], name=f"{name}_add"))
        nodes.append(helper.make_node("Relu", [f"{name}_add"], [f"{name}_out"], name=f"{name}_out"))
        return f"{name}_out"

    x = conv("stem", "x", 3, width, 3, 2)
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], name="maxpool", kernel_shape=[3, 3],
                                  pads=[1] * 4, strides=[2, 2]))
    x = block("layer1", "pool", width, width, 1)
    x = block("layer2", x, width, 2 * width, 2)
    if not head:
        nodes.append(helper.make_node("Identity", [x], ["y"], name="output"))
        out = size // 8
        graph = helper.make_graph(
            nodes, "small_resnet", [helper.make_tensor_value_info("x", F, [1, 3, size, size])],
            [helper.make_tensor_value_info("y", F, [1, 2 * width, out, out])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="avgpool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    fc = (rng.standard_normal((10, 2 * width)) * 0.3).astype(np.float32)
    inits += [numpy_helper.from_array(fc, "fc_w"),
              numpy_helper.from_array((rng.standard_normal(10) * 0.1).astype(np.float32), "fc_b")]
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc", transB=1))
    graph = helper.make_graph(
        nodes, "small_resnet", [helper.make_tensor_value_info("x", F, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", F, [1, 10])], inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def quantized_cnn(path: str, seed: int = 0, reduce_range: bool = True, model=None,
                  activations: str = "u8", form: str = "qdq") -> None:
    """
    A float CNN (`float_cnn` unless `model` is given) quantized with onnxruntime's static
    quantizer, saved at `path`: QDQ or QOperator form (`form`), uint8 or int8
    activations (`activations`), int8 weights, calibrated on eight random inputs.

    `reduce_range` quantizes weights to 7 bits, as onnxruntime advises on x86 (see the
    module docstring); the DSP kernels are exact either way.
    """
    import tempfile

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType
    from onnxruntime.quantization import quantize_static

    model = model or float_cnn(seed)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.standard_normal(shape).astype(np.float32)}
                              for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        onnx.save(model, f.name)
        quantize_static(
            f.name, path, Calibration(),
            quant_format=QuantFormat.QDQ if form == "qdq" else QuantFormat.QOperator,
            activation_type=QuantType.QUInt8 if activations == "u8" else QuantType.QInt8,
            weight_type=QuantType.QInt8, reduce_range=reduce_range,
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


MS = "com.microsoft"


def contrib_model(op: str, shape=(1, 8, 5, 7), seed: int = 0, signed: bool = False,
                  scales=None, weight_range: int = 64, **attrs) -> onnx.ModelProto:
    """
    One onnxruntime com.microsoft quantized op on 8-bit inputs (QOperator form):
    `QLinearAdd` (a + b), `QLinearGlobalAveragePool`, `QLinearAveragePool` or `QGemm`
    (a [M, K] by constant int8 weights transposed, int32 bias, 8-bit output). `scales`
    gives the (input, ..., output) scales, else they are drawn.
    """
    rng = np.random.default_rng(seed)
    act = I8 if signed else U8
    zdt = np.int8 if signed else np.uint8
    drawn = [float(np.float32(rng.uniform(0.01, 0.05))) for _ in range(3)]
    sa, sb, sy = scales or drawn
    zeros = [int(rng.integers(-20, 20)) if signed else int(rng.integers(100, 156))
             for _ in range(3)]
    inits = [_scalar("a_scale", sa, np.float32), _scalar("a_zero", zeros[0], zdt),
             _scalar("y_scale", sy, np.float32), _scalar("y_zero", zeros[2], zdt)]
    inputs = [helper.make_tensor_value_info("a", act, list(shape))]
    if op == "QLinearAdd":
        inits += [_scalar("b_scale", sb, np.float32), _scalar("b_zero", zeros[1], zdt)]
        inputs.append(helper.make_tensor_value_info("b", act, list(shape)))
        node = helper.make_node(op, ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero",
                                     "y_scale", "y_zero"], ["y"], name="add", domain=MS)
        out = list(shape)
    elif op in ("QLinearGlobalAveragePool", "QLinearAveragePool"):
        node = helper.make_node(op, ["a", "a_scale", "a_zero", "y_scale", "y_zero"], ["y"],
                                name="pool", domain=MS, **attrs)
        if op == "QLinearGlobalAveragePool":
            out = [*shape[:2], 1, 1]
        else:
            k, s, p = attrs["kernel_shape"][0], attrs.get("strides", [1])[0], attrs.get("pads",
                                                                                        [0])[0]
            out = [*shape[:2], *((d + 2 * p - k) // s + 1 for d in shape[2:])]
    elif op == "QGemm":
        rows, depth = shape
        cols = attrs.pop("cols", 10)
        w = rng.integers(-weight_range, weight_range, (cols, depth)).astype(np.int8)
        w_scale = np.float32(rng.uniform(0.002, 0.01))
        bias = rng.integers(-3000, 3000, cols).astype(np.int32)
        inits += [numpy_helper.from_array(w, "w"), _scalar("w_scale", w_scale, np.float32),
                  _scalar("w_zero", 0, np.int8), numpy_helper.from_array(bias, "bias")]
        node = helper.make_node(op, ["a", "a_scale", "a_zero", "w", "w_scale", "w_zero", "bias",
                                     "y_scale", "y_zero"], ["y"], name="gemm", domain=MS,
                                transB=1, **attrs)
        out = [rows, cols]
    else:
        raise ValueError(op)
    outputs = [helper.make_tensor_value_info("y", act, out)]
    graph = helper.make_graph([node], "contrib", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    return model


def residual_block(channels: int = 64, size: int = 8, seed: int = 0,
                   add_scales: tuple[float, float, float] = (0.05, 0.05, 0.1)) -> onnx.ModelProto:
    """
    A ResNet basic block in QDQ form with round, uncalibrated scales: two 3x3 convs of
    `channels` (full-range int8 weights, relu folded into a zero point of 0), the
    residual Add requantised with `add_scales` (its inputs', its output's) and a relu.
    The default Add scales are dyadic (onnxruntime's sums land on halves); the 3x3
    convs of 64 channels filled col1's vector pairs before pressure was relieved.
    """
    rng = np.random.default_rng(seed)
    s_in, s_mid, s_out = add_scales
    inits = [_scalar("x_scale", s_in, np.float32), _scalar("x_zero", 0, np.uint8),
             _scalar("h_scale", 0.05, np.float32), _scalar("h_zero", 0, np.uint8),
             _scalar("c_scale", s_mid, np.float32), _scalar("c_zero", 128, np.uint8),
             _scalar("y_scale", s_out, np.float32), _scalar("y_zero", 0, np.uint8)]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["xq"], name="quantize"),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zero"], ["xf"], name="dq_x"),
    ]

    def conv(name, source, scale_in, out_params):
        w = rng.integers(-127, 128, (channels, channels, 3, 3)).astype(np.int8)
        w_scale = np.float32(1.0 / (64 * 127 * np.sqrt(channels * 9) * scale_in))
        b_scale = np.float32(np.float32(scale_in) * w_scale)
        inits.extend([
            numpy_helper.from_array(w, f"{name}_w"), _scalar(f"{name}_ws", w_scale, np.float32),
            _scalar(f"{name}_wz", 0, np.int8),
            numpy_helper.from_array(rng.integers(-500, 500, channels).astype(np.int32),
                                    f"{name}_b"),
            _scalar(f"{name}_bs", b_scale, np.float32), _scalar(f"{name}_bz", 0, np.int32)])
        nodes.extend([
            helper.make_node("DequantizeLinear", [f"{name}_w", f"{name}_ws", f"{name}_wz"],
                             [f"{name}_wf"], name=f"{name}_dq_w"),
            helper.make_node("DequantizeLinear", [f"{name}_b", f"{name}_bs", f"{name}_bz"],
                             [f"{name}_bf"], name=f"{name}_dq_b"),
            helper.make_node("Conv", [source, f"{name}_wf", f"{name}_bf"], [f"{name}_out"],
                             name=name, pads=[1] * 4),
            helper.make_node("QuantizeLinear", [f"{name}_out", *out_params], [f"{name}_q"],
                             name=f"{name}_quantize"),
            helper.make_node("DequantizeLinear", [f"{name}_q", *out_params], [f"{name}_f"],
                             name=f"{name}_dq"),
        ])
        return f"{name}_f"

    h = conv("conv1", "xf", s_in, ["h_scale", "h_zero"])
    c = conv("conv2", h, 0.05, ["c_scale", "c_zero"])
    nodes += [
        helper.make_node("Add", [c, "xf"], ["sum"], name="add"),
        helper.make_node("Relu", ["sum"], ["relu"], name="relu"),
        helper.make_node("QuantizeLinear", ["relu", "y_scale", "y_zero"], ["yq"],
                         name="quantize_y"),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zero"], ["y"], name="dq_y"),
    ]
    shape = [1, channels, size, size]
    inputs = [helper.make_tensor_value_info("x", F, shape)]
    outputs = [helper.make_tensor_value_info("y", F, shape)]
    return _model(nodes, inputs, outputs, inits)


def int8_shared_input_conv(channels: int = 64, out_channels: int = 16, size: int = 8,
                           seed: int = 0) -> onnx.ModelProto:
    """
    int8 QDQ (onnxruntime's default activation type): a 3x3 Conv and an Add share their
    dequantized input. onnxruntime then runs the Conv in float32 (DequantizeLinear, Conv,
    QuantizeLinear), whose sums of 576 products round differently from the exact integer
    accumulation: its result can leave the integer reference by an LSB.
    """
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, (out_channels, channels, 3, 3)).astype(np.int8)
    inits = [_scalar("a_scale", 0.05, np.float32), _scalar("a_zero", 3, np.int8),
             _scalar("b_scale", 0.04, np.float32), _scalar("b_zero", -5, np.int8),
             _scalar("y_scale", 0.05, np.float32), _scalar("y_zero", 2, np.int8),
             numpy_helper.from_array(w, "w"), _scalar("w_scale", 0.002, np.float32),
             _scalar("w_zero", 0, np.int8), _scalar("c_scale", 0.2, np.float32),
             _scalar("c_zero", -3, np.int8)]
    nodes = [
        helper.make_node("DequantizeLinear", ["a", "a_scale", "a_zero"], ["af"], name="dq_a"),
        helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zero"], ["bf"], name="dq_b"),
        helper.make_node("Add", ["af", "bf"], ["s"], name="add"),
        helper.make_node("QuantizeLinear", ["s", "y_scale", "y_zero"], ["y"], name="quantize_y"),
        helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero"], ["wf"], name="dq_w"),
        helper.make_node("Conv", ["af", "wf"], ["c"], name="conv", pads=[1] * 4),
        helper.make_node("QuantizeLinear", ["c", "c_scale", "c_zero"], ["z"], name="quantize_z"),
    ]
    shape = [1, channels, size, size]
    inputs = [helper.make_tensor_value_info(n, I8, shape) for n in ("a", "b")]
    outputs = [helper.make_tensor_value_info("y", I8, shape),
               helper.make_tensor_value_info("z", I8, [1, out_channels, size, size])]
    return _model(nodes, inputs, outputs, inits)


def mixed_layout_model(form: str = "qdq", channels: int = 32, height: int = 8,
                       width: int = 64, seed: int = 0) -> onnx.ModelProto:
    """
    8-bit x [1, C, H, W] read by a depthwise 3x3 conv (fastest in col2) and a 3x3
    conv (fastest in col4), the depthwise result read by two more 3x3 convs: layouts
    that `select-layouts{solver=local}` joins with relayouts of x and of that result.
    QDQ around float Convs, or QLinearConv (`form="qlinear"`); outputs y1, y2, y3.
    """
    rng = np.random.default_rng(seed)
    shape = [1, channels, height, width]
    inits = [*_params(rng, "x")]
    nodes = []
    if form == "qdq":
        nodes.append(helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero"], ["xf"],
                                      name="dq_x"))

    def conv(name: str, source: str, out: str, group: int = 1) -> None:
        w = rng.integers(-64, 64, (channels, channels // group, 3, 3)).astype(np.int8)
        inits.extend([*_params(rng, out), numpy_helper.from_array(w, f"{name}_w"),
                      _scalar(f"{name}_ws", rng.uniform(0.002, 0.01), np.float32),
                      _scalar(f"{name}_wz", 0, np.int8)])
        attrs = dict(pads=[1] * 4, group=group)
        if form == "qlinear":
            nodes.append(helper.make_node(
                "QLinearConv", [source, f"{source}_scale", f"{source}_zero", f"{name}_w",
                                f"{name}_ws", f"{name}_wz", f"{out}_scale", f"{out}_zero"],
                [out], name=name, **attrs))
            return
        nodes.extend([
            helper.make_node("DequantizeLinear", [f"{name}_w", f"{name}_ws", f"{name}_wz"],
                             [f"{name}_wf"], name=f"{name}_dq_w"),
            helper.make_node("Conv", [f"{source}f", f"{name}_wf"], [f"{name}_out"], name=name,
                             **attrs),
            helper.make_node("QuantizeLinear", [f"{name}_out", f"{out}_scale", f"{out}_zero"],
                             [out], name=f"{name}_quantize"),
        ])

    conv("dw", "x", "h", group=channels)
    if form == "qdq":
        nodes.append(helper.make_node("DequantizeLinear", ["h", "h_scale", "h_zero"], ["hf"],
                                      name="dq_h"))
    conv("conv1", "h", "y1")
    conv("conv2", "h", "y2")
    conv("conv3", "x", "y3")
    inputs = [helper.make_tensor_value_info("x", U8, shape)]
    outputs = [helper.make_tensor_value_info(f"y{i}", U8, shape) for i in (1, 2, 3)]
    return _model(nodes, inputs, outputs, inits)


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs for `model`: floats standard normal, int8 and uint8 over their range."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        elem = value.type.tensor_type.elem_type
        if elem == onnx.TensorProto.FLOAT:
            feeds[value.name] = rng.standard_normal(shape).astype(np.float32)
        elif elem == onnx.TensorProto.INT8:
            feeds[value.name] = rng.integers(-128, 128, shape).astype(np.int8)
        else:
            feeds[value.name] = rng.integers(0, 256, shape).astype(np.uint8)
    return feeds
