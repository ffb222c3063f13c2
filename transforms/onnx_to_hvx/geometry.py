"""
How the tensors of a quantized graph are stored, whatever their SIMD layout: the halo
lines and panels the windows of their readers reach into, and which are flat (one
line of H·W pixels). The layout selection builds candidate kernels on these
geometries and the lowering builds the program on them, so both see the same kernels.

A relayout moves a tensor between layouts and keeps its geometry: its input and
result are one storage class, like the operands and result of an Add.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mobile_opt.dialects.hvx.layouts import ImageGeometry, SimdLayout
from mobile_opt.transforms.onnx_to_hvx.conv import ConvKernelGenerator, ConvShape
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
)
from mobile_opt.transforms.onnx_to_hvx.requant import RequantError, make_requantizer


@dataclass
class GraphGeometry:
    graph: QuantGraph
    halo: dict[QTensor, tuple[int, int]] = field(default_factory=dict)
    """(lines, panels) of halo around each tensor's image."""
    flat: set[QTensor] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.compute_halos()
        self.compute_flat()

    def compute_halos(self) -> None:
        for node in self.graph.nodes:
            if isinstance(node, QConv | QMaxPool):
                top, below, left, right = node.shape.input_reach()
                lines = max(top, below)
                panels = 1 if max(left, right) > 0 else 0
                old = self.halo.get(node.x, (0, 0))
                self.halo[node.x] = (max(old[0], lines), max(old[1], panels))
        # the operands and result of an Add run over whole buffers, and a relayout keeps
        # its input's geometry: one geometry for each such group
        changed = True
        while changed:
            changed = False
            for group in filter(None, map(_storage_class, self.graph.nodes)):
                merged = (max(self.halo.get(t, (0, 0))[0] for t in group),
                          max(self.halo.get(t, (0, 0))[1] for t in group))
                for t in group:
                    if self.halo.get(t, (0, 0)) != merged:
                        self.halo[t] = merged
                        changed = True

    def compute_flat(self) -> None:
        """
        Tensors stored as one line of H·W pixels instead of H lines padded to panels:
        those only 1×1 stride-1 convolutions (which then run as matrix products), Adds,
        relayouts and the program's edges touch, consistently along each such chain.
        """
        nodes = self.graph.nodes
        flat = {t: len(t.shape) == 4 and self.halo.get(t, (0, 0)) == (0, 0)
                for n in nodes for t in _tensors(n)}
        for node in nodes:
            if isinstance(node, QConv) and not _pointwise(node):
                flat[node.x] = flat[node.y] = False  # windows read lines, even without halo
            elif isinstance(node, QReshape | QMaxPool):
                flat[node.x] = flat[node.y] = False
        changed = True
        while changed:
            changed = False
            for node in nodes:
                group = (node.x, node.y) if isinstance(node, QConv) else _storage_class(node)
                if isinstance(node, QConv) and not _pointwise(node):
                    group = ()
                if group and not all(flat[t] for t in group) and any(flat[t] for t in group):
                    for t in group:
                        flat[t] = False
                    changed = True
        self.flat = {t for t, f in flat.items() if f}

    def geometry(self, tensor: QTensor, layout: SimdLayout) -> ImageGeometry:
        c, h, w = tensor.image
        if tensor in self.flat:
            return ImageGeometry(layout, c, 1, h * w)
        lines, panels = self.halo.get(tensor, (0, 0))
        return ImageGeometry(layout, c, h, w, lines, panels)

    def conv_shape(self, node: QConv) -> ConvShape:
        """The convolution as the kernel sees it: a flat 1×1 one is a matrix product."""
        if node.x in self.flat and _pointwise(node):
            shape = node.shape
            return ConvShape(shape.channels, 1, shape.height * shape.width, shape.out_channels)
        return node.shape

    def conv_generator(self, node: QConv, layout: SimdLayout, name: str = "kernel",
                       symbols=("x", "y", "w")) -> ConvKernelGenerator:
        """The generator of `node`'s kernel in `layout`, reading and writing buffers `symbols`."""
        try:
            requant = make_requantizer(float(node.scale), node.y.zero_point, *node.clamp)
        except RequantError as e:
            raise QuantGraphError(f"{node.label}: {e}") from None
        return ConvKernelGenerator(
            name, self.conv_shape(node), layout, node.weights, node.folded_bias(), requant,
            self.geometry(node.x, layout), self.geometry(node.y, layout), *symbols,
        )


def _pointwise(node: QConv) -> bool:
    s = node.shape
    return s.kernel == (1, 1) and s.stride == (1, 1) and s.pads == (0, 0) and not s.depthwise


def _tensors(node: QNode) -> tuple[QTensor, ...]:
    """The activations a node reads and writes."""
    if isinstance(node, QAdd):
        return node.a, node.b, node.y
    return node.x, node.y


def _storage_class(node: QNode) -> tuple[QTensor, ...]:
    """Tensors `node` needs stored alike: an Add's operands and result, a relayout's two."""
    if isinstance(node, QAdd):
        return node.a, node.b, node.y
    if isinstance(node, QRelayout):
        return node.x, node.y
    return ()
