"""
The state of one `onnx-to-texture` run over a graph function: which pixel storage
holds each tensor, the kernels made so far, and the host ops (packs, allocs,
launches) that replace the graph. Op lowerings (`rules.py`) talk to it through
`LoweringContext` and `KernelContext`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from mobile_opt.dialects import ocl, onnx, texture
from mobile_opt.dialects.onnx.base import constant_array, is_constant_expression, is_host_packed
from mobile_opt.dialects.stream.attributes import SPLIT
from mobile_opt.dialects.texture import Layout, image_size
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.dialects.texture.value_layouts import recorded_layout
from mobile_opt.models.roofline import FLOPS_ATTR, kernel_flops

from .elementwise import apply_elementwise, is_fusable_elementwise
from .kernel_builder import KernelBuilder, Val
from .nodes import EXACT_INTEGER_LIMIT, LoweringError, is_integer, node_label, shape
from .views import OutputPixel, TensorView, output_pixel, zero_padding_lanes


@dataclass
class Stored:
    """A tensor in pixel storage: the host-side storage value and its layout."""

    storage: SSAValue
    layout: Layout
    shape: tuple[int, ...]


class View(Protocol):
    """A value made a view (`texture.view`): read through its sources, no storage."""

    def open(self, k: KernelContext, layout: Layout | None, hint: str) -> TensorView:
        """The view as kernel `k` reads it, in `layout` if given."""
        ...


@dataclass
class LoweringContext:
    module: ModuleOp
    graph: func.FuncOp
    max_image: tuple[int, int]
    element_type: type = f32
    fuse: bool = True
    buffers: bool = False
    """Every tensor in a pixel buffer, none in an image (a device whose images are slower)."""
    blocked: bool = True
    """Large products and convs in images take the blocked kernels (`blocked.py`)."""
    winograd: bool = False
    """3x3 stride-1 convs in buffers take Winograd F(2x2, 3x3) (`winograd.py`): off by default,
    as whole models on PoCL ran no faster with it and the small ones slower."""
    remarks: list[str] = field(default_factory=list)
    stored: dict[SSAValue, Stored] = field(default_factory=dict)
    packed: dict[tuple[SSAValue, Layout], Stored] = field(default_factory=dict)
    done: set[Operation] = field(default_factory=set)
    views: dict[SSAValue, View] = field(default_factory=dict)
    """Values that have no storage: their readers read a source through an index map."""
    kernel_count: int = 0
    _host: Builder | None = None
    _anchor: Operation | None = None

    # host side --------------------------------------------------------------------
    def host(self) -> Builder:
        assert self._host is not None
        return self._host

    def set_insertion_before(self, op: Operation) -> None:
        self._host = Builder(InsertPoint.before(op))
        self._anchor = op

    def _hoist(self, value: SSAValue) -> None:
        """Move the host constant ops that make `value` above the op being lowered."""
        owner = value.owner
        block = self.graph.body.block
        if not isinstance(owner, Operation) or owner.parent_block() is not block:
            return
        anchor = self._anchor
        if block.get_operation_index(owner) < block.get_operation_index(anchor):
            return
        for operand in owner.operands:
            self._hoist(operand)
        owner.detach()
        block.insert_op_before(owner, anchor)

    def storage_type(self, layout: Layout, shape: Sequence[int], label: str,
                     integer: bool = False) -> texture.PixelStorageType:
        """Storage for a tensor; an integer tensor's is f32 whatever `element_type` says."""
        width, height = image_size(layout, tuple(shape))
        max_w, max_h = self.max_image
        element = f32 if integer else self.element_type
        if self.buffers:
            return texture.PixelBufferType(width, height, element)
        if width <= max_w and height <= max_h:
            return texture.Image2DType(width, height, element)
        self.remarks.append(
            f"{label}: a {list(shape)} tensor takes a {width}x{height} image, over the "
            f"device limit {max_w}x{max_h}; it is stored in a buffer instead"
        )
        return texture.PixelBufferType(width, height, element)

    def alloc(self, value: SSAValue, layout: Layout, label: str) -> Stored:
        dims = shape(value)
        storage_type = self.storage_type(layout, dims, label, is_integer(value))
        op = self.host().insert(texture.AllocOp(layout, dims, storage_type))
        if isinstance(storage_type, texture.PixelBufferType) and not self.buffers:
            op.remark = StringAttr(self.remarks[-1])  # over the image limits
        if value.name_hint:
            op.result.name_hint = value.name_hint
        stored = Stored(op.result, layout, dims)
        self.stored[value] = stored
        return stored

    def is_host_constant(self, value: SSAValue) -> bool:
        """
        A constant, or an op on constants only (e.g. a ConstantOfShape too large
        for onnx-fold-constants): the executor computes it on the host.
        """
        return is_constant_expression(value)

    def layout_for(self, value: SSAValue) -> Layout:
        """The layout recorded for `value` (`select-layouts`); the lowering chooses none."""
        layout = recorded_layout(value)
        if layout is None:
            owner = value.owner
            what = (node_label(owner) if isinstance(owner, Operation)
                    else f"graph input '{value.name_hint or value}'")
            raise LoweringError(f"{what}: no texture layout is recorded for it; run "
                                "select-layouts{target=gpu} before onnx-to-texture")
        return layout

    def pack(self, value: SSAValue, layout: Layout, label: str) -> Stored:
        """Storage holding a graph input or host constant in `layout`."""
        key = (value, layout)
        if key in self.packed:
            return self.packed[key]
        dims = shape(value)
        source = value
        t = value.type
        assert isinstance(t, TensorType)
        if t.element_type != f32 and not is_integer(value):
            raise LoweringError(f"{label}: only float32, integer and boolean tensors are "
                                f"supported on the GPU, got {t}")
        if is_integer(value) and isinstance(value.owner, Operation):
            # graph inputs are checked when the executor packs them
            array = constant_array(value)
            if array is not None and array.size and np.abs(array).max() > EXACT_INTEGER_LIMIT:
                raise LoweringError(f"{label}: integer constant beyond ±2^24 is not exact in a "
                                    "float texel")
        storage_type = self.storage_type(layout, dims, label, is_integer(value))
        op = texture.PackOp(source, layout, storage_type)
        if isinstance(value.owner, Operation):
            # constants an epilogue reads may come after the op that runs it
            self._hoist(value)
            Builder(InsertPoint.after(value.owner)).insert(op)
        else:
            self.graph.body.block.insert_op_before(op, self.graph.body.block.first_op)
        stored = Stored(op.result, layout, dims)
        self.packed[key] = stored
        return stored

    def tensor(self, value: SSAValue, label: str, layout: Layout | None = None) -> Stored:
        """Storage of an operand: computed already, or packed now (inputs, constants)."""
        if value in self.stored and (layout is None or self.stored[value].layout == layout):
            return self.stored[value]
        if value in self.views:
            raise LoweringError(f"{label}: its operand '{value.name_hint or value}' is a view "
                                "(texture.view), which has no storage to read here")
        if value in self.stored:
            raise LoweringError(f"{label}: operand in layout {self.stored[value].layout.value}, "
                                f"{layout.value} needed")
        if not is_host_packed(value):
            raise LoweringError(f"{label}: operand {value} was not lowered")
        return self.pack(value, layout or self.layout_for(value), label)

    def alias(self, result: SSAValue, stored: Stored) -> None:
        """`result` is `stored` seen with the result's shape (a free reshape)."""
        self.stored[result] = Stored(stored.storage, stored.layout, shape(result))

    def launch(self, kernel: ocl.KernelOp, args: Sequence[SSAValue], global_size: Sequence[int],
               local_size: Sequence[int] | None = None, flops: int | None = None) -> None:
        """Launch `kernel`; `flops`, the work of the ONNX ops it computes, goes on the
        launch for the roofline report (`models/roofline.py`)."""
        self.module.body.block.insert_op_before(kernel, self.graph)
        launch = ocl.LaunchOp(kernel.sym_name.data, args, global_size, local_size)
        if flops is not None:
            launch.attributes[FLOPS_ATTR] = IntegerAttr(flops, 64)
        self.host().insert(launch)

    def kernel_name(self, base: str) -> str:
        from xdsl.traits import SymbolTable

        while True:
            self.kernel_count += 1
            name = f"{base}_{self.kernel_count - 1}"
            if SymbolTable.lookup_symbol(self.module, name) is None:
                return name

    # fusion -------------------------------------------------------------------------
    def epilogue(self, op: Operation, order: dict[Operation, int]) -> list[Operation]:
        """
        Elementwise ops that follow `op` alone and can run in its kernel (`fused_user`),
        as long as each keeps the layout recorded for the value before it: a recorded
        layout change ends the kernel.
        """
        chain: list[Operation] = []
        if SPLIT in op.attributes and not is_fusable_elementwise(op):
            return chain  # the first part of a kernel `flashmem-fuse` split: the rest is another
        value = op.results[0]
        while self.fuse and (user := fused_user(value, op, order)) is not None:
            if self.layout_for(user.results[0]) is not self.layout_for(value):
                break
            chain.append(user)
            value = user.results[0]
        return chain


def fused_user(value: SSAValue, head: Operation, order: dict[Operation, int]) -> Operation | None:
    """
    The op that can finish the kernel computing `value`, which `head` starts: the value's
    only user, elementwise, of the value's shape, whose other operands are host-packed or
    computed before `head` (by `order`); None if there is none.
    """
    if not value.has_one_use():
        return None
    user = next(iter(value.uses)).operation
    if not is_fusable_elementwise(user) or shape(user.results[0]) != shape(value):
        return None
    others = [v for v in user.operands if v is not value]
    if not all(is_host_packed(v) or (v.owner in order and order[v.owner] < order[head])
               for v in others):
        return None
    return user


UNLIMITED_IMAGE = (sys.maxsize, sys.maxsize)
"""An image limit that no tensor reaches: what a kernel would be without the device's."""


class KernelContext:
    """
    One kernel being built for `op`: inputs become kernel arguments on first use;
    `store` finishes the output pixel (epilogue, padding lanes) and writes it.
    """

    def __init__(self, ctx: LoweringContext, op: Operation, base: str, epilogue: list[Operation],
                 result: SSAValue | None = None):
        self.ctx = ctx
        self.op = op
        self.label = node_label(op)
        self.epilogue = epilogue
        self.result = result if result is not None else op.results[0]
        final = epilogue[-1].results[0] if epilogue else self.result
        layout = ctx.layout_for(final)
        self.out_stored = ctx.alloc(final, layout, self.label)
        if epilogue:
            ctx.stored[self.result] = self.out_stored
        self.kb = KernelBuilder(ctx.kernel_name(base), [])
        self.kb.kernel.attributes["onnx.node"] = ocl_node_attr(op, epilogue)
        self._args: dict[SSAValue, Val] = {}
        self.out = self._view(self.out_stored, "out")
        x, y = self.kb.global_id(0), self.kb.global_id(1)
        self.global_size = image_size(layout, self.out_stored.shape)
        self.pixel: OutputPixel = output_pixel(self.out, x, y)
        self.config = TileConfig.of(op)
        """The configuration `texture-tile` chose for the node, if it chose one."""
        self.flops: int | None = None
        """The kernel's FLOPs where it computes only part of its op (else the op's)."""

    def recorded_plan_over_limit(self, fits_unlimited: bool) -> None:
        """Refuse a recorded blocked plan whose product's images are over the image limit
        (`fits_unlimited`: the product would be blocked without it): realised as a
        one-pixel kernel instead, it would run under a label that is not what ran."""
        if fits_unlimited and self.config is not None and self.config.plan is not None:
            width, height = self.ctx.max_image
            raise LoweringError(f"{self.label}: the recorded {self.config.describe()}: the "
                                f"blocked product's images are over the limit {width}x{height}")

    def _arg(self, storage: SSAValue, hint: str) -> Val:
        if storage not in self._args:
            self._args[storage] = self.kb.add_arg(hint, storage.type)
        return self._args[storage]

    def _view(self, stored: Stored, hint: str) -> TensorView:
        return TensorView(self.kb, self._arg(stored.storage, hint), stored.layout, stored.shape)

    def input(self, value: SSAValue, layout: Layout | None = None, hint: str = "in") -> TensorView:
        """An operand as this kernel reads it; a view reads its source through its map."""
        view = self.ctx.views.get(value)
        if view is not None:
            return view.open(self, layout, hint)
        return self._view(self.ctx.tensor(value, self.label, layout), hint)

    def weight(self, value: SSAValue, layout: Layout, hint: str = "weight") -> TensorView:
        if not self.ctx.is_host_constant(value):
            raise LoweringError(f"{self.label}: {hint} must be a constant")
        return self._view(self.ctx.pack(value, layout, self.label), hint)

    def store(self, value: Val) -> None:
        """Apply the fused epilogue, zero the padding lanes and write the output pixel."""
        kb = self.kb
        for user in self.epilogue:
            operands = []
            for v in user.operands:
                if v is self.result or v in (u.results[0] for u in self.epilogue):
                    operands.append(value)
                elif isinstance(user, onnx.ClipOp):
                    operands.append(None)  # constant bounds, folded into the formula
                elif isinstance(v.type, TensorType):
                    view = self.input(v, hint="operand")
                    operands.append(view.read_broadcast_block(
                        self.pixel.block, self.out.shape, self.out.packed_axis))
                else:
                    operands.append(None)
            value = apply_elementwise(kb, user, operands)
        value = zero_padding_lanes(self.out, self.pixel.block, value)
        kb.write(self.out.storage, self.pixel.x, self.pixel.y, value)

    def store_at(self, pixel: OutputPixel, value: Callable[[], Val],
                 guards: Sequence[Val] = ()) -> None:
        """Store `value()` (made once `pixel` is current: an epilogue reads there) at
        `pixel`, only where every guard holds (a tile's columns or blocks past the end)."""
        def store() -> list[Val]:
            self.pixel = pixel
            self.store(value())
            return []

        if guards:
            self.kb.if_(self.kb.all(list(guards)), store)
        else:
            store()

    def finish(self) -> None:
        kernel = self.kb.finish()
        args = list(self._args)
        group = self.config.group if self.config else None
        if group is not None and any(g % n for g, n in zip(self.global_size, group)):
            raise LoweringError(f"{self.label}: work group {list(group)} does not tile the "
                                f"range {list(self.global_size)}")
        flops = self.flops if self.flops is not None else kernel_flops(self.op, self.epilogue)
        self.ctx.launch(kernel, args, self.global_size, group, flops)
        for user in self.epilogue:
            self.ctx.done.add(user)


def ocl_node_attr(op: Operation, epilogue: list[Operation]):
    from xdsl.dialects.builtin import StringAttr

    names = [node_label(o) for o in (op, *epilogue)]
    return StringAttr(" + ".join(names))

