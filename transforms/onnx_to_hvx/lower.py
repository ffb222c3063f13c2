"""
`hvx-plan` and `onnx-to-hvx`: execution plans for the quantized operators and the
lowering of a quantized model into one Hexagon program.

A plan runs an operator in one SIMD layout with its instruction (`col1`/vmpy,
`col2`/vmpa, `col4`/vrmpy; depthwise uses vmpy in each). Its cost is the cycle
model's count for the kernel the plan generates (`models/hvx_cycles.py`), so every
candidate is built, allocated and packed. A layout the weights make inexact (16-bit
overflow in vmpa) is not a candidate. `hvx-plan` records each operator's candidates as
`hvx.plans` on its op, for the global selection to come.

`onnx-to-hvx{layout=...}` chooses plans — one layout for the whole graph, or `auto`:
operator by operator in graph order, the cheapest plan counting the relayout of inputs
that its producer left in another layout (GCD²'s local choice, the stand-in until the
global selection lands) — then replaces the module with the program: one buffer per
tensor (`hvx.buffer`, the model inputs `.incbin`'d, outputs written by `_start`), one
`hvx.func` kernel per operator and relayout, and `_start`. Registers stay virtual
(`hvx-regalloc` comes next).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntAttr,
    ModuleOp,
    StringAttr,
    f64,
)
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.hexagon.program import Program
from mobile_opt.dialects.hvx import PlanAttr
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS, ImageGeometry, SimdLayout
from mobile_opt.models.hvx_cycles import KernelCost, kernel_cost
from mobile_opt.transforms.hvx_regalloc import NODE_ATTRIBUTE, allocate_registers
from mobile_opt.transforms.onnx_to_hvx.conv import ConvKernelGenerator, ConvShape, PlanInfeasible
from mobile_opt.transforms.onnx_to_hvx.eltwise import (
    TABLE_CORRECTIONS,
    AddQuant,
    add_index_kernel,
    add_kernel,
    add_lane_offsets,
    add_table,
    fit_add,
    gather_kernel,
    gather_table,
    reference_add_table,
)
from mobile_opt.transforms.onnx_to_hvx.pool import max_pool_kernel
from mobile_opt.transforms.onnx_to_hvx.quant_graph import (
    QAdd,
    QConv,
    QMaxPool,
    QNode,
    QRelayout,
    QReshape,
    QTensor,
    QuantGraph,
    QuantGraphError,
    read_quant_graph,
)
from mobile_opt.transforms.onnx_to_hvx.requant import RequantError, make_requantizer

LAYOUT_CHOICES = ("auto", "col1", "col2", "col4")


@dataclass
class Plan:
    layout: SimdLayout
    instruction: str
    cost: KernelCost
    config: tuple[int, bool, int, bool]
    """The generator's configuration that fits the registers (`ConvKernelGenerator.config`)."""


def _symbol(text: str) -> str:
    """An assembler symbol from an ONNX name: no leading digit (`/1/Relu` of nn.Sequential)."""
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in text).strip("_") or "t"
    return f"t_{cleaned}" if cleaned[0].isdigit() else cleaned


@dataclass
class Placement:
    """Where a tensor lives: its buffer symbol and geometry."""

    symbol: str
    geometry: ImageGeometry


@dataclass
class Lowering:
    graph: QuantGraph
    layout_policy: str
    program: Program = field(default_factory=Program)
    halo: dict[QTensor, tuple[int, int]] = field(default_factory=dict)
    layouts: dict[QTensor, SimdLayout] = field(default_factory=dict)
    placements: dict[tuple[QTensor, SimdLayout], Placement] = field(default_factory=dict)
    plans: dict[QNode, list[Plan]] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    flat: set[QTensor] = field(default_factory=set)
    zero_filled: set[QTensor] = field(default_factory=set)
    """Tensors whose halo and padding lanes hold 0, not their zero point (max pool inputs)."""
    pool_copies: dict[QMaxPool, QTensor] = field(default_factory=dict)
    """Max pools that read a zero-filled copy of their input."""
    infeasible: dict[tuple[QNode, SimdLayout], str] = field(default_factory=dict)
    """Why an operator has no plan in a layout."""

    # ------------------------------------------------------------------ geometry

    def fresh(self, base: str) -> str:
        name, n = _symbol(base), 1
        while name in self.names:
            name, n = f"{_symbol(base)}_{n}", n + 1
        self.names.add(name)
        return name

    def compute_halos(self) -> None:
        for node in self.graph.nodes:
            if isinstance(node, QConv | QMaxPool):
                top, below, left, right = node.shape.input_reach()
                lines = max(top, below)
                panels = 1 if max(left, right) > 0 else 0
                old = self.halo.get(node.x, (0, 0))
                self.halo[node.x] = (max(old[0], lines), max(old[1], panels))
        # the operands and result of an Add run over whole buffers: one geometry for all
        changed = True
        while changed:
            changed = False
            for node in self.graph.nodes:
                if isinstance(node, QAdd):
                    group = (node.a, node.b, node.y)
                    merged = (max(self.halo.get(t, (0, 0))[0] for t in group),
                              max(self.halo.get(t, (0, 0))[1] for t in group))
                    for t in group:
                        if self.halo.get(t, (0, 0)) != merged:
                            self.halo[t] = merged
                            changed = True

    def compute_flat(self) -> None:
        """
        Tensors stored as one line of H·W pixels instead of H lines padded to panels:
        those only 1×1 stride-1 convolutions (which then run as matrix products), Adds
        and the program's edges touch, consistently along each such chain.
        """
        nodes = self.graph.nodes
        flat = {t: len(t.shape) == 4 and self.halo.get(t, (0, 0)) == (0, 0)
                for n in nodes for t in _tensors(n)}
        for node in nodes:
            if isinstance(node, QConv) and not _pointwise(node):
                flat[node.x] = flat[node.y] = False  # windows read lines, even without halo
            elif isinstance(node, QReshape | QRelayout | QMaxPool):
                flat[node.x] = flat[node.y] = False
        changed = True
        while changed:
            changed = False
            for node in nodes:
                group = (node.x, node.y) if isinstance(node, QConv) else (
                    (node.a, node.b, node.y) if isinstance(node, QAdd) else ())
                if isinstance(node, QConv) and not _pointwise(node):
                    group = ()
                if group and not all(flat[t] for t in group) and any(flat[t] for t in group):
                    for t in group:
                        flat[t] = False
                    changed = True
        self.flat = {t for t, f in flat.items() if f}

    def compute_fills(self) -> None:
        """
        Padding must never win a max pool: its input's halo and padding lanes hold 0.
        That is the tensor's own fill where its zero point is 0, or where only max
        pools read it and a kernel that writes pixels alone (not an Add, which writes
        whole buffers, nor the host) makes it; otherwise the pool reads a copy.
        """
        producers = {node.y: node for node in self.graph.nodes}
        inputs = {tensor for _, tensor, _ in self.graph.inputs}
        for node in self.graph.nodes:
            if not isinstance(node, QMaxPool) or not any(node.shape.input_reach()):
                continue
            x = node.x
            if x.zero_point == 0 or x in self.zero_filled:
                continue
            readers = self.graph.consumers(x)
            if x not in inputs and not isinstance(producers.get(x), QAdd) and all(
                isinstance(r, QMaxPool) for r in readers
            ):
                self.zero_filled.add(x)
            else:
                copy = QTensor(f"{x.name}_pool_input", x.shape, x.scale, x.zero_point, x.signed)
                self.halo[copy] = self.halo.get(x, (0, 0))
                self.zero_filled.add(copy)
                self.pool_copies[node] = copy

    def geometry(self, tensor: QTensor, layout: SimdLayout) -> ImageGeometry:
        c, h, w = tensor.image
        if tensor in self.flat:
            return ImageGeometry(layout, c, 1, h * w)
        lines, panels = self.halo.get(tensor, (0, 0))
        return ImageGeometry(layout, c, h, w, lines, panels)

    def conv_shape(self, node: QConv):
        """The convolution as the kernel sees it: a flat 1×1 one is a matrix product."""
        if node.x in self.flat and _pointwise(node):
            shape = node.shape
            return ConvShape(shape.channels, 1, shape.height * shape.width, shape.out_channels)
        return node.shape

    def placement(self, tensor: QTensor, layout: SimdLayout) -> Placement:
        key = (tensor, layout)
        if key not in self.placements:
            suffix = "" if not any(k[0] is tensor for k in self.placements) else f"_{layout}"
            symbol = self.fresh(tensor.name + suffix)
            self.placements[key] = Placement(symbol, self.geometry(tensor, layout))
        return self.placements[key]

    # ------------------------------------------------------------------ plans

    def conv_generator(self, node: QConv, layout: SimdLayout, name: str = "plan",
                       symbols=("x", "y", "w")) -> ConvKernelGenerator:
        try:
            requant = make_requantizer(float(node.scale), node.y.zero_point, *node.clamp)
        except RequantError as e:
            raise QuantGraphError(f"{node.label}: {e}") from None
        return ConvKernelGenerator(
            name, self.conv_shape(node), layout, node.weights, node.folded_bias(), requant,
            self.geometry(node.x, layout), self.geometry(node.y, layout), *symbols,
        )

    def conv_plans(self, node: QConv) -> list[Plan]:
        if node in self.plans:
            return self.plans[node]
        plans, reasons = [], []
        for layout in self.candidate_layouts():
            generator = self.conv_generator(node, layout)
            try:
                generated = generator.generate(allocated=True)
            except PlanInfeasible as e:
                reasons.append(f"{layout}: {e}")
                self.infeasible[(node, layout)] = str(e)
                continue
            plans.append(Plan(layout, generated.instruction, kernel_cost(generated.func),
                              generator.config))
        if not plans and self.layout_policy == "auto":
            raise QuantGraphError(f"{node.label}: no SIMD layout can run it ({'; '.join(reasons)})")
        self.plans[node] = plans
        return plans

    def candidate_layouts(self) -> tuple[SimdLayout, ...]:
        """The layouts plans are made for: all three, or the forced one (and those that
        relayouts in the graph start from)."""
        if self.layout_policy == "auto":
            return MATRIX_LAYOUTS
        wanted = {SimdLayout(self.layout_policy)}
        wanted |= {n.source for n in self.graph.nodes if isinstance(n, QRelayout)}
        return tuple(layout for layout in MATRIX_LAYOUTS if layout in wanted)

    def relayout_cost(self, tensor: QTensor, source: SimdLayout, target: SimdLayout) -> int:
        if source == target:
            return 0
        count = int(np.prod(tensor.image))
        kernel = gather_kernel("cost", "a", "b", "t", count)
        allocate_registers(kernel)
        return kernel_cost(kernel).packets

    # ------------------------------------------------------------------ selection

    def choose_layouts(self) -> dict[QNode, SimdLayout]:
        chosen: dict[QNode, SimdLayout] = {}
        forced = None if self.layout_policy == "auto" else SimdLayout(self.layout_policy)
        # a relayout placed in the graph fixes the layout its input is produced in
        required = {n.x: n.source for n in self.graph.nodes if isinstance(n, QRelayout)}
        for node in self.graph.nodes:
            if isinstance(node, QConv):
                plans = self.conv_plans(node)
                if node.y in required:
                    plans = [p for p in plans if p.layout is required[node.y]]
                    if not plans:
                        raise QuantGraphError(
                            f"{node.label}: cannot produce {required[node.y]} for its relayout")
                    best = plans[0]
                elif forced is not None:
                    match = [p for p in plans if p.layout is forced]
                    if not match:
                        raise QuantGraphError(
                            f"{node.label}: cannot run in layout {forced} "
                            f"({self.infeasible.get((node, forced), 'no plan')})")
                    best = match[0]
                else:
                    source = self.layouts.get(node.x)
                    best = min(plans, key=lambda p: p.cost.cycles + (
                        0 if source is None else self.relayout_cost(node.x, source, p.layout)))
                chosen[node] = best.layout
                self.layouts.setdefault(node.x, best.layout)
                self.layouts[node.y] = best.layout
            elif isinstance(node, QRelayout):
                if self.layouts.setdefault(node.x, node.source) != node.source:
                    raise QuantGraphError(
                        f"{node.label}: its input is in {self.layouts[node.x]}, not {node.source}")
                chosen[node] = node.target
                self.layouts[node.y] = node.target
            elif isinstance(node, QMaxPool):  # a pool runs in its input's layout
                layout = self.layouts.get(node.x) or forced or SimdLayout.COL4
                chosen[node] = layout
                self.layouts.setdefault(node.x, layout)
                self.layouts[node.y] = layout
            elif isinstance(node, QAdd):
                layout = self.layouts.get(node.a) or self.layouts.get(node.b) or forced \
                    or SimdLayout.COL4
                chosen[node] = layout
                self.layouts.setdefault(node.a, layout)
                self.layouts.setdefault(node.b, layout)
                self.layouts[node.y] = layout
            else:
                layout = self.layouts.get(node.x) or forced or SimdLayout.COL4
                consumers = self.graph.consumers(node.y)
                target = layout
                if consumers and isinstance(consumers[0], QConv):
                    # a reshape gathers bytes anyway: write them in the consumer's layout
                    plans = self.conv_plans(consumers[0])
                    target = forced or min(plans, key=lambda p: p.cost.cycles).layout
                chosen[node] = target
                self.layouts.setdefault(node.x, layout)
                self.layouts[node.y] = target
        return chosen

    # ------------------------------------------------------------------ emission

    def stored(self, tensor: QTensor, layout: SimdLayout) -> Placement:
        """The tensor in `layout`, adding a relayout kernel if it lives in another."""
        home = self.layouts[tensor]
        if home == layout:
            return self.placement(tensor, layout)
        source = self.placement(tensor, home)
        if (tensor, layout) not in self.placements:
            target = self.placement(tensor, layout)
            self.storage(target, tensor)
            self.gather(f"relayout_{target.symbol}", source, target)
        return self.placements[(tensor, layout)]

    def storage(self, place: Placement, tensor: QTensor) -> None:
        fill = 0 if tensor in self.zero_filled else tensor.zero_point
        self.program.storage(place.symbol, place.geometry.size, fill)

    def gather(self, name: str, source: Placement, target: Placement) -> None:
        """A kernel copying every element of a tensor between two placements."""
        table = gather_table(source.geometry.byte_offsets(), target.geometry.byte_offsets())
        table_symbol = self.fresh(f"{name}_table")
        self.program.data(table_symbol, table)
        self.program.kernels.append(
            gather_kernel(self.fresh(name), source.symbol, target.symbol, table_symbol, len(table))
        )

    def emit(self) -> Program:
        self.compute_halos()
        self.compute_flat()
        self.compute_fills()
        chosen = self.choose_layouts()
        for name, tensor, _ in self.graph.inputs:
            place = self.placement(tensor, self.layouts.get(tensor, SimdLayout.COL4))
            self.program.input(place.symbol, place.geometry.size)
        for index, node in enumerate(self.graph.nodes):
            layout = chosen[node]
            kernel_name = self.fresh(f"k{index}_{_node_name(node.label)}")
            first_kernel = len(self.program.kernels)
            self.emit_node(node, layout, kernel_name)
            for kernel in self.program.kernels[first_kernel:]:
                kernel.attributes[NODE_ATTRIBUTE] = StringAttr(node.label)
        for name, tensor, _ in self.graph.outputs:
            place = self.placement(tensor, self.layouts[tensor])
            self.program.output(place.symbol, place.geometry.size)
        return self.program

    def emit_node(self, node: QNode, layout: SimdLayout, kernel_name: str) -> None:
        """The kernels of one operator (and the relayouts its inputs need)."""
        if isinstance(node, QConv):
            x = self.stored(node.x, layout)
            y = self.placement(node.y, layout)
            self.storage(y, node.y)
            weights = self.fresh(f"{kernel_name}_weights")
            chosen_plan = next(p for p in self.conv_plans(node) if p.layout is layout)
            plan = self.conv_generator(
                node, layout, kernel_name, (x.symbol, y.symbol, weights)
            ).generate_as(chosen_plan.config)
            self.program.data(weights, plan.weights)
            self.program.kernels.append(plan.func)
        elif isinstance(node, QAdd):
            a, b = self.stored(node.a, layout), self.stored(node.b, layout)
            y = self.placement(node.y, layout)
            self.storage(y, node.y)
            quant = AddQuant(float(node.a.scale), node.a.zero_point, float(node.b.scale),
                             node.b.zero_point, float(node.y.scale), node.y.zero_point,
                             node.y.signed, node.clamp)
            formula, size = fit_add(quant), y.geometry.size
            if len(formula.corrections) <= TABLE_CORRECTIONS:
                self.program.kernels.append(add_kernel(
                    kernel_name, size, a.symbol, b.symbol, y.symbol, formula))
                return
            table, lanes = self.fresh(f"{kernel_name}_table"), self.fresh(f"{kernel_name}_lanes")
            pairs = self.fresh(f"{kernel_name}_pairs")
            self.program.data(table, add_table(reference_add_table(quant)))
            self.program.data(lanes, add_lane_offsets())
            self.program.storage(pairs, 8 * size)
            self.program.kernels.append(add_index_kernel(
                self.fresh(f"{kernel_name}_index"), size, a.symbol, b.symbol, pairs, lanes))
            self.program.kernels.append(gather_kernel(kernel_name, table, y.symbol, pairs, size))
        elif isinstance(node, QMaxPool):
            x = self.stored(node.x, layout)
            if node in self.pool_copies:
                copy = self.pool_copies[node]
                self.layouts[copy] = layout
                target = self.placement(copy, layout)
                self.storage(target, copy)
                self.gather(f"{kernel_name}_input", x, target)
                x = target
            y = self.placement(node.y, layout)
            self.storage(y, node.y)
            self.program.kernels.append(max_pool_kernel(
                kernel_name, node.shape, x.geometry, y.geometry, x.symbol, y.symbol))
        elif isinstance(node, QRelayout):
            y = self.placement(node.y, layout)
            self.storage(y, node.y)
            self.gather(kernel_name, self.placement(node.x, node.source), y)
        else:
            x = self.stored(node.x, self.layouts[node.x])
            y = self.placement(node.y, layout)
            self.storage(y, node.y)
            # NCHW element e of x is element e of y
            table = self.fresh(f"{kernel_name}_table")
            self.program.data(table, gather_table(
                _nchw_order(x.geometry, node.x), _nchw_order(y.geometry, node.y)))
            self.program.kernels.append(gather_kernel(
                kernel_name, x.symbol, y.symbol, table, int(np.prod(node.x.image))))


def _pointwise(node: QConv) -> bool:
    s = node.shape
    return s.kernel == (1, 1) and s.stride == (1, 1) and s.pads == (0, 0) and not s.depthwise


def _tensors(node: QNode) -> tuple[QTensor, ...]:
    """The activations a node reads and writes."""
    if isinstance(node, QAdd):
        return node.a, node.b, node.y
    return node.x, node.y


def _node_name(label: str) -> str:
    """The ONNX node name inside a `node 'name' (Op)` label."""
    parts = label.split("'")
    return parts[1] if len(parts) > 2 else "op"


def _nchw_order(geometry: ImageGeometry, tensor: QTensor) -> np.ndarray:
    """Byte offsets of the tensor's elements in NCHW (row-major ONNX) order."""
    offsets = geometry.byte_offsets()  # (C, H, W)
    if len(tensor.shape) == 4:
        return offsets.ravel()
    # a matrix [.., M, K] is stored as channels K over M pixels: row-major is (M, K)
    return offsets[:, 0, :].T.ravel()


def lower_graph(graph: QuantGraph, layout: str = "auto") -> tuple[Program, Lowering]:
    lowering = Lowering(graph, layout)
    return lowering.emit(), lowering


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise DiagnosticException(f"no function @{name} to lower")


def _check_layout(layout: str) -> None:
    if layout not in LAYOUT_CHOICES:
        raise DiagnosticException(
            f"onnx-to-hvx: layout must be one of {', '.join(LAYOUT_CHOICES)}, not '{layout}'"
        )


@dataclass(frozen=True)
class HvxPlanPass(ModulePass):
    """`hvx-plan`: attach each quantized operator's execution plans as `hvx.plans`."""

    name = "hvx-plan"
    function: str = "main_graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graph = read_quant_graph(find_function(op, self.function))
        lowering = Lowering(graph, "auto")
        lowering.compute_halos()
        lowering.compute_flat()
        lowering.compute_fills()
        for node in graph.nodes:
            if isinstance(node, QConv):
                plans = lowering.conv_plans(node)
                node.op.attributes["hvx.plans"] = ArrayAttr(
                    [PlanAttr(p.layout, p.instruction, p.cost.packets, p.cost.cycles) for p in plans]
                )


@dataclass(frozen=True)
class OnnxToHvxPass(ModulePass):
    """`onnx-to-hvx{layout=auto|col1|col2|col4}`: the quantized model as a Hexagon program."""

    name = "onnx-to-hvx"
    layout: str = "auto"
    function: str = "main_graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check_layout(self.layout)
        graph = read_quant_graph(find_function(op, self.function))
        program, lowering = lower_graph(graph, self.layout)
        module = program.module()
        io = []
        for role, entries in (("input", graph.inputs), ("output", graph.outputs)):
            for name, tensor, host in entries:
                place = lowering.placement(tensor, lowering.layouts[tensor])
                io.append(io_attribute(role, name, tensor, place, host))
        for existing in list(op.body.block.ops):
            existing.detach()
            existing.erase(safe_erase=False)
        for new in list(module.body.block.ops):
            new.detach()
            op.body.block.add_op(new)
        op.attributes["hvx.io"] = ArrayAttr(io)


def io_attribute(role: str, name: str, tensor: QTensor, place: Placement, host: bool) -> DictionaryAttr:
    geo = place.geometry
    return DictionaryAttr({
        "role": StringAttr(role),
        "name": StringAttr(name),
        "buffer": StringAttr(place.symbol),
        "layout": StringAttr(geo.layout.value),
        "shape": ArrayAttr([IntAttr(d) for d in tensor.shape]),
        "image": ArrayAttr([IntAttr(geo.channels), IntAttr(geo.height), IntAttr(geo.width)]),
        "halo": ArrayAttr([IntAttr(geo.halo_lines), IntAttr(geo.halo_panels)]),
        "scale": FloatAttr(float(tensor.scale), f64),
        "zero_point": IntAttr(tensor.zero_point),
        "signed": IntAttr(int(tensor.signed)),
        "host_conversion": IntAttr(int(host)),
    })
