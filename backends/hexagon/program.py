"""
A whole Hexagon program around the kernels: buffers, the entry `_start`, and running it.

`_start` fills each activation buffer with its zero point (halo and padding lanes must
read as the zero point), calls the kernels in order, writes every output buffer to
standard output with the `write` system call and exits. Constant data — weights and
the packed model inputs — are read-only buffers whose bytes the assembly `.incbin`s
from the derived-weight store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from mobile_opt.backends.hexagon import harness
from mobile_opt.backends.hexagon.c_printer import kernels_as_c
from mobile_opt.backends.hexagon.runner import assembly
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import RegType
from mobile_opt.dialects.weights import save_derived_weight
from mobile_opt.transforms.onnx_to_hvx.builder import KernelBuilder

VECTOR = 128
SLACK = 4 * 4 * VECTOR
"""Bytes after each buffer that windows of the last pixels may read (never used)."""

SYS_WRITE, SYS_EXIT = 64, 93


def input_file(buffer: str) -> str:
    """The file an input buffer's bytes come from, relative to where it is assembled."""
    return f"{buffer}.bin"


def _pinned(value: int, register: str) -> ops.TransferImmOp:
    return ops.TransferImmOp(value, RegType.from_name(register))


def fill_kernel(name: str, buffer: str, size: int, byte: int) -> ops.FuncOp:
    """A kernel that sets every byte of `buffer` to `byte`."""
    b = KernelBuilder(name)
    value = b.splat(byte * 0x01010101)
    pointer = b(ops.AddressOp(buffer))
    with b.loop(size // VECTOR, "counted", [pointer]) as loop:
        (pointer,) = loop.args
        store = ops.VmemStorePostIncOp(pointer, value, 1, region=buffer)
        b.add(store)
        loop.next(store.new_base)
    return b.func


@dataclass
class Program:
    kernels: list[ops.FuncOp] = field(default_factory=list)
    buffers: list[ops.BufferOp] = field(default_factory=list)
    fills: list[tuple[str, int, int]] = field(default_factory=list)
    outputs: list[tuple[str, int]] = field(default_factory=list)

    def data(self, name: str, content: np.ndarray) -> None:
        """A read-only buffer holding `content`'s bytes."""
        raw = np.ascontiguousarray(content).view(np.uint8).ravel()
        padded = np.zeros(-(-max(raw.size, 1) // VECTOR) * VECTOR + SLACK, np.uint8)
        padded[: raw.size] = raw
        store, key = save_derived_weight(padded)
        self.buffers.append(ops.BufferOp(name, padded.size, store, key))

    def input(self, name: str, size: int) -> None:
        """A read-only buffer whose bytes are the file `<name>.bin`, given at assembly."""
        self.buffers.append(ops.BufferOp(name, size + SLACK, file=input_file(name)))

    def storage(self, name: str, size: int, fill: int | None = None) -> None:
        """A writable buffer, filled with byte `fill` before the kernels run."""
        size = -(-size // VECTOR) * VECTOR
        self.buffers.append(ops.BufferOp(name, size + SLACK))
        if fill is not None:
            self.fills.append((name, size, fill))

    def output(self, name: str, size: int) -> None:
        self.outputs.append((name, size))

    def entry(self) -> ops.FuncOp:
        b = KernelBuilder("_start")
        fills = [fill_kernel(f"fill_{name}", name, size, byte) for name, size, byte in self.fills]
        for kernel in [*fills, *self.kernels]:
            b.add(ops.CallOp(kernel.sym_name.data))
        for name, size in self.outputs:
            args = [
                b(_pinned(1, "r0")),
                b(ops.AddressOp(name, RegType.from_name("r1"))),
                b(_pinned(size, "r2")),
                b(_pinned(SYS_WRITE, "r6")),
            ]
            b.add(ops.SyscallOp(args, RegType.from_name("r0")))
        exit_args = [b(_pinned(0, "r0")), b(_pinned(SYS_EXIT, "r6"))]
        b.add(ops.SyscallOp(exit_args, RegType.from_name("r0")))
        self._fill_kernels = fills
        return b.func

    def module(self, with_kernels: bool = True) -> ModuleOp:
        entry = self.entry()
        kernels = self.kernels if with_kernels else []
        for kernel in kernels:  # from an earlier run's module: the kernels stay the same objects
            if kernel.parent is not None:
                kernel.detach()
        buffers = [b.clone() for b in self.buffers]
        return ModuleOp([*buffers, entry, *self._fill_kernels, *kernels])

    def run(
        self,
        counting: bool = False,
        packing: str = "greedy",
        keep: Path | None = None,
        kernels_in_c: bool = False,
    ):
        """
        Build and run under QEMU: the output buffers' bytes (and packet counts). The
        kernels are allocated (and packed, `runner.allocate_and_pack`) in place, or,
        `kernels_in_c`, printed as C with intrinsics and compiled by clang instead.
        """
        asm = assembly(self.module(with_kernels=not kernels_in_c), packing)
        c_source = None
        if kernels_in_c:
            c_source = kernels_as_c(self.kernels, [b.sym_name.data for b in self.buffers])
        with harness.scratch_folder() as folder:
            executable = harness.build(asm, Path(folder), c_source)
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                (keep / "program.s").write_text(asm)
                if c_source is not None:
                    (keep / "kernels.c").write_text(c_source)
                    (keep / "kernels.s").write_text(harness.compile_c_to_assembly(c_source))
            if counting:
                execution = harness.run_counting(executable)
                raw = execution.output
            else:
                execution = None
                raw = harness.run(executable)
        outputs, offset = {}, 0
        for name, size in self.outputs:
            outputs[name] = np.frombuffer(raw[offset : offset + size], np.uint8)
            offset += size
        if offset != len(raw):
            raise harness.ToolchainError(
                f"the program wrote {len(raw)} bytes, expected {offset}"
            )
        return outputs, execution
