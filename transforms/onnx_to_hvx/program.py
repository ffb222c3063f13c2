"""
A whole Hexagon program around the kernels, as IR: buffers, the entry `_start` and the
module. Allocating, packing and running it are the pipeline's and the backend's
(`pipelines.dsp_back_end`, `backends/hexagon/runner.py`).

`_start` fills each activation buffer with its zero point (halo and padding lanes must
read as the zero point), calls the kernels in order, writes every output buffer to
standard output with the `write` system call and exits. Constant data — weights and
the packed model inputs — are read-only buffers whose bytes the assembly `.incbin`s
from the derived-weight store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp

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
    """
    Kernels and the buffers they use; `module()` is the program: the buffers, `_start`
    (which fills, calls each kernel in order and writes `outputs`), the fills and kernels.
    """

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
