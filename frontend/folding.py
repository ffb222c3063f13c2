"""
Import-time folding of the constant subgraphs that compute shapes, indices and masks.

Exporters compute a Reshape's target, a Slice's ends or an attention mask at run time from
`Shape` of an activation, through Gather, Div, Concat, Equal, Where, Mod, Range, ... Once
every input dim is static these are compile-time constants, and only the ops that remain
need the dialect. One round here evaluates them with onnx's reference evaluator (ONNX's
own numpy semantics) and replaces each by `Constant` nodes; the importer re-runs shape
inference and another round, until nothing folds: folding makes shapes static, which
makes more `Shape` nodes constant.

A value is constant if it is an initializer, a `Constant` node's output, `Shape`/`Size`
of a value whose shape is static, or the output of a deterministic default-domain node
whose inputs are all constant. A constant node folds if the dialect lacks its op (it
must), or if it is *derived*, another node reads it and it holds at most `FOLD_LIMIT`
elements. Derived means computed from a `Shape`/`Size` or from such a fold, or computed
into an integer or boolean type: a shape, an index, a mask. Float arithmetic on weights
that the dialect supports stays for `onnx-fold-constants`.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from mobile_opt.dialects.limits import LimitError, RunTotal, check_bytes
from mobile_opt.dialects.onnx.graph import printable
from mobile_opt.frontend.errors import OnnxImportError, element_size, node_label

FOLD_LIMIT = 1 << 16
"""The most elements a derived value (a shape, an index, a mask) folds to."""

FOLDED = "mobile-opt: folded at import"
"""`doc_string` of a tensor folded here: its data is in no file, and it is derived."""

RANDOM_OPS = {
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Bernoulli",
    "Multinomial",
}
NUMPY_TYPES = {
    onnx.TensorProto.FLOAT,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.DOUBLE,
    onnx.TensorProto.INT8,
    onnx.TensorProto.UINT8,
    onnx.TensorProto.INT16,
    onnx.TensorProto.UINT16,
    onnx.TensorProto.INT32,
    onnx.TensorProto.UINT32,
    onnx.TensorProto.INT64,
    onnx.TensorProto.UINT64,
    onnx.TensorProto.BOOL,
}
"""Element types that fold: those whose values numpy holds as they are."""
INDEX_TYPES = {onnx.TensorProto.INT32, onnx.TensorProto.INT64, onnx.TensorProto.BOOL}
"""Element types of shapes, indices and masks: a constant computed in one is derived."""
SIZED_ELSEWHERE = {
    "AffineGrid", "CenterCropPad", "Col2Im", "ConvTranspose", "DFT", "MaxRoiPool",
    "MaxUnpool", "MelWeightMatrix", "RoiAlign", "STFT", "TfIdfVectorizer",
}
"""Ops whose output may outgrow their inputs in ways the folding bound does not compute
(attributes, lengths given as values): sized by shape inference alone, as is any node
with `pads` or `output_shape`."""
WINDOW_OPS = {"BlackmanWindow", "HammingWindow", "HannWindow"}
"""Ops whose output length is their input's value."""
SHAPE_OPS = {"Shape", "Size"}
"""Ops whose value is their input's shape: constant whenever that shape is static."""


def fold_constants(
    model: onnx.ModelProto, path: Path, supported: Callable[[onnx.NodeProto], bool]
) -> int:
    """One round of folding, in place; the number of nodes folded."""
    graph = model.graph
    shapes = _static_shapes(graph)
    others = _not_tensors(graph)
    types = _element_types(graph)
    derived: dict[str, bool] = {t.name: False for t in graph.initializer}
    reads = _reads(graph)
    chosen: list[int] = []
    for index, node in enumerate(graph.node):
        flag = None if others.intersection(node.output) else _derived(node, derived, shapes)
        if flag is None:
            continue
        outputs = [o for o in node.output if o]
        if node.op_type == "Constant":
            derived.update((o, flag) for o in outputs)
            continue
        flag = flag or not supported(node) or all(types.get(o) in INDEX_TYPES for o in outputs)
        derived.update((o, flag) for o in outputs)
        read = any(reads[o] for o in outputs)
        small = all(_size(shapes.get(o)) <= FOLD_LIMIT for o in outputs)
        if not supported(node) or (flag and read and small):
            chosen.append(index)
    if not chosen:
        return 0

    opsets = {o.domain: o.version for o in model.opset_import if o.domain in ("", "ai.onnx")}
    values, failures = _evaluate(graph, chosen, shapes, types, {"": max(opsets.values())}, path)
    graph_outputs = {o.name for o in graph.output}
    nodes: list[onnx.NodeProto | list[onnx.NodeProto]] = list(graph.node)
    folded = 0
    for index in chosen:
        node = nodes[index]
        outputs = [o for o in node.output if o]
        if any(o in failures for o in outputs):
            if not supported(node):
                culprit, message = failures[outputs[0]]
                raise OnnxImportError(
                    f"{path}: {node_label(culprit)}: cannot be computed at import ({message})"
                )
            continue
        if supported(node) and any(values[o].size > FOLD_LIMIT for o in outputs):
            continue
        nodes[index] = [
            _constant_node(node.name, o, values[o])
            for o in outputs
            if reads[o] or o in graph_outputs
        ]
        folded += 1
    was_read = {name for name, count in reads.items() if count}
    flat = [n for item in nodes for n in (item if isinstance(item, list) else [item])]
    del graph.node[:]
    graph.node.extend(flat)
    _remove_dead(graph, was_read, derived)
    return folded


def _derived(
    node: onnx.NodeProto, derived: dict[str, bool], shapes: dict[str, tuple[int, ...]]
) -> bool | None:
    """None if `node` is not constant, else whether it is derived."""
    if _never_folds(node):
        return None
    if node.op_type in SHAPE_OPS:
        return True if node.input[0] in shapes else None
    if node.op_type == "Constant":
        return any(a.name == "value" and a.t.doc_string == FOLDED for a in node.attribute)
    inputs = [i for i in node.input if i]
    if not all(i in derived for i in inputs):
        return None
    return any(derived[i] for i in inputs)


def _never_folds(node: onnx.NodeProto) -> bool:
    return (
        node.domain not in ("", "ai.onnx")
        or node.op_type in RANDOM_OPS
        # If, Loop, Scan: their bodies may read run-time values
        or any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute)
    )


def run_time_nodes(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """
    The nodes that no folding makes constant, whatever the input dims: those that read
    a graph input's data (Shape and Size read its shape only), and those never folded.
    """
    run_time = {v.name for v in graph.input} - {t.name for t in graph.initializer}
    found = []
    for node in graph.node:
        reads_data = node.op_type not in SHAPE_OPS and run_time.intersection(node.input)
        if reads_data or _never_folds(node):
            run_time.update(node.output)
            found.append(node)
    return found


def _evaluate(
    graph: onnx.GraphProto,
    chosen: list[int],
    shapes: dict[str, tuple[int, ...]],
    types: dict[str, int],
    opsets: dict[str, int],
    path: Path,
) -> tuple[dict[str, np.ndarray], dict[str, tuple[onnx.NodeProto, str]]]:
    """
    The values of the chosen nodes and of the constant nodes they read, in graph order;
    the failures by value, with the node that failed and why.
    """
    producer = {o: i for i, n in enumerate(graph.node) for o in n.output if o}
    needed: set[int] = set()
    stack = list(chosen)
    while stack:
        index = stack.pop()
        if index in needed:
            continue
        needed.add(index)
        node = graph.node[index]
        if node.op_type not in SHAPE_OPS:
            stack.extend(producer[i] for i in node.input if i in producer)
    initializers = {t.name: t for t in graph.initializer}
    base_dir = str(path.parent)
    values: dict[str, np.ndarray] = {}
    failures: dict[str, tuple[onnx.NodeProto, str]] = {}
    held = RunTotal("import folding")  # what the values below hold together
    for index in sorted(needed):
        node = graph.node[index]
        inputs = [i for i in node.input if i]
        outputs = [o for o in node.output if o]
        failed = next((failures[i] for i in inputs if i in failures), None)
        if failed is None:
            feeds = {}
            for name in inputs:
                if node.op_type in SHAPE_OPS:  # only the shape is read: no data behind it
                    feeds[name] = np.broadcast_to(np.zeros((), np.float32), shapes[name])
                elif name in values:
                    feeds[name] = values[name]
                else:
                    values[name] = numpy_helper.to_array(initializers[name], base_dir=base_dir)
                    feeds[name] = values[name]
            failed = _over_limits(node, feeds, shapes, types, held)
            if failed is None:
                try:
                    results = _run(node, feeds, opsets)
                    results = [_as_inferred(o, r, shapes, types) for o, r in zip(outputs, results)]
                except Exception as e:  # the evaluator raises whatever numpy raises
                    lines = str(e).strip().splitlines()
                    failed = (node, lines[0] if lines else type(e).__name__)
                else:
                    values.update(zip(outputs, results))
        if failed is not None:
            failures.update((o, failed) for o in outputs)
    return values, failures


def _over_limits(
    node: onnx.NodeProto,
    feeds: dict[str, np.ndarray],
    shapes: dict[str, tuple[int, ...]],
    types: dict[str, int],
    held: RunTotal,
) -> tuple[onnx.NodeProto, str] | None:
    """
    Why evaluating `node` would hold more than the limits allow (`dialects/limits.py`),
    or None: its outputs are sized before the evaluator allocates anything.
    """
    for name in (o for o in node.output if o):
        try:
            elements = _output_bound(node, feeds, shapes, name)
        except (ValueError, TypeError, IndexError, OverflowError, AttributeError) as e:
            # a malformed input: not evaluated unbounded
            return node, f"output '{name}' cannot be sized ({e or type(e).__name__})"
        if elements is None:
            return node, f"the size of output '{name}' is not known before evaluating it"
        # an output whose type is unknown yet: as wide as the first input
        first = feeds.get(node.input[0]) if node.input else None
        itemsize = element_size(types[name]) if name in types else \
            first.dtype.itemsize if first is not None else 8
        what = f"output '{name}' ({elements} elements)"
        try:
            held.add(check_bytes(elements * itemsize, what), what)
        except LimitError as e:
            return node, str(e)
    return None


def _output_bound(
    node: onnx.NodeProto,
    feeds: dict[str, np.ndarray],
    shapes: dict[str, tuple[int, ...]],
    name: str,
) -> int | None:
    """
    The most elements output `name` of `node` holds, from the shape inference found, or
    from the values and shapes of the inputs; None if nothing bounds it.
    """
    if name in shapes:
        return math.prod(shapes[name])
    op = node.op_type
    args = [feeds.get(i) if i else None for i in node.input]

    def ints(i: int) -> list[int]:
        return [int(v) for v in np.asarray(args[i]).reshape(-1)]

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if op in SHAPE_OPS:
        return len(args[0].shape)
    if op == "NonZero":
        return args[0].ndim * args[0].size
    if op == "ConstantOfShape":
        return math.prod(max(d, 0) for d in ints(0))
    if op == "Expand":
        given, wanted = list(args[0].shape), ints(1)
        rank = max(len(given), len(wanted))
        given, wanted = [1] * (rank - len(given)) + given, [1] * (rank - len(wanted)) + wanted
        return math.prod(max(g, abs(w)) for g, w in zip(given, wanted))
    if op == "Tile":
        return math.prod(d * max(r, 0) for d, r in zip(args[0].shape, ints(1)))
    if op == "Range":
        start, limit, delta = (float(np.asarray(a).reshape(-1)[0]) for a in args[:3])
        return max(math.ceil((limit - start) / delta), 0) if delta else 0
    if op in ("Resize", "Upsample"):
        if op == "Resize" and len(args) > 3 and args[3] is not None and args[3].size:
            sizes = ints(3)
            axes = attrs.get("axes") or range(len(sizes))
            shape = list(args[0].shape)
            for axis, size in zip(axes, sizes):
                shape[axis] = size
            return math.prod(max(d, 0) for d in shape)
        scales = np.asarray(args[2] if op == "Resize" else args[1]).reshape(-1)
        factors = [1.0] * args[0].ndim
        for axis, scale in zip(attrs.get("axes") or range(len(scales)), scales):
            factors[axis] = abs(float(scale))
        return math.prod(math.floor(d * f) for d, f in zip(args[0].shape, factors))
    if op == "Pad":
        pads = ints(1) if len(args) > 1 and args[1] is not None else list(attrs.get("pads", []))
        shape = list(args[0].shape)
        axes = ints(3) if len(args) > 3 and args[3] is not None else list(range(len(shape)))
        half = len(pads) // 2
        for k, axis in enumerate(axes[:half]):
            shape[axis] += pads[k] + pads[k + half]
        return math.prod(max(d, 0) for d in shape)
    if op == "OneHot":
        return args[0].size * abs(ints(1)[0])
    if op in WINDOW_OPS:
        return max(ints(0)[0], 0)
    if op in SIZED_ELSEWHERE or "pads" in attrs or "output_shape" in attrs:
        return None
    # other ops hold no more than their inputs together: a broadcast, a product, a concat
    sizes = [a.size for a in args if a is not None]
    return max(math.prod(sizes), sum(sizes)) if sizes else 1


def _run(node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]) -> list:
    graph = helper.make_graph(
        [node],
        "fold",
        [helper.make_empty_tensor_value_info(name) for name in feeds],
        [helper.make_empty_tensor_value_info(o) for o in node.output if o],
    )
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # a division by zero is the model's own business
        results = ReferenceEvaluator(graph, opsets=opsets).run(None, feeds)
    if not all(isinstance(r, np.ndarray | np.generic) for r in results):
        raise TypeError("a result is not a tensor")
    return [np.asarray(r) for r in results]


def _as_inferred(
    name: str, value: np.ndarray, shapes: dict[str, tuple[int, ...]], types: dict[str, int]
) -> np.ndarray:
    """`value` in the type ONNX infers for `name`; a ValueError if the shapes differ."""
    if name in types:
        value = value.astype(helper.tensor_dtype_to_np_dtype(types[name]), copy=False)
    if name in shapes and value.shape != shapes[name]:
        raise ValueError(
            f"'{printable(name)}' evaluates to shape {list(value.shape)}; ONNX infers "
            f"{list(shapes[name])}"
        )
    return value


def _constant_node(name: str, output: str, value: np.ndarray) -> onnx.NodeProto:
    tensor = numpy_helper.from_array(np.asarray(value), output)
    tensor.doc_string = FOLDED
    return helper.make_node("Constant", [], [output], name=name, value=tensor)


def _remove_dead(graph: onnx.GraphProto, was_read: set[str], derived: dict[str, bool]) -> None:
    """Drops the constant nodes and initializers that folding left unread."""
    reads = _reads(graph)
    outputs = {o.name for o in graph.output}

    def unread(name: str) -> bool:
        return not reads[name] and name not in outputs

    kept = []
    for node in reversed(graph.node):
        names = [o for o in node.output if o]
        if (
            names
            and all(o in derived and unread(o) for o in names)
            and any(o in was_read for o in names)
        ):
            for name in node.input:
                reads[name] -= 1
            for name in _subgraph_reads(node):
                reads[name] -= 1
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    dropped = {t.name for t in graph.initializer if t.name in was_read and unread(t.name)}
    if dropped:
        kept_inits = [t for t in graph.initializer if t.name not in dropped]
        kept_inputs = [v for v in graph.input if v.name not in dropped]
        del graph.initializer[:]
        graph.initializer.extend(kept_inits)
        del graph.input[:]
        graph.input.extend(kept_inputs)


def _reads(graph: onnx.GraphProto) -> Counter[str]:
    """How many times nodes (and the subgraphs of If/Loop/Scan) read each value."""
    reads: Counter[str] = Counter()
    for node in graph.node:
        reads.update(i for i in node.input if i)
        reads.update(_subgraph_reads(node))
    return reads


def _subgraph_reads(node: onnx.NodeProto) -> Iterator[str]:
    for attr in node.attribute:
        for sub in [attr.g] if attr.type == AttributeProto.GRAPH else attr.graphs:
            for inner in sub.node:
                yield from (i for i in inner.input if i)
                yield from _subgraph_reads(inner)


def _static_shapes(graph: onnx.GraphProto) -> dict[str, tuple[int, ...]]:
    shapes = {t.name: tuple(t.dims) for t in graph.initializer}
    for value in (*graph.input, *graph.value_info, *graph.output):
        t = value.type.tensor_type
        if value.type.HasField("tensor_type") and t.HasField("shape"):
            dims = t.shape.dim
            if all(d.HasField("dim_value") and d.dim_value >= 0 for d in dims):
                shapes[value.name] = tuple(d.dim_value for d in dims)
    return shapes


def _not_tensors(graph: onnx.GraphProto) -> set[str]:
    """Values typed as sequences, maps or optionals: they never fold."""
    values = (*graph.input, *graph.value_info, *graph.output)
    return {v.name for v in values if v.type.WhichOneof("value") not in (None, "tensor_type")}


def _element_types(graph: onnx.GraphProto) -> dict[str, int]:
    """The ONNX element types inferred for values that numpy can hold."""
    types = {}
    for value in (*graph.value_info, *graph.output):
        code = value.type.tensor_type.elem_type
        if value.type.HasField("tensor_type") and code in NUMPY_TYPES:
            types[value.name] = code
    return types


def _size(shape: tuple[int, ...] | None) -> int:
    """Elements in a static shape; 0 when unknown (the evaluated value is checked instead)."""
    return 0 if shape is None else math.prod(shape)
