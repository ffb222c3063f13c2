"""
`-t hexagon-asm`: allocated `hvx` code as Hexagon assembly for `llvm-mc -arch=hexagon
-mcpu=hexagonv66 -mhvx -mhvx-length=128b`.

`vliw.packet`s print as `{ ... }` packets, a read forwarded inside one with its `.cur`
or `.new` mark. Loose instructions (code `vliw-pack` did not pack) are formed into
packets here (`packing=greedy`, the default, or `packing=single`: one instruction a
packet).
`loop0`/`loop1` loops become hardware loops whose last packet carries `:endloopN`; a
counted loop ends with a compare-and-branch on its counter. A function returns with
`jumpr r31`, except `_start`, which ends in its exit system call. Buffers with weight
data `.incbin` the raw bytes of their `.npy` file (weights never print inline); the
others are zeroed `.bss`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from mobile_opt.dialects.vliw.packer import Packet, run_packets
from mobile_opt.dialects.vliw.packets import current_loads, forwarded_reads, new_operands
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.registers import require_allocated
from mobile_opt.dialects.weights import WeightStoreError, is_derived_weight, load_weight

ENTRY = "_start"

PRINTER_PACKINGS = ("greedy", "single")
"""How the printer forms loose instructions into packets; other packings are `vliw-pack`'s."""

NOT_LOWERED = "no HVX kernels to print: lower the model first, e.g. -p dsp-pipeline"
"""What a Hexagon target says of a module with no `hvx.func` (an ONNX graph, say)."""


def npy_data_offset(path: str) -> int:
    """Where the array bytes of an `.npy` file start; a derived weight is verified first."""
    digest = Path(path).stem
    if is_derived_weight(path, digest):
        try:  # `.incbin` takes the bytes as they are: refuse a file that is not its digest's
            load_weight(path, digest)
        except WeightStoreError as e:
            raise DiagnosticException(f"hexagon-asm: {e}") from None
    try:
        with open(path, "rb") as f:
            major, _ = np.lib.format.read_magic(f)
            read_header = (
                np.lib.format.read_array_header_1_0
                if major == 1
                else np.lib.format.read_array_header_2_0
            )
            read_header(f)
            return f.tell()
    except (OSError, ValueError) as e:
        raise DiagnosticException(f"hexagon-asm: weight data {path}: {e}") from None


@dataclass
class HexagonAsmPrinter:
    stream: IO[str]
    single: bool = False
    labels: Iterator[int] = field(default_factory=lambda: iter(range(1 << 30)))

    def line(self, text: str) -> None:
        self.stream.write(text + "\n")

    def packets(self, packets: list[Packet], endloop: str = "") -> None:
        for i, packet in enumerate(packets):
            reads = forwarded_reads(packet)
            current = current_loads(reads)
            body = "; ".join(
                inst.packet_line(new_operands(reads, inst), inst in current) for inst in packet
            )
            suffix = f":{endloop}" if endloop and i == len(packets) - 1 else ""
            self.line(f"    {{ {body} }}{suffix}")

    def block(self, block: Block, endloop: str = "") -> None:
        """Print a block; with `endloop`, its last packet closes a hardware loop."""
        runs: list[list[Operation] | ops.LoopOp] = [[]]
        for op in block.ops:
            if isinstance(op, ops.LoopOp):
                runs += [op, []]
            elif not isinstance(op, ops.YieldOp):
                runs[-1].append(op)  # type: ignore[union-attr]
        trailing = runs[-1]
        for run in runs:
            if isinstance(run, ops.LoopOp):
                self.loop(run)
                continue
            packets = run_packets(run, one_per_packet=self.single)
            if run is trailing and endloop:
                if not packets:
                    self.line(f"    {{ nop }}:{endloop}")
                else:
                    self.packets(packets, endloop)
            else:
                self.packets(packets)

    def loop(self, loop: ops.LoopOp) -> None:
        label = f".Lloop{next(self.labels)}"
        kind, trip = loop.kind.data, loop.trip.value.data
        if kind in ("loop0", "loop1"):
            self.line(f"    {{ {kind}({label},#{trip}) }}")
            self.line(f"{label}:")
            self.block(loop.body.block, endloop="end" + kind)
        else:
            counter = loop.body.block.last_op.values[0]  # type: ignore[union-attr]
            self.line(f"{label}:")
            self.block(loop.body.block)
            reg = counter.type.asm_name()  # type: ignore[union-attr]
            self.line(f"    {{ p0 = cmp.gt({reg},#0); if (p0.new) jump:t {label} }}")

    def function(self, func: ops.FuncOp) -> None:
        name = func.sym_name.data
        self.line("    .p2align 4")
        if name == ENTRY:
            self.line(f"    .globl {ENTRY}")
        self.line(f"{name}:")
        self.block(func.body.block)
        if name != ENTRY:
            self.line("    { jumpr r31 }")

    def buffer(self, buffer: ops.BufferOp) -> None:
        name, size = buffer.sym_name.data, buffer.size.value.data
        self.line("    .p2align 7")
        self.line(f"    .globl {name}")  # kernels compiled from C refer to it
        self.line(f"{name}:")
        if buffer.file is not None:
            self.line(f'    .incbin "{buffer.file.data}"')
            self.line("    .p2align 7")
            return
        if buffer.store is None:
            self.line(f"    .space {size}")
            return
        path = buffer.store.data
        self.line(f'    .incbin "{path}", {npy_data_offset(path)}, {size}')

    def module(self, module: ModuleOp) -> None:
        funcs = [op for op in module.walk() if isinstance(op, ops.FuncOp)]
        if not funcs:
            raise DiagnosticException(f"hexagon-asm: {NOT_LOWERED}")
        for func in funcs:
            require_allocated(func, "hexagon-asm")
        self.line("    .text")
        for func in funcs:
            self.function(func)
        data = [b for b in module.walk() if isinstance(b, ops.BufferOp) and b.read_only]
        storage = [b for b in module.walk() if isinstance(b, ops.BufferOp) and not b.read_only]
        if data:
            self.line("    .section .rodata")
            for buffer in data:
                self.buffer(buffer)
        if storage:
            self.line("    .bss")
            for buffer in storage:
                self.buffer(buffer)


@dataclass(frozen=True)
class HexagonAsmTarget(Target):
    """`-t hexagon-asm{packing=greedy|single}`."""

    name = "hexagon-asm"
    packing: str = "greedy"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.packing not in PRINTER_PACKINGS:
            raise DiagnosticException(
                f"hexagon-asm: packing must be greedy or single, not {self.packing}"
            )
        HexagonAsmPrinter(output, single=self.packing == "single").module(module)
