"""
The texture layout of each value of an `onnx` graph, recorded in the IR: `select-layouts`
writes it, `onnx-to-texture` stores each value it computes in it (and packs a graph
input or constant in it for a consumer that asks for no particular layout), and a solver
can be swapped for another because nothing else decides. A layout change between a
producer and a consumer is a `texture.relayout` (a copy kernel). A consumer that wants
its own packing of a graph input or constant (a conv's weight in oihw4o, a product's B
in its access pattern) still gets one: packing is the host's, not a kernel's.
Where the records live:

- an op's results: the discardable attribute `texture.layouts`, one layout per result,
      %y = onnx.Relu %x {texture.layouts = [#texture.layout<nc4hw4>]} : ...
- a graph input: the argument attribute `texture.layout` of its `func.func`;
- a `texture.relayout`'s result: the op's own `layout`;
- a data-movement op (Reshape, Transpose, Split, ...) the selection made a *view*: the unit
  attribute `texture.view`; it gets no kernel and no storage, its readers read its source
  through its index map.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, UnitAttr
from xdsl.ir import Attribute, BlockArgument, OpResult, Operation, SSAValue

from .layouts import Layout
from .ops import LayoutAttr, RelayoutOp

RESULT_LAYOUTS = "texture.layouts"
"""An op's attribute: the layout of each of its results."""
ARGUMENT_LAYOUT = "texture.layout"
"""A graph argument's attribute: its layout."""
VIEW = "texture.view"
"""A data-movement op's attribute: it is a view, folded into its readers."""


def _function_of(argument: BlockArgument) -> func.FuncOp | None:
    op = argument.owner.parent_op()
    return op if isinstance(op, func.FuncOp) else None


def recorded_layout(value: SSAValue) -> Layout | None:
    """The layout recorded for `value`, if one is."""
    if isinstance(value, OpResult):
        if isinstance(value.op, RelayoutOp):
            return value.op.layout.data
        layouts = value.op.attributes.get(RESULT_LAYOUTS)
        if isinstance(layouts, ArrayAttr) and value.index < len(layouts.data):
            entry = layouts.data[value.index]
            return entry.data if isinstance(entry, LayoutAttr) else None
        return None
    if isinstance(value, BlockArgument) and (function := _function_of(value)) is not None:
        attrs = function.arg_attrs
        if attrs is not None and value.index < len(attrs.data):
            entry = attrs.data[value.index].data.get(ARGUMENT_LAYOUT)
            return entry.data if isinstance(entry, LayoutAttr) else None
    return None


def record_layout(value: SSAValue, layout: Layout) -> None:
    """Record `layout` for `value`: an op's result or an argument of a `func.func`."""
    if isinstance(value, OpResult):
        op = value.op
        if isinstance(op, RelayoutOp):
            op.layout = LayoutAttr(layout)
            return
        old = op.attributes.get(RESULT_LAYOUTS)
        entries: list[Attribute] = list(old.data) if isinstance(old, ArrayAttr) else []
        if len(entries) != len(op.results):
            entries = [LayoutAttr(layout)] * len(op.results)
        entries[value.index] = LayoutAttr(layout)
        op.attributes[RESULT_LAYOUTS] = ArrayAttr(entries)
        return
    function = _function_of(value) if isinstance(value, BlockArgument) else None
    if function is None:
        raise ValueError(f"{value} is neither an op's result nor a graph argument")
    count = len(function.args)
    attrs = [dict(d.data) for d in function.arg_attrs.data] if function.arg_attrs else []
    attrs += [{} for _ in range(count - len(attrs))]
    attrs[value.index][ARGUMENT_LAYOUT] = LayoutAttr(layout)
    function.arg_attrs = ArrayAttr([DictionaryAttr(d) for d in attrs])


def is_view(op: Operation) -> bool:
    """Whether `op` was made a view."""
    return VIEW in op.attributes


def record_view(op: Operation) -> None:
    """Make `op` a view: its readers read its source through its index map."""
    op.attributes[VIEW] = UnitAttr()


def forget_layouts(function: func.FuncOp) -> None:
    """Drop the records of `function` and of the ops in it (once they are realised)."""
    for op in function.walk():
        op.attributes.pop(RESULT_LAYOUTS, None)
        op.attributes.pop(VIEW, None)
    if function.arg_attrs is not None:
        kept = [{k: v for k, v in d.data.items() if k != ARGUMENT_LAYOUT}
                for d in function.arg_attrs.data]
        function.arg_attrs = ArrayAttr([DictionaryAttr(d) for d in kept]) if any(kept) else None
