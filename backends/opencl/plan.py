"""
The host plan of a lowered module: what the host side of its graph function
(after `onnx-to-texture,texture-to-ocl`) does, as data an executor or a device
runtime can follow without the IR.

- `inputs`: graph inputs to pack each run (name, layout, shape, storage);
- `weights`: constants to pack once (an `onnx.Weight` store/key, an inline value,
  or host ops over constants), with their layout;
- `slots`: the device memory objects. Storage (`texture.pack`/`texture.alloc`
  results) gets a slot by a linear scan in host order: a transient storage whose
  last use (launch or unpack) has passed frees its slot for a later one of the same
  kind — an image of the same width, height and format, or a buffer of enough
  bytes. Weights keep their slots for good;
- `allocs`: each `texture.alloc` and its slot;
- `launches`: kernel name, its onnx node(s), global size, local size (null: the
  driver's choice) and arguments as slots, in order, with the bytes of the arguments'
  storage and the FLOPs of the kernel's onnx node(s), where `onnx-to-texture` recorded them
  (the roofline's work, `models/roofline.py`);
- `outputs`: what to unpack after which launch;
- `streams`: the weights that `stream` ops move while kernels run (`flashmem-stream`):
  the layer their texture is made at, the chunks moved at each layer and the layer that
  first reads them (layers are launches from 1; a move at layer l runs alongside it);
- `remarks`: storage that fell back to a `!texture.buffer2d`;
- `memory`: storage bytes with and without reuse, and the live peak.

Every record has `step`, its position among the host's packs, allocs, launches and
unpacks, so a runtime can interleave them exactly as the IR orders them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from mobile_opt.backends.opencl.printer import LOWER_FIRST, unique_name
from mobile_opt.dialects import ocl, texture
from mobile_opt.dialects.onnx.constants import ConstantOp, WeightOp
from mobile_opt.dialects.onnx.graph import graph_io_names
from mobile_opt.dialects.stream.ops import TransformOp, WaitOp, streamed_from
from mobile_opt.models.roofline import FLOPS_ATTR, launch_bytes
from mobile_opt.models.storage import (
    IR_LINK,
    Slot,
    Storage,
    assign_slots,
    host_steps,
    host_storage,
)
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.traits import SymbolTable

INLINE_LIMIT = 64
"""Constants with at most this many elements show their values in the plan."""


class PlanError(Exception):
    """The module has no host function a plan can describe."""


OPTIONAL = {"optional": True}
"""Field metadata: the field is left out of the JSON while it is None."""


def _record_json(record: Any) -> dict[str, Any]:
    return {
        f.name: getattr(record, f.name)
        for f in fields(record)
        if not f.metadata.get("ir")
        and not (f.metadata.get("optional") and getattr(record, f.name) is None)
    }


@dataclass
class PackRecord:
    """A host tensor packed into storage: a graph input (each run) or a weight (once)."""

    step: int
    value: str
    layout: str
    shape: list[int]
    dtype: str
    slot: int
    kind: str
    width: int
    height: int
    element_type: str
    name: str | None = field(default=None, metadata=OPTIONAL)  # graph input name
    source: dict[str, Any] | None = field(default=None, metadata=OPTIONAL)  # weight origin
    source_value: SSAValue | None = field(default=None, repr=False, compare=False, metadata=IR_LINK)


@dataclass
class AllocRecord:
    step: int
    value: str
    layout: str
    shape: list[int]
    slot: int
    kind: str
    width: int
    height: int
    element_type: str


@dataclass
class LaunchRecord:
    step: int
    kernel: str
    node: str
    global_size: list[int]
    local_size: list[int] | None
    args: list[dict[str, Any]]  # {"slot": n, "value": name}
    nbytes: int = 0
    """The bytes of its arguments' storage (`roofline.launch_bytes`)."""
    flops: int | None = field(default=None, metadata=OPTIONAL)
    """The FLOPs of its kernel's ONNX ops, as `onnx-to-texture` recorded them."""


@dataclass
class OutputRecord:
    """A graph output: unpacked from `slot` at `step`, or (slot null) computed on the host."""

    step: int
    name: str
    shape: list[int]
    dtype: str
    slot: int | None = None
    value: str | None = field(default=None, metadata=OPTIONAL)
    layout: str | None = field(default=None, metadata=OPTIONAL)
    kind: str | None = field(default=None, metadata=OPTIONAL)
    width: int | None = field(default=None, metadata=OPTIONAL)
    height: int | None = field(default=None, metadata=OPTIONAL)
    element_type: str | None = field(default=None, metadata=OPTIONAL)
    source_value: SSAValue | None = field(default=None, repr=False, compare=False, metadata=IR_LINK)


@dataclass
class StreamRecord:
    """A streamed weight (one of `weights`): its schedule as its `stream` ops give it."""

    value: str
    slot: int
    load: int
    use: int
    moves: list[list[int]]  # [layer, chunks] in layer order


@dataclass
class Plan:
    function: str
    inputs: list[PackRecord] = field(default_factory=list)
    weights: list[PackRecord] = field(default_factory=list)
    allocs: list[AllocRecord] = field(default_factory=list)
    launches: list[LaunchRecord] = field(default_factory=list)
    outputs: list[OutputRecord] = field(default_factory=list)
    streams: list[StreamRecord] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    storage: list[Storage] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    # memory -------------------------------------------------------------------------
    @property
    def bytes_without_reuse(self) -> int:
        """Every storage value in memory objects of its own."""
        return sum(s.nbytes for s in self.storage)

    @property
    def bytes_with_reuse(self) -> int:
        return sum(s.nbytes for s in self.slots)

    @property
    def live_peak_bytes(self) -> int:
        """
        The weights plus the most transient bytes live at one step: a lower bound
        for any slot assignment.
        """
        weights = sum(s.nbytes for s in self.storage if s.permanent)
        transient = [s for s in self.storage if not s.permanent]
        peak = 0
        for step in sorted({s.defined for s in transient}):
            live = sum(s.nbytes for s in transient if s.defined <= step <= s.last_use)
            peak = max(peak, live)
        return weights + peak

    @property
    def weight_bytes(self) -> int:
        return sum(s.nbytes for s in self.storage if s.permanent)

    def memory(self) -> dict[str, int]:
        return {
            "storage_values": len(self.storage),
            "slots": len(self.slots),
            "weight_bytes": self.weight_bytes,
            "bytes_with_reuse": self.bytes_with_reuse,
            "bytes_without_reuse": self.bytes_without_reuse,
            "live_peak_bytes": self.live_peak_bytes,
        }

    # output -------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The plan as JSON-serialisable data."""
        return {
            "function": self.function,
            "inputs": [_record_json(r) for r in self.inputs],
            "weights": [_record_json(r) for r in self.weights],
            "slots": [_record_json(s) for s in self.slots],
            "allocs": [_record_json(r) for r in self.allocs],
            "launches": [_record_json(r) for r in self.launches],
            "outputs": [_record_json(r) for r in self.outputs],
            "streams": [_record_json(r) for r in self.streams],
            "remarks": list(self.remarks),
            "memory": self.memory(),
        }

    def dumps(self) -> str:
        """The JSON text: one line per record, so large plans stay readable."""
        return dumps(self.to_json())

    def summary(self) -> str:
        """A few lines for people: counts, memory, remarks."""
        return summarize(self)


def dumps(data: dict[str, Any]) -> str:
    """`data` as JSON with each top-level list item on a line of its own."""
    compact = {"separators": (", ", ": ")}
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            items = ",\n".join("  " + json.dumps(v, **compact) for v in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, **compact)}")
    return "{\n" + ",\n".join(lines) + "\n}"


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB" if n >= 2**16 else f"{n / 2**10:.1f} KiB"


def memory_line(plan: Plan) -> str:
    """How much device storage the plan takes, with and without reuse."""
    return (
        f"storage: {len(plan.storage)} values in {len(plan.slots)} slots, "
        f"{_mib(plan.bytes_with_reuse)} with reuse, {_mib(plan.bytes_without_reuse)} without "
        f"(weights {_mib(plan.weight_bytes)}; live peak {_mib(plan.live_peak_bytes)})"
    )


def summarize(plan: Plan) -> str:
    """A few lines for people: what the host does, its memory, the buffer fallbacks."""
    counts = (
        f"host plan of @{plan.function}: {len(plan.inputs)} input pack(s), "
        f"{len(plan.weights)} weight(s)"
        + (f" ({len(plan.streams)} streamed)" if plan.streams else "")
        + f", {len(plan.allocs)} alloc(s), "
        f"{len(plan.launches)} launch(es), {len(plan.outputs)} output(s)"
    )
    lines = [counts, memory_line(plan)]
    lines += [f"remark: {r}" for r in plan.remarks]
    return "\n".join(lines)


# building ---------------------------------------------------------------------------
def host_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function called `name`, or the first `func.func` of the module."""
    if name is not None:
        found = SymbolTable.lookup_symbol(module, name)
        if isinstance(found, func.FuncOp):
            return found
        raise PlanError(f"the module has no function @{name}")
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp):
            return op
    raise PlanError("the module has no func.func")


def _dtype(t: TensorType) -> str:
    from mobile_opt.dialects.onnx.types import dtype_of

    return dtype_of(t.element_type).name


def _describe_source(value: SSAValue) -> dict[str, Any]:
    """Where a constant comes from: a weight store and key, an inline value, or host ops."""
    owner = value.owner
    if isinstance(owner, WeightOp):
        return {"store": owner.store.data, "key": owner.key.data}
    if isinstance(owner, ConstantOp):
        array = owner.array()
        if array.size <= INLINE_LIMIT:
            return {"inline": array.tolist()}
        return {"inline": None, "elements": int(array.size)}
    assert isinstance(owner, Operation)
    return {"host_op": owner.name, "operands": [_describe_source(v) for v in owner.operands]}


class _Namer:
    """Readable, unique names for SSA values in the plan."""

    def __init__(self):
        self.names: dict[SSAValue, str] = {}
        self.used: set[str] = set()

    def __call__(self, value: SSAValue, fallback: str | None = None) -> str:
        if value in self.names:
            return self.names[value]
        base = value.name_hint or fallback or f"%{len(self.names)}"
        name = unique_name(base, self.used, "_")
        self.names[value] = name
        return name


def build_plan(module: ModuleOp, function: str | None = None) -> Plan:
    """The host plan of `function` (default: the module's first `func.func`)."""
    graph = host_function(module, function)
    input_names, output_names = graph_io_names(graph)
    arg_names = dict(zip(graph.body.block.args, input_names))
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, ocl.KernelOp)}
    plan = Plan(graph.sym_name.data)
    name = _Namer()
    packs: list[tuple[PackRecord, Storage]] = []
    allocs: list[tuple[AllocRecord, Storage]] = []
    launches: list[tuple[LaunchRecord, list[Storage]]] = []
    unpacks: dict[SSAValue, tuple[int, texture.UnpackOp]] = {}
    limits = module.attributes.get("texture.limits")
    limit = (
        f" {limits.max_width.data}x{limits.max_height.data}"
        if isinstance(limits, texture.LimitsAttr)
        else ""
    )

    def storage_name(op: texture.PackOp | texture.AllocOp) -> str:
        hint = None
        load = streamed_from(op.result) if isinstance(op, texture.AllocOp) else None
        if isinstance(op, texture.PackOp) or load is not None:
            source = op.source if isinstance(op, texture.PackOp) else load.weight
            label = arg_names.get(source) if isinstance(source, BlockArgument) else None
            if label is None and isinstance(source.owner, WeightOp):
                label = source.owner.key.data
            hint = f"{label or name(source)}@{op.layout.data.value}"
        return name(op.result, hint)

    storages = host_storage(graph, storage_name).values

    def remark(op: texture.PackOp | texture.AllocOp) -> Storage:
        """The storage `op` makes, with a remark if it fell back to a buffer (not where
        every tensor is in one, `onnx-to-texture{buffers=true}`)."""
        s = storages[op.result]
        width, height = s.width, s.height
        within = isinstance(limits, texture.LimitsAttr) and (
            width <= limits.max_width.data and height <= limits.max_height.data)
        if s.kind == "buffer" and not within:
            remark = getattr(op, "remark", None)
            text = getattr(remark, "data", None) if remark is not None else None
            plan.remarks.append(
                text
                if isinstance(text, str)
                else (
                    f"{s.value}: a {s.shape} tensor in {s.layout} takes {width}x{height} pixels, "
                    f"over the image limit{limit}; it lives in a buffer"
                )
            )
        return s

    def pack_record(step: int, op: texture.PackOp | texture.AllocOp,
                    source: SSAValue) -> PackRecord:
        """The record of packing `source` into `op`'s storage (a streamed weight's too)."""
        s = remark(op)
        return PackRecord(
            step,
            s.value,
            s.layout,
            s.shape,
            _dtype(source.type),
            -1,
            s.kind,
            s.width,
            s.height,
            s.element_type,
            name=arg_names.get(source) if isinstance(source, BlockArgument) else None,
            source=_describe_source(source) if s.permanent else None,
            source_value=source,
        )

    def use(value: SSAValue) -> Storage:
        if value not in storages:
            raise PlanError(f"storage {value} is not made by a texture.pack or texture.alloc")
        return storages[value]

    streams: dict[SSAValue, StreamRecord] = {}
    launched = 0  # the launches before `op`: a stream op after launch l runs alongside it
    for step, op in host_steps(graph):
        match op:
            case texture.PackOp():
                packs.append((pack_record(step, op, op.source), storages[op.result]))
            case texture.AllocOp() if (load := streamed_from(op.result)) is not None:
                packs.append((pack_record(step, op, load.weight), storages[op.result]))
                streams[op.result] = StreamRecord("", -1, launched, 0, [])
            case TransformOp():
                streams[op.dest].moves.append([launched, op.chunks.count.data])
            case WaitOp():
                for token in op.tokens:
                    move = token.owner
                    assert isinstance(move, TransformOp)
                    streams[move.dest].use = max(streams[move.dest].use, launched + 1)
            case texture.AllocOp():
                s = remark(op)
                allocs.append(
                    (
                        AllocRecord(
                            step,
                            s.value,
                            s.layout,
                            s.shape,
                            -1,
                            s.kind,
                            s.width,
                            s.height,
                            s.element_type,
                        ),
                        s,
                    )
                )
            case ocl.LaunchOp():
                kernel_name = op.kernel.root_reference.data
                kernel = kernels.get(kernel_name)
                node = kernel.attributes.get("onnx.node") if kernel is not None else None
                used = [use(a) for a in op.args]
                flops = op.attributes.get(FLOPS_ATTR)
                record = LaunchRecord(
                    step,
                    kernel_name,
                    getattr(node, "data", ""),
                    list(op.global_size.get_values()),
                    None if op.local_size is None else list(op.local_size.get_values()),
                    [],
                    launch_bytes(used),
                    flops.value.data if isinstance(flops, IntegerAttr) else None,
                )
                launches.append((record, used))
                launched += 1
            case texture.UnpackOp():
                use(op.source)
                unpacks[op.result] = (step, op)
            case func.ReturnOp():
                for out_name, value in zip(output_names, op.operands, strict=True):
                    shape, dtype = list(value.type.get_shape()), _dtype(value.type)
                    if value in unpacks:
                        at, unpack = unpacks[value]
                        s = storages[unpack.source]
                        plan.outputs.append(
                            OutputRecord(
                                at,
                                out_name,
                                shape,
                                dtype,
                                -1,
                                s.value,
                                s.layout,
                                s.kind,
                                s.width,
                                s.height,
                                s.element_type,
                                source_value=unpack.source,
                            )
                        )
                    else:
                        plan.outputs.append(
                            OutputRecord(step, out_name, shape, dtype, source_value=value)
                        )
            case _:
                pass  # host onnx ops: evaluated where a pack or an output needs them

    plan.storage = list(storages.values())
    plan.slots = assign_slots(plan.storage)
    for record, s in packs:
        record.slot = s.slot
        (plan.weights if s.permanent else plan.inputs).append(record)
    for record, s in allocs:
        record.slot = s.slot
        plan.allocs.append(record)
    for value, stream in streams.items():
        stream.value, stream.slot = storages[value].value, storages[value].slot
        plan.streams.append(stream)
    for record, used in launches:
        record.args = [{"slot": s.slot, "value": s.value} for s in used]
        plan.launches.append(record)
    for out in plan.outputs:
        if out.slot is not None:
            out.slot = storages[out.source_value].slot
    return plan


def steps(plan: Plan) -> Iterator[tuple[str, Any]]:
    """The per-run host work in order: ("input", PackRecord), ("launch", ...), ("output", ...)."""
    work = [(r.step, 0, "input", r) for r in plan.inputs]
    work += [(r.step, 1, "launch", r) for r in plan.launches]
    work += [(r.step, 2, "output", r) for r in plan.outputs]
    for _, _, kind, record in sorted(work, key=lambda w: (w[0], w[1])):
        yield kind, record


PLAN_COMMENT_START = "/* mobile-opt host plan"


def plan_comment(plan: Plan) -> str:
    """The plan as a trailing C comment (JSON escapes `*/` as `*\\/`)."""
    text = plan.dumps().replace("*/", "*\\/")
    return f"{PLAN_COMMENT_START}\n{text}\n*/\n"


def parse_plan_comment(source: str) -> dict[str, Any] | None:
    """The plan JSON a `-t opencl` output ends with, if any."""
    start = source.rfind(PLAN_COMMENT_START)
    if start < 0:
        return None
    body = source[start + len(PLAN_COMMENT_START) :]
    end = body.rfind("*/")
    return json.loads(body[:end] if end >= 0 else body)


def is_lowered(module: ModuleOp) -> bool:
    """Whether `onnx-to-texture` ran on the module (it leaves `texture.limits` on it)."""
    return "texture.limits" in module.attributes and any(
        isinstance(op, func.FuncOp) for op in module.body.block.ops
    )
