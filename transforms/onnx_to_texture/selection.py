"""
The GPU half of `select-layouts` for the solvers that choose every layout together
(issue 20): the graph's `LayoutProblem`, costs in ns.

- A node is a kernel (an op with the epilogue ops the lowering fuses into it, found as
  the local rules find them: `layouts.select_local`) or a graph input, in block order.
  Its options are the layouts its kernel can store (rank 4: nc4hw4, rows4; other ranks:
  rows4, the only other layout a kernel writes), plus "view" for a data-movement op
  `movement.viewable` accepts. An option whose image is over the device limit is
  infeasible. An op whose kernel configuration `texture-tile` chose, a row op (products,
  softmax, layernorm: rows4 only) and an op whose results differ in rank keep the local
  rules' layout: one option.
- A node's own cost is its kernel's time under that layout (plus `TIE_NS` off the local
  rules' layout): TMModel's for a configured
  kernel (`models/texture_kernels.py`), launch plus bytes over the profile's bandwidths
  for the rest (`models/texture_costs.py`). A data-movement op's copy is on the edge from
  its source, since whether it is a free alias, a pixel copy or a lane gather depends on
  both layouts (`movement.copy_method`).
- An edge is a read of a kernel's result by another kernel that wants it in another
  layout: either the reader gathers lanes (three more reads per pixel), or a relayout copy
  (`texture.relayout`) makes the layout once for every reader that wants it
  (`add_shared_transform`), whichever is cheaper for that reader.

`realise` records the chosen layouts over the local rules' records (which keep
constants' layouts) and puts a `texture.relayout` before each reader the selection pays a
copy for, one per tensor and layout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import UnknownShape, is_constant_expression
from mobile_opt.dialects.onnx.shapes import ShapeError
from mobile_opt.dialects.texture import Layout, RelayoutOp, image_size
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.dialects.texture.value_layouts import (
    record_layout,
    record_view,
    recorded_layout,
)
from mobile_opt.models.device_profile import load_profile, profile_path, texture_constants
from mobile_opt.models.pbqp import PBQPProblem, add_shared_transform
from mobile_opt.models.texture_costs import BandwidthModel, StreamKernel
from mobile_opt.models.texture_kernels import TMModel
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from . import movement
from .context import Stored
from .nodes import LoweringError, shape
from .layouts import ROW_OPS, select_local
from .lower import OnnxToTexturePass

KERNEL_LAYOUTS = (Layout.NC4HW4, Layout.ROWS4)
"""The layouts a kernel stores (`texture.relayout` makes no other), in copy-node order."""
VIEW = "view"
TIE_NS = 1000.0
"""What a layout other than the local rules' costs more: ties, and gains within the
model's error (a few padding pixels), go to the local choice, so a solver changes a
layout only where the model says it gains at least this much per kernel changed."""
DEFAULT_LIMITS = (OnnxToTexturePass.max_image_width, OnnxToTexturePass.max_image_height)
"""`onnx-to-texture`'s default image limits."""

WINDOW_OPS = (onnx.ConvOp, onnx.FusedConvOp, onnx.ConvTransposeOp, onnx.MaxPoolOp,
              onnx.AveragePoolOp, onnx.GlobalAveragePoolOp, onnx.GlobalMaxPoolOp, onnx.LRNOp)
"""Ops that read their data operand by channel block (nc4hw4), gathering it otherwise."""
PRODUCTS = (onnx.MatMulOp, onnx.FusedMatMulOp, onnx.GemmOp, onnx.FusedGemmOp)


def pixels(layout: Layout, dims: Sequence[int]) -> int:
    """The pixels of a tensor in `layout` (rows4 where the rank does not take it)."""
    if layout.check_rank(len(dims)) is not None:
        layout = Layout.ROWS4
    width, height = image_size(layout, tuple(dims))
    return width * height


@dataclass
class _Node:
    """A kernel or graph input: the values it stores in one layout, and its options."""

    name: str
    values: list[SSAValue]
    ops: list[Operation]
    """The head op and the ops fused into its kernel (none for a graph input)."""
    options: list[Layout | str]
    local: int
    fixed: bool = False
    """True: the local layout is kept (and not re-recorded)."""
    stored: list[SSAValue] = field(default_factory=list)
    """The values it stores (read outside it, or graph outputs)."""

    @property
    def head(self) -> Operation | None:
        return self.ops[0] if self.ops else None


@dataclass
class _SharedRead:
    """A read whose mismatch the selection pays with a relayout copy."""

    value: SSAValue
    producer: int
    reader: int
    op: Operation
    operand: int
    wants: list[Layout | None]
    """The layout each option of the reader reads the value in (None: any)."""


@dataclass
class GpuLayoutProblem:
    """`LayoutProblem` of a module's graphs on the GPU (`models/solvers.py`)."""

    module: ModuleOp
    problem: PBQPProblem
    nodes: list[_Node]
    index: list[int]
    """Each node's index in `problem` (copy nodes sit after their producer)."""
    shared: list[_SharedRead] = field(default_factory=list)
    local_selection: tuple[int, ...] = ()
    unit: str = "ns"

    def local(self) -> tuple[int, ...]:
        return self.local_selection

    def layout(self, node: int, selection: Sequence[int]) -> Layout | str:
        n = self.nodes[node]
        return n.options[selection[self.index[node]]]

    def realise(self, selection: Sequence[int]) -> None:
        select_local(self.module)  # every value (constants too) gets a layout first
        for i, node in enumerate(self.nodes):
            if node.fixed:
                continue
            choice = self.layout(i, selection)
            if choice == VIEW:
                for op in node.ops:
                    record_view(op)
                continue
            for value in node.values:
                if choice.check_rank(len(shape(value))) is None:
                    record_layout(value, choice)
        relayouts: dict[tuple[SSAValue, Layout], RelayoutOp] = {}
        for read in self.shared:
            want = read.wants[selection[self.index[read.reader]]]
            have = self.layout(read.producer, selection)
            if want is None or have in (want, VIEW):
                continue
            key = (read.value, want)
            if key not in relayouts:
                relayouts[key] = _insert_relayout(read.value, want)
            read.op.operands[read.operand] = relayouts[key].result


def _insert_relayout(value: SSAValue, layout: Layout) -> RelayoutOp:
    relayout = RelayoutOp(value, layout)
    if isinstance(value, BlockArgument):
        block = value.owner
        assert isinstance(block, Block) and block.first_op is not None
        block.insert_op_before(relayout, block.first_op)
    else:
        owner = value.owner
        assert isinstance(owner, Operation)
        owner.parent_block().insert_op_after(relayout, owner)
    if value.name_hint:
        relayout.result.name_hint = f"{value.name_hint}_{layout.value}"
    return relayout


def gpu_layout_problem(module: ModuleOp, profile: str = "pocl",
                       limits: tuple[int, int] = DEFAULT_LIMITS) -> GpuLayoutProblem:
    """The selection problem of every graph of `module`, costed with the device `profile`."""
    path = profile_path(profile)
    if not path.is_file():
        load_profile(profile)  # its error, naming the profile as given
    return _Builder(module, *_cost_models(path, path.stat().st_mtime_ns), limits).build()


@lru_cache(maxsize=8)
def _cost_models(path: Path, stamp: int) -> tuple[BandwidthModel, TMModel]:
    """The kernel cost models of a profile file as it stands at `stamp`, read once: CDMPP's
    cost model selects layouts for each candidate layout of each node."""
    loaded = load_profile(str(path))
    return BandwidthModel.of(loaded), TMModel(texture_constants(loaded))


class _Builder:
    def __init__(self, module: ModuleOp, bandwidth: BandwidthModel, tm: TMModel,
                 limits: tuple[int, int]):
        self.module = module
        self.bandwidth = bandwidth
        self.tm = tm
        self.limits = limits
        self.nodes: list[_Node] = []
        self.node_of: dict[SSAValue, int] = {}
        self.costs: list[list[float]] = []
        self.edges: list[tuple[int, int, np.ndarray]] = []
        self.transforms: list[tuple[int, list[int], list[list[float]], list[list[int]]]] = []
        """add_shared_transform's arguments, per tensor some reader wants copied."""
        self.shared_reads: list[_SharedRead] = []

    # nodes ------------------------------------------------------------------------------
    def build(self) -> GpuLayoutProblem:
        kernels: dict[SSAValue, SSAValue] = {}
        select_local(self.module, kernels)
        graphs = [f for f in self.module.body.block.ops if isinstance(f, func.FuncOp)]
        for graph in graphs:
            for arg in graph.args:
                if isinstance(arg.type, TensorType):
                    self._add(f"input {arg.name_hint or arg.index}", [arg], [])
            for op in graph.body.block.ops:
                if not _is_kernel(op):
                    continue
                roots = {_root(r, kernels) for r in op.results}
                if all(r in self.node_of for r in roots) and roots != set(op.results):
                    for r in op.results:  # fused into an earlier kernel
                        node = self.node_of[_root(r, kernels)]
                        self.nodes[node].values.append(r)
                        self.nodes[node].ops.append(op)
                        self.node_of[r] = node
                    continue
                self._add(_name(op), list(op.results), [op])
        for node in self.nodes:
            self._options(node)
        for i, node in enumerate(self.nodes):
            self.costs.append([self._own_cost(node, o) + (TIE_NS if k != node.local else 0.0)
                               for k, o in enumerate(node.options)])
            self._mark_infeasible(i)
        self._reads()
        return self._problem()

    def _add(self, name: str, values: list[SSAValue], ops: list[Operation]) -> None:
        index = len(self.nodes)
        self.nodes.append(_Node(name, values, ops, [], 0))
        for v in values:
            self.node_of[v] = index

    def _options(self, node: _Node) -> None:
        """The layouts the node can store its results in (the ones read outside it)."""
        node.stored = [v for v in node.values
                       if not v.uses or any(u.operation not in node.ops for u in v.uses)]
        node.stored = node.stored or node.values[-1:]
        local = [recorded_layout(v) for v in node.stored]
        ranks = {len(shape(v)) for v in node.stored}
        head = node.head
        node.fixed = (None in local or len(set(local)) > 1 or len(ranks) > 1
                      or head is not None and (head.name in ROW_OPS
                                               or TileConfig.of(head) is not None))
        options: list[Layout | str] = (
            [local[0]] if node.fixed else [Layout.NC4HW4, Layout.ROWS4] if ranks == {4}
            else [Layout.ROWS4])
        if head is not None and not node.fixed and all(
                (_copies(op) or isinstance(op, onnx.ConcatOp)) and movement.viewable(op)
                for op in node.ops):
            options.append(VIEW)  # the whole chain folded into its readers
        node.options = options
        node.local = options.index(local[0]) if local[0] in options else 0

    def _mark_infeasible(self, i: int) -> None:
        """Layouts whose image is over the limit cost inf, unless every layout's is."""
        node = self.nodes[i]
        width, height = self.limits

        def fits(option: Layout | str) -> bool:
            return option == VIEW or all(
                (s := image_size(option, shape(v)))[0] <= width and s[1] <= height
                for v in node.stored)

        fitting = [fits(o) for o in node.options]
        if any(fitting):
            self.costs[i] = [c if f else math.inf for c, f in zip(self.costs[i], fitting)]

    # costs ------------------------------------------------------------------------------
    def _own_cost(self, node: _Node, option: Layout | str) -> float:
        head = node.head
        if head is None or option == VIEW:
            return 0.0
        assert isinstance(option, Layout)
        if _copies(head):
            source = movement.data_of(head)
            if source in self.node_of:
                return 0.0  # on the edge from its source
            layout = recorded_layout(source) or Layout.ROWS4
            return self._movement_cost(head, layout, option, _has_epilogue(node))
        config = TileConfig.of(head)
        if config is not None:
            from mobile_opt.transforms.prune_configs import kernel_of

            kernel = kernel_of(head)
            if kernel is not None and math.isfinite(cost := self.tm.cost((kernel, config))):
                return cost + self.bandwidth.launch_ns
        out = sum(pixels(option, shape(r)) for r in node.stored)
        reads = sum(self._reads_of(o, k, option) for o in node.ops
                    for k, v in enumerate(o.operands) if isinstance(v.type, TensorType)
                    and self.node_of.get(v) != self.node_of.get(node.values[0]))
        if isinstance(head, WINDOW_OPS) and option is not Layout.NC4HW4:
            reads *= 4  # a channel block per lane: four evaluations per pixel
        return self.bandwidth.cost(StreamKernel(reads, out))

    def _reads_of(self, op: Operation, operand: int, option: Layout) -> float:
        """Pixels `op` reads of its operand (the reads a layout mismatch turns to gathers)."""
        value = op.operands[operand]
        dims = shape(value)
        own = pixels(Layout.ROWS4 if len(dims) != 4 else Layout.NC4HW4, dims) if dims else 1
        out = pixels(option, shape(op.results[0])) if op.results else own
        if operand == 0 and isinstance(op, WINDOW_OPS) and len(dims) == 4:
            if isinstance(op, onnx.GlobalAveragePoolOp | onnx.GlobalMaxPoolOp):
                return own
            taps = 1
            if isinstance(op, onnx.ConvOp | onnx.FusedConvOp | onnx.ConvTransposeOp):
                w = shape(op.operands[1])
                taps = math.prod(w[2:]) * math.ceil(w[1 if not isinstance(
                    op, onnx.ConvTransposeOp) else 0] / 4)
            elif (kernel := op.attributes.get("kernel_shape")) is not None:
                taps = math.prod(getattr(kernel, "get_values", lambda: (1,))())
            return out * taps
        if isinstance(op, PRODUCTS) and operand < 2 and len(dims) >= 1:
            return out * math.ceil(dims[-1] / 4)
        return max(own, out)

    def _movement_cost(self, head: Operation, source: Layout, layout: Layout,
                       epilogue: bool) -> float:
        """
        The copy kernel(s) of a data-movement op from `source` into `layout`: none for a
        free alias, unless elementwise ops fused after it then need a kernel of their own.
        """
        total = 0.0
        for result, imap in _copy_maps(head):
            src = movement.data_of(head)
            try:
                imap, _, end = movement.fold_chain(head, imap, result, True, set())
                if 0 in shape(end) + shape(src):
                    continue
                method = imap.method(Stored(None, source, shape(src)), layout)
            except (LoweringError, ShapeError, UnknownShape, ValueError):
                method = movement.LANES
            if method != movement.ALIAS or epilogue:
                total += self.bandwidth.copy(pixels(layout, shape(end)),
                                             method == movement.LANES)
        return total

    def _wants(self, op: Operation, operand: int, option: Layout | str) -> Layout | None:
        """The layout `op`, storing `option`, reads its operand in (None: any)."""
        if len(shape(op.operands[operand])) != 4 or option == VIEW:
            return None
        if operand == 0 and isinstance(op, WINDOW_OPS):
            return Layout.NC4HW4
        if isinstance(op, PRODUCTS) and operand < 2 or op.name in ROW_OPS and operand == 0:
            return Layout.ROWS4
        outs = [r for r in op.results if isinstance(r.type, TensorType)]
        if outs and len(shape(outs[0])) == 4:
            return option  # type: ignore[return-value]
        return None

    # edges ------------------------------------------------------------------------------
    def _reads(self) -> None:
        readers: dict[SSAValue, list[tuple[int, Operation, int]]] = {}
        for c, node in enumerate(self.nodes):
            for op in node.ops:
                for k, v in enumerate(op.operands):
                    p = self.node_of.get(v)
                    if p is None or p == c:
                        continue
                    if op is node.head and k == 0 and _copies(op):
                        self._movement_edge(p, c)
                    else:
                        readers.setdefault(v, []).append((c, op, k))
        for value, reads in readers.items():
            self._value_edges(value, reads)

    def _view_whole(self, p: int, value: SSAValue, want: Layout | None) -> bool:
        """Whether a reader asking for `want` reads `value`, the end of node `p`'s movement
        chain made a view, by whole source pixels (else it gathers lanes)."""
        head = self.nodes[p].head
        assert head is not None
        if isinstance(head, onnx.ConcatOp):
            # whole pixels where its operands agree; a reader branches between them per
            # pixel, which with more than two (Inception's four) measured up to 1.26x
            # slower kernels on the H100 than the copy saves: charged as gathers
            layouts = {recorded_layout(v) for v in head.inputs}
            return len(head.inputs) <= 2 and len(layouts) == 1 and None not in layouts \
                and value is head.results[0] \
                and movement.view_reads_per_element(head, layouts.pop(), want) < 1
        source = movement.data_of(head)
        layout = recorded_layout(source) or Layout.ROWS4
        for result, imap in _copy_maps(head):
            try:
                imap, _, end = movement.fold_chain(head, imap, result, True, set())
            except (LoweringError, ShapeError, UnknownShape):
                return False
            if end is value:
                return any(movement.view_method(layout, c, imap)[0] != movement.LANES
                           for c in movement.view_layouts(want, None, len(shape(value))))
        return False

    def _movement_edge(self, p: int, c: int) -> None:
        head = self.nodes[c].head
        assert head is not None
        matrix = np.zeros((len(self.nodes[p].options), len(self.nodes[c].options)))
        for a, have in enumerate(self.nodes[p].options):
            for b, layout in enumerate(self.nodes[c].options):
                if layout == VIEW:
                    continue
                assert isinstance(layout, Layout)
                if have == VIEW:
                    end = _copy_maps(head)[0][0] if _copy_maps(head) else head.results[0]
                    matrix[a, b] = self.bandwidth.copy(pixels(layout, shape(end)))
                else:
                    matrix[a, b] = self._movement_cost(head, have, layout,
                                                       _has_epilogue(self.nodes[c]))
        self.edges.append((p, c, matrix))

    def _value_edges(self, value: SSAValue, reads: list[tuple[int, Operation, int]]) -> None:
        p = self.node_of[value]
        producer = self.nodes[p].options
        dims = shape(value)
        copy = {l: self.bandwidth.copy(pixels(l, dims)) for l in KERNEL_LAYOUTS
                if l.check_rank(len(dims)) is None}
        shared: list[tuple[int, list[int], Operation, int, list[Layout | None]]] = []
        for c, op, k in reads:
            options = self.nodes[c].options
            wants = [self._wants(op, k, o) for o in options]
            gathers = [self.bandwidth.gathers(self._reads_of(op, k, o))
                       if isinstance(o, Layout) else 0.0 for o in options]
            if VIEW in producer:
                matrix = np.zeros((len(producer), len(options)))
                a = producer.index(VIEW)
                asked = [_view_asks(op, k, w) for w in wants]
                matrix[a] = [0.0 if self._view_whole(p, value, want) else gathers[b]
                             for b, want in enumerate(asked)]
                self.edges.append((p, c, matrix))
            mismatch = [(a, b) for a, have in enumerate(producer) if have != VIEW
                        for b, want in enumerate(wants) if want is not None and want != have]
            if not mismatch:
                continue
            if all(gathers[b] <= copy[wants[b]] for a, b in mismatch):
                matrix = np.zeros((len(producer), len(options)))
                for a, b in mismatch:
                    matrix[a, b] = gathers[b]
                self.edges.append((p, c, matrix))
            else:
                columns = [KERNEL_LAYOUTS.index(w) if w is not None else -1 for w in wants]
                shared.append((c, columns, op, k, wants))
        if not shared:
            return
        # a view is read through, never copied: its readers' reads are on the view's edge
        transform = [[0.0 if have in (l, VIEW) else copy.get(l, math.inf)
                      for l in KERNEL_LAYOUTS] for have in producer]
        self.transforms.append((p, [s[0] for s in shared], transform, [s[1] for s in shared]))
        self.shared_reads += [_SharedRead(value, p, c, op, k, wants)
                              for c, _, op, k, wants in shared]

    # the problem --------------------------------------------------------------------------
    def _problem(self) -> GpuLayoutProblem:
        """The PBQP with each copy node right after its producer (gcd2 cuts by order)."""
        draft = PBQPProblem()
        for node, costs in zip(self.nodes, self.costs):
            draft.add_node(costs, node.name, [str(o) for o in node.options])
        for p, c, matrix in self.edges:
            draft.add_edge(p, c, matrix)
        after: dict[int, list[int]] = {}
        for p, consumers, transform, reads in self.transforms:
            after.setdefault(p, []).extend(
                add_shared_transform(draft, p, consumers, transform, reads,
                                     [str(x) for x in KERNEL_LAYOUTS]))
        order = [j for i in range(len(self.nodes)) for j in (i, *after.get(i, []))]
        position = {j: i for i, j in enumerate(order)}
        problem = draft.reordered(order)
        index = [position[i] for i in range(len(self.nodes))]
        result = GpuLayoutProblem(self.module, problem, self.nodes, index,
                                  self.shared_reads)
        result.local_selection = _with_copies(problem, [
            (index[i], node.local) for i, node in enumerate(self.nodes)])
        return result


def _view_asks(op: Operation, operand: int, want: Layout | None) -> Layout | None:
    """The layout `op` opens a view operand in: a product its A in any (the view's best)
    and its B in its tile configuration's layout, if it has one; other ops what they want."""
    if isinstance(op, PRODUCTS) and operand < 2:
        config = TileConfig.of(op)
        return config.layout if operand == 1 and config is not None else None
    return want


def _with_copies(problem: PBQPProblem, chosen: list[tuple[int, int]]) -> tuple[int, ...]:
    """A selection with the given node options and each copy node present iff read."""
    selection = [0] * len(problem.nodes)
    for i, option in chosen:
        selection[i] = option
    neighbours = problem.neighbours()
    for copy in problem.copies:
        needed = any(math.isinf(problem.matrix(copy, c)[0, selection[c]])
                     for c in neighbours[copy] if c not in problem.copies)
        selection[copy] = 1 if needed else 0
    return tuple(selection)


def _has_epilogue(node: _Node) -> bool:
    """Whether elementwise ops run in the node's kernel (not only folded data movement)."""
    return any(not _copies(op) for op in node.ops[1:])


def _root(value: SSAValue, kernels: dict[SSAValue, SSAValue]) -> SSAValue:
    while value in kernels:
        value = kernels[value]
    return value


def _is_kernel(op: Operation) -> bool:
    """An op the lowering runs on the device (or folds into a device kernel)."""
    if isinstance(op, RelayoutOp | func.ReturnOp) or not op.results:
        return False
    if not all(isinstance(r.type, TensorType) for r in op.results):
        return False
    return not all(is_constant_expression(r) for r in op.results)


def _copy_maps(op: Operation) -> list:
    try:
        return movement.copy_maps(op)
    except (LoweringError, ShapeError, UnknownShape):
        return []


def _copies(op: Operation) -> bool:
    """A data-movement op the lowering makes a copy (or alias) of its data operand."""
    return bool(_copy_maps(op)) and op.operands and isinstance(op.operands[0].type, TensorType)


def _name(op: Operation) -> str:
    from .nodes import node_label

    return node_label(op)
