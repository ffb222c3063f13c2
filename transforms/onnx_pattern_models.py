"""
Small ONNX models holding the written-out activations `onnx-canonicalize` recognises
(and near misses it must leave alone), built with `onnx.helper` so that tests need no
PyTorch. Each variant spells `y = f(x)` the way some exporter does.

    model = pattern_model("gelu_erf_div", shape=(2, 8), prologue="matmul")
    onnx.save(model, path)

`PATTERNS[name].expected` is the op canonicalize should produce (None for a near
miss). With `prologue="matmul"`, x is `MatMul(input, W) + b` with constant W and b,
so `onnx-fuse` can absorb the recognised activation into a FusedMatMul.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 21


class _Graph:
    """Accumulates nodes and scalar/tensor initializers of one model."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.extra_outputs: list[str] = []
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, value: float | np.ndarray, shape: tuple[int, ...] = ()) -> str:
        array = np.asarray(value, np.float32).reshape(shape)
        name = self._name("c")
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        out = self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out, **attrs))
        return out


Builder = Callable[[_Graph, str], str]


def _erf_core(g: _Graph, x: str, scaled: str) -> str:
    return g.op("Add", g.op("Erf", scaled), g.const(1.0))


def gelu_erf_div(g: _Graph, x: str) -> str:
    """PyTorch's export: `(x * (erf(x / 1.4142) + 1)) * 0.5`."""
    core = _erf_core(g, x, g.op("Div", x, g.const(math.sqrt(2))))
    return g.op("Mul", g.op("Mul", x, core), g.const(0.5))


def gelu_erf_half_first(g: _Graph, x: str) -> str:
    """`(x * 0.5) * (1 + erf(x * 0.7071))`."""
    erf = g.op("Erf", g.op("Mul", x, g.const(1 / math.sqrt(2))))
    return g.op("Mul", g.op("Mul", x, g.const(0.5)), g.op("Add", g.const(1.0), erf))


def gelu_erf_swapped(g: _Graph, x: str) -> str:
    """`0.5 * ((1 + erf(0.7071 * x)) * x)`: every operand order reversed."""
    erf = g.op("Erf", g.op("Mul", g.const(0.70710678), x))
    return g.op("Mul", g.const(0.5), g.op("Mul", g.op("Add", g.const(1.0), erf), x))


def gelu_erf_half_inner(g: _Graph, x: str) -> str:
    """`x * ((erf(x / sqrt 2) + 1) * 0.5)`: the 0.5 applied to the `1 + erf` factor."""
    core = _erf_core(g, x, g.op("Div", x, g.const(1.4142135)))
    return g.op("Mul", x, g.op("Mul", core, g.const(0.5)))


def gelu_tanh_pow(g: _Graph, x: str) -> str:
    """`0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` with Pow."""
    cube = g.op("Mul", g.op("Pow", x, g.const(3.0)), g.const(0.044715))
    inner = g.op("Mul", g.op("Add", x, cube), g.const(math.sqrt(2 / math.pi)))
    core = g.op("Add", g.op("Tanh", inner), g.const(1.0))
    return g.op("Mul", g.op("Mul", g.const(0.5), x), core)


def gelu_tanh_mul(g: _Graph, x: str) -> str:
    """The tanh form with `x^3` as `x * (x * x)` and the sum written `0.0447 x^3 + x`."""
    cube = g.op("Mul", g.const(0.044715), g.op("Mul", x, g.op("Mul", x, x)))
    inner = g.op("Mul", g.const(0.7978845608), g.op("Add", cube, x))
    core = g.op("Add", g.const(1.0), g.op("Tanh", inner))
    return g.op("Mul", g.op("Mul", x, core), g.const(0.5))


def hardswish_hardsigmoid(g: _Graph, x: str) -> str:
    """`x * HardSigmoid(x, alpha = 1/6, beta = 0.5)`."""
    return g.op("Mul", x, g.op("HardSigmoid", x, alpha=1 / 6, beta=0.5))


def hardswish_clip_div(g: _Graph, x: str) -> str:
    """`x * Clip(x + 3, 0, 6) / 6`."""
    clip = g.op("Clip", g.op("Add", x, g.const(3.0)), g.const(0.0), g.const(6.0))
    return g.op("Div", g.op("Mul", x, clip), g.const(6.0))


def hardswish_clip_mul(g: _Graph, x: str) -> str:
    """`x * (Clip(3 + x, 0, 6) * 0.16667)`."""
    clip = g.op("Clip", g.op("Add", g.const(3.0), x), g.const(0.0), g.const(6.0))
    return g.op("Mul", x, g.op("Mul", clip, g.const(1 / 6)))


def hardswish_relu6(g: _Graph, x: str) -> str:
    """`x * (Min(Relu(x + 3), 6) / 6)`: Relu6 spelled with Relu and Min."""
    relu6 = g.op("Min", g.op("Relu", g.op("Add", x, g.const(3.0))), g.const(6.0))
    return g.op("Mul", g.op("Div", relu6, g.const(6.0)), x)


def not_gelu_wrong_constant(g: _Graph, x: str) -> str:
    """Gelu's shape with `x / 1.5` inside the erf: not Gelu."""
    core = _erf_core(g, x, g.op("Div", x, g.const(1.5)))
    return g.op("Mul", g.op("Mul", x, core), g.const(0.5))


def not_gelu_shared_erf(g: _Graph, x: str) -> str:
    """A correct Gelu whose Erf result is also a graph output: must stay written out."""
    erf = g.op("Erf", g.op("Div", x, g.const(math.sqrt(2))))
    g.extra_outputs.append(erf)
    core = g.op("Add", erf, g.const(1.0))
    return g.op("Mul", g.op("Mul", x, core), g.const(0.5))


def not_hardswish_offset(g: _Graph, x: str) -> str:
    """`x * Clip(x + 2, 0, 6) / 6`: the wrong offset."""
    clip = g.op("Clip", g.op("Add", x, g.const(2.0)), g.const(0.0), g.const(6.0))
    return g.op("Div", g.op("Mul", x, clip), g.const(6.0))


def not_hardswish_default_hardsigmoid(g: _Graph, x: str) -> str:
    """`x * HardSigmoid(x)` with ONNX's default alpha 0.2: not HardSwish."""
    return g.op("Mul", x, g.op("HardSigmoid", x))


@dataclass(frozen=True)
class Pattern:
    build: Builder
    expected: str | None
    """The op `onnx-canonicalize` turns the pattern into (None: it must not fire)."""
    approximate: str = "none"


PATTERNS: dict[str, Pattern] = {
    "gelu_erf_div": Pattern(gelu_erf_div, "Gelu"),
    "gelu_erf_half_first": Pattern(gelu_erf_half_first, "Gelu"),
    "gelu_erf_swapped": Pattern(gelu_erf_swapped, "Gelu"),
    "gelu_erf_half_inner": Pattern(gelu_erf_half_inner, "Gelu"),
    "gelu_tanh_pow": Pattern(gelu_tanh_pow, "Gelu", "tanh"),
    "gelu_tanh_mul": Pattern(gelu_tanh_mul, "Gelu", "tanh"),
    "hardswish_hardsigmoid": Pattern(hardswish_hardsigmoid, "HardSwish"),
    "hardswish_clip_div": Pattern(hardswish_clip_div, "HardSwish"),
    "hardswish_clip_mul": Pattern(hardswish_clip_mul, "HardSwish"),
    "hardswish_relu6": Pattern(hardswish_relu6, "HardSwish"),
    "not_gelu_wrong_constant": Pattern(not_gelu_wrong_constant, None),
    "not_gelu_shared_erf": Pattern(not_gelu_shared_erf, None),
    "not_hardswish_offset": Pattern(not_hardswish_offset, None),
    "not_hardswish_default_hardsigmoid": Pattern(not_hardswish_default_hardsigmoid, None),
}


def pattern_model(
    name: str, shape: tuple[int, ...] = (2, 8), prologue: str = "none", seed: int = 0
) -> onnx.ModelProto:
    """
    A checked opset-21 model with input `x` of `shape` (f32) and output `y`, where
    `y` is the pattern `name` applied to x, or (prologue "matmul") to
    `MatMul(x, W) + b` with random constant W (square in the last dim) and b.
    """
    if prologue not in ("none", "matmul"):
        raise ValueError(f"unknown prologue '{prologue}'")
    g = _Graph()
    x = "x"
    if prologue == "matmul":
        rng = np.random.default_rng(seed)
        n = shape[-1]
        w = g.const(rng.standard_normal((n, n)).astype(np.float32) / math.sqrt(n), (n, n))
        b = g.const(rng.standard_normal(n).astype(np.float32), (n,))
        x = g.op("Add", g.op("MatMul", x, w), b)
    out = PATTERNS[name].build(g, x)
    g.nodes.append(helper.make_node("Identity", [out], ["y"], name="output"))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))]
    outputs += [
        helper.make_tensor_value_info(o, TensorProto.FLOAT, list(shape)) for o in g.extra_outputs
    ]
    graph = helper.make_graph(
        g.nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        outputs,
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


__all__ = ["OPSET", "PATTERNS", "Pattern", "pattern_model"]
