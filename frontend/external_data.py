"""
External tensor data: initializers and constants whose bytes live in a file beside the
model (`data_location: EXTERNAL`). Locations resolve against the model file's own
folder, never the current directory, and must stay inside it: an absolute location,
one that climbs out with `..`, or a symbolic link (which ONNX refuses to read) is an
error, as is a data file that is missing or shorter than the tensor.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from mobile_opt.frontend.errors import OnnxImportError, node_label

_SUB_BYTE_BITS = {
    getattr(TensorProto, name): bits
    for name, bits in (("INT4", 4), ("UINT4", 4), ("FLOAT4E2M1", 4), ("INT2", 2), ("UINT2", 2))
    if hasattr(TensorProto, name)
}
_UNSIZED = {
    getattr(TensorProto, name)
    for name in ("STRING", "FLOAT6E2M3", "FLOAT6E3M2")
    if hasattr(TensorProto, name)
}
"""Element types whose external bytes this does not size (not stored, or packed oddly)."""


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[tuple[onnx.TensorProto, str]]:
    """Every tensor of a graph and its subgraphs, with how a diagnostic names it."""
    for t in graph.initializer:
        yield t, f"initializer '{t.name}'"
    for s in graph.sparse_initializer:
        yield s.values, f"initializer '{s.values.name}'"
        yield s.indices, f"initializer '{s.values.name}' (indices)"
    yield from _node_tensors(graph.node)


def _node_tensors(nodes) -> Iterator[tuple[onnx.TensorProto, str]]:
    for node in nodes:
        for attr in node.attribute:
            where = f"{node_label(node)}: attribute '{attr.name}'"
            if attr.HasField("t"):
                yield attr.t, where
            for t in attr.tensors:
                yield t, where
            if attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values, where
                yield attr.sparse_tensor.indices, where
            if attr.HasField("g"):
                yield from _graph_tensors(attr.g)
            for g in attr.graphs:
                yield from _graph_tensors(g)


def model_tensors(model: onnx.ModelProto) -> Iterator[tuple[onnx.TensorProto, str]]:
    """Every tensor a model holds (graph, subgraphs, functions) and its diagnostic name."""
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        yield from _node_tensors(function.node)


def _data_bytes(t: onnx.TensorProto) -> int | None:
    """The bytes a tensor's data takes, or None where this cannot tell (strings, ...)."""
    count = math.prod(t.dims)
    if t.data_type in _SUB_BYTE_BITS:
        return -(-count * _SUB_BYTE_BITS[t.data_type] // 8)
    if t.data_type in _UNSIZED:
        return None
    try:
        return count * helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    except (KeyError, ValueError):
        return None


def _inside(folder: Path, file: Path) -> bool:
    real_folder, real_file = os.path.realpath(folder), os.path.realpath(file)
    return os.path.commonpath([real_folder, real_file]) == real_folder


def check_external_data(model: onnx.ModelProto, path: Path) -> bool:
    """
    Raise OnnxImportError, naming the model, the tensor and the data file, unless every
    external tensor's data is a regular file inside the model's folder that holds it;
    returns whether the model has external data.
    """
    external = False
    for t, what in model_tensors(model):
        if t.data_location == TensorProto.EXTERNAL:
            external = True
            try:
                problem = _problem(t, path.parent.absolute())
            except OSError as e:
                problem = f"external data file {e.filename}: cannot read: {e.strerror}"
            if problem is not None:
                raise OnnxImportError(f"{path}: {what}: {problem}")
    return external


def _problem(t: onnx.TensorProto, folder: Path) -> str | None:
    """What is wrong with an external tensor's data, found from the model's `folder`."""
    info = {entry.key: entry.value for entry in t.external_data}
    location = info.get("location", "")
    if not location:
        return "external data has no location"
    if "\0" in location:
        return f"external data location {location!r} is not a path"
    if os.path.isabs(location) or location.startswith(("/", "\\")):
        return (f"external data location '{location}' is an absolute path; it must be "
                "relative to the model's folder")
    parts = Path(os.path.normpath(location)).parts
    if parts and parts[0] == "..":
        return f"external data location '{location}' points outside the model's folder {folder}"
    try:
        offset = int(info.get("offset", 0))
        length = int(info["length"]) if "length" in info else None
    except ValueError:
        return "external data offset or length is not an integer"
    if offset < 0 or (length is not None and length < 0):
        return "external data offset or length is negative"
    file = folder / location
    if file.is_symlink():
        return (f"external data file {file} is a symbolic link; ONNX reads only regular "
                "files inside the model's folder")
    if not os.path.lexists(file):
        return f"external data file {file} does not exist"
    if not _inside(folder, file):
        return (f"external data location '{location}' points outside the model's folder "
                f"{folder} through a symbolic link")
    if not file.is_file():
        return f"external data file {file} is not a regular file"
    size = file.stat().st_size
    needed = _data_bytes(t)
    if length is not None and needed is not None and length != needed:
        return f"external data length {length} does not match the tensor's {needed} bytes"
    want = length if length is not None else needed
    if offset + (want or 0) > size:
        return (f"external data file {file} holds {size} bytes, fewer than offset {offset} + "
                f"{want or 0} bytes of data")
    return None
