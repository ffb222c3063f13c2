"""
The DSP half of `select-layouts`: each quantized operator's implementation (the SIMD
layout it runs in and its multiply instruction: `col1`/vmpy, `col2`/vmpa, `col4`/vrmpy;
depthwise uses vmpy in each), recorded in the IR for `onnx-to-hvx` to realise.

An implementation's cost is the cycle model's count for the kernel it generates
(`models/hvx_cycles.py`), so every candidate is built and allocated. A layout the
weights make inexact (16-bit overflow in vmpa) has no implementation.

`solver=local` is GCD²'s local choice: one layout for the whole graph, or `auto`:
operator by operator in graph order, the cheapest implementation counting the relayout
of an input that its producer left in another layout. A layout-only operator (Add,
MaxPool) runs where its input is; a reshape writes its result in the layout its
consuming product runs fastest in. An `hvx.relayout` already in the graph fixes the
layout its input is produced in.

Recorded (keys in `dialects/hvx/attributes.py`): `hvx.implementations` (the candidates
and their packets and cycles) and `hvx.implementation` on each op with a multiply
kernel; `hvx.layout` on the others and on each graph input's argument. Where a reader
wants a tensor in another layout than the one it was written in, an `hvx.relayout`
placed just before the reader moves it, the cost a solver counts.

`solver=pbqp` and `solver=exact` (`GlobalSelection`) choose every layout together: the
graph becomes a PBQP problem (`models/pbqp.py`) whose nodes are the graph inputs and the
operators (options: a product's implementations, costing their cycles; a layout-only
operator's or input's layouts, costing 0) and whose edges are tensors, costing
`relayout_cost` where the reader wants another layout than the writer's (inf where a max
pool or a relayout would need one). A tensor several products or Adds read is moved once
per layout (`add_shared_transform`). Both are scored by `modelled_cost`, as `local` is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mobile_opt.dialects.hvx import ImplementationAttr, LayoutAttr
from mobile_opt.dialects.hvx.attributes import IMPLEMENTATION, IMPLEMENTATIONS, LAYOUT
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS, SimdLayout
from mobile_opt.dialects.hvx.ops import RelayoutOp
from mobile_opt.dialects.onnx.graph import graph_io_names
from mobile_opt.models.hvx_cycles import KernelCost, kernel_cost
from mobile_opt.models.pbqp import (
    PBQPProblem,
    Solution,
    add_shared_transform,
    solve_exact,
    solve_pbqp,
)
from mobile_opt.transforms.hvx_regalloc import allocate_registers
from mobile_opt.transforms.onnx_to_hvx.conv import KernelInfeasible
from mobile_opt.transforms.onnx_to_hvx.eltwise import gather_kernel
from mobile_opt.transforms.onnx_to_hvx.geometry import GraphGeometry
from mobile_opt.transforms.onnx_to_hvx.quant_graph import (
    QAdd,
    QConv,
    QMaxPool,
    QNode,
    QRelayout,
    QTensor,
    QuantGraph,
    QuantGraphError,
)

LAYOUT_CHOICES = ("auto", "col1", "col2", "col4")
DSP_SOLVERS = ("local", "pbqp", "exact")


@dataclass
class Implementation:
    """One way to run a quantized operator: its layout, instruction and modelled cost."""

    layout: SimdLayout
    instruction: str
    cost: KernelCost

    def attribute(self) -> ImplementationAttr:
        return ImplementationAttr(self.layout, self.instruction, self.cost.packets,
                                  self.cost.cycles)


@dataclass
class LocalSelection:
    """GCD²'s local choice over `geometry`'s graph, one layout for all unless `policy` is
    `auto`."""

    geometry: GraphGeometry
    policy: str
    implementations: dict[QNode, list[Implementation]] = field(default_factory=dict)
    infeasible: dict[tuple[QNode, SimdLayout], str] = field(default_factory=dict)
    """Why an operator has no implementation in a layout."""
    layouts: dict[QTensor, SimdLayout] = field(default_factory=dict)
    """The layout each tensor is written in (a graph input: that of its first reader)."""
    chosen: dict[QNode, SimdLayout] = field(default_factory=dict)
    """The layout each node writes its result in (a relayout: its target)."""

    @property
    def graph(self) -> QuantGraph:
        return self.geometry.graph

    def conv_implementations(self, node: QConv) -> list[Implementation]:
        if node in self.implementations:
            return self.implementations[node]
        found, reasons = [], []
        for layout in self.candidate_layouts():
            try:
                kernel = self.geometry.conv_generator(node, layout).generate(allocated=True)
            except KernelInfeasible as e:
                reasons.append(f"{layout}: {e}")
                self.infeasible[(node, layout)] = str(e)
                continue
            found.append(Implementation(layout, kernel.instruction, kernel_cost(kernel.func)))
        if not found and self.policy == "auto":
            raise QuantGraphError(f"{node.label}: no SIMD layout can run it ({'; '.join(reasons)})")
        self.implementations[node] = found
        return found

    def candidate_layouts(self) -> tuple[SimdLayout, ...]:
        """The layouts implementations are built for: all three, or the forced one (and
        those that relayouts in the graph start from)."""
        if self.policy == "auto":
            return MATRIX_LAYOUTS
        wanted = {SimdLayout(self.policy)}
        wanted |= {n.source for n in self.graph.nodes if isinstance(n, QRelayout)}
        return tuple(layout for layout in MATRIX_LAYOUTS if layout in wanted)

    def relayout_cost(self, tensor: QTensor, source: SimdLayout, target: SimdLayout) -> int:
        if source == target:
            return 0
        count = int(np.prod(tensor.image))
        kernel = gather_kernel("cost", "a", "b", "t", count)
        allocate_registers(kernel)
        return kernel_cost(kernel).packets

    def modelled_cost(self) -> int:
        """The chosen products' cycles plus each relayout made (once per tensor and
        layout), in the units `choose` compares: the number every solver is scored by."""
        cost = sum(next(i for i in self.conv_implementations(n)
                        if i.layout is self.chosen[n]).cost.cycles
                   for n in self.graph.nodes if isinstance(n, QConv))
        moves = {(t, layout) for _, t, layout in self.relayouts()}
        return cost + sum(self.relayout_cost(t, self.layouts[t], layout)
                          for t, layout in moves)

    def choose(self) -> None:
        forced = None if self.policy == "auto" else SimdLayout(self.policy)
        # a relayout placed in the graph fixes the layout its input is produced in
        required = {n.x: n.source for n in self.graph.nodes if isinstance(n, QRelayout)}
        chosen, layouts = self.chosen, self.layouts
        for node in self.graph.nodes:
            if isinstance(node, QConv):
                found = self.conv_implementations(node)
                if node.y in required:
                    found = [i for i in found if i.layout is required[node.y]]
                    if not found:
                        raise QuantGraphError(
                            f"{node.label}: cannot produce {required[node.y]} for its relayout")
                    best = found[0]
                elif forced is not None:
                    match = [i for i in found if i.layout is forced]
                    if not match:
                        raise QuantGraphError(
                            f"{node.label}: cannot run in layout {forced} "
                            f"({self.infeasible.get((node, forced), 'no implementation')})")
                    best = match[0]
                else:
                    source = layouts.get(node.x)
                    best = min(found, key=lambda i: i.cost.cycles + (
                        0 if source is None else self.relayout_cost(node.x, source, i.layout)))
                chosen[node] = best.layout
                layouts.setdefault(node.x, best.layout)
                layouts[node.y] = best.layout
            elif isinstance(node, QRelayout):
                if layouts.setdefault(node.x, node.source) != node.source:
                    raise QuantGraphError(
                        f"{node.label}: its input is in {layouts[node.x]}, not {node.source}")
                chosen[node] = node.target
                layouts[node.y] = node.target
            elif isinstance(node, QMaxPool):  # a pool runs in its input's layout
                layout = layouts.get(node.x) or forced or SimdLayout.COL4
                chosen[node] = layout
                layouts.setdefault(node.x, layout)
                layouts[node.y] = layout
            elif isinstance(node, QAdd):
                layout = layouts.get(node.a) or layouts.get(node.b) or forced or SimdLayout.COL4
                chosen[node] = layout
                layouts.setdefault(node.a, layout)
                layouts.setdefault(node.b, layout)
                layouts[node.y] = layout
            else:
                layout = layouts.get(node.x) or forced or SimdLayout.COL4
                consumers = self.graph.consumers(node.y)
                target = layout
                if consumers and isinstance(consumers[0], QConv):
                    # a reshape gathers bytes anyway: write them in the consumer's layout
                    found = self.conv_implementations(consumers[0])
                    target = forced or min(found, key=lambda i: i.cost.cycles).layout
                chosen[node] = target
                layouts.setdefault(node.x, layout)
                layouts[node.y] = target

    def relayouts(self) -> list[tuple[QNode, QTensor, SimdLayout]]:
        """(reader, tensor, layout) where a product or Add reads a tensor in another layout
        than it was written in; max pools, reshapes and relayouts read it where it is."""
        moves = []
        for node in self.graph.nodes:
            reads = (node.x,) if isinstance(node, QConv) else (
                (node.a, node.b) if isinstance(node, QAdd) else ())
            for tensor in reads:
                if self.layouts[tensor] != self.chosen[node]:
                    moves.append((node, tensor, self.chosen[node]))
        return moves


@dataclass
class GlobalSelection(LocalSelection):
    """Every layout chosen together, as one PBQP problem solved by `solver` (`pbqp`: the
    reductions and RN; `exact`: CP-SAT); `auto` only."""

    solver: str = "pbqp"
    shared_copies: bool | None = None
    """Model a tensor several readers move to one layout as one copy (exact, but the copy
    nodes make every node of a fan-out degree 3 or more, where `solve_pbqp`'s RN guesses
    badly), or charge each reader its own move (an upper bound, sparse). Default: copies
    for `exact` only."""
    solution: Solution | None = None
    _relayout_costs: dict[tuple[int, SimdLayout, SimdLayout], int] = field(
        default_factory=dict)

    def relayout_cost(self, tensor: QTensor, source: SimdLayout, target: SimdLayout) -> int:
        key = (int(np.prod(tensor.image)), source, target)
        if key not in self._relayout_costs:
            self._relayout_costs[key] = super().relayout_cost(tensor, source, target)
        return self._relayout_costs[key]

    def problem(self) -> tuple[PBQPProblem, dict, dict]:
        """The PBQP problem; each graph input's and node's index in it, and the layout
        each of its options writes."""
        problem = PBQPProblem()
        index: dict[object, int] = {}
        writes: dict[object, list[SimdLayout]] = {}
        producer: dict[int, object] = {}
        for name, tensor, _ in self.graph.inputs:
            index[tensor] = problem.add_node([0.0] * len(MATRIX_LAYOUTS), name)
            writes[tensor] = list(MATRIX_LAYOUTS)
            producer[id(tensor)] = tensor
        for node in self.graph.nodes:
            if isinstance(node, QConv):
                found = self.conv_implementations(node)
                costs, layouts = [i.cost.cycles for i in found], [i.layout for i in found]
            elif isinstance(node, QRelayout):
                costs, layouts = [0.0], [node.target]
            else:
                costs, layouts = [0.0] * len(MATRIX_LAYOUTS), list(MATRIX_LAYOUTS)
            index[node] = problem.add_node(costs, node.label)
            writes[node] = layouts
            producer[id(node.y)] = node
        tensors = [t for _, t, _ in self.graph.inputs] + [n.y for n in self.graph.nodes]
        for tensor in tensors:
            self._connect(problem, tensor, producer[id(tensor)], index, writes)
        return problem, index, writes

    def _connect(self, problem, tensor, source, index, writes) -> None:
        out = writes[source]
        readers = []  # products and Adds: they read it in their own layout, moved if need be
        for reader in dict.fromkeys(self.graph.consumers(tensor)):
            if isinstance(reader, QConv | QAdd):
                readers.append(reader)
            elif isinstance(reader, QMaxPool | QRelayout):  # these read it where it is
                wanted = [reader.source] if isinstance(reader, QRelayout) else writes[reader]
                problem.add_edge(index[source], index[reader], [
                    [0.0 if a is b else np.inf for b in wanted] for a in out])
        if len(readers) == 1 or (readers and not self.shared_copies):
            for reader in readers:
                problem.add_edge(index[source], index[reader], [
                    [self.relayout_cost(tensor, a, b) for b in writes[reader]] for a in out])
        elif readers:
            add_shared_transform(
                problem, index[source], [index[r] for r in readers],
                [[self.relayout_cost(tensor, a, b) for b in MATRIX_LAYOUTS] for a in out],
                [[MATRIX_LAYOUTS.index(b) for b in writes[r]] for r in readers])

    def choose(self) -> None:
        if self.policy != "auto":
            raise QuantGraphError(f"solver={self.solver} chooses layouts: it needs layout=auto")
        if self.shared_copies is None:
            self.shared_copies = self.solver == "exact"
        problem, index, writes = self.problem()
        solve = solve_exact if self.solver == "exact" else solve_pbqp
        self.solution = solve(problem)
        if not np.isfinite(self.solution.cost):
            raise QuantGraphError(f"solver={self.solver}: no feasible choice of layouts")
        for key, node in index.items():
            layout = writes[key][self.solution.selection[node]]
            if isinstance(key, QTensor):
                self.layouts[key] = layout
            else:
                self.chosen[key] = layout
                self.layouts[key.y] = layout


def make_selection(graph: QuantGraph, policy: str, solver: str = "local") -> LocalSelection:
    """A selection of `graph`'s layouts by `solver`, chosen."""
    geometry = GraphGeometry(graph)
    selection = LocalSelection(geometry, policy) if solver == "local" else \
        GlobalSelection(geometry, policy, solver=solver)
    selection.choose()
    return selection


def select_dsp_layouts(function: func.FuncOp, graph: QuantGraph, policy: str,
                       solver: str = "local") -> LocalSelection:
    """Choose by `solver` in `policy` and record the choices in `function`."""
    selection = make_selection(graph, policy, solver)
    for node in graph.nodes:
        if isinstance(node, QConv):
            node.op.attributes[IMPLEMENTATIONS] = ArrayAttr(
                [i.attribute() for i in selection.conv_implementations(node)])
            node.op.attributes[IMPLEMENTATION] = next(
                i for i in selection.conv_implementations(node)
                if i.layout is selection.chosen[node]).attribute()
        elif not isinstance(node, QRelayout):
            # a GlobalAveragePool's steps share its op: the last, a reshape, writes its result
            node.op.attributes[LAYOUT] = LayoutAttr(selection.chosen[node])
    names = graph_io_names(function)[0]
    for name, tensor, _ in graph.inputs:
        layout = selection.layouts.get(tensor, SimdLayout.COL4)
        _set_argument_attribute(function, names.index(name), LAYOUT, LayoutAttr(layout))
    moved: dict[tuple[QTensor, SimdLayout], SSAValue] = {}
    for reader, tensor, layout in selection.relayouts():
        key = (tensor, layout)
        if key not in moved:
            source = next(v for v, t in graph.values.items() if t is tensor)
            relayout = RelayoutOp(source, selection.layouts[tensor], layout)
            relayout.output.name_hint = f"{tensor.name}_{layout}"
            relayout.location = reader.op.location
            Rewriter.insert_op(relayout, InsertPoint.before(reader.op))
            moved[key] = relayout.output
        _read_from(reader.op, tensor, moved[key], graph)
    return selection


def _read_from(op: Operation, tensor: QTensor, moved: SSAValue, graph: QuantGraph) -> None:
    """Make `op` read `moved` where it read `tensor`: directly, or through a copy of the
    DequantizeLinear it read it through (QDQ)."""
    for index, operand in enumerate(op.operands):
        if graph.values.get(operand) is tensor:
            op.operands[index] = moved
            continue
        dequantize = operand.owner
        if getattr(dequantize, "name", "") == "onnx.DequantizeLinear" and \
                graph.values.get(dequantize.operands[0]) is tensor:
            copy = dequantize.clone()
            copy.operands[0] = moved
            Rewriter.insert_op(copy, InsertPoint.before(op))
            op.operands[index] = copy.results[0]
            if not dequantize.results[0].uses:
                Rewriter.erase_op(dequantize)


def _set_argument_attribute(function: func.FuncOp, index: int, key: str, value) -> None:
    count = len(function.function_type.inputs)
    attrs = [d.data for d in function.arg_attrs.data] if function.arg_attrs else [{}] * count
    attrs = [dict(d) for d in attrs]
    attrs[index][key] = value
    function.arg_attrs = ArrayAttr([DictionaryAttr(d) for d in attrs])


def dsp_layout_problem(function: func.FuncOp, graph: QuantGraph):
    raise QuantGraphError("select-layouts: the DSP LayoutProblem is still to be built")
