"""
Run a compiled DSP module under QEMU: print it as assembly, assemble, link and run it
(`harness.py`), and read back the buffers `_start` writes. The module comes allocated
(`hvx-regalloc`) and, for a `vliw-pack` packing, packed: the pipeline does that
(`pipelines.dsp_pipeline`, or `pipelines.dsp_back_end` for hand-built kernels).

A lowered model (`onnx-to-hvx`, with its `hvx.io`) runs on model inputs: they are
packed into the input buffers' geometry and the outputs unpacked.

The conversions at the program's edges are the host's, with ONNX semantics in
float32: `QuantizeLinear` of a float model input (x / scale, rounded half to even,
plus the zero point, saturated) and `DequantizeLinear` of an output. An int8 tensor
travels as uint8 (value + 128).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.hexagon import harness
from mobile_opt.backends.hexagon.printer import PRINTER_PACKINGS, HexagonAsmPrinter
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import ImageGeometry, SimdLayout


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


def assembly(module: ModuleOp, packing: str = "greedy") -> str:
    """
    The module as assembly, its loose instructions formed into packets by the printer
    (`greedy` or `single`). Registers must be allocated: `hexagon-asm` says so otherwise.
    """
    if packing not in PRINTER_PACKINGS:
        raise DiagnosticException(
            f"hexagon-asm: packing must be {' or '.join(PRINTER_PACKINGS)}, not {packing} "
            "(other packings are vliw-pack's: the pipeline runs it)"
        )
    text = StringIO()
    HexagonAsmPrinter(text, single=packing == "single").module(module)
    return text.getvalue()


def _execute(asm: str, folder: Path, counting: bool, c_source: str | None = None):
    """Build in `folder` and run: what the program wrote (and its packet counts)."""
    executable = harness.build(asm, folder, c_source)
    if counting:
        execution = harness.run_counting(executable)
        return execution.output, execution
    return harness.run(executable), None


def _split(raw: bytes, sizes: Sequence[int]) -> list[np.ndarray]:
    """The program's output as the bytes of each output buffer, in order."""
    parts, offset = [], 0
    for size in sizes:
        parts.append(np.frombuffer(raw[offset : offset + size], np.uint8))
        offset += size
    if offset != len(raw):
        raise harness.ToolchainError(f"the program wrote {len(raw)} bytes, expected {offset}")
    return parts


def run_program(
    module: ModuleOp,
    outputs: Sequence[tuple[str, int]],
    counting: bool = False,
    packing: str = "greedy",
    keep: Path | None = None,
    c_source: str | None = None,
) -> tuple[dict[str, np.ndarray], harness.Execution | None]:
    """
    Run a compiled program whose `_start` writes the buffers `outputs` (name, bytes) in
    order: their bytes by name (and packet counts if `counting`). `c_source` holds
    kernels the module only calls, compiled by clang; `keep` gets the sources.
    """
    asm = assembly(module, packing)
    with harness.scratch_folder() as folder:
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / "program.s").write_text(asm)
            if c_source is not None:
                (keep / "kernels.c").write_text(c_source)
                (keep / "kernels.s").write_text(harness.compile_c_to_assembly(c_source))
        raw, execution = _execute(asm, Path(folder), counting, c_source)
    parts = _split(raw, [size for _, size in outputs])
    return {name: part for (name, _), part in zip(outputs, parts)}, execution


def run_module(
    module: ModuleOp,
    inputs: dict[str, np.ndarray],
    counting: bool = False,
    packing: str = "greedy",
    keep: Path | None = None,
) -> tuple[dict[str, np.ndarray], harness.Execution | None]:
    """
    Run a compiled model's program; outputs by graph output name (and packet counts if
    `counting`). `packing` is the printer's, for instructions `vliw-pack` left loose.
    """
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
        raw_out, execution = _execute(asm, folder, counting)
    written = [port for port in all_ports if port.role == "output"]
    parts = _split(raw_out, [port.geometry.size for port in written])
    outputs = {
        port.name: port.from_internal(port.geometry.unpack(part))
        for port, part in zip(written, parts)
    }
    return outputs, execution
