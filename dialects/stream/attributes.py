"""
Types and attributes of the `stream` dialect: FlashMem's weight streaming.

The overlap plan (OPG, FlashMem §3) splits each weight w into T(w) chunks of a uniform
size S bytes and decides, per weight, whether it is *preloaded* (the set W: moved into
its texture before the first kernel) or *streamed*: loaded from the weight store into
staging memory from layer z_w on, and moved into its texture x_{w,l} chunks at a time
while layer l runs, all before i_w, the first layer that reads it.

Layers are the host function's kernel launches in program order, numbered from 1;
layer 0 is the preload phase before the first launch. The plan is recorded in the IR
(DESIGN.md: choices live in the IR), for the lowering to realise:

- on the module, `stream.plan = #stream.plan<...>`: S, the budget, the number of layers and
  how the solver ended;
- on each weight's `texture.pack` (the weight in its device layout, whose texture bytes are
  chunked), `stream.weight_plan = #stream.weight_plan<...>`:
  its decision, T(w), z_w, i_w and the non-zero x_{w,l} as `layer: chunks` pairs.

`stream.load` and `stream.transform` name the chunks they move with `#stream.chunks`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    DenseArrayBase,
    IntAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from mobile_opt.dialects.enum_syntax import AngleBracketEnum
from mobile_opt.dialects.texture.ops import PixelStorageType

PLAN = "stream.plan"
"""The module's attribute: the overlap plan's `#stream.plan`."""
WEIGHT_PLAN = "stream.weight_plan"
"""A weight's `texture.pack` attribute: that weight's `#stream.weight_plan`."""
PRELOAD_LAYER = 0
"""The layer number of the preload phase, before the first kernel launch."""
SPLIT = "flashmem.split"
"""The attribute `flashmem-fuse` puts on both ops of a kernel it split (why it split it):
the lowering keeps them in kernels of their own."""


class Decision(StrEnum):
    """How a weight reaches its texture."""

    PRELOAD = "preload"
    """Moved whole before the first kernel (FlashMem's set W)."""
    STREAM = "stream"
    """Moved chunk by chunk while earlier kernels run."""


class SolverStatus(StrEnum):
    """How the planner that wrote a `#stream.plan` ended."""

    OPTIMAL = "optimal"
    """CP-SAT proved the plan optimal."""
    FEASIBLE = "feasible"
    """CP-SAT found a plan within its time limit but did not prove it optimal."""
    HEURISTIC = "heuristic"
    """The fallback heuristic made the plan (the solver failed or timed out)."""


def _parse_field(parser: AttrParser, key: str) -> int:
    """`key = <integer>`; negative values parse, for the verifier to reject by name."""
    parser.parse_keyword(key)
    parser.parse_punctuation("=")
    return parser.parse_integer(allow_boolean=False)


def element_bytes(weight: TensorType) -> int | None:
    """The bytes of one element of `weight`, or None for an element type without a size."""
    element = weight.element_type
    if isinstance(element, IntegerType | AnyFloat):
        return element.size
    return None


def chunks_of(nbytes: int, chunk: int) -> int:
    """T(w): the number of `chunk`-byte chunks that hold `nbytes` (the last may be short);
    the planner (`models/flashmem.py`) and the verifiers count with this one function."""
    return -(-nbytes // chunk)


def storage_bytes(storage: PixelStorageType) -> int:
    """The bytes of a storage's RGBA pixels, as the weight store and the allocator count them."""
    width, height = storage.size
    return width * height * 4 * storage.element_type.size


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """
    `!stream.token`: the completion of one `stream.transform`. A `stream.wait` on it
    blocks the host until the chunks are in their texture; the kernel that reads the
    texture is launched after that wait, so the dependency is an SSA edge in the IR.
    """

    name = "stream.token"


@irdl_attr_definition
class StagingType(ParametrizedAttribute, TypeAttribute):
    """
    `!stream.staging<bytes>`: a staging buffer of `bytes` bytes in unified (host-visible)
    memory, which `stream.load` fills from the weight store and `stream.transform` reads.
    It counts toward the in-flight memory M_peak until its last use.
    """

    name = "stream.staging"
    bytes: IntAttr

    def __init__(self, size: int):
        super().__init__(IntAttr(size))

    def verify(self) -> None:
        if self.bytes.data < 1:
            raise VerifyException(f"stream.staging: size {self.bytes.data} is not positive")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.bytes.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            size = parser.parse_integer(allow_boolean=False)
        return (IntAttr(size),)


@irdl_attr_definition
class DecisionAttr(AngleBracketEnum, EnumAttribute[Decision]):
    """A weight's decision on its own: `#stream.decision<stream>`."""

    name = "stream.decision"


@irdl_attr_definition
class StatusAttr(AngleBracketEnum, EnumAttribute[SolverStatus]):
    """A planner's end on its own: `#stream.status<optimal>`."""

    name = "stream.status"


@irdl_attr_definition
class ChunkRangeAttr(ParametrizedAttribute):
    """
    `#stream.chunks<!texture.image2d<72x4xf32>, size = 4096, first = 4, count = 8>`:
    chunks first .. first + count - 1 of the pixels of a weight's storage cut into
    `size`-byte chunks, that is bytes [first * size, min((first + count) * size, storage
    bytes)) of its pixels, row-major, as the weight store holds them. The planner counts
    the same bytes (a layout's padding included). Chunks are cut between channels, never
    inside one.
    """

    name = "stream.chunks"
    storage: PixelStorageType
    size: IntAttr
    first: IntAttr
    count: IntAttr

    def __init__(self, storage: PixelStorageType, size: int, first: int, count: int):
        super().__init__(storage, IntAttr(size), IntAttr(first), IntAttr(count))

    @property
    def total(self) -> int:
        """T(w): how many chunks the whole storage takes."""
        return chunks_of(self.storage_bytes, self.size.data)

    @property
    def storage_bytes(self) -> int:
        return storage_bytes(self.storage)

    @property
    def bytes(self) -> int:
        """The bytes these chunks hold (the weight's last chunk may be short)."""
        size, first = self.size.data, self.first.data
        return min((first + self.count.data) * size, self.storage_bytes) - first * size

    def describe(self) -> str:
        first, count = self.first.data, self.count.data
        return f"chunk {first}" if count == 1 else f"chunks {first}..{first + count - 1}"

    def verify(self) -> None:
        channel = self.storage.element_type.size
        size, first, count = self.size.data, self.first.data, self.count.data
        if size < 1:
            raise VerifyException(f"stream.chunks: chunk size {size} is not positive")
        if size % channel:
            raise VerifyException(
                f"stream.chunks: chunk size {size} cuts the {channel}-byte channels of "
                f"{self.storage}; it must be a multiple of {channel}")
        if count < 1:
            raise VerifyException(f"stream.chunks: moves no chunk (count {count})")
        if first < 0:
            raise VerifyException(f"stream.chunks: first chunk {first} is negative")
        if first + count > self.total:
            raise VerifyException(
                f"stream.chunks: {self.describe()} lie beyond the {self.total} chunks of "
                f"{size} bytes that hold {self.storage} ({self.storage_bytes} bytes)")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.storage)
        printer.print_string(
            f", size = {self.size.data}, first = {self.first.data}, count = {self.count.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            storage = parser.parse_type()
            if not isinstance(storage, PixelStorageType):
                parser.raise_error(
                    f"stream.chunks: chunks are of a weight's pixel storage, not {storage}")
            fields = []
            for key in ("size", "first", "count"):
                parser.parse_punctuation(",")
                fields.append(IntAttr(_parse_field(parser, key)))
        return (storage, *fields)


@irdl_attr_definition
class WeightPlanAttr(ParametrizedAttribute):
    """
    One weight's part of the overlap plan:

        #stream.weight_plan<stream, chunks = 18, load = 2, use = 5, moves = [2: 6, 4: 12]>

    reads: the weight's 18 chunks are loaded into staging memory from layer 2 on (z_w);
    6 chunks move into its texture while layer 2 runs and 12 while layer 4 runs (the
    x_{w,l} that are not zero); layer 5 is the first that reads it (i_w). The verifier
    checks FlashMem's constraints on one weight: every chunk moves exactly once (C0), no
    chunk moves before the weight is loaded (C1), and all move before their first reader.
    A preloaded weight loads at layer 0 and moves all its chunks there:
    `#stream.weight_plan<preload, chunks = 4, load = 0, use = 1, moves = [0: 4]>`.
    """

    name = "stream.weight_plan"
    decision: DecisionAttr
    chunks: IntAttr
    load: IntAttr
    use: IntAttr
    layers: DenseArrayBase[I64]
    counts: DenseArrayBase[I64]

    def __init__(
        self, decision: Decision, chunks: int, load: int, use: int, moves: Mapping[int, int]
    ):
        layers = sorted(moves)
        super().__init__(
            DecisionAttr(decision), IntAttr(chunks), IntAttr(load), IntAttr(use),
            DenseArrayBase.from_list(i64, layers),
            DenseArrayBase.from_list(i64, [moves[layer] for layer in layers]),
        )

    @staticmethod
    def preloaded(chunks: int, use: int) -> WeightPlanAttr:
        """A weight of `chunks` chunks in the set W, first read at layer `use`."""
        return WeightPlanAttr(Decision.PRELOAD, chunks, PRELOAD_LAYER, use,
                              {PRELOAD_LAYER: chunks})

    @staticmethod
    def streamed(moves: Mapping[int, int], use: int, load: int | None = None) -> WeightPlanAttr:
        """
        A streamed weight that moves `moves[l]` chunks at layer l (the x_{w,l}; zeros are
        dropped) and is first read at layer `use`; it loads at `load`, by default at the
        first layer that moves a chunk. T(w) is the sum of the moves.
        """
        moves = {layer: count for layer, count in moves.items() if count != 0}
        if load is None:
            load = min(moves, default=PRELOAD_LAYER + 1)
        return WeightPlanAttr(Decision.STREAM, sum(moves.values()), load, use, moves)

    @property
    def moves(self) -> dict[int, int]:
        """x_{w,l} by layer l, the layers that move no chunk left out."""
        return dict(zip(self.layers.get_values(), self.counts.get_values(), strict=True))

    def verify(self) -> None:
        layers, counts = self.layers.get_values(), self.counts.get_values()
        chunks, load, use = self.chunks.data, self.load.data, self.use.data
        if len(layers) != len(counts):
            raise VerifyException(
                f"stream.weight_plan: {len(layers)} layers but {len(counts)} chunk counts")
        if chunks < 1:
            raise VerifyException(f"stream.weight_plan: a weight has chunks, not {chunks}")
        if use < 1:
            raise VerifyException(
                f"stream.weight_plan: the first reader is a kernel, layer 1 or later, not {use}")
        if not layers:
            raise VerifyException("stream.weight_plan: moves no chunk")
        if any(c < 1 for c in counts):
            raise VerifyException(
                f"stream.weight_plan: a move takes one chunk or more, not {min(counts)}")
        if any(b <= a for a, b in pairwise(layers)):
            raise VerifyException(
                f"stream.weight_plan: move layers {list(layers)} are not strictly increasing")
        if sum(counts) != chunks:
            raise VerifyException(
                f"stream.weight_plan: moves {sum(counts)} chunks, but the weight has {chunks}")
        if layers[-1] >= use:
            raise VerifyException(
                f"stream.weight_plan: moves chunks at layer {layers[-1]}, not before their "
                f"first reader at layer {use}")
        if self.decision.data is Decision.PRELOAD:
            if load != PRELOAD_LAYER or list(layers) != [PRELOAD_LAYER]:
                raise VerifyException(
                    "stream.weight_plan: a preloaded weight loads and moves all its chunks "
                    f"at layer {PRELOAD_LAYER}")
            return
        if load <= PRELOAD_LAYER:
            raise VerifyException(
                f"stream.weight_plan: a streamed weight loads at layer 1 or later, not {load}")
        if layers[0] < load:
            raise VerifyException(
                f"stream.weight_plan: moves chunks at layer {layers[0]}, before its load at "
                f"layer {load}")

    def print_parameters(self, printer: Printer) -> None:
        moves = ", ".join(f"{layer}: {count}" for layer, count in
                          zip(self.layers.get_values(), self.counts.get_values()))
        printer.print_string(
            f"<{self.decision.data.value}, chunks = {self.chunks.data}, load = {self.load.data}, "
            f"use = {self.use.data}, moves = [{moves}]>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def move() -> tuple[int, int]:
            layer = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(":")
            return layer, parser.parse_integer(allow_boolean=False)

        with parser.in_angle_brackets():
            decision = parser.parse_str_enum(Decision)
            fields = []
            for key in ("chunks", "load", "use"):
                parser.parse_punctuation(",")
                fields.append(IntAttr(_parse_field(parser, key)))
            parser.parse_punctuation(",")
            parser.parse_keyword("moves")
            parser.parse_punctuation("=")
            moves = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, move)
        return (
            DecisionAttr(decision), *fields,
            DenseArrayBase.from_list(i64, [layer for layer, _ in moves]),
            DenseArrayBase.from_list(i64, [count for _, count in moves]),
        )


@irdl_attr_definition
class PlanAttr(ParametrizedAttribute):
    """
    The overlap plan of a module, as `stream.plan` on it:

        #stream.plan<chunk = 65536, budget = 524288000, layers = 120, status = optimal>

    S, the uniform chunk size in bytes; the budget, the bytes the run may hold at any layer
    (activations, weights, staging: all the memory a counting allocator sees); N, the number of layers (kernel launches); and how
    the planner ended. The weights' own plans are on their `texture.pack` ops.
    """

    name = "stream.plan"
    chunk: IntAttr
    budget: IntAttr
    layers: IntAttr
    status: StatusAttr

    def __init__(self, chunk: int, budget: int, layers: int, status: SolverStatus):
        super().__init__(IntAttr(chunk), IntAttr(budget), IntAttr(layers), StatusAttr(status))

    def verify(self) -> None:
        for key in ("chunk", "budget", "layers"):
            value = getattr(self, key).data
            if value < 1:
                raise VerifyException(f"stream.plan: {key} is positive, not {value}")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<chunk = {self.chunk.data}, budget = {self.budget.data}, "
            f"layers = {self.layers.data}, status = {self.status.data.value}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            fields = []
            for i, key in enumerate(("chunk", "budget", "layers")):
                if i:
                    parser.parse_punctuation(",")
                fields.append(IntAttr(_parse_field(parser, key)))
            parser.parse_punctuation(",")
            parser.parse_keyword("status")
            parser.parse_punctuation("=")
            status = parser.parse_str_enum(SolverStatus)
        return (*fields, StatusAttr(status))


def module_plan(op: Operation) -> PlanAttr | None:
    """The `stream.plan` of the module around `op`, if any."""
    module = op.get_toplevel_object()
    if isinstance(module, ModuleOp):
        plan = module.attributes.get(PLAN)
        if isinstance(plan, PlanAttr):
            return plan
    return None


def layer_chunks(plans: Iterable[WeightPlanAttr]) -> dict[int, int]:
    """
    The chunks that move at each layer, over all `plans` (the left side of FlashMem's
    per-layer limits C2, times S, and C3); layers that move none are left out.
    """
    total: dict[int, int] = {}
    for plan in plans:
        for layer, count in plan.moves.items():
            total[layer] = total.get(layer, 0) + count
    return dict(sorted(total.items()))
