"""
The reference interpreter: runs a module of `onnx` ops with xDSL's interpreter,
one numpy kernel per op.

It runs the IR at any stage where the graph is still made of `onnx` ops (as
imported, after the graph passes, with fused ops), so each stage can be checked
against the imported graph or against ONNX Runtime.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    ModuleOp,
    NameLoc,
    TensorType,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable

from mobile_opt.reference.errors import KernelError, ReferenceRunError
from mobile_opt.dialects.limits import RunTotal, check_bytes, check_tensor, element_bytes
from mobile_opt.reference.kernels import KERNELS, evaluate
from mobile_opt.dialects.onnx import ONNX_OPS, OnnxOp
from mobile_opt.dialects.onnx.types import dtype_of
from mobile_opt.dialects.onnx.graph import graph_io_names, printable
from mobile_opt.dialects.weights import WeightStoreError


def describe_location(location: Attribute) -> str | None:
    """A short, human-readable form of an op location: the ONNX node name(s), or file:line:col."""
    match location:
        case NameLoc():
            return printable(location.desc.data)
        case FileLineColLoc():
            where = f"{location.filename.data}:{location.line.data}:{location.column.data}"
            return printable(where)
        case FusedLoc():
            parts = [describe_location(loc) for loc in location.locations]
            named = [p for p in parts if p]
            return " + ".join(named) if named else None
        case CallSiteLoc():
            return describe_location(location.callee)
        case _:
            return None


def describe_op(op: Operation) -> str:
    """The op's name and, where it has one, its source location: `onnx.Conv 'conv1'`."""
    where = describe_location(op.location)
    return f"{op.name} '{where}'" if where else op.name


def run_op(op: OnnxOp, args: Sequence[Any]) -> tuple[Any, ...]:
    """The kernel of `op` on `args`; any failure becomes one line naming the op and its location."""
    try:
        return tuple(evaluate(op, args))
    except KernelError as e:
        if isinstance(e.__cause__, WeightStoreError):
            raise e.__cause__ from None  # the weight file is the news, not the op that read it
        raise ReferenceRunError(f"{describe_op(op)}: {str(e).removeprefix(op.name + ': ')}") from e


def _onnx_impl(op_type: type[OnnxOp]):
    @impl(op_type)
    def run(
        functions: InterpreterFunctions, interpreter: Interpreter, op: OnnxOp, args: tuple[Any, ...]
    ):
        return run_op(op, args)

    return run


OnnxFunctions: type[InterpreterFunctions] = register_impls(
    type(
        "OnnxFunctions",
        (InterpreterFunctions,),
        {
            f"run_{name}": _onnx_impl(op_type)
            for name, op_type in ONNX_OPS.items()
            if op_type in KERNELS
        },
    )
)
"""Interpreter implementations of every `onnx` op that has a reference kernel."""


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    found = SymbolTable.lookup_symbol(module, name)
    if not isinstance(found, func.FuncOp):
        raise ReferenceRunError(f"the module has no function @{name}")
    return found


def check_interpretable(function: func.FuncOp) -> None:
    """Every op is a func terminator/call or an `onnx` op with a kernel."""
    for op in function.walk():
        if op is function or isinstance(op, func.ReturnOp | func.CallOp):
            continue
        if type(op) not in KERNELS:
            raise ReferenceRunError(
                f"{describe_op(op)}: the reference interpreter has no kernel for this op"
            )


def check_sizes(function: func.FuncOp, inputs: Sequence[np.ndarray]) -> None:
    """
    Every static result of `function` and their sum (the interpreter holds them all until
    it returns) against the limits (`dialects/limits.py`), before anything runs.
    """
    held = RunTotal("the reference run")
    for i, value in enumerate(inputs):
        what = f"input #{i}"
        held.add(check_bytes(value.nbytes, what), what)
    for op in function.walk():
        if op is function:
            continue
        for i, result in enumerate(op.results):
            t = result.type
            if isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()):
                what = f"{describe_op(op)}: result #{i}"
                held.add(check_tensor(t.get_shape(), element_bytes(t.element_type), what), what)


def bind_inputs(
    function: func.FuncOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]
) -> list[np.ndarray]:
    """The function's arguments from `inputs` (by ONNX input name, or in order), each checked."""
    names, _ = graph_io_names(function)
    if isinstance(inputs, Mapping):
        unknown = [k for k in inputs if k not in names]
        if unknown:
            raise ReferenceRunError(
                f"unknown input '{printable(unknown[0])}'; the model's inputs are "
                f"{', '.join(map(printable, names)) or 'none'}"
            )
        missing = [n for n in names if n not in inputs]
        if missing:
            raise ReferenceRunError(f"input '{printable(missing[0])}' is not given")
        values = [inputs[n] for n in names]
    else:
        values = list(inputs)
        if len(values) != len(names):
            raise ReferenceRunError(f"expected {len(names)} inputs, got {len(values)}")
    args = []
    for name, value, t in zip(names, values, function.function_type.inputs.data):
        args.append(_checked_input(name, np.asarray(value), t))
    return args


def input_dtype(name: str, t: Attribute) -> np.dtype:
    """The numpy dtype that a value of the function input `name` of type `t` has."""
    if not isinstance(t, TensorType):
        raise ReferenceRunError(f"input '{printable(name)}' has non-tensor type {t}")
    try:
        return dtype_of(t.element_type)
    except KeyError:
        raise ReferenceRunError(
            f"input '{printable(name)}' has element type {t.element_type}, which numpy cannot hold"
        ) from None


def _checked_input(name: str, value: np.ndarray, t: Attribute) -> np.ndarray:
    dtype = input_dtype(name, t)
    assert isinstance(t, TensorType)
    shape = t.get_shape()
    if value.dtype != dtype:
        raise ReferenceRunError(f"input '{printable(name)}' has dtype {value.dtype}, "
                                f"expected {dtype}")
    if len(shape) != value.ndim or any(d >= 0 and d != s for d, s in zip(shape, value.shape)):
        wanted = [d if d >= 0 else "?" for d in shape]
        raise ReferenceRunError(f"input '{printable(name)}' has shape {list(value.shape)}, "
                                f"expected {wanted}")
    return value


def run_reference(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
    function: str = "main_graph",
) -> dict[str, np.ndarray]:
    """
    Run `@function` of `module` on `inputs` (a mapping by ONNX input name, or a
    sequence in argument order) and return its results by ONNX output name.
    Failures raise `ReferenceRunError` with a one-line message.
    """
    funcop = find_function(module, function)
    check_interpretable(funcop)
    args = bind_inputs(funcop, inputs)
    check_sizes(funcop, args)
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(OnnxFunctions())
    results = interpreter.call_op(funcop, tuple(args))
    _, names = graph_io_names(funcop)
    # copies, so callers own outputs that merely view an input or a weight
    return {name: np.array(value) for name, value in zip(names, results, strict=True)}


__all__ = ["OnnxFunctions", "ReferenceRunError", "describe_op", "run_reference"]
