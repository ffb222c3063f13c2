"""
The quantized graph the DSP runs, read off an `onnx` function.

Two spellings of a quantized model are accepted: the operator form (`QLinearConv`,
`QLinearMatMul`, 8-bit `MaxPool`; onnxruntime's com.microsoft ops arrive as QDQ units,
`frontend/contrib_ops.py`) and the QDQ form, where float `Conv`/`MatMul`/`Gemm`/`Add`/
`MaxPool`/`AveragePool`/`GlobalAveragePool`/`Flatten`/`Reshape` ops sit between
`DequantizeLinear` of 8-bit tensors (and constant weights) and a `QuantizeLinear` of
their result. A QDQ `Relu`/`Clip` becomes a clamp of the producer's output. The
`QuantizeLinear` of a float graph input and the `DequantizeLinear` of a graph output
are the host's: the DSP program takes and gives 8-bit tensors.

Pools reuse the convolution kernels where their arithmetic is a convolution's: an
AveragePool is a depthwise convolution with unit weights, a GlobalAveragePool the
matrix product of the [C, H·W] image (a reshape) with a column of ones; both
requantise with `x_scale / (y_scale · count)` as onnxruntime's
QLinearGlobalAveragePool does (`reference/qlinear.py`). A MaxPool is its own
kernel (`pool.py`).

Internally every activation is uint8: an int8 tensor is stored as value + 128 with
zero point + 128, which leaves every integer relation and clamp unchanged. Weights
are int8 with zero point 0 (uint8 weights become w - 128 with zero point zp - 128);
other weight zero points, per-channel scales and non-8-bit types are rejected with a
diagnostic naming the node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, Signedness, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.reference.qlinear import average_multiplier
from mobile_opt.dialects.hvx.layouts import SimdLayout
from mobile_opt.dialects.onnx.base import OnnxConstantOp, constant_array, is_none
from mobile_opt.dialects.onnx.graph import graph_io_names
from mobile_opt.transforms.onnx_to_hvx.conv import ConvShape
from mobile_opt.transforms.onnx_to_texture.nodes import node_label


class QuantGraphError(DiagnosticException):
    """A model the DSP path cannot run; the message names the node."""


@dataclass(eq=False)
class QTensor:
    """An 8-bit activation: its ONNX value, shape, scale and internal (uint8) zero point."""

    name: str
    shape: tuple[int, ...]
    scale: np.float32
    zero_point: int
    signed: bool
    """Stored as value + 128 (an int8 tensor)."""

    @property
    def image(self) -> tuple[int, int, int]:
        """(channels, height, width) of an NCHW tensor, or of a [.., M, K] matrix as
        (K, 1, M·batch)."""
        if len(self.shape) == 4:
            return self.shape[1], self.shape[2], self.shape[3]
        rows = int(np.prod(self.shape[:-1]))
        return self.shape[-1], 1, rows

    @property
    def qrange(self) -> tuple[int, int]:
        return 0, 255


@dataclass(eq=False)
class QConv:
    """A quantized convolution or matrix product (a 1×1 convolution over the rows)."""

    label: str
    op: Operation
    x: QTensor
    y: QTensor
    shape: ConvShape
    weights: np.ndarray
    """int8 [N, C or 1, KH, KW], zero point 0."""
    bias: np.ndarray
    """int32 [N]: the bias in accumulator units (zero if absent)."""
    weight_scale: np.float32
    clamp: tuple[int, int] = (0, 255)
    is_matmul: bool = False
    requant_scale: np.float32 | None = None
    """The requantisation scale where it is not x_scale · w_scale / y_scale (pools)."""

    @property
    def scale(self) -> np.float32:
        """onnxruntime's requantisation scale: x_scale · w_scale / y_scale in float32."""
        if self.requant_scale is not None:
            return self.requant_scale
        return np.float32(np.float32(self.x.scale * self.weight_scale) / self.y.scale)

    def folded_bias(self) -> np.ndarray:
        """bias − x_zero · Σ w: the accumulator of raw uint8 inputs then needs no correction."""
        n = self.weights.shape[0]
        sums = self.weights.reshape(n, -1).astype(np.int64).sum(1)
        return self.bias.astype(np.int64) - self.x.zero_point * sums


@dataclass(eq=False)
class QAdd:
    label: str
    op: Operation
    a: QTensor
    b: QTensor
    y: QTensor
    clamp: tuple[int, int] = (0, 255)


@dataclass(eq=False)
class QReshape:
    """Flatten/Reshape of an 8-bit tensor: the same bytes in NCHW order, a new shape."""

    label: str
    op: Operation
    x: QTensor
    y: QTensor


@dataclass(eq=False)
class QMaxPool:
    """MaxPool of an 8-bit tensor: its window geometry as a depthwise `ConvShape`."""

    label: str
    op: Operation
    x: QTensor
    y: QTensor
    shape: ConvShape


@dataclass(eq=False)
class QRelayout:
    """`hvx.relayout`: the tensor moved from one SIMD layout to another (`select-layouts`
    places these where a reader wants another layout than its producer wrote)."""

    label: str
    op: Operation
    x: QTensor
    y: QTensor
    source: SimdLayout
    target: SimdLayout


QNode = QConv | QAdd | QReshape | QRelayout | QMaxPool


@dataclass
class QuantGraph:
    inputs: list[tuple[str, QTensor, bool]] = field(default_factory=list)
    """(graph input name, tensor, whether the host quantizes a float input)."""
    outputs: list[tuple[str, QTensor, bool]] = field(default_factory=list)
    """(graph output name, tensor, whether the host dequantizes it)."""
    nodes: list[QNode] = field(default_factory=list)
    values: dict[SSAValue, QTensor] = field(default_factory=dict)
    """The 8-bit SSA values, each the tensor it holds (the defining value first)."""

    def consumers(self, tensor: QTensor) -> list[QNode]:
        result = []
        for node in self.nodes:
            if isinstance(node, QConv | QReshape | QRelayout | QMaxPool) and node.x is tensor:
                result.append(node)
            elif isinstance(node, QAdd) and tensor in (node.a, node.b):
                result.append(node)
        return result


def _is_8bit(t) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 8


def _is_signed(t: IntegerType) -> bool:
    return t.signedness.data != Signedness.UNSIGNED


def _scalar(value: SSAValue, what: str, label: str) -> np.ndarray:
    array = constant_array(value)
    if array is None:
        raise QuantGraphError(f"{label}: {what} must be a constant")
    array = np.asarray(array)
    if array.size != 1:
        raise QuantGraphError(
            f"{label}: per-channel quantisation ({what} has {array.size} values) is not "
            "supported on the DSP path"
        )
    return array.reshape(())


class _Reader:
    """Walks the function once, turning ops into quantized nodes."""

    def __init__(self, function: func.FuncOp):
        self.function = function
        self.graph = QuantGraph()
        self.tensors = self.graph.values
        self.dequantized: dict[SSAValue, QTensor] = {}
        """Float SSA value that is DequantizeLinear of an 8-bit activation → the tensor."""
        self.handled: set[Operation] = set()

    def tensor(self, value: SSAValue, scale: np.ndarray, zero: np.ndarray, label: str) -> QTensor:
        if value in self.tensors:
            return self.tensors[value]
        t = value.type
        assert isinstance(t, TensorType)
        element = t.element_type
        if not _is_8bit(element):
            raise QuantGraphError(f"{label}: only 8-bit activations run on the DSP path")
        signed = _is_signed(element)
        zp = int(zero) + (128 if signed else 0)
        name = value.name_hint or f"t{len(self.tensors)}"
        qt = QTensor(name, tuple(t.get_shape()), np.float32(scale), zp, signed)
        self.tensors[value] = qt
        if value in self.function.body.block.args:  # an 8-bit model input
            self.graph.inputs.append((self.input_name(value), qt, False))
        return qt

    def operand_tensor(
        self, value: SSAValue, scale: SSAValue, zero: SSAValue, label: str
    ) -> QTensor:
        """An 8-bit operand or result of a QLinear op, with its constant parameters."""
        return self.tensor(value, _scalar(scale, "the scale", label),
                           _scalar(zero, "the zero point", label), label)

    def weights(self, value: SSAValue, scale: SSAValue, zero: SSAValue, label: str):
        """int8 weights with zero point 0 and their scale, from a constant (QDQ or operator)."""
        array = constant_array(value)
        if array is None:
            raise QuantGraphError(f"{label}: weights must be constant on the DSP path")
        array = np.asarray(array)
        if array.dtype not in (np.int8, np.uint8):
            raise QuantGraphError(f"{label}: weights must be int8 or uint8, not {array.dtype}")
        w_scale = _scalar(scale, "the weight scale", label)
        w_zero = 0 if is_none(zero) else int(_scalar(zero, "the weight zero point", label))
        w = array.astype(np.int64)
        if array.dtype == np.uint8:
            w, w_zero = w - 128, w_zero - 128
        if w_zero != 0:
            raise QuantGraphError(
                f"{label}: weight zero point {w_zero + (128 if array.dtype == np.uint8 else 0)} "
                "is not supported (int8 weights need 0, uint8 weights 128)"
            )
        return w.astype(np.int8), np.float32(w_scale)

    def quantized_input(self, value: SSAValue, label: str) -> QTensor:
        """The 8-bit tensor behind a float operand that is a DequantizeLinear of one."""
        if value in self.dequantized:
            return self.dequantized[value]
        raise QuantGraphError(f"{label}: input is not a dequantized 8-bit activation")

    def dequantized_weights(self, value: SSAValue, label: str):
        owner = value.owner
        if getattr(owner, "name", "") != "onnx.DequantizeLinear":
            raise QuantGraphError(f"{label}: weights must come from DequantizeLinear")
        self.handled.add(owner)
        return self.weights(owner.x, owner.x_scale, owner.x_zero_point, label)

    def dequantized_bias(self, value: SSAValue, expected_scale: np.float32, label: str):
        if is_none(value):
            return None
        owner = value.owner
        if getattr(owner, "name", "") == "onnx.DequantizeLinear":
            self.handled.add(owner)
            raw = constant_array(owner.x)
            scale = _scalar(owner.x_scale, "the bias scale", label)
            if raw is None or np.asarray(raw).dtype != np.int32:
                raise QuantGraphError(f"{label}: the bias must be a constant int32 tensor")
            if not np.isclose(float(scale), float(expected_scale), rtol=1e-6):
                raise QuantGraphError(f"{label}: the bias scale is not x_scale · w_scale")
            zero = 0 if is_none(owner.x_zero_point) else int(
                _scalar(owner.x_zero_point, "the bias zero point", label)
            )
            return np.asarray(raw, np.int64) - zero
        raise QuantGraphError(f"{label}: a float bias must come from DequantizeLinear of int32")

    def single_quantize(self, value: SSAValue, label: str):
        """The QuantizeLinear consuming a float result (after Relu/Clip), and the clamp."""
        clamp_op = None
        uses = list(value.uses)
        if len(uses) != 1:
            raise QuantGraphError(f"{label}: its float result must feed one QuantizeLinear")
        user = uses[0].operation
        if user.name in ("onnx.Relu", "onnx.Clip"):
            clamp_op = user
            self.handled.add(user)
            uses = list(user.results[0].uses)
            if len(uses) != 1:
                raise QuantGraphError(
                    f"{node_label(user)}: its result must feed one QuantizeLinear")
            user = uses[0].operation
        if user.name != "onnx.QuantizeLinear":
            raise QuantGraphError(f"{label}: its float result must be quantized (QDQ form)")
        self.handled.add(user)
        y = self.tensor(user.y, _scalar(user.y_scale, "the output scale", label),
                        _scalar(user.y_zero_point, "the output zero point", label)
                        if not is_none(user.y_zero_point) else np.array(0), label)
        return y, self.clamp(clamp_op, y)

    def clamp(self, op: Operation | None, y: QTensor) -> tuple[int, int]:
        if op is None:
            return 0, 255
        low, high = 0.0, np.inf
        if op.name == "onnx.Clip":
            for operand, which in ((op.operands[1], "min"), (op.operands[2], "max")):
                if is_none(operand):
                    continue
                bound = float(_scalar(operand, f"the Clip {which}", node_label(op)))
                low, high = (bound, high) if which == "min" else (low, bound)
            if not np.isfinite(low):
                low = -np.inf

        def quantize(v: float) -> int:
            if not np.isfinite(v):
                return 0 if v < 0 else 255
            q = np.rint(np.float32(v) / y.scale) + y.zero_point
            return int(np.clip(q, 0, 255))

        return quantize(low), quantize(high)

    def read(self) -> QuantGraph:
        block = self.function.body.block
        outputs = [*block.last_op.operands] if block.last_op is not None else []
        for op in block.ops:
            if op in self.handled or isinstance(op, OnnxConstantOp) or op.name in (
                "func.return", "onnx.None"
            ):
                continue
            self.op(op, outputs)
        for index, value in enumerate(outputs):
            name = self.output_name(index)
            if value in self.tensors:
                self.graph.outputs.append((name, self.tensors[value], False))
            elif value in self.dequantized:
                self.graph.outputs.append((name, self.dequantized[value], True))
            else:
                raise QuantGraphError(
                    f"graph output '{name}' is not an 8-bit tensor or its DequantizeLinear"
                )
        return self.graph

    def output_name(self, index: int) -> str:
        return graph_io_names(self.function)[1][index]

    def input_name(self, value: SSAValue) -> str:
        args = list(self.function.body.block.args)
        return graph_io_names(self.function)[0][args.index(value)]

    def op(self, op: Operation, outputs: list[SSAValue]) -> None:
        label = node_label(op)
        name = op.name
        if name == "onnx.QuantizeLinear":
            source = op.x
            if isinstance(source.owner, func.FuncOp) or source in self.function.body.block.args:
                scale = _scalar(op.y_scale, "the input scale", label)
                zero = _scalar(op.y_zero_point, "the input zero point", label) \
                    if not is_none(op.y_zero_point) else np.array(0)
                qt = self.tensor(op.y, scale, zero, label)
                self.graph.inputs.append((self.input_name(source), qt, True))
                return
            if source in self.dequantized:  # Q(DQ(t)) with t's parameters is t itself
                t = self.dequantized[source]
                scale = _scalar(op.y_scale, "the scale", label)
                zero = _scalar(op.y_zero_point, "the zero point", label)
                internal_zero = int(zero) + (128 if t.signed else 0)
                if np.float32(scale) == t.scale and internal_zero == t.zero_point:
                    self.tensors[op.y] = t
                    return
            raise QuantGraphError(f"{label}: QuantizeLinear of a float value the DSP does not make")
        if name == "onnx.DequantizeLinear":
            if constant_array(op.x) is not None:
                return  # weights and biases: read by their consumer
            scale = _scalar(op.x_scale, "the scale", label)
            zero = _scalar(op.x_zero_point, "the zero point", label) \
                if not is_none(op.x_zero_point) else np.array(0)
            if op.x in self.function.body.block.args:
                self.tensor(op.x, scale, zero, label)
            qt = self.tensors.get(op.x)
            if qt is None:
                raise QuantGraphError(f"{label}: dequantizes a tensor the DSP does not make")
            self.dequantized[op.y] = qt
            return
        if name in ("onnx.Conv", "onnx.QLinearConv"):
            self.conv(op, label)
            return
        if name in ("onnx.MatMul", "onnx.Gemm", "onnx.QLinearMatMul"):
            self.matmul(op, label)
            return
        if name == "onnx.Add":
            a = self.quantized_input(op.operands[0], label)
            b = self.quantized_input(op.operands[1], label)
            if a.shape != b.shape:
                raise QuantGraphError(f"{label}: Add with broadcasting is not supported on the DSP")
            y, clamp = self.single_quantize(op.results[0], label)
            self.graph.nodes.append(QAdd(label, op, a, b, y, clamp))
            return
        if name == "onnx.MaxPool":
            self.max_pool(op, label)
            return
        if name == "onnx.AveragePool":
            self.average_pool(op, label)
            return
        if name == "onnx.GlobalAveragePool":
            self.global_average_pool(op, label)
            return
        if name in ("onnx.Flatten", "onnx.Reshape"):
            source = op.operands[0]
            if source in self.dequantized:
                x = self.dequantized[source]
                y, _ = self.single_quantize(op.results[0], label)
                if y.scale != x.scale or y.zero_point != x.zero_point:
                    raise QuantGraphError(f"{label}: requantizing reshape is not supported")
            elif source in self.tensors:
                x = self.tensors[source]
                y = QTensor(op.results[0].name_hint or "reshaped",
                            tuple(op.results[0].type.get_shape()), x.scale, x.zero_point, x.signed)
                self.tensors[op.results[0]] = y
            else:
                raise QuantGraphError(f"{label}: input is not an 8-bit activation")
            self.graph.nodes.append(QReshape(label, op, x, y))
            return
        if name == "hvx.relayout":
            x = self.tensors.get(op.input)
            if x is None:
                raise QuantGraphError(f"{label}: relayout of a tensor the DSP does not make")
            y = QTensor(op.output.name_hint or f"{x.name}_{op.target.data}", x.shape, x.scale,
                        x.zero_point, x.signed)
            self.tensors[op.output] = y
            self.graph.nodes.append(QRelayout(label, op, x, y, op.source.data, op.target.data))
            return
        raise QuantGraphError(f"{label}: not supported on the DSP path")

    def conv(self, op: Operation, label: str) -> None:
        if op.name == "onnx.QLinearConv":
            x = self.operand_tensor(op.x, op.x_scale, op.x_zero_point, label)
            w, w_scale = self.weights(op.w, op.w_scale, op.w_zero_point, label)
            y = self.operand_tensor(op.y, op.y_scale, op.y_zero_point, label)
            bias = None if is_none(op.B) else np.asarray(constant_array(op.B), np.int64)
            if not is_none(op.B) and bias is None:
                raise QuantGraphError(f"{label}: the bias must be constant")
            clamp = (0, 255)
        else:
            x = self.quantized_input(op.X, label)
            w, w_scale = self.dequantized_weights(op.W, label)
            bias = self.dequantized_bias(op.B, np.float32(x.scale * w_scale), label)
            y, clamp = self.single_quantize(op.Y, label)
        if len(x.shape) != 4 or x.shape[0] != 1:
            raise QuantGraphError(f"{label}: only 2-D convolutions of batch 1 run on the DSP")
        attrs = _conv_attributes(op, label)
        n, cg = w.shape[0], w.shape[1]
        channels = x.shape[1]
        group = attrs["group"]
        depthwise = group == channels and group == n and cg == 1 and group > 1
        if group != 1 and not depthwise:
            raise QuantGraphError(f"{label}: grouped convolution (group {group}) is not supported")
        if attrs["dilations"] != (1, 1):
            raise QuantGraphError(f"{label}: dilated convolution is not supported on the DSP")
        pads = attrs["pads"]
        shape = ConvShape(
            channels, x.shape[2], x.shape[3], n, (w.shape[2], w.shape[3]), attrs["strides"],
            (pads[0], pads[1]), depthwise,
        )
        if (shape.out_height, shape.out_width) != tuple(y.shape[2:]):
            raise QuantGraphError(f"{label}: asymmetric padding is not supported on the DSP")
        if shape.stride[1] > 2:
            raise QuantGraphError(
                f"{label}: horizontal stride {shape.stride[1]} (the DSP takes 1 or 2)")
        bias = np.zeros(n, np.int64) if bias is None else bias
        self.graph.nodes.append(QConv(label, op, x, y, shape, w, bias, w_scale, clamp))

    def matmul(self, op: Operation, label: str) -> None:
        if op.name == "onnx.QLinearMatMul":
            a = self.operand_tensor(op.a, op.a_scale, op.a_zero_point, label)
            w, w_scale = self.weights(op.b, op.b_scale, op.b_zero_point, label)
            y = self.operand_tensor(op.y, op.y_scale, op.y_zero_point, label)
            bias, clamp = None, (0, 255)
        else:
            a = self.quantized_input(op.operands[0], label)
            w, w_scale = self.dequantized_weights(op.operands[1], label)
            bias = None
            if op.name == "onnx.Gemm":
                if op.int_attr("transA"):
                    raise QuantGraphError(f"{label}: Gemm with transA is not supported on the DSP")
                if op.float_attr("alpha") != 1.0 or op.float_attr("beta") != 1.0:
                    raise QuantGraphError(f"{label}: Gemm alpha and beta must be 1 on the DSP")
                if op.int_attr("transB"):
                    w = w.T
                bias = self.dequantized_bias(op.operands[2], np.float32(a.scale * w_scale), label)
                if bias is not None:
                    bias = np.broadcast_to(bias, (w.shape[1],)).copy()
            y, clamp = self.single_quantize(op.results[0], label)
        if w.ndim != 2:
            raise QuantGraphError(f"{label}: the weight must be a matrix")
        k, n = w.shape
        if a.shape[-1] != k:
            raise QuantGraphError(f"{label}: operand shapes do not match")
        rows = int(np.prod(a.shape[:-1]))
        shape = ConvShape(k, 1, rows, n)
        weights = np.ascontiguousarray(w.T).reshape(n, k, 1, 1)
        bias = np.zeros(n, np.int64) if bias is None else bias
        self.graph.nodes.append(
            QConv(label, op, a, y, shape, weights.astype(np.int8), bias, w_scale, clamp, True)
        )


    def pool_shape(self, op: Operation, x: QTensor, y: QTensor, label: str) -> ConvShape:
        """A pool's windows as a depthwise ConvShape over x (checked against y)."""
        if len(x.shape) != 4 or x.shape[0] != 1:
            raise QuantGraphError(f"{label}: only 2-D pools of batch 1 run on the DSP")
        attrs = _conv_attributes(op, label)
        if attrs["dilations"] != (1, 1):
            raise QuantGraphError(f"{label}: dilated pooling is not supported on the DSP")
        kernel = op.ints_attr("kernel_shape")
        shape = ConvShape(x.shape[1], x.shape[2], x.shape[3], x.shape[1], tuple(kernel),
                          attrs["strides"], attrs["pads"], True)
        if (1, shape.channels, shape.out_height, shape.out_width) != tuple(y.shape):
            raise QuantGraphError(
                f"{label}: ceil_mode windows that end in the padding are not supported on the DSP")
        if shape.stride[1] > 2:
            raise QuantGraphError(
                f"{label}: horizontal stride {shape.stride[1]} (the DSP takes 1 or 2)")
        return shape

    def max_pool(self, op: Operation, label: str) -> None:
        source = op.X
        if source in self.dequantized:  # QDQ: the same parameters on both sides
            x = self.dequantized[source]
            y, clamp = self.single_quantize(op.Y, label)
            if y.scale != x.scale or y.zero_point != x.zero_point or clamp != (0, 255):
                raise QuantGraphError(
                    f"{label}: a MaxPool that requantizes is not supported on the DSP")
        elif source in self.tensors or source in self.function.body.block.args:
            # operator form: MaxPool of the 8-bit tensor (a model input: scale unknown, 1)
            x = self.tensors.get(source) or self.tensor(source, np.array(1.0), np.array(0), label)
            y = QTensor(op.Y.name_hint or f"{x.name}_pooled", tuple(op.Y.type.get_shape()),
                        x.scale, x.zero_point, x.signed)
            self.tensors[op.Y] = y
        else:
            raise QuantGraphError(f"{label}: input is not an 8-bit activation")
        self.graph.nodes.append(QMaxPool(label, op, x, y, self.pool_shape(op, x, y, label)))

    def average_pool(self, op: Operation, label: str) -> None:
        """A depthwise convolution with unit weights, requantised by the window's count."""
        x = self.quantized_input(op.X, label)
        y, clamp = self.single_quantize(op.Y, label)
        shape = self.pool_shape(op, x, y, label)
        if any(shape.input_reach()) and not op.int_attr("count_include_pad"):
            raise QuantGraphError(
                f"{label}: AveragePool over padding without count_include_pad (windows with "
                "different divisors) is not supported on the DSP")
        count = shape.kernel[0] * shape.kernel[1]
        channels = shape.channels
        shape = ConvShape(channels, shape.height, shape.width, channels, shape.kernel,
                          shape.stride, shape.pads, channels > 1)
        weights = np.ones((channels, 1, *shape.kernel), np.int8)
        self.graph.nodes.append(QConv(
            label, op, x, y, shape, weights, np.zeros(channels, np.int64), np.float32(1), clamp,
            requant_scale=average_multiplier(x.scale, y.scale, count)))

    def global_average_pool(self, op: Operation, label: str) -> None:
        """The [C, H·W] image (a reshape) times a column of ones, reshaped to [1, C, 1, 1]."""
        x = self.quantized_input(op.X, label)
        y, clamp = self.single_quantize(op.Y, label)
        if len(x.shape) != 4 or x.shape[0] != 1:
            raise QuantGraphError(f"{label}: only 2-D pools of batch 1 run on the DSP")
        channels, pixels = x.shape[1], x.shape[2] * x.shape[3]
        rows = QTensor(f"{x.name}_rows", (channels, pixels), x.scale, x.zero_point, x.signed)
        sums = QTensor(f"{y.name}_column", (channels, 1), y.scale, y.zero_point, y.signed)
        self.graph.nodes.append(QReshape(label, op, x, rows))
        self.graph.nodes.append(QConv(
            label, op, rows, sums, ConvShape(pixels, 1, channels, 1),
            np.ones((1, pixels, 1, 1), np.int8), np.zeros(1, np.int64), np.float32(1), clamp,
            True, average_multiplier(x.scale, y.scale, pixels)))
        self.graph.nodes.append(QReshape(label, op, sums, y))


def _conv_attributes(op: Operation, label: str) -> dict:
    pads = op.ints_attr("pads") or (0, 0, 0, 0)
    if (pads[0], pads[1]) != (pads[2], pads[3]):
        raise QuantGraphError(f"{label}: asymmetric padding is not supported on the DSP")
    if op.auto_pad.data != "NOTSET":
        raise QuantGraphError(f"{label}: auto_pad is not supported on the DSP")
    return {
        "pads": (pads[0], pads[1]),
        "strides": op.ints_attr("strides") or (1, 1),
        "dilations": op.ints_attr("dilations") or (1, 1),
        "group": op.int_attr("group") if "group" in op.properties else 1,
    }


def read_quant_graph(function: func.FuncOp) -> QuantGraph:
    graph = _Reader(function).read()
    if not graph.nodes:
        raise QuantGraphError("the model has no quantized operator for the DSP to run")
    return graph


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise DiagnosticException(f"no function @{name} to lower")
