"""
Data-movement operators: reshapes, permutations, joins, splits, slices, gathers, pads,
resizes; and Range and Trilu, whose values follow from element positions.
"""

from __future__ import annotations

import math

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
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from . import shapes
from .base import (
    INT32_LIMIT,
    OnnxOp,
    UnknownShape,
    constant_array,
    dim_of,
    require_positive_property,
    ints_property,
    known_ints,
    rank_of,
    require_at_least,
    require_axes,
    require_axis,
    require_nonzero,
    constant_ints,
    is_none,
    optional_ints,
    require_same_element_type,
    same_as,
    shape_of,
    tensor,
)
from .shapes import ShapeError
from .types import IntTensor

Ints = DenseArrayBase.constr(i64)


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, 64)


@irdl_op_definition
class ReshapeOp(OnnxOp):
    """Same data, new shape; 0 copies the input dim (unless `allowzero`), -1 is inferred."""

    name = "onnx.Reshape"
    data = operand_def(TensorType)
    shape = operand_def(IntTensor)
    reshaped = result_def(TensorType)
    allowzero = prop_def(IntegerAttr[I64], default_value=_int(0))

    def verify_attributes(self) -> None:
        super().verify_attributes()
        target = known_ints(self.shape)
        if target is None:
            return
        require_at_least("shape", target, -1)
        if target.count(-1) > 1:
            raise ShapeError(f"shape = {list(target)}, must have at most one -1")
        if self.int_attr("allowzero") and -1 in target and 0 in target:
            raise ShapeError(f"shape = {list(target)}, must not have both 0 and -1 with allowzero")

    def infer_types(self):
        target = constant_ints(self.shape)
        return [same_as(self.data, shapes.reshape(shape_of(self.data), target, bool(self.int_attr("allowzero"))))]


@irdl_op_definition
class TransposeOp(OnnxOp):
    """Permutes dims: output dim i is input dim perm[i] (reversed when perm is absent)."""

    name = "onnx.Transpose"
    data = operand_def(TensorType)
    transposed = result_def(TensorType)
    perm = opt_prop_def(Ints)

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        perm = ints_property(properties, "perm")
        if perm is not None and sorted(perm) != list(range(len(perm))):
            raise ShapeError(f"perm = {list(perm)}, must be a permutation of 0..{len(perm) - 1}")

    def verify_attributes(self) -> None:
        super().verify_attributes()
        perm, rank = self.ints_attr("perm"), rank_of(self.data)
        if perm is not None and rank is not None and len(perm) != rank:
            raise ShapeError(f"perm = {list(perm)}, must have {rank} values for rank {rank}")

    def infer_types(self):
        return [same_as(self.data, shapes.transpose(shape_of(self.data), self.ints_attr("perm")))]


@irdl_op_definition
class FlattenOp(OnnxOp):
    """Reshapes to 2-D: dims before `axis` form the rows, the rest the columns."""

    name = "onnx.Flatten"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=_int(1))

    def verify_attributes(self) -> None:
        super().verify_attributes()
        axis, rank = self.int_attr("axis"), rank_of(self.input)
        if rank is not None and not -rank <= axis <= rank:  # rank itself: one row
            raise ShapeError(f"axis = {axis}, must be in [{-rank}, {rank}] for rank {rank}")

    def infer_types(self):
        return [same_as(self.input, shapes.flatten(shape_of(self.input), self.int_attr("axis")))]


@irdl_op_definition
class SqueezeOp(OnnxOp):
    """Removes the size-1 dims listed in `axes` (all size-1 dims when absent)."""

    name = "onnx.Squeeze"
    data = operand_def(TensorType)
    axes = operand_def(IntTensor | NoneType)
    squeezed = result_def(TensorType)

    def verify_attributes(self) -> None:
        super().verify_attributes()
        require_axes("axes", known_ints(self.axes), rank_of(self.data))

    def infer_types(self):
        return [same_as(self.data, shapes.squeeze(shape_of(self.data), optional_ints(self.axes)))]


@irdl_op_definition
class UnsqueezeOp(OnnxOp):
    """Inserts size-1 dims at `axes` of the output."""

    name = "onnx.Unsqueeze"
    data = operand_def(TensorType)
    axes = operand_def(IntTensor)
    expanded = result_def(TensorType)

    def verify_attributes(self) -> None:
        super().verify_attributes()
        axes, rank = known_ints(self.axes), rank_of(self.data)
        require_axes("axes", axes, rank, extra=len(axes or ()))

    def infer_types(self):
        return [same_as(self.data, shapes.unsqueeze(shape_of(self.data), constant_ints(self.axes)))]


@irdl_op_definition
class ConcatOp(OnnxOp):
    """Joins inputs along `axis`."""

    name = "onnx.Concat"
    inputs = var_operand_def(TensorType)
    concat_result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])

    def verify_attributes(self) -> None:
        super().verify_attributes()
        if self.inputs:
            require_axis("axis", self.int_attr("axis"), rank_of(self.inputs[0]))

    def infer_types(self):
        require_same_element_type(self, self.inputs)
        if not self.inputs:
            raise ShapeError("needs at least one input")
        return [same_as(self.inputs[0], shapes.concat([shape_of(v) for v in self.inputs], self.int_attr("axis")))]


@irdl_op_definition
class SplitOp(OnnxOp):
    """Cuts `input` along `axis` into parts of sizes `split`, or `num_outputs` equal parts."""

    name = "onnx.Split"
    input = operand_def(TensorType)
    split = operand_def(IntTensor | NoneType)
    outputs = var_result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=_int(0))
    num_outputs = opt_prop_def(IntegerAttr[I64])

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        require_positive_property(properties, "num_outputs")

    def verify_attributes(self) -> None:
        super().verify_attributes()
        axis, rank = self.int_attr("axis"), rank_of(self.input)
        require_axis("axis", axis, rank)
        split = known_ints(self.split)
        if split is None:
            return
        require_at_least("split", split, 0)
        size = dim_of(self.input, axis)
        if size is not None and sum(split) != size:
            raise ShapeError(f"split = {list(split)}, must sum to {size}, the size of axis {axis}")

    def sizes(self) -> list[int]:
        data = shape_of(self.input)
        axis = shapes.normalize_axis(self.int_attr("axis"), len(data))
        if self.num_outputs is not None and not is_none(self.split):
            raise ShapeError("split and num_outputs cannot both be given")
        count = self.int_attr("num_outputs") if self.num_outputs is not None else len(self.outputs)
        return shapes.split_sizes(data[axis], optional_ints(self.split), count)

    def infer_types(self):
        data = shape_of(self.input)
        axis = shapes.normalize_axis(self.int_attr("axis"), len(data))
        parts = []
        for size in self.sizes():
            dims = list(data)
            dims[axis] = size
            parts.append(same_as(self.input, dims))
        return parts


@irdl_op_definition
class SliceOp(OnnxOp):
    """numpy-style strided slice along `axes` with clamped `starts`/`ends`."""

    name = "onnx.Slice"
    data = operand_def(TensorType)
    starts = operand_def(IntTensor)
    ends = operand_def(IntTensor)
    axes = operand_def(IntTensor | NoneType)
    steps = operand_def(IntTensor | NoneType)
    output = result_def(TensorType)

    def verify_attributes(self) -> None:
        super().verify_attributes()
        require_axes("axes", known_ints(self.axes), rank_of(self.data))
        steps = known_ints(self.steps)
        if steps is not None:
            require_nonzero("steps", steps)

    def slices(self) -> list[slice]:
        return shapes.slice_dims(
            shape_of(self.data),
            constant_ints(self.starts),
            constant_ints(self.ends),
            optional_ints(self.axes),
            optional_ints(self.steps),
        )[1]

    def infer_types(self):
        out, _ = shapes.slice_dims(
            shape_of(self.data),
            constant_ints(self.starts),
            constant_ints(self.ends),
            optional_ints(self.axes),
            optional_ints(self.steps),
        )
        return [same_as(self.data, out)]


@irdl_op_definition
class GatherOp(OnnxOp):
    """Takes entries of `data` along `axis` at `indices` (negative indices count from the end)."""

    name = "onnx.Gather"
    data = operand_def(TensorType)
    indices = operand_def(IntTensor)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=_int(0))

    def verify_attributes(self) -> None:
        super().verify_attributes()
        axis, rank = self.int_attr("axis"), rank_of(self.data)
        require_axis("axis", axis, rank)
        size = dim_of(self.data, axis)
        indices = constant_array(self.indices)
        if size is None or indices is None:
            return
        flat = np.asarray(indices).reshape(-1)  # vectorised: an index table may be large
        bad = np.flatnonzero((flat < -size) | (flat >= size))
        if bad.size:
            i = int(bad[0])
            raise ShapeError(
                f"indices[{i}] = {int(flat[i])}, must be in [{-size}, {size - 1}] for axis {axis} of size {size}"
            )

    def infer_types(self):
        return [same_as(self.data, shapes.gather(shape_of(self.data), shape_of(self.indices), self.int_attr("axis")))]


PAD_MODES = ("constant", "reflect", "edge", "wrap")


@irdl_op_definition
class PadOp(OnnxOp):
    """Pads `data` by `pads` (begins then ends, per axis in `axes`) in `mode` constant/reflect/edge/wrap."""

    name = "onnx.Pad"
    data = operand_def(TensorType)
    pads = operand_def(IntTensor)
    constant_value = operand_def(TensorType | NoneType)
    axes = operand_def(IntTensor | NoneType)
    output = result_def(TensorType)
    mode = prop_def(StringAttr, default_value=StringAttr("constant"))

    @classmethod
    def check_properties(cls, properties):
        super().check_properties(properties)
        mode = properties.get("mode")
        if isinstance(mode, StringAttr) and mode.data not in PAD_MODES:
            raise ShapeError(f"mode = '{mode.data}', must be one of {', '.join(PAD_MODES)}")

    def verify_attributes(self) -> None:
        super().verify_attributes()
        rank = rank_of(self.data)
        require_axes("axes", known_ints(self.axes), rank)
        pads = known_ints(self.pads)
        # negative pads crop, as ONNX allows; huge ones are no model's
        for i, pad in enumerate(pads or ()):
            if abs(pad) >= INT32_LIMIT:
                raise ShapeError(f"pads[{i}] = {pad}, must be in ({-INT32_LIMIT}, {INT32_LIMIT})")

    def infer_types(self):
        return [same_as(self.data, shapes.pad(shape_of(self.data), constant_ints(self.pads), optional_ints(self.axes)))]


@irdl_op_definition
class ResizeOp(OnnxOp):
    """Nearest-neighbour resize of X by `scales` or to `sizes` (this project supports `mode = "nearest"`)."""

    name = "onnx.Resize"
    X = operand_def(TensorType)
    roi = operand_def(TensorType | NoneType)
    scales = operand_def(TensorType | NoneType)
    sizes = operand_def(IntTensor | NoneType)
    Y = result_def(TensorType)
    mode = prop_def(StringAttr, default_value=StringAttr("nearest"))
    coordinate_transformation_mode = prop_def(StringAttr, default_value=StringAttr("half_pixel"))
    nearest_mode = prop_def(StringAttr, default_value=StringAttr("round_prefer_floor"))
    antialias = prop_def(IntegerAttr[I64], default_value=_int(0))
    axes = opt_prop_def(Ints)
    cubic_coeff_a = prop_def(FloatAttr, default_value=FloatAttr(-0.75, f32))
    exclude_outside = prop_def(IntegerAttr[I64], default_value=_int(0))
    extrapolation_value = prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))
    keep_aspect_ratio_policy = prop_def(StringAttr, default_value=StringAttr("stretch"))

    def verify_attributes(self) -> None:
        super().verify_attributes()
        rank = rank_of(self.X)
        require_axes("axes", self.ints_attr("axes"), rank)
        scales = None if is_none(self.scales) else constant_array(self.scales)
        for i, scale in enumerate(np.asarray(scales).reshape(-1) if scales is not None else ()):
            if not scale > 0:
                raise ShapeError(f"scales[{i}] = {float(scale):g}, must be > 0")
        require_at_least("sizes", known_ints(self.sizes), 1, INT32_LIMIT)

    def scales_and_sizes(self) -> tuple[list[float], list[int]]:
        """Per-dim scale factors and output sizes, both over every dim of X."""
        x = shape_of(self.X)
        rank = len(x)
        axes = list(self.ints_attr("axes") or range(rank))
        axes = [shapes.normalize_axis(a, rank) for a in axes]
        scales = [1.0] * rank
        sizes = list(x)
        if not is_none(self.sizes) and constant_array(self.sizes) is None:
            raise UnknownShape()
        if not is_none(self.sizes) and constant_array(self.sizes).size:  # type: ignore[union-attr]
            wanted = constant_ints(self.sizes)
            if len(wanted) != len(axes):
                raise ShapeError(f"sizes has {len(wanted)} values for {len(axes)} axes")
            if self.keep_aspect_ratio_policy.data != "stretch":
                ratio = [wanted[i] / x[a] for i, a in enumerate(axes)]
                pick = min if self.keep_aspect_ratio_policy.data == "not_larger" else max
                r = pick(ratio)
                for a in axes:
                    scales[a] = r
                    sizes[a] = int(math.floor(r * x[a] + 0.5))
            else:
                for i, a in enumerate(axes):
                    sizes[a] = wanted[i]
                    scales[a] = wanted[i] / x[a]
        elif not is_none(self.scales):
            values = constant_array(self.scales)
            if values is None:
                raise UnknownShape()
            values = [float(v) for v in np.asarray(values).reshape(-1)]
            if len(values) != len(axes):
                raise ShapeError(f"scales has {len(values)} values for {len(axes)} axes")
            for i, a in enumerate(axes):
                scales[a] = values[i]
                sizes[a] = int(math.floor(x[a] * values[i]))
        else:
            raise ShapeError("one of scales and sizes is required")
        return scales, sizes

    def infer_types(self):
        if self.mode.data != "nearest":
            raise VerifyException(f"onnx.Resize: mode '{self.mode.data}' is not supported, only 'nearest'")
        if self.antialias.value.data:
            raise VerifyException("onnx.Resize: antialias is not supported")
        _, sizes = self.scales_and_sizes()
        return [same_as(self.X, sizes)]


@irdl_op_definition
class ExpandOp(OnnxOp):
    """Broadcasts `input` against `shape`."""

    name = "onnx.Expand"
    input = operand_def(TensorType)
    shape = operand_def(IntTensor)
    output = result_def(TensorType)

    def infer_types(self):
        return [same_as(self.input, shapes.expand(shape_of(self.input), constant_ints(self.shape)))]


@irdl_op_definition
class ShapeOp(OnnxOp):
    """The shape of `data` as a 1-D i64 tensor, restricted to dims `start`..`end`."""

    name = "onnx.Shape"
    data = operand_def(TensorType)
    shape = result_def(TensorType.constr(i64))
    start = prop_def(IntegerAttr[I64], default_value=_int(0))
    end = opt_prop_def(IntegerAttr[I64])

    def dims(self) -> tuple[int, ...]:
        data = shape_of(self.data)
        end = self.int_attr("end") if self.end is not None else len(data)
        return data[slice(self.int_attr("start"), end)]

    def infer_types(self):
        rank = self.data.type.get_num_dims()  # type: ignore[union-attr]
        end = self.int_attr("end") if self.end is not None else rank
        return [tensor(i64, (len(range(rank)[slice(self.int_attr("start"), end)]),))]


@irdl_op_definition
class RangeOp(OnnxOp):
    """`start, start + delta, ...` below `limit`: ceil((limit - start) / delta) values."""

    name = "onnx.Range"
    start = operand_def(TensorType)
    limit = operand_def(TensorType)
    delta = operand_def(TensorType)
    output = result_def(TensorType)

    def verify_attributes(self) -> None:
        super().verify_attributes()
        delta = constant_array(self.delta)
        if delta is not None and np.asarray(delta).size == 1 and np.asarray(delta).reshape(()) == 0:
            raise ShapeError("delta = 0, must not be 0")

    def infer_types(self):
        require_same_element_type(self, [self.start, self.limit, self.delta])
        for v in (self.start, self.limit, self.delta):
            if shape_of(v) not in ((), (1,)):  # [1] as ONNX Runtime allows
                raise ShapeError("start, limit and delta must be scalars")
        values = [constant_array(v) for v in (self.start, self.limit, self.delta)]
        if any(v is None for v in values):
            raise UnknownShape()  # the length depends on run-time values
        start, limit, delta = (np.asarray(v).reshape(())[()] for v in values)
        return [same_as(self.start, (shapes.range_length(start, limit, delta),))]


@irdl_op_definition
class TriluOp(OnnxOp):
    """
    The upper (`upper = 1`) or lower triangle of the last two axes, from diagonal `k`
    (0: the main diagonal, positive: above it); the rest is zero.
    """

    name = "onnx.Trilu"
    input = operand_def(TensorType)
    k = operand_def(TensorType.constr(i64) | NoneType)
    output = result_def(TensorType)
    upper = prop_def(IntegerAttr[I64], default_value=_int(1))

    def infer_types(self):
        data = shape_of(self.input)
        if len(data) < 2:
            raise ShapeError(f"input of rank {len(data)} has no matrix axes")
        if not is_none(self.k) and shape_of(self.k) not in ((), (1,)):
            raise ShapeError("k must be a scalar")
        if self.upper.value.data not in (0, 1):
            raise ShapeError(f"upper is 0 or 1, not {self.upper.value.data}")
        return [same_as(self.input)]


__all__ = [name for name in dir() if name.endswith("Op") and name[0].isupper()]
