"""
Run a lowered module (after `onnx-to-texture` and `texture-to-ocl`) through
pyopencl: build the printed program once, then walk the host function — pack
inputs and weights into images, allocate storage, launch kernels in order, unpack
the results. Packed weights stay on the device between runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl
from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type, ModuleOp
from xdsl.ir import Operation, SSAValue

from mobile_opt.backends.opencl.printer import opencl_source
from mobile_opt.backends.reference.interpreter import find_function
from mobile_opt.backends.reference.kernels import evaluate
from mobile_opt.dialects import ocl, texture
from mobile_opt.dialects.onnx.base import OnnxOp
from mobile_opt.dialects.onnx.constants import OnnxConstantOp
from mobile_opt.frontend.onnx_import import graph_io_names


class OpenCLRunError(Exception):
    """Building or running the generated program failed; the message says where."""


@dataclass
class KernelTime:
    kernel: str
    node: str
    seconds: float


@dataclass
class RunResult:
    outputs: dict[str, np.ndarray]
    kernel_times: list[KernelTime] = field(default_factory=list)


def _is_half(storage_type: texture.PixelStorageType) -> bool:
    return isinstance(storage_type.element_type, Float16Type)


class CompiledModel:
    """A lowered module built for one OpenCL device."""

    def __init__(self, module: ModuleOp, device: cl.Device, function: str = "main_graph"):
        self.module = module
        self.device = device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        self.graph = find_function(module, function)
        self.source = opencl_source(module)
        self.program = build_program(self.context, device, self.source)
        self.kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, ocl.KernelOp)}
        self._constant_storage: dict[SSAValue, cl.MemoryObject] = {}
        self.input_names, self.output_names = graph_io_names(self.graph)

    # storage --------------------------------------------------------------------------
    def _new_storage(self, storage_type: texture.PixelStorageType, pixels: np.ndarray | None = None):
        width, height = storage_type.size
        half = _is_half(storage_type)
        mf = cl.mem_flags
        if pixels is not None:
            pixels = np.ascontiguousarray(pixels.astype(np.float16 if half else np.float32))
        if isinstance(storage_type, texture.Image2DType):
            fmt = cl.ImageFormat(
                cl.channel_order.RGBA,
                cl.channel_type.HALF_FLOAT if half else cl.channel_type.FLOAT,
            )
            if pixels is None:
                return cl.Image(self.context, mf.READ_WRITE, fmt, shape=(width, height))
            return cl.Image(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR, fmt,
                            shape=(width, height), hostbuf=pixels)
        nbytes = width * height * 4 * (2 if half else 4)
        if pixels is None:
            return cl.Buffer(self.context, mf.READ_WRITE, nbytes)
        return cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=pixels)

    def _download(self, storage, storage_type: texture.PixelStorageType) -> np.ndarray:
        width, height = storage_type.size
        half = _is_half(storage_type)
        pixels = np.empty((height, width, 4), np.float16 if half else np.float32)
        if isinstance(storage_type, texture.Image2DType):
            cl.enqueue_copy(self.queue, pixels, storage, origin=(0, 0), region=(width, height))
        else:
            cl.enqueue_copy(self.queue, pixels, storage)
        return pixels.astype(np.float32)

    # running --------------------------------------------------------------------------
    def run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> RunResult:
        if not isinstance(inputs, Mapping):
            inputs = dict(zip(self.input_names, inputs, strict=True))
        values: dict[SSAValue, object] = {}
        for arg, name in zip(self.graph.body.block.args, self.input_names, strict=True):
            if name not in inputs:
                raise OpenCLRunError(f"no value for input '{name}'")
            values[arg] = np.asarray(inputs[name])
        result = RunResult({})
        events: list[tuple[str, cl.Event]] = []
        for op in self.graph.body.block.ops:
            self._step(op, values, events, result)
        self.queue.finish()
        for name, event in events:
            kernel = self.kernels[name]
            node = kernel.attributes.get("onnx.node")
            result.kernel_times.append(KernelTime(
                name, node.data if node else "", (event.profile.end - event.profile.start) * 1e-9))
        return result

    def _is_constant(self, value: SSAValue) -> bool:
        owner = value.owner
        return isinstance(owner, Operation) and (
            isinstance(owner, OnnxConstantOp)
            or (isinstance(owner, OnnxOp) and all(self._is_constant(v) for v in owner.operands))
        )

    def _step(self, op: Operation, values: dict, events: list, result: RunResult) -> None:
        match op:
            case texture.PackOp():
                if op.source in self._constant_storage:
                    values[op.result] = self._constant_storage[op.source]
                    return
                if op.source not in values:
                    self._host_value(op.source, values)
                pixels = texture.pack(op.layout.data, np.asarray(values[op.source], np.float32))
                storage = self._new_storage(op.result.type, pixels)
                if self._is_constant(op.source):
                    self._constant_storage[op.source] = storage
                values[op.result] = storage
            case texture.AllocOp():
                values[op.result] = self._new_storage(op.result.type)
            case ocl.LaunchOp():
                name = op.kernel.root_reference.data
                kernel = getattr(self.program, name)
                kernel.set_args(*[values[a] for a in op.args])
                local = None if op.local_size is None else tuple(op.local_size.get_values())
                event = cl.enqueue_nd_range_kernel(
                    self.queue, kernel, tuple(op.global_size.get_values()), local)
                events.append((name, event))
            case texture.UnpackOp():
                pixels = self._download(values[op.source], op.source.type)
                shape = tuple(op.result.type.get_shape())
                values[op.result] = texture.unpack(op.layout.data, pixels, shape)
            case func.ReturnOp():
                for name, value in zip(self.output_names, op.operands, strict=True):
                    if value not in values:
                        self._host_value(value, values)
                    result.outputs[name] = values[value]
            case OnnxOp():
                pass  # host-side constants are evaluated when a pack needs them
            case _:
                raise OpenCLRunError(f"the executor cannot run host op {op.name}")

    def _host_value(self, value: SSAValue, values: dict) -> None:
        owner = value.owner
        if not isinstance(owner, OnnxOp):
            raise OpenCLRunError(f"no value for {value}")
        for v in owner.operands:
            if v not in values:
                self._host_value(v, values)
        outs = evaluate(owner, [values[v] for v in owner.operands])
        for r, array in zip(owner.results, outs, strict=True):
            values[r] = array


def build_program(context: cl.Context, device: cl.Device, source: str) -> cl.Program:
    """Build `source`; a failure names the kernel the build log points at."""
    try:
        return cl.Program(context, source).build(devices=[device])
    except cl.RuntimeError as e:
        log = str(e)
        kernel = _failing_kernel(source, log)
        where = f" in kernel {kernel}" if kernel else ""
        first = next((l for l in log.splitlines() if "error" in l), log.splitlines()[0] if log else "")
        raise OpenCLRunError(f"OpenCL build failed{where}: {first.strip()}") from None


def _failing_kernel(source: str, log: str) -> str | None:
    import re

    m = re.search(r":(\d+):\d+: error", log)
    if not m:
        return None
    line = int(m.group(1))
    name = None
    for i, text in enumerate(source.splitlines(), 1):
        if i > line:
            break
        k = re.match(r"__kernel void (\w+)\(", text)
        if k:
            name = k.group(1)
    return name
