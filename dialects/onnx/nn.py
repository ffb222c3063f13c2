"""Neural-network operators: convolution, matrix products, pooling, normalisation, reductions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    NoneType,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from . import shapes
from .base import (
    INT32_LIMIT,
    OnnxOp,
    constant_array,
    dim_of,
    require_positive_property,
    ints_property,
    rank_of,
    require_at_least,
    require_axes,
    require_axis,
    known_ints,
    is_none,
    optional_ints,
    require_same_element_type,
    same_as,
    shape_of,
)
from .shapes import Shape, ShapeError
from .types import FloatTensor, QuantTensor

Ints = DenseArrayBase.constr(i64)


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, 64)


def _float(value: float) -> FloatAttr:
    return FloatAttr(value, f32)


@dataclass(frozen=True)
class Window:
    """Explicit geometry of a sliding-window op: pads in ONNX begin..end order."""

    kernel: Shape
    strides: Shape
    dilations: Shape
    pads: Shape


AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


class WindowOp(OnnxOp):
    """Attributes shared by convolutions and pools."""

    auto_pad = prop_def(StringAttr, default_value=StringAttr("NOTSET"))
    dilations = opt_prop_def(Ints)
    kernel_shape = opt_prop_def(Ints)
    pads = opt_prop_def(Ints)
    strides = opt_prop_def(Ints)

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        auto_pad = properties.get("auto_pad")
        if isinstance(auto_pad, StringAttr) and auto_pad.data not in AUTO_PADS:
            raise ShapeError(f"auto_pad = '{auto_pad.data}', must be one of {', '.join(AUTO_PADS)}")
        # below 2^31 too: sizes and offsets are 32-bit ints in the device kernels
        require_at_least("kernel_shape", ints_property(properties, "kernel_shape"), 1, INT32_LIMIT)
        require_at_least("strides", ints_property(properties, "strides"), 1, INT32_LIMIT)
        require_at_least("dilations", ints_property(properties, "dilations"), 1, INT32_LIMIT)
        require_at_least("pads", ints_property(properties, "pads"), 0, INT32_LIMIT)

    def window(self, spatial: Shape, kernel: Shape | None = None) -> Window:
        """Resolve defaults and `auto_pad` into explicit geometry for `spatial` input dims."""
        n = len(spatial)
        declared = self.ints_attr("kernel_shape")
        if declared is not None and kernel is not None and declared != kernel:
            raise ShapeError(f"kernel_shape {list(declared)} differs from weight {list(kernel)}")
        kernel = declared or kernel
        if kernel is None:
            raise ShapeError("kernel_shape is required")
        strides = self.ints_attr("strides") or (1,) * n
        dilations = self.ints_attr("dilations") or (1,) * n
        auto_pad = self.auto_pad.data
        if auto_pad == "NOTSET":
            pads = self.ints_attr("pads") or (0,) * (2 * n)
        else:
            if self.pads is not None:
                raise ShapeError("pads and auto_pad cannot both be set")
            pads = tuple(shapes.auto_pads(spatial, kernel, strides, dilations, auto_pad))
        if not len(kernel) == len(strides) == len(dilations) == n or len(pads) != 2 * n:
            raise ShapeError(
                f"kernel/strides/dilations/pads do not match {n} spatial dimensions"
            )
        return Window(tuple(kernel), tuple(strides), tuple(dilations), tuple(pads))


class ConvAttrsOp(WindowOp):
    group = prop_def(IntegerAttr[I64], default_value=_int(1))

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        require_positive_property(properties, "group")

    def verify_attributes(self) -> None:
        super().verify_attributes()
        channels = dim_of(self.operands[0], 1)  # X (N, C, ...) of every conv
        group = self.int_attr("group")
        if channels is not None and channels % group:
            raise ShapeError(f"group = {group}, must divide the {channels} input channels")

    def conv_output(self, x: Shape, w: Shape, bias: Shape | None) -> Shape:
        """Output shape of a convolution of `x` (N,C,...) with `w` (M,C/group,...)."""
        if len(x) < 3 or len(w) != len(x):
            raise ShapeError(f"input {list(x)} and weight {list(w)} ranks do not fit a conv")
        group = self.int_attr("group")
        if group < 1 or x[1] != w[1] * group or w[0] % group:
            raise ShapeError(
                f"channels do not match: input {x[1]}, weight {list(w)}, group {group}"
            )
        if bias is not None and bias != (w[0],):
            raise ShapeError(f"bias shape {list(bias)} should be [{w[0]}]")
        win = self.window(x[2:], w[2:])
        spatial = shapes.window(x[2:], win.kernel, win.strides, win.dilations, win.pads)
        return (x[0], w[0], *spatial)


@irdl_op_definition
class ConvOp(ConvAttrsOp):
    """N-d convolution (cross-correlation) of X with W, plus optional bias B; grouped when `group` > 1."""

    name = "onnx.Conv"
    X = operand_def(FloatTensor)
    W = operand_def(FloatTensor)
    B = operand_def(FloatTensor | NoneType)
    Y = result_def(FloatTensor)

    def infer_types(self):
        require_same_element_type(self, [self.X, self.W, self.B])
        bias = None if is_none(self.B) else shape_of(self.B)
        return [same_as(self.X, self.conv_output(shape_of(self.X), shape_of(self.W), bias))]


@irdl_op_definition
class ConvTransposeOp(ConvAttrsOp):
    """Transposed convolution; W is (C, M/group, k...)."""

    name = "onnx.ConvTranspose"
    X = operand_def(FloatTensor)
    W = operand_def(FloatTensor)
    B = operand_def(FloatTensor | NoneType)
    Y = result_def(FloatTensor)
    output_padding = opt_prop_def(Ints)
    output_shape = opt_prop_def(Ints)

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        require_at_least("output_padding", ints_property(properties, "output_padding"), 0, INT32_LIMIT)
        require_at_least("output_shape", ints_property(properties, "output_shape"), 1, INT32_LIMIT)

    def transposed_window(self, x: Shape, w: Shape) -> tuple[Window, Shape, Shape]:
        """Geometry, output padding and output spatial shape."""
        n = len(x) - 2
        kernel = w[2:]
        strides = self.ints_attr("strides") or (1,) * n
        dilations = self.ints_attr("dilations") or (1,) * n
        out_pad = self.ints_attr("output_padding") or (0,) * n
        wanted = self.ints_attr("output_shape")
        auto_pad = self.auto_pad.data
        if wanted is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            natural = [
                strides[i] * (x[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(n)
            ]
            if wanted is not None:
                out = tuple(wanted[-n:])
            else:
                # SAME asks for input * stride but, as in ONNX Runtime and ONNX's
                # shape inference, never grows a smaller natural output to it
                out = tuple(min(s * st, size) for s, st, size in zip(x[2:], strides, natural))
            begins, ends = [], []
            for i in range(n):
                # an output_shape beyond the natural size extends the output at
                # its end (as output_padding does, and as ONNX Runtime does)
                total = max(natural[i] - out[i], 0)
                small, large = total // 2, total - total // 2
                # ONNX: only SAME_UPPER puts the smaller half first; an explicit
                # output_shape without auto_pad (NOTSET) splits like SAME_LOWER
                begins.append(small if auto_pad == "SAME_UPPER" else large)
                ends.append(large if auto_pad == "SAME_UPPER" else small)
            pads = tuple(begins + ends)
        else:
            pads = self.ints_attr("pads") or (0,) * (2 * n)
            out = shapes.conv_transpose_output(x[2:], kernel, strides, dilations, pads, out_pad)
        if not len(strides) == len(dilations) == len(out_pad) == n or len(pads) != 2 * n:
            raise ShapeError("strides/dilations/pads/output_padding do not match the input rank")
        return Window(tuple(kernel), tuple(strides), tuple(dilations), pads), tuple(out_pad), tuple(out)

    def infer_types(self):
        require_same_element_type(self, [self.X, self.W, self.B])
        x, w = shape_of(self.X), shape_of(self.W)
        group = self.int_attr("group")
        if len(x) < 3 or len(w) != len(x) or x[1] != w[0] or x[1] % group:
            raise ShapeError(f"input {list(x)} and weight {list(w)} do not fit a transposed conv")
        channels = w[1] * group
        if not is_none(self.B) and shape_of(self.B) != (channels,):
            raise ShapeError(f"bias should be [{channels}]")
        _, _, out = self.transposed_window(x, w)
        if any(d < 1 for d in out):
            raise ShapeError(f"output spatial shape {list(out)} is empty")
        return [same_as(self.X, (x[0], channels, *out))]


@irdl_op_definition
class MatMulOp(OnnxOp):
    """numpy.matmul: batched over broadcast leading dimensions."""

    name = "onnx.MatMul"
    A = operand_def(TensorType)
    B = operand_def(TensorType)
    Y = result_def(TensorType)

    def infer_types(self):
        require_same_element_type(self, [self.A, self.B])
        return [same_as(self.A, shapes.matmul(shape_of(self.A), shape_of(self.B)))]


class GemmAttrsOp(OnnxOp):
    """`alpha * op(A) op(B) + beta * C` for 2-D A, B; C broadcasts to the (M, N) result."""

    A = operand_def(TensorType)
    B = operand_def(TensorType)
    C = operand_def(TensorType | NoneType)
    Y = result_def(TensorType)
    alpha = prop_def(FloatAttr, default_value=_float(1.0))
    beta = prop_def(FloatAttr, default_value=_float(1.0))
    transA = prop_def(IntegerAttr[I64], default_value=_int(0))
    transB = prop_def(IntegerAttr[I64], default_value=_int(0))

    def infer_types(self):
        require_same_element_type(self, [self.A, self.B, self.C])
        out = shapes.gemm(
            shape_of(self.A), shape_of(self.B), bool(self.int_attr("transA")), bool(self.int_attr("transB"))
        )
        if not is_none(self.C) and shapes.broadcast(out, shape_of(self.C)) != out:
            raise ShapeError(f"C {list(shape_of(self.C))} does not broadcast to {list(out)}")
        return [same_as(self.A, out)]


@irdl_op_definition
class GemmOp(GemmAttrsOp):
    name = "onnx.Gemm"


class PoolOp(WindowOp):
    """A window reduction over the spatial dims of X (N, C, ...)."""

    X = operand_def(FloatTensor)
    Y = result_def(FloatTensor)
    ceil_mode = prop_def(IntegerAttr[I64], default_value=_int(0))

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        kernel = ints_property(properties, "kernel_shape")
        pads = ints_property(properties, "pads")
        if not kernel or not pads or len(pads) != 2 * len(kernel):
            return
        dilations = ints_property(properties, "dilations") or (1,) * len(kernel)
        # as in ONNX Runtime: a pad as wide as the window would give windows of padding only
        for i, pad in enumerate(pads):
            n = i % len(kernel)
            extent = (kernel[n] - 1) * (dilations[n] if n < len(dilations) else 1) + 1
            if pad >= extent:
                raise ShapeError(f"pads[{i}] = {pad}, must be < {extent}, the extent of kernel_shape[{n}]")

    def infer_types(self):
        x = shape_of(self.X)
        if len(x) < 3:
            raise ShapeError(f"input {list(x)} has no spatial dimensions")
        if self.kernel_shape is None:
            raise ShapeError("kernel_shape is required")
        win = self.window(x[2:])
        spatial = shapes.window(
            x[2:], win.kernel, win.strides, win.dilations, win.pads, bool(self.int_attr("ceil_mode"))
        )
        return [same_as(self.X, (*x[:2], *spatial))]


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """Maximum over each window; also defined on int8/uint8 since opset 12."""

    name = "onnx.MaxPool"
    X = operand_def(FloatTensor | QuantTensor)
    Y = result_def(FloatTensor | QuantTensor)
    storage_order = prop_def(IntegerAttr[I64], default_value=_int(0))


@irdl_op_definition
class AveragePoolOp(PoolOp):
    """Mean over each window; padding counts toward the divisor if `count_include_pad`."""

    name = "onnx.AveragePool"
    count_include_pad = prop_def(IntegerAttr[I64], default_value=_int(0))


class GlobalPoolOp(OnnxOp):
    X = operand_def(FloatTensor)
    Y = result_def(FloatTensor)

    def infer_types(self):
        x = shape_of(self.X)
        if len(x) < 3:
            raise ShapeError(f"input {list(x)} has no spatial dimensions")
        return [same_as(self.X, (*x[:2], *(1,) * (len(x) - 2)))]


@irdl_op_definition
class GlobalAveragePoolOp(GlobalPoolOp):
    name = "onnx.GlobalAveragePool"


@irdl_op_definition
class GlobalMaxPoolOp(GlobalPoolOp):
    name = "onnx.GlobalMaxPool"


@irdl_op_definition
class LRNOp(OnnxOp):
    """Local response normalisation across `size` neighbouring channels."""

    name = "onnx.LRN"
    X = operand_def(FloatTensor)
    Y = result_def(FloatTensor)
    alpha = prop_def(FloatAttr, default_value=_float(1e-4))
    beta = prop_def(FloatAttr, default_value=_float(0.75))
    bias = prop_def(FloatAttr, default_value=_float(1.0))
    size = prop_def(IntegerAttr[I64])

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        require_positive_property(properties, "size")

    def infer_types(self):
        return [same_as(self.X)]


@irdl_op_definition
class BatchNormalizationOp(OnnxOp):
    """Inference-mode batch norm: `scale (X - mean) / sqrt(var + epsilon) + B` per channel (dim 1)."""

    name = "onnx.BatchNormalization"
    X = operand_def(FloatTensor)
    scale = operand_def(FloatTensor)
    B = operand_def(FloatTensor)
    input_mean = operand_def(FloatTensor)
    input_var = operand_def(FloatTensor)
    Y = result_def(FloatTensor)
    epsilon = prop_def(FloatAttr, default_value=_float(1e-5))
    momentum = prop_def(FloatAttr, default_value=_float(0.9))
    training_mode = prop_def(IntegerAttr[I64], default_value=_int(0))

    def infer_types(self):
        if self.int_attr("training_mode"):
            raise VerifyException("onnx.BatchNormalization: training_mode is not supported")
        x = shape_of(self.X)
        if len(x) < 2:
            raise ShapeError("input needs a channel dimension")
        for v in (self.scale, self.B, self.input_mean, self.input_var):
            if shape_of(v) != (x[1],):
                raise ShapeError(f"per-channel operands must be [{x[1]}], got {list(shape_of(v))}")
        return [same_as(self.X)]


@irdl_op_definition
class LayerNormalizationOp(OnnxOp):
    """Normalises over dims `axis`..end, then `* Scale + B` (both broadcast to those dims)."""

    name = "onnx.LayerNormalization"
    X = operand_def(FloatTensor)
    Scale = operand_def(FloatTensor)
    B = operand_def(FloatTensor | NoneType)
    Y = result_def(FloatTensor)
    axis = prop_def(IntegerAttr[I64], default_value=_int(-1))
    epsilon = prop_def(FloatAttr, default_value=_float(1e-5))
    stash_type = prop_def(IntegerAttr[I64], default_value=_int(1))

    def verify_attributes(self) -> None:
        super().verify_attributes()
        require_axis("axis", self.int_attr("axis"), rank_of(self.X))

    def infer_types(self):
        x = shape_of(self.X)
        axis = shapes.normalize_axis(self.int_attr("axis"), len(x))
        for v in (self.Scale, self.B):
            if not is_none(v) and shapes.broadcast(x[axis:], shape_of(v)) != x[axis:]:
                raise ShapeError(f"{list(shape_of(v))} does not broadcast to {list(x[axis:])}")
        return [same_as(self.X)]


class SoftmaxBaseOp(OnnxOp):
    input = operand_def(FloatTensor)
    output = result_def(FloatTensor)
    axis = prop_def(IntegerAttr[I64], default_value=_int(-1))

    def verify_attributes(self) -> None:
        super().verify_attributes()
        require_axis("axis", self.int_attr("axis"), rank_of(self.input))

    def infer_types(self):
        shapes.normalize_axis(self.int_attr("axis"), len(shape_of(self.input)))
        return [same_as(self.input)]


@irdl_op_definition
class SoftmaxOp(SoftmaxBaseOp):
    """`exp(x) / sum(exp(x))` along `axis`."""

    name = "onnx.Softmax"


@irdl_op_definition
class LogSoftmaxOp(SoftmaxBaseOp):
    name = "onnx.LogSoftmax"


@irdl_op_definition
class DropoutOp(OnnxOp):
    """Identity at inference; the mask output is not modelled."""

    name = "onnx.Dropout"
    data = operand_def(FloatTensor)
    ratio = operand_def(FloatTensor | NoneType)
    training_mode = operand_def(TensorType | NoneType)
    output = result_def(FloatTensor)
    seed = opt_prop_def(IntegerAttr[I64])

    def infer_types(self):
        if not is_none(self.training_mode):
            mode = constant_array(self.training_mode)
            if mode is None or bool(np.asarray(mode).reshape(-1)[0]):
                raise VerifyException(
                    "onnx.Dropout: training_mode is not supported (it must be absent or a constant false)"
                )
        return [same_as(self.data)]


class ReduceOp(OnnxOp):
    """Reduces `data` over `axes` (all dims when absent, unless `noop_with_empty_axes`)."""

    data = operand_def(TensorType)
    axes = operand_def(TensorType | NoneType)
    reduced = result_def(TensorType)
    keepdims = prop_def(IntegerAttr[I64], default_value=_int(1))
    noop_with_empty_axes = prop_def(IntegerAttr[I64], default_value=_int(0))

    def verify_attributes(self) -> None:
        super().verify_attributes()
        require_axes("axes", known_ints(self.axes), rank_of(self.data), distinct=False)

    def reduction_axes(self, axes: Sequence[int] | None = None) -> tuple[int, ...] | None:
        """
        Normalised axes to reduce; None means every axis, () means none. `axes` is the
        `axes` operand's value where only the run time knows it; by default it is read
        from the constant operand.
        """
        if axes is None:
            axes = optional_ints(self.axes)
        if not axes:
            return () if self.int_attr("noop_with_empty_axes") else None
        rank = self.data.type.get_num_dims()  # type: ignore[union-attr]
        return tuple(sorted({shapes.normalize_axis(a, rank) for a in axes}))

    def infer_types(self):
        if not is_none(self.axes) and len(shape_of(self.axes)) != 1:
            raise ShapeError("axes must be 1-D")
        return [
            same_as(
                self.data,
                shapes.reduce(shape_of(self.data), self.reduction_axes(), bool(self.int_attr("keepdims"))),
            )
        ]


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "onnx.ReduceMean"


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "onnx.ReduceSum"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "onnx.ReduceMax"


__all__ = [name for name in dir() if name.endswith("Op") and name[0].isupper()] + ["Window"]
