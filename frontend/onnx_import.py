"""
ONNX → `onnx` dialect.

The model is checked, given static dims (`dims.py`), converted to opset 21 (the
dialect's semantics) and shape-inferred by ONNX itself; the constant subgraphs that
compute shapes, indices and masks are folded (`folding.py`), with shape inference again
after each round, before any op is judged. What is left is emitted as one
`func.func @main_graph` whose ops carry the ONNX node name as their location.
Initializers become `onnx.Weight` references to the model file, and large folded values
references to derived weight files, never inline data, unless they are tiny.

Every user error raises `OnnxImportError` with one line that names the file and,
where there is one, the node.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import AttributeProto, TensorProto, numpy_helper, shape_inference, version_converter
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    DenseArrayBase,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import VarOperandDef, VarResultDef
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from mobile_opt.dialects.onnx import ONNX_OPS, OnnxOp
from mobile_opt.dialects.onnx.base import UnknownShape
from mobile_opt.dialects.onnx.graph import ONNX_NAME, printable
from mobile_opt.dialects.onnx.constants import (
    ConstantOp,
    NoneOp,
    WeightOp,
    dense_from_array,
)
from mobile_opt.dialects.onnx.shapes import ShapeError
from mobile_opt.dialects.limits import LimitError, check_tensor, element_bytes
from mobile_opt.dialects.onnx.types import element_type_from_onnx, onnx_type_name
from mobile_opt.frontend.contrib_ops import ContribOpError, expand_contrib_ops
from mobile_opt.frontend.dims import fix_input_dims
from mobile_opt.frontend.errors import (
    OnnxImportError,
    check_input_file,
    check_size,
    node_label,
    numpy_itemsize,
)
from mobile_opt.frontend.external_data import check_external_data
from mobile_opt.frontend.folding import FOLDED, fold_constants, run_time_nodes
from mobile_opt.dialects.weights import INLINE_LIMIT, save_derived_weight

MIN_OPSET = 9
MAX_OPSET = 21
DIALECT_OPSET = 21

INTERNAL_OPS = {"None", "Weight", "FusedConv", "FusedGemm", "FusedMatMul"}
"""Dialect ops that no ONNX node may name."""

SUPPORTED_ONNX_OPS = sorted(set(ONNX_OPS) - INTERNAL_OPS)


SHAPE_INFERENCE_DATA_LIMIT = 1024
"""Initializers with more elements go to ONNX's shape inference as types only."""


def read_model(path: str | Path) -> onnx.ModelProto:
    """Parse and check an ONNX file, with a diagnostic for each way it can be bad."""
    path = check_input_file(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise OnnxImportError(f"{path}: cannot read: {e.strerror}") from None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as e:
        reason = "truncated or corrupt protobuf" if data[:1] == b"\x08" else "not an ONNX model"
        raise OnnxImportError(f"{path}: {reason} ({e})") from None
    if not model.HasField("graph") or model.ir_version == 0:
        raise OnnxImportError(f"{path}: not an ONNX model (no graph or IR version)")
    external = check_external_data(model, path)
    try:
        # by path, the checker looks for external data beside the model, not in the cwd
        onnx.checker.check_model(str(path) if external else model)
    except onnx.checker.ValidationError as e:
        unordered = _unordered_input(model.graph)
        if unordered is not None:
            raise OnnxImportError(f"{path}: invalid ONNX model: {unordered}") from None
        first = str(e).strip().splitlines()[0]
        raise OnnxImportError(f"{path}: invalid ONNX model: {first}") from None
    except UnicodeDecodeError:  # the checker's message quotes a name that is not UTF-8
        raise OnnxImportError(f"{path}: invalid ONNX model: a name or string in it is not "
                              "UTF-8") from None
    return model


def _unordered_input(graph: onnx.GraphProto) -> str | None:
    """
    The first node of `graph` that reads a tensor no earlier node, input or initializer
    makes (a cycle, or nodes out of order), said in one line; the checker prints the
    whole node instead, over several lines.
    """
    known = {"", *(v.name for v in graph.input), *(t.name for t in graph.initializer),
             *(t.values.name for t in graph.sparse_initializer)}
    for node in graph.node:
        for name in node.input:
            if name not in known:
                return (f"{node_label(node)}: input '{printable(name)}' is no output of an "
                        "earlier node (nodes must be in topological order, without cycles)")
        known.update(node.output)
    return None


def _opset(model: onnx.ModelProto, path: Path) -> int:
    versions = {o.domain: o.version for o in model.opset_import}
    version = versions.get("", versions.get("ai.onnx"))
    if version is None:
        raise OnnxImportError(f"{path}: model imports no default-domain opset")
    if not MIN_OPSET <= version <= MAX_OPSET:
        raise OnnxImportError(
            f"{path}: opset {version} is not supported (supported: {MIN_OPSET} to {MAX_OPSET})"
        )
    return version


def _is_supported(node: onnx.NodeProto) -> bool:
    """Whether the dialect has the node's op."""
    return (
        node.domain in ("", "ai.onnx")
        and node.op_type in ONNX_OPS
        and node.op_type not in INTERNAL_OPS
    )


def _check_ops(nodes: Iterable[onnx.NodeProto], path: Path) -> None:
    for node in nodes:
        if node.domain not in ("", "ai.onnx"):
            raise OnnxImportError(
                f"{path}: {node_label(node)}: unsupported op domain '{printable(node.domain)}'"
            )
        if not _is_supported(node):
            raise OnnxImportError(f"{path}: {node_label(node)}: unsupported op")


def _convert(model: onnx.ModelProto, path: Path, version: int) -> onnx.ModelProto:
    if version == DIALECT_OPSET:
        return model
    try:
        return version_converter.convert_version(model, DIALECT_OPSET)
    except Exception as e:  # the converter raises bare RuntimeError/IndexError
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise OnnxImportError(
            f"{path}: cannot convert opset {version} to {DIALECT_OPSET}: {first}"
        ) from None


def _infer_shapes(model: onnx.ModelProto, path: Path) -> onnx.ModelProto:
    """
    `model` with the value types ONNX's shape inference finds (data propagation on). It
    runs on a copy whose large initializers are typed inputs: inference reads the data of
    small ones only, and the copy stays small whatever the weights weigh.
    """
    graph = model.graph
    light = onnx.ModelProto()
    light.ir_version = model.ir_version
    light.opset_import.extend(model.opset_import)
    light.functions.extend(model.functions)
    light.graph.name = graph.name
    light.graph.node.extend(graph.node)
    light.graph.input.extend(graph.input)
    light.graph.output.extend(graph.output)
    light.graph.sparse_initializer.extend(graph.sparse_initializer)
    listed = {v.name for v in graph.input}
    for t in graph.initializer:
        if math.prod(t.dims) <= SHAPE_INFERENCE_DATA_LIMIT:
            light.graph.initializer.append(t)
        elif t.name not in listed:
            typed = onnx.helper.make_tensor_value_info(t.name, t.data_type, t.dims)
            light.graph.input.append(typed)
    try:
        inferred = shape_inference.infer_shapes(
            light, check_type=True, strict_mode=True, data_prop=True
        )
    except Exception as e:  # InferenceError and friends
        # ONNX's opset-21 rules lag the spec in corners (a ceil-mode pool window
        # that starts in the padding): keep what it can infer and let the dialect's
        # own shape rules, which every op's verifier applies, decide the rest.
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        try:
            inferred = shape_inference.infer_shapes(
                light, check_type=True, strict_mode=False, data_prop=True
            )
        except Exception:
            raise OnnxImportError(f"{path}: shape inference failed: {first}") from None
    del graph.value_info[:]
    graph.value_info.extend(inferred.graph.value_info)
    del graph.output[:]
    graph.output.extend(inferred.graph.output)
    _check_value_sizes(graph, path)
    return model


def _check_value_sizes(graph: onnx.GraphProto, path: Path) -> None:
    """
    Every value whose shape inference found static refused if past the limits
    (`dialects/limits.py`), naming the node that computes it: before folding or a
    run holds it.
    """
    producer = {o: n for n in graph.node for o in n.output if o}
    for value in (*graph.value_info, *graph.output):
        t = value.type.tensor_type
        if not value.type.HasField("tensor_type") or not t.HasField("shape"):
            continue
        dims = t.shape.dim
        if all(d.HasField("dim_value") and d.dim_value >= 0 for d in dims):
            node = producer.get(value.name)
            where = f"{node_label(node)}: " if node is not None else ""
            check_size(path, f"{where}output '{value.name}'", [d.dim_value for d in dims],
                       t.elem_type)


_PACKED = {getattr(TensorProto, name) for name in ("INT4", "UINT4", "FLOAT4E2M1")
           if hasattr(TensorProto, name)}
"""Element types stored two to a byte (and two to an `int32_data` entry)."""
_PAIRED = {TensorProto.COMPLEX64, TensorProto.COMPLEX128}
"""Element types stored as two numbers each in the typed fields."""


def _check_stored_values(path: Path, what: str, t: onnx.TensorProto) -> None:
    """A tensor's stored values must be as many as its dims need (numpy cannot reshape)."""
    if t.data_location == TensorProto.EXTERNAL:
        return  # `check_external_data` holds the file's bytes to the dims
    count = math.prod(t.dims)
    if t.raw_data:
        itemsize = numpy_itemsize(t.data_type)
        if itemsize is None:
            return  # a type numpy lacks: its reader says what is wrong
        stored = len(t.raw_data)
        need = (count + 1) // 2 if t.data_type in _PACKED else count * itemsize
        if stored != need:
            raise OnnxImportError(f"{path}: {what}: holds {stored} bytes, its dims "
                                  f"{list(t.dims)} need {need}")
        return
    stored = sum(len(field) for field in (t.float_data, t.int32_data, t.int64_data,
                                          t.double_data, t.uint64_data, t.string_data))
    need = (count + 1) // 2 if t.data_type in _PACKED else \
        2 * count if t.data_type in _PAIRED else count
    if stored != need:
        raise OnnxImportError(f"{path}: {what}: holds {stored} values, its dims "
                              f"{list(t.dims)} need {need}")


def _check_constant_sizes(graph: onnx.GraphProto, path: Path) -> None:
    """The declared dims of initializers and Constant values, and their stored values."""
    for t in graph.initializer:
        what = f"initializer '{printable(t.name)}'"
        check_size(path, what, t.dims, t.data_type)
        _check_stored_values(path, what, t)
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == AttributeProto.TENSOR:
                what = f"{node_label(node)}: attribute '{printable(attr.name)}'"
                check_size(path, what, attr.t.dims, attr.t.data_type)
                _check_stored_values(path, what, attr.t)


def prepare_model(path: str | Path, dims: Mapping[str, int] | None = None) -> onnx.ModelProto:
    """
    Read and check a model, make its inputs static, convert it to opset 21, shape-infer
    it and fold its constant subgraphs; then judge the ops that are left.
    """
    path = Path(path)
    model = read_model(path)
    try:  # onnxruntime's quantized com.microsoft ops become standard QDQ units
        model = expand_contrib_ops(model)
    except ContribOpError as e:
        raise OnnxImportError(f"{path}: {e}") from None
    version = _opset(model, path)
    _check_ops(run_time_nodes(model.graph), path)  # what no folding can save fails first
    _check_constant_sizes(model.graph, path)
    fix_input_dims(model, path, dims or {})
    model = _convert(model, path, version)
    _check_attributes(model.graph.node, path)
    model = _infer_shapes(model, path)
    # folding makes shapes static, which makes more Shape nodes constant: to a fixpoint
    while fold_constants(model, path, _is_supported):
        model = _infer_shapes(model, path)
    _check_ops(model.graph.node, path)
    return model


def _tensor_type(value: onnx.ValueInfoProto) -> TensorType | None:
    """The static tensor type ONNX inferred, or None if unknown or dynamic."""
    if not value.type.HasField("tensor_type"):
        return None
    t = value.type.tensor_type
    if not t.HasField("shape"):
        return None
    shape = []
    for dim in t.shape.dim:
        if not dim.HasField("dim_value") or dim.dim_value < 0:
            return None
        shape.append(dim.dim_value)
    try:
        return TensorType(element_type_from_onnx(t.elem_type), shape)
    except KeyError:
        return None


def _fail(path: Path, node: onnx.NodeProto | None, message: str) -> OnnxImportError:
    if node is None:
        return OnnxImportError(message, path)
    # as `node_label` names it
    return OnnxImportError(message, path, printable(node.name or node.output[0]),
                           printable(node.op_type))


def _check_attributes(nodes: Iterable[onnx.NodeProto], path: Path) -> None:
    """
    Every node's attribute ranges (a kernel of 0, a negative pad, a perm that permutes
    nothing): first, so that ONNX's shape inference never meets them.
    """
    for node in nodes:
        if not _is_supported(node) or node.op_type == "Constant":
            continue  # folding may remove it; if not, _check_ops names it
        cls = ONNX_OPS[node.op_type]
        declared = cls.get_irdl_definition().properties
        try:  # tensors hold no range checked here; other attributes are judged at import
            properties = {
                a.name: _attribute(node, a, path)
                for a in node.attribute
                if a.name in declared and a.type != AttributeProto.TENSOR
            }
        except OnnxImportError:
            continue
        try:
            cls.check_properties(properties)
        except ShapeError as e:
            raise _fail(path, node, str(e)) from None


def _properties(node: onnx.NodeProto, cls: type[OnnxOp], path: Path) -> dict[str, Attribute]:
    declared = cls.get_irdl_definition().properties
    result: dict[str, Attribute] = {}
    for attr in node.attribute:
        if attr.name not in declared:
            raise _fail(path, node, f"attribute '{printable(attr.name)}' is not supported")
        result[attr.name] = _attribute(node, attr, path)
    return result


def _attribute(node: onnx.NodeProto, attr: onnx.AttributeProto, path: Path) -> Attribute:
    kind = attr.type
    if node.op_type == "Cast" and attr.name == "to":
        try:
            return element_type_from_onnx(attr.i)
        except KeyError:
            raise _fail(path, node, f"cast to {onnx_type_name(attr.i)} is not supported") from None
    if kind == AttributeProto.INT:
        return IntegerAttr(attr.i, i64)
    if kind == AttributeProto.FLOAT:
        return FloatAttr(attr.f, f32)
    if kind == AttributeProto.STRING:
        return StringAttr(attr.s.decode())
    if kind == AttributeProto.INTS:
        return DenseArrayBase.from_list(i64, list(attr.ints))
    if kind == AttributeProto.FLOATS:
        return DenseArrayBase.from_list(f32, list(attr.floats))
    if kind == AttributeProto.TENSOR:
        try:
            return dense_from_array(numpy_helper.to_array(attr.t))
        except KeyError:
            raise _fail(
                path, node, f"attribute '{printable(attr.name)}' has an unsupported tensor type"
            ) from None
    raise _fail(
        path,
        node,
        f"attribute '{printable(attr.name)}' of kind {AttributeProto.AttributeType.Name(kind)} is not supported",
    )


class _GraphImporter:
    def __init__(self, model: onnx.ModelProto, path: Path, inline_limit: int):
        self.model = model
        self.path = path
        self.store = str(path.resolve())
        self.inline_limit = inline_limit
        self.values: dict[str, SSAValue] = {}
        self.types: dict[str, onnx.ValueInfoProto] = {}
        for v in (*model.graph.value_info, *model.graph.input, *model.graph.output):
            self.types[v.name] = v
        self.used = {name for n in model.graph.node for name in n.input}
        self.used.update(o.name for o in model.graph.output)

    def fail(self, node: onnx.NodeProto | None, message: str) -> OnnxImportError:
        return _fail(self.path, node, message)

    def run(self) -> ModuleOp:
        graph = self.model.graph
        initializers = {t.name: t for t in graph.initializer}
        inputs = [v for v in graph.input if v.name not in initializers]
        input_types = []
        for v in inputs:
            t = _tensor_type(v)
            if t is None:
                raise self.fail(None, f"input '{printable(v.name)}' needs a static "
                                      "float/int tensor type")
            input_types.append(t)
        block = Block(arg_types=input_types)
        for v, arg in zip(inputs, block.args):
            arg.name_hint = _sanitize(v.name)
            self.values[v.name] = arg
        builder = Builder(InsertPoint.at_end(block))
        self.none = builder.insert(NoneOp()).result
        for name, t in initializers.items():
            self.values[name] = self.constant(builder, name, t, None)
        for node in graph.node:
            self.node(builder, node)
        outputs = []
        for o in graph.output:
            if o.name not in self.values:
                raise self.fail(None, f"graph output '{printable(o.name)}' is not produced "
                                      "by any node")
            outputs.append(self.values[o.name])
        builder.insert(func.ReturnOp(*outputs))
        if not self.none.uses:
            self.none.owner.detach()
            self.none.owner.erase()
        function = func.FuncOp(
            "main_graph",
            FunctionType.from_lists(input_types, [v.type for v in outputs]),
            Region(block),
            arg_attrs=_names_attr(v.name for v in inputs),
            res_attrs=_names_attr(o.name for o in graph.output),
        )
        return ModuleOp([function])

    def constant(
        self, builder: Builder, key: str, t: onnx.TensorProto, node: onnx.NodeProto | None
    ) -> SSAValue:
        try:
            element = element_type_from_onnx(t.data_type)
        except KeyError:
            raise self.fail(node, f"tensor '{printable(key)}' has unsupported type "
                                  f"{onnx_type_name(t.data_type)}") from None
        shape = tuple(t.dims)
        count = int(np.prod(shape)) if shape else 1
        if count <= self.inline_limit:
            array = numpy_helper.to_array(t, base_dir=str(self.path.parent))
            op = ConstantOp(array)
        elif t.doc_string == FOLDED:  # in no file: store it as a derived weight
            store, digest = save_derived_weight(numpy_helper.to_array(t))
            op = WeightOp(store, digest, TensorType(element, shape))
        else:
            op = WeightOp(self.store, key, TensorType(element, shape))
        if node is not None:
            op.location = _loc(node)
        result = builder.insert(op).results[0]
        result.name_hint = _sanitize(key)
        return result

    def node(self, builder: Builder, node: onnx.NodeProto) -> None:
        if node.op_type == "Constant":
            self.values[node.output[0]] = self.constant(builder, node.output[0], self.constant_tensor(node), node)
            return
        cls = ONNX_OPS[node.op_type]
        op_def = cls.get_irdl_definition()
        operands: list[SSAValue | list[SSAValue]] = []
        names = list(node.input)
        for index, (_, operand_def) in enumerate(op_def.operands):
            if isinstance(operand_def, VarOperandDef):
                operands.append([self.value(node, n) for n in names[index:]])
                names = names[:index]
                break
            name = names[index] if index < len(names) else ""
            operands.append(self.value(node, name) if name else self.none)
        if len(names) > len(op_def.operands):
            raise self.fail(node, f"takes {len(op_def.operands)} inputs, got {len(names)}")
        properties = _properties(node, cls, self.path)
        variadic_results = any(isinstance(d, VarResultDef) for _, d in op_def.results)
        outputs = list(node.output) if variadic_results else list(node.output[: len(op_def.results)])
        for extra in node.output[len(outputs) :]:
            if extra and extra in self.used:
                raise self.fail(node, f"optional output '{printable(extra)}' is not supported")
        result_types = [self.result_type(node, o) for o in outputs]
        try:
            op = cls.create(
                operands=[v for v in operands for v in (v if isinstance(v, list) else [v])],
                result_types=result_types if all(result_types) else [TensorType(f32, [])] * len(outputs),
                properties=properties,
            )
        except Exception as e:
            raise self.fail(node, f"cannot build op: {e}") from None
        op.location = _loc(node)
        try:  # before shape rules, which would only see a shape they cannot make
            op.verify_attributes()
        except ShapeError as e:
            raise self.fail(node, str(e)) from None
        except VerifyException as e:
            raise self.fail(node, " ".join(line.strip() for line in str(e).strip().splitlines())) from None
        if not all(result_types):
            op = self.infer_missing(node, op, result_types)
        for name, result in zip(outputs, op.results):  # the dialect's own shapes too
            t = result.type
            if isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()):
                try:
                    check_tensor(t.get_shape(), element_bytes(t.element_type),
                                 f"{node_label(node)}: output '{name}'")
                except LimitError as e:
                    raise self.fail(None, str(e)) from None
        try:
            op.verify()
        except (VerifyException, ShapeError) as e:
            # xDSL spreads constraint failures over lines; a diagnostic is one
            raise self.fail(node, " ".join(line.strip() for line in str(e).strip().splitlines())) from None
        builder.insert(op)
        for name, result in zip(outputs, op.results):
            result.name_hint = _sanitize(name)
            self.values[name] = result

    def infer_missing(self, node: onnx.NodeProto, op: OnnxOp, declared: list) -> OnnxOp:
        """Fill result types ONNX left dynamic from the dialect's own shape rules."""
        try:
            inferred = op.infer_types()
        except UnknownShape:
            inferred = None
        except ShapeError as e:
            raise self.fail(node, f"{op.name}: {e}") from None
        except VerifyException as e:
            raise self.fail(node, " ".join(line.strip() for line in str(e).strip().splitlines())) from None
        if inferred is None or any(
            isinstance(t, TensorType) and any(d < 0 for d in t.get_shape()) for t in inferred
        ):
            missing = next(o for o, t in zip(node.output, declared) if t is None)
            raise self.fail(node, f"output '{printable(missing)}' has a dynamic or unknown "
                                  "shape; a static shape is needed")
        types = [d or i for d, i in zip(declared, inferred)]
        new = type(op).create(operands=op.operands, result_types=types, properties=dict(op.properties))
        new.location = op.location
        op.erase(safe_erase=False)
        return new

    def value(self, node: onnx.NodeProto, name: str) -> SSAValue:
        if name not in self.values:
            raise self.fail(node, f"input '{printable(name)}' is not defined before use")
        return self.values[name]

    def result_type(self, node: onnx.NodeProto, name: str) -> TensorType | None:
        info = self.types.get(name)
        return None if info is None else _tensor_type(info)

    def constant_tensor(self, node: onnx.NodeProto) -> onnx.TensorProto:
        attr = node.attribute[0] if len(node.attribute) == 1 else None
        if attr is None:
            raise self.fail(node, "must have exactly one value attribute")
        if attr.name == "value":
            return attr.t
        simple = {
            "value_float": (attr.f, np.float32),
            "value_floats": (list(attr.floats), np.float32),
            "value_int": (attr.i, np.int64),
            "value_ints": (list(attr.ints), np.int64),
        }
        if attr.name not in simple:
            raise self.fail(node, f"attribute '{printable(attr.name)}' is not supported")
        data, dtype = simple[attr.name]
        return numpy_helper.from_array(np.array(data, dtype=dtype), node.output[0])


def _names_attr(names) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({ONNX_NAME: StringAttr(n)}) for n in names])


def _loc(node: onnx.NodeProto) -> NameLoc:
    return NameLoc(StringAttr(node.name or node.output[0]), NoneAttr())


def _sanitize(name: str) -> str | None:
    """An SSA name hint from an ONNX value name, or None if nothing usable is left."""
    cleaned = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else None


def import_onnx(
    path: str | Path,
    dims: Mapping[str, int] | None = None,
    inline_limit: int = INLINE_LIMIT,
) -> ModuleOp:
    """Import the ONNX file `path` as a module holding `func.func @main_graph`."""
    path = Path(path)
    model = prepare_model(path, dims)
    module = _GraphImporter(model, path, inline_limit).run()
    return module
