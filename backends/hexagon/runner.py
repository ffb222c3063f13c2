"""
Run a lowered module (`onnx-to-hvx`) on model inputs: pack them into the input
buffers' geometry, assemble and run the program under QEMU, unpack the outputs.

The conversions at the program's edges are the host's, with ONNX semantics in
float32: `QuantizeLinear` of a float model input (x / scale, rounded half to even,
plus the zero point, saturated) and `DequantizeLinear` of an output. An int8 tensor
travels as uint8 (value + 128).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.hexagon import harness
from mobile_opt.backends.hexagon.printer import HexagonAsmPrinter
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import ImageGeometry, SimdLayout
from mobile_opt.dialects.hvx.registers import HexagonRegisterType
from mobile_opt.transforms.hvx_regalloc import allocate_registers


@dataclass(frozen=True)
class Port:
    """A program input or output as `hvx.io` describes it."""

    role: str
    name: str
    buffer: str
    geometry: ImageGeometry
    shape: tuple[int, ...]
    scale: np.float32
    zero_point: int
    signed: bool
    host_conversion: bool

    @staticmethod
    def from_attribute(entry: DictionaryAttr) -> Port:
        d = entry.data
        image = [a.data for a in d["image"].data]
        halo = [a.data for a in d["halo"].data]
        geometry = ImageGeometry(SimdLayout(d["layout"].data), *image, *halo)
        return Port(
            d["role"].data, d["name"].data, d["buffer"].data, geometry,
            tuple(a.data for a in d["shape"].data), np.float32(d["scale"].value.data),
            d["zero_point"].data, bool(d["signed"].data), bool(d["host_conversion"].data),
        )

    @property
    def onnx_zero_point(self) -> int:
        return self.zero_point - (128 if self.signed else 0)

    def to_internal(self, value: np.ndarray) -> np.ndarray:
        """A model input (float if the host quantizes it) as the internal uint8 image."""
        value = np.asarray(value)
        if value.shape != self.shape:
            raise DiagnosticException(
                f"input '{self.name}' has shape {list(value.shape)}, expected {list(self.shape)}"
            )
        qmin, qmax = (-128, 127) if self.signed else (0, 255)
        if self.host_conversion:
            q = np.rint(value.astype(np.float32) / self.scale) + self.onnx_zero_point
            value = np.clip(q, qmin, qmax)
        internal = value.astype(np.int64) + (128 if self.signed else 0)
        return self.image_of(internal.astype(np.uint8))

    def image_of(self, values: np.ndarray) -> np.ndarray:
        c, h, w = self.geometry.channels, self.geometry.height, self.geometry.width
        if len(self.shape) == 4:
            return values.reshape(c, h, w)
        return values.reshape(w, c).T.reshape(c, 1, w)

    def from_internal(self, image: np.ndarray) -> np.ndarray:
        if len(self.shape) == 4:
            values = image.reshape(self.shape).astype(np.int64)
        else:
            values = image[:, 0, :].T.reshape(self.shape).astype(np.int64)
        values -= 128 if self.signed else 0
        if self.host_conversion:
            return ((values - self.onnx_zero_point).astype(np.float32) * self.scale).astype(
                np.float32
            )
        return values.astype(np.int8 if self.signed else np.uint8)


def ports(module: ModuleOp) -> list[Port]:
    io = module.attributes.get("hvx.io")
    if not isinstance(io, ArrayAttr):
        raise DiagnosticException("the module is not a lowered DSP program (no hvx.io)")
    return [Port.from_attribute(entry) for entry in io.data]  # type: ignore[arg-type]


PRINTER_PACKINGS = ("greedy", "single")
"""Packings the printer does itself; the others are `vliw-pack` algorithms."""


def allocate_and_pack(module: ModuleOp, packing: str = "greedy") -> None:
    """Allocate every function not yet allocated; pack with `vliw-pack` if asked to."""
    from xdsl.context import Context

    from mobile_opt.transforms.vliw_pack import VliwPackPass

    for func in module.walk():
        if isinstance(func, ops.FuncOp) and any(
            isinstance(v.type, HexagonRegisterType) and not v.type.is_allocated
            for op in func.walk() for v in op.results
        ):
            allocate_registers(func)
    if packing not in PRINTER_PACKINGS:
        # SDA tries its small w/p grid per block: the cycle model keeps the fastest
        VliwPackPass(algorithm=packing, tune=packing == "sda").apply(Context(), module)


def assembly(module: ModuleOp, packing: str = "greedy") -> str:
    from io import StringIO

    allocate_and_pack(module, packing)
    text = StringIO()
    HexagonAsmPrinter(text, single=packing == "single").module(module)
    return text.getvalue()


def run_module(
    module: ModuleOp,
    inputs: dict[str, np.ndarray],
    counting: bool = False,
    packing: str = "greedy",
    keep: Path | None = None,
) -> tuple[dict[str, np.ndarray], harness.Execution | None]:
    """Run the program; outputs by graph output name (and packet counts if `counting`)."""
    all_ports = ports(module)
    buffers = {b.sym_name.data: b for b in module.walk() if isinstance(b, ops.BufferOp)}
    asm = assembly(module, packing)
    with harness.scratch_folder() as scratch:
        folder = Path(keep) if keep is not None else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for port in all_ports:
            if port.role != "input":
                continue
            if port.name not in inputs:
                raise DiagnosticException(f"no value for model input '{port.name}'")
            packed = port.geometry.pack(port.to_internal(inputs[port.name]), port.zero_point)
            raw = np.zeros(buffers[port.buffer].size.value.data, np.uint8)
            raw[: packed.size] = packed
            (folder / buffers[port.buffer].file.data).write_bytes(raw.tobytes())
        executable = harness.build(asm, folder)
        if counting:
            execution = harness.run_counting(executable)
            raw_out = execution.output
        else:
            execution, raw_out = None, harness.run(executable)
    outputs, offset = {}, 0
    for port in all_ports:
        if port.role != "output":
            continue
        size = port.geometry.size
        image = port.geometry.unpack(np.frombuffer(raw_out[offset : offset + size], np.uint8))
        outputs[port.name] = port.from_internal(image)
        offset += size
    if offset != len(raw_out):
        raise harness.ToolchainError(f"the program wrote {len(raw_out)} bytes, expected {offset}")
    return outputs, execution
