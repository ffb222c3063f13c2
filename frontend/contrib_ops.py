"""
onnxruntime's quantized `com.microsoft` operators as standard QDQ subgraphs.

onnxruntime's quantizer, in its QOperator format, writes contrib ops besides the
standard QLinearConv/QLinearMatMul. Each becomes the `DequantizeLinear` → float op →
`QuantizeLinear` unit that the QDQ format writes for it, so import, the passes, the
DSP path and the integer reference (`reference/qlinear.py`) see one
spelling. The float op keeps the contrib node's name, so diagnostics name it.

- `QLinearAdd`, `QLinearMul` (A, A_scale, A_zero, B, B_scale, B_zero, C_scale,
  C_zero) → DQ(A), DQ(B), Add/Mul, Q;
- `QLinearGlobalAveragePool`, `QLinearAveragePool`, `QLinearSigmoid`,
  `QLinearLeakyRelu` (X, X_scale, X_zero, Y_scale, Y_zero) → DQ, the op, Q
  (`channels_last` must be 0);
- `QGemm` (A, a_scale, a_zero, B, b_scale, b_zero, C, y_scale, y_zero; alpha,
  transA, transB) → DQ(A), DQ(B), DQ(C) with scale alpha·a_scale·b_scale (QGemm adds
  the int32 C to the accumulator), Gemm, and Q when y_scale is given (else the
  float result).

The integer semantics the quantizer intends — QLinearAdd's float32 FMAs,
QLinearGlobalAveragePool's integer sum — are those the integer reference gives
such units; a float interpreter computes them in float.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from mobile_opt.frontend.errors import node_label

DOMAIN = "com.microsoft"

UNARY = {
    "QLinearGlobalAveragePool": "GlobalAveragePool",
    "QLinearAveragePool": "AveragePool",
    "QLinearSigmoid": "Sigmoid",
    "QLinearLeakyRelu": "LeakyRelu",
}
BINARY = {"QLinearAdd": "Add", "QLinearMul": "Mul"}
EXPANDED = sorted([*UNARY, *BINARY, "QGemm"])


class ContribOpError(Exception):
    """A contrib node this module cannot express; the message names the node."""


def _label(node: onnx.NodeProto) -> str:
    return node_label(node)


class _Expander:
    def __init__(self, model: onnx.ModelProto):
        self.model = model
        graph = model.graph
        self.names = {n for node in graph.node for n in (*node.input, *node.output)}
        self.names.update(t.name for t in graph.initializer)
        self.names.update(v.name for v in (*graph.input, *graph.output))
        self.constants = {t.name: t for t in graph.initializer}
        self.nodes: list[onnx.NodeProto] = []

    def fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self.names:
            name, n = f"{base}_{n}", n + 1
        self.names.add(name)
        return name

    def constant(self, base: str, value: np.ndarray) -> str:
        name = self.fresh(base)
        self.model.graph.initializer.append(numpy_helper.from_array(value, name))
        self.constants[name] = self.model.graph.initializer[-1]
        return name

    def value(self, name: str) -> np.ndarray | None:
        tensor = self.constants.get(name)
        return None if tensor is None else numpy_helper.to_array(tensor)

    def zero_like(self, node: onnx.NodeProto, given: list[str]) -> str:
        """A zero point for an input that leaves it out: of the type another one has."""
        base = f"{node.name or node.output[0]}_zero"
        for name in given:
            value = self.value(name) if name else None
            if value is not None:
                return self.constant(base, np.zeros((), value.dtype))
        return self.constant(base, np.zeros((), np.uint8))

    def dequantize(self, node, x: str, scale: str, zero: str, tag: str, axis: int | None = None):
        out = self.fresh(f"{x}_dequantized")
        inputs = [x, scale] + ([zero] if zero else [])
        attrs = {} if axis is None else {"axis": axis}
        self.nodes.append(helper.make_node(
            "DequantizeLinear", inputs, [out], name=self.fresh(f"{node.name}/{tag}"), **attrs))
        return out

    def quantize(self, node, value: str, scale: str, zero: str, output: str) -> None:
        self.nodes.append(helper.make_node(
            "QuantizeLinear", [value, scale, zero], [output],
            name=self.fresh(f"{node.name}/quantize")))

    def expand(self, node: onnx.NodeProto) -> None:
        inputs = list(node.input) + [""] * 9
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        name = node.name or node.output[0]
        if node.op_type in UNARY:
            if attrs.pop("channels_last", 0):
                raise ContribOpError(f"{_label(node)}: channels_last=1 is not supported")
            x, x_scale, x_zero, y_scale, y_zero = inputs[:5]
            y_zero = y_zero or self.zero_like(node, [x_zero])
            xf = self.dequantize(node, x, x_scale, x_zero, "dequantize")
            yf = self.fresh(f"{node.output[0]}_float")
            self.nodes.append(helper.make_node(UNARY[node.op_type], [xf], [yf], name=name, **attrs))
            self.quantize(node, yf, y_scale, y_zero, node.output[0])
        elif node.op_type in BINARY:
            a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = inputs[:8]
            y_zero = y_zero or self.zero_like(node, [a_zero, b_zero])
            af = self.dequantize(node, a, a_scale, a_zero, "dequantize_a")
            bf = self.dequantize(node, b, b_scale, b_zero, "dequantize_b")
            yf = self.fresh(f"{node.output[0]}_float")
            self.nodes.append(helper.make_node(BINARY[node.op_type], [af, bf], [yf], name=name))
            self.quantize(node, yf, y_scale, y_zero, node.output[0])
        else:
            self.gemm(node, inputs, attrs, name)

    def gemm(self, node, inputs, attrs, name) -> None:
        a, a_scale, a_zero, b, b_scale, b_zero, c, y_scale, y_zero = inputs[:9]
        alpha = float(attrs.get("alpha", 1.0))
        trans_b = int(attrs.get("transB", 0))
        scales = [self.value(s) for s in (a_scale, b_scale)]
        if any(s is None for s in scales):
            raise ContribOpError(f"{_label(node)}: a_scale and b_scale must be constants")
        b_scales = scales[1].reshape(-1)
        per_column = b_scales.size > 1
        af = self.dequantize(node, a, a_scale, a_zero, "dequantize_a")
        bf = self.dequantize(node, b, b_scale, b_zero, "dequantize_b",
                             axis=(0 if trans_b else 1) if per_column else None)
        gemm_inputs = [af, bf]
        if c:
            # QGemm adds C to the integer accumulator, which alpha·a_scale·b_scale scales
            c_scale = (np.float32(alpha) * np.float32(scales[0].reshape(()))
                       * b_scales.astype(np.float32)).astype(np.float32)
            c_scale = c_scale if per_column else c_scale.reshape(())
            scale_name = self.constant(f"{c}_scale", c_scale)
            zero_name = self.constant(f"{c}_zero", np.zeros(c_scale.shape, np.int32))
            axis = None if not per_column else -1
            gemm_inputs.append(self.dequantize(node, c, scale_name, zero_name, "dequantize_c",
                                               axis=axis))
        gemm_attrs = {k: attrs[k] for k in ("alpha", "transA", "transB") if k in attrs}
        if y_scale:
            yf = self.fresh(f"{node.output[0]}_float")
            self.nodes.append(helper.make_node("Gemm", gemm_inputs, [yf], name=name, **gemm_attrs))
            self.quantize(node, yf, y_scale, y_zero or self.zero_like(node, [a_zero]),
                          node.output[0])
        else:
            self.nodes.append(helper.make_node("Gemm", gemm_inputs, [node.output[0]], name=name,
                                               **gemm_attrs))


def expand_contrib_ops(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with its quantized com.microsoft nodes as QDQ subgraphs (others untouched)."""
    if not any(n.domain == DOMAIN and n.op_type in EXPANDED for n in model.graph.node):
        return model
    expander = _Expander(model)
    for node in model.graph.node:
        if node.domain == DOMAIN and node.op_type in EXPANDED:
            expander.expand(node)
        else:
            expander.nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(expander.nodes)
    if not any(n.domain == DOMAIN for n in model.graph.node):
        kept = [o for o in model.opset_import if o.domain != DOMAIN]
        del model.opset_import[:]
        model.opset_import.extend(kept)
    return model
