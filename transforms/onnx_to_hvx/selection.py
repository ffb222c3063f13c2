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

The other solvers (`chain`, `pbqp`, `gcd2`, `exact`: `models/solvers.py`) choose every
layout together on `DspLayoutProblem`, the graph as one PBQP problem whose cost of a
selection is the `modelled_cost` of its layouts; `local()` is the local rules' choice as
a selection of the same problem, so every solver's cost compares with it.
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
from mobile_opt.models.pbqp import PBQPProblem, add_shared_transform
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
    _relayout_costs: dict[int, int] = field(default_factory=dict)
    """A relayout's packets by element count (the kernel is built once per size)."""

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
        if count not in self._relayout_costs:
            kernel = gather_kernel("cost", "a", "b", "t", count)
            allocate_registers(kernel)
            self._relayout_costs[count] = kernel_cost(kernel).cycles
        return self._relayout_costs[count]

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


class DspLayoutProblem:
    """
    The DSP's `LayoutProblem` (`models/solvers.py`) over one quantized graph: a PBQP
    problem whose nodes are the graph inputs and the operators in graph order (options: a
    product's implementations, labelled `col4/vrmpy`, costing their cycles; a layout-only
    operator's or input's layouts, labelled `col2`, costing 0; a relayout's target), then
    the transformed copies. Its edges are tensors, costing `relayout_cost` where a product
    or Add reads another layout than the writer's (inf where a max pool or a relayout would
    need one). A tensor several products or Adds read is moved once per layout
    (`add_shared_transform`), so a selection's cost is `LocalSelection.modelled_cost` of
    the layouts it chooses, for every solver and for `local()`.
    """

    unit = "cycles"

    def __init__(self, function: func.FuncOp, graph: QuantGraph):
        self.function, self.graph = function, graph
        self.rules = LocalSelection(GraphGeometry(graph), "auto")
        """Builds and costs the implementations, shared by every selection made here."""
        self.problem = PBQPProblem()
        self.index: dict[QTensor | QNode, int] = {}
        """Each graph input's and node's index in `problem`."""
        self.writes: dict[QTensor | QNode, list[SimdLayout]] = {}
        """The layout each option of an input or node writes."""
        self.shared: dict[QTensor, list[QNode]] = {}
        """The products and Adds reading a tensor through transformed copies."""
        self.copies: dict[tuple[QTensor, SimdLayout], int] = {}
        """The copy node of a tensor moved to a layout (present: moved)."""
        self._build()

    def _add(self, key, costs, layouts, labels, name: str) -> None:
        self.index[key] = self.problem.add_node(costs, name, labels)
        self.writes[key] = layouts

    def _build(self) -> None:
        producer: dict[int, QTensor | QNode] = {}
        every = list(MATRIX_LAYOUTS)
        for name, tensor, _ in self.graph.inputs:
            self._add(tensor, [0.0] * len(every), every, [str(x) for x in every], name)
            producer[id(tensor)] = tensor
        for node in self.graph.nodes:
            if isinstance(node, QConv):
                found = self.rules.conv_implementations(node)
                self._add(node, [i.cost.cycles for i in found], [i.layout for i in found],
                          [f"{i.layout}/{i.instruction}" for i in found], node.label)
            elif isinstance(node, QRelayout):
                self._add(node, [0.0], [node.target], [str(node.target)], node.label)
            else:
                self._add(node, [0.0] * len(every), every, [str(x) for x in every],
                          node.label)
            producer[id(node.y)] = node
        tensors = [t for _, t, _ in self.graph.inputs] + [n.y for n in self.graph.nodes]
        for tensor in tensors:
            self._connect(tensor, producer[id(tensor)])

    def _connect(self, tensor: QTensor, source: QTensor | QNode) -> None:
        problem, index, out = self.problem, self.index, self.writes[source]
        readers = []  # products and Adds: they read it in their own layout, moved if need be
        for reader in dict.fromkeys(self.graph.consumers(tensor)):
            if isinstance(reader, QConv | QAdd):
                readers.append(reader)
            elif isinstance(reader, QMaxPool | QRelayout):  # these read it where it is
                wanted = [reader.source] if isinstance(reader, QRelayout) else \
                    self.writes[reader]
                problem.add_edge(index[source], index[reader], [
                    [0.0 if a is b else np.inf for b in wanted] for a in out])
        cost = self.rules.relayout_cost
        if len(readers) == 1:
            (reader,) = readers
            problem.add_edge(index[source], index[reader], [
                [cost(tensor, a, b) for b in self.writes[reader]] for a in out])
        elif readers:
            reads = [[MATRIX_LAYOUTS.index(b) for b in self.writes[r]] for r in readers]
            copies = add_shared_transform(
                problem, index[source], [index[r] for r in readers],
                [[cost(tensor, a, b) for b in MATRIX_LAYOUTS] for a in out], reads,
                [str(x) for x in MATRIX_LAYOUTS])
            needed = [x for i, x in enumerate(MATRIX_LAYOUTS) if any(i in r for r in reads)]
            self.copies.update({(tensor, x): c for x, c in zip(needed, copies)})
            self.shared[tensor] = readers

    def selection_of(self, selection: LocalSelection) -> tuple[int, ...]:
        """The layouts `selection` chose as a selection of `problem`: each copy present
        where a reader reads its layout."""
        vector = [0] * len(self.problem.nodes)
        for key, node in self.index.items():
            layout = selection.layouts.get(key, SimdLayout.COL4) \
                if isinstance(key, QTensor) else selection.chosen[key]
            vector[node] = self.writes[key].index(layout)
        for tensor, readers in self.shared.items():
            for reader in readers:
                vector[self.copies[(tensor, selection.chosen[reader])]] = 1
        return tuple(vector)

    def rules_selection(self, policy: str) -> tuple[int, ...]:
        """The local rules' choice in `policy` (`auto`, or one layout for all)."""
        if policy == "auto":
            selection = self.rules
            if not selection.chosen:
                selection.choose()
        else:
            selection = LocalSelection(self.rules.geometry, policy)
            selection.choose()
        return self.selection_of(selection)

    def local(self) -> tuple[int, ...]:
        return self.rules_selection("auto")

    def realise(self, selection) -> LocalSelection:
        """Record `selection`'s layouts in the function as `select_dsp_layouts` records
        the local rules': the relayouts made follow from the layouts (copies not needed
        by any reader are not made)."""
        if not np.isfinite(self.problem.cost(selection)):
            raise QuantGraphError("select-layouts: no feasible choice of layouts")
        chosen = LocalSelection(self.rules.geometry, "auto", self.rules.implementations,
                                self.rules.infeasible)
        chosen._relayout_costs = self.rules._relayout_costs
        for key, node in self.index.items():
            layout = self.writes[key][selection[node]]
            if isinstance(key, QTensor):
                chosen.layouts[key] = layout
            else:
                chosen.chosen[key] = layout
                chosen.layouts[key.y] = layout
        record_selection(self.function, self.graph, chosen)
        return chosen


def dsp_layout_problem(function: func.FuncOp, graph: QuantGraph) -> DspLayoutProblem:
    """`graph`'s layout selection problem, for `select-layouts{target=dsp}`."""
    return DspLayoutProblem(function, graph)


def select_dsp_layouts(function: func.FuncOp, graph: QuantGraph,
                       policy: str) -> LocalSelection:
    """Choose by the local rules in `policy` and record the choices in `function`."""
    selection = LocalSelection(GraphGeometry(graph), policy)
    selection.choose()
    record_selection(function, graph, selection)
    return selection


def record_selection(function: func.FuncOp, graph: QuantGraph,
                     selection: LocalSelection) -> None:
    """Record `selection`'s implementations, layouts and relayouts in `function`."""
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
