"""
`onnx-to-hvx`: the lowering of a quantized model into one Hexagon program, realising
the choices `select-layouts{target=dsp}` recorded: each product runs in its recorded
implementation, every other operator writes its result in its recorded layout, each
graph input arrives in its argument's, and each `hvx.relayout` becomes a gather
kernel. It chooses no layout; an operator without a recorded choice, or one that
reads a tensor in another layout than it was written in, is an error naming it.

The module is replaced by the program: one buffer per tensor (`hvx.buffer`, the model
inputs `.incbin`'d, outputs written by `_start`), one `hvx.func` kernel per operator
and relayout, and `_start`. Registers stay virtual (`hvx-regalloc` comes next).
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

from mobile_opt.dialects.hvx import ImplementationAttr, LayoutAttr
from mobile_opt.dialects.hvx.attributes import IMPLEMENTATION, LAYOUT
from mobile_opt.dialects.hvx.layouts import ImageGeometry, SimdLayout
from mobile_opt.dialects.onnx.graph import graph_io_names
from mobile_opt.transforms.hvx_regalloc import NODE_ATTRIBUTE
from mobile_opt.transforms.onnx_to_hvx.conv import KernelInfeasible
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
from mobile_opt.transforms.onnx_to_hvx.geometry import GraphGeometry
from mobile_opt.transforms.onnx_to_hvx.pool import max_pool_kernel
from mobile_opt.transforms.onnx_to_hvx.program import Program
from mobile_opt.transforms.onnx_to_hvx.quant_graph import (
    QAdd,
    QConv,
    QMaxPool,
    QNode,
    QRelayout,
    QReshape,
    QTensor,
    QuantGraphError,
    find_function,
    read_quant_graph,
)


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
class Lowering(GraphGeometry):
    program: Program = field(default_factory=Program)
    layouts: dict[QTensor, SimdLayout] = field(default_factory=dict)
    """The layout each tensor is written in, as recorded."""
    placements: dict[QTensor, Placement] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    zero_filled: set[QTensor] = field(default_factory=set)
    """Tensors whose halo and padding lanes hold 0, not their zero point (max pool inputs)."""
    pool_copies: dict[QMaxPool, QTensor] = field(default_factory=dict)
    """Max pools that read a zero-filled copy of their input."""

    def fresh(self, base: str) -> str:
        name, n = _symbol(base), 1
        while name in self.names:
            name, n = f"{_symbol(base)}_{n}", n + 1
        self.names.add(name)
        return name

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

    def placement(self, tensor: QTensor) -> Placement:
        """The tensor's buffer, in the layout it is written in."""
        if tensor not in self.placements:
            self.placements[tensor] = Placement(
                self.fresh(tensor.name), self.geometry(tensor, self.layouts[tensor]))
        return self.placements[tensor]

    # ------------------------------------------------------------------ recorded choices

    def read_layouts(self, function: func.FuncOp) -> None:
        """
        The layout each tensor is written in, as recorded: a graph input's on its
        argument; a product's result in its implementation's, a relayout's in its target,
        any other result in its op's `hvx.layout`, except that the reshape into rows in
        front of a pool's product writes in the product's layout.
        """
        names = graph_io_names(function)[0]
        for name, tensor, _ in self.graph.inputs:
            attrs = function.arg_attrs.data[names.index(name)].data if function.arg_attrs else {}
            layout = attrs.get(LAYOUT)
            if not isinstance(layout, LayoutAttr):
                raise QuantGraphError(f"graph input '{name}': {_unrecorded('layout')}")
            self.layouts[tensor] = layout.data
        layouts: dict[QNode, SimdLayout] = {}
        nodes = self.graph.nodes
        for node in nodes:
            if isinstance(node, QConv):
                layouts[node] = implementation(node).layout.data
            elif isinstance(node, QRelayout):
                layouts[node] = node.target
            else:
                layouts[node] = _recorded(node, LAYOUT, LayoutAttr).data
        for reshape, product in zip(nodes, nodes[1:]):
            if isinstance(reshape, QReshape) and isinstance(product, QConv) and \
                    product.op is reshape.op:
                layouts[reshape] = layouts[product]
        for node in nodes:
            self.layouts[node.y] = layouts[node]

    # ------------------------------------------------------------------ emission

    def stored(self, tensor: QTensor, layout: SimdLayout, reader: QNode) -> Placement:
        """Where `reader` reads `tensor` in `layout`: where it was written in it."""
        if self.layouts[tensor] != layout:
            raise QuantGraphError(
                f"{reader.label}: reads {tensor.name} in {layout}, but it is written in "
                f"{self.layouts[tensor]} and no hvx.relayout moves it (run select-layouts)")
        return self.placement(tensor)

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

    def emit(self, function: func.FuncOp) -> Program:
        self.compute_fills()
        self.read_layouts(function)
        for name, tensor, _ in self.graph.inputs:
            place = self.placement(tensor)
            self.program.input(place.symbol, place.geometry.size)
        index = 0  # operators are numbered; relayouts are named after what they move
        for node in self.graph.nodes:
            first_kernel = len(self.program.kernels)
            if isinstance(node, QRelayout):
                self.emit_relayout(node)
            else:
                kernel_name = self.fresh(f"k{index}_{_node_name(node.label)}")
                self.emit_node(node, self.layouts[node.y], kernel_name)
                index += 1
            for kernel in self.program.kernels[first_kernel:]:
                kernel.attributes[NODE_ATTRIBUTE] = StringAttr(node.label)
        for name, tensor, _ in self.graph.outputs:
            place = self.placement(tensor)
            self.program.output(place.symbol, place.geometry.size)
        return self.program

    def emit_relayout(self, node: QRelayout) -> None:
        """A gather kernel from the input's placement to the result's."""
        x = self.stored(node.x, node.source, node)
        y = self.placement(node.y)
        self.storage(y, node.y)
        self.gather(f"relayout_{y.symbol}", x, y)

    def emit_node(self, node: QNode, layout: SimdLayout, kernel_name: str) -> None:
        """The kernels of one operator, which writes its result in `layout`."""
        if isinstance(node, QConv):
            x = self.stored(node.x, layout, node)
            y = self.placement(node.y)
            self.storage(y, node.y)
            weights = self.fresh(f"{kernel_name}_weights")
            generator = self.conv_generator(node, layout, kernel_name,
                                            (x.symbol, y.symbol, weights))
            try:
                kernel = generator.generate()
            except KernelInfeasible as e:
                raise QuantGraphError(f"{node.label}: cannot run in layout {layout} ({e})") \
                    from None
            recorded = implementation(node).instruction.data
            if kernel.instruction != recorded:
                raise QuantGraphError(f"{node.label}: runs {kernel.instruction} in layout "
                                      f"{layout}, not the recorded {recorded}")
            self.program.data(weights, kernel.weights)
            self.program.kernels.append(kernel.func)
        elif isinstance(node, QAdd):
            a, b = self.stored(node.a, layout, node), self.stored(node.b, layout, node)
            y = self.placement(node.y)
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
            x = self.stored(node.x, layout, node)
            if node in self.pool_copies:
                copy = self.pool_copies[node]
                self.layouts[copy] = layout
                target = self.placement(copy)
                self.storage(target, copy)
                self.gather(f"{kernel_name}_input", x, target)
                x = target
            y = self.placement(node.y)
            self.storage(y, node.y)
            self.program.kernels.append(max_pool_kernel(
                kernel_name, node.shape, x.geometry, y.geometry, x.symbol, y.symbol))
        else:  # a reshape reads its input where it is
            x = self.placement(node.x)
            y = self.placement(node.y)
            self.storage(y, node.y)
            # NCHW element e of x is element e of y
            table = self.fresh(f"{kernel_name}_table")
            self.program.data(table, gather_table(
                _nchw_order(x.geometry, node.x), _nchw_order(y.geometry, node.y)))
            self.program.kernels.append(gather_kernel(
                kernel_name, x.symbol, y.symbol, table, int(np.prod(node.x.image))))


def implementation(node: QConv) -> ImplementationAttr:
    """The implementation recorded for a product."""
    return _recorded(node, IMPLEMENTATION, ImplementationAttr)


def _recorded(node: QNode, key: str, kind: type):
    value = node.op.attributes.get(key)
    if not isinstance(value, kind):
        what = "implementation" if key == IMPLEMENTATION else "layout"
        raise QuantGraphError(f"{node.label}: {_unrecorded(what)}")
    return value


def _unrecorded(what: str) -> str:
    return f"no {what} recorded (run select-layouts{{target=dsp}} first)"


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


@dataclass(frozen=True)
class OnnxToHvxPass(ModulePass):
    """`onnx-to-hvx`: the quantized model as a Hexagon program, as `select-layouts` chose."""

    name = "onnx-to-hvx"
    function: str = "main_graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = find_function(op, self.function)
        graph = read_quant_graph(function)
        lowering = Lowering(graph)
        module = lowering.emit(function).module()
        io = []
        for role, entries in (("input", graph.inputs), ("output", graph.outputs)):
            for name, tensor, host in entries:
                place = lowering.placement(tensor)
                io.append(io_attribute(role, name, tensor, place, host))
        for existing in list(op.body.block.ops):
            existing.detach()
            existing.erase(safe_erase=False)
        for new in list(module.body.block.ops):
            new.detach()
            op.body.block.add_op(new)
        op.attributes["hvx.io"] = ArrayAttr(io)


def io_attribute(
    role: str, name: str, tensor: QTensor, place: Placement, host: bool
) -> DictionaryAttr:
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
