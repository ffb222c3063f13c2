"""
Static sizes for the dynamic dims of a model's graph inputs.

`--dim NAME=N` sizes every input dim whose symbol is NAME. `--dim INPUT:AXIS=N` sizes one
axis of one input; it is the only way to size a dim that has no usable name (a stored -1,
no name at all, or '?', which some exporters write for every unknown dim, so that a name
could not tell those dims apart), and it may override a symbol for that one axis. AXIS
counts from 0 and may be negative. A `--dim` that sizes nothing is an error, and so is a
dim left dynamic: the message names the input and the option that would size it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import onnx

from mobile_opt.dialects.limits import INT64_LIMIT
from mobile_opt.dialects.onnx.graph import printable
from mobile_opt.frontend.errors import OnnxImportError, check_size

UNNAMED = ("", "?")
"""Dim symbols that name no particular dim."""


def dim_target(key: str) -> tuple[str, int | None]:
    """`(INPUT, AXIS)` for a `--dim` key `INPUT:AXIS`, else `(SYMBOL, None)`."""
    name, colon, axis = key.rpartition(":")
    if colon and name and re.fullmatch(r"-?[0-9]+", axis):
        return name, int(axis)
    return key, None


def _is_static(dim: onnx.TensorShapeProto.Dimension) -> bool:
    return dim.HasField("dim_value") and dim.dim_value >= 0


def _set(dim: onnx.TensorShapeProto.Dimension, size: int) -> None:
    dim.Clear()
    dim.dim_value = size


def fix_input_dims(model: onnx.ModelProto, path: Path, dims: Mapping[str, int]) -> None:
    """Give every graph input a static shape from `dims` (keys `NAME` or `INPUT:AXIS`)."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = {v.name: v for v in model.graph.input if v.name not in initializers}
    for value in inputs.values():
        if not value.type.HasField("tensor_type"):
            raise OnnxImportError(f"{path}: input '{printable(value.name)}' is not a tensor")
        if not value.type.tensor_type.HasField("shape"):
            raise OnnxImportError(f"{path}: input '{printable(value.name)}' has no shape")
    shapes = {name: v.type.tensor_type.shape.dim for name, v in inputs.items()}
    symbols = sorted(
        {d.dim_param for s in shapes.values() for d in s if not _is_static(d)} - set(UNNAMED)
    )
    by_symbol: dict[str, int] = {}
    by_axis: dict[tuple[str, int], tuple[str, int]] = {}
    for key, size in dims.items():
        name, axis = dim_target(key)
        option = f"{path}: --dim {key}={size}"
        if not 0 < size < INT64_LIMIT:
            raise OnnxImportError(f"{option}: a size must be from 1 to 2^63-1")
        if axis is None:
            if name not in symbols:
                if name in inputs:
                    hint = (f"'{printable(name)}' is an input: size one of its axes with "
                            f"--dim {name}:AXIS=N")
                else:
                    named = ", ".join(symbols)
                    known = f"named dims: {named}" if symbols else "no input dim has a name"
                    hint = f"{known}; size one axis with --dim INPUT:AXIS=N"
                raise OnnxImportError(f"{option}: no input dim is named '{printable(name)}' "
                                      f"({hint})")
            by_symbol[name] = size
            continue
        if name not in inputs:
            raise OnnxImportError(
                f"{option}: the model has no input '{printable(name)}' (inputs: "
                f"{', '.join(inputs)})"
            )
        rank = len(shapes[name])
        if not -rank <= axis < rank:
            raise OnnxImportError(f"{option}: input '{printable(name)}' has {rank} axes, no "
                                  f"axis {axis}")
        by_axis[name, axis % rank] = (key, size)

    for name, shape in shapes.items():
        missing = []
        for i, dim in enumerate(shape):
            if (name, i) in by_axis:
                key, size = by_axis[name, i]
                if _is_static(dim) and dim.dim_value != size:
                    raise OnnxImportError(
                        f"{path}: --dim {key}={size}: axis {i} of input '{printable(name)}' "
                        "is static "
                        f"({dim.dim_value})"
                    )
                _set(dim, size)
            elif _is_static(dim):
                continue
            elif dim.dim_param in by_symbol:
                _set(dim, by_symbol[dim.dim_param])
            else:
                missing.append((i, dim))
        if missing:
            raise OnnxImportError(f"{path}: {_missing_message(name, missing)}")
        # before anything holds the input: a size past int64 or past the limits is refused
        elem_type = inputs[name].type.tensor_type.elem_type
        check_size(path, f"input '{name}'", [d.dim_value for d in shape], elem_type)

    # stale inferred shapes of intermediates would conflict with the new input dims, and a
    # stored -1 in an output's type would conflict with what inference finds
    del model.graph.value_info[:]
    for value in model.graph.output:
        for dim in value.type.tensor_type.shape.dim:
            if dim.HasField("dim_value") and dim.dim_value < 0:
                dim.Clear()


def _missing_message(name: str, missing: list[tuple[int, onnx.TensorShapeProto.Dimension]]) -> str:
    """`input 'x' has dynamic dim ...; ... (give it with --dim ...)` for the dims left dynamic."""
    shown: list[str] = []
    options: list[str] = []
    for i, dim in missing:
        if dim.HasField("dim_value"):  # a stored -1
            what, option = f"#{i} ({dim.dim_value})", f"--dim {name}:{i}=<size>"
        elif dim.dim_param in UNNAMED:
            what = f"#{i} ('{printable(dim.dim_param)}')" if dim.dim_param else f"#{i}"
            option = f"--dim {name}:{i}=<size>"
        else:
            what, option = f"'{printable(dim.dim_param)}'", f"--dim {dim.dim_param}=<size>"
        if what not in shown:
            shown.append(what)
        if option not in options:
            options.append(option)
    several = len(shown) > 1
    return (
        f"input '{printable(name)}' has dynamic dim{'s' if several else ''} {', '.join(shown)}; "
        f"a static shape is needed (give {'them' if len(options) > 1 else 'it'} with "
        f"{' '.join(options)})"
    )
