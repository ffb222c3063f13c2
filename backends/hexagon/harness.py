"""
Assemble, link and run Hexagon programs: `llvm-mc-19` (hexagonv66, 128-byte HVX),
`ld.lld-19` into a freestanding executable entered at `_start`, and `qemu-hexagon`
(user mode; system calls through `trap0(#1)`). A program's inputs are data in its
image; it writes its outputs to standard output and exits.

`count_packets` runs under `qemu-hexagon -singlestep -d exec,nochain`, which logs one
line per executed packet, and attributes each packet to the function holding its
address.
"""

from __future__ import annotations

import bisect
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ASSEMBLER = "llvm-mc-19"
LINKER = "ld.lld-19"
EMULATOR = "qemu-hexagon"
SYMBOLS = "llvm-nm-19"
COMPILER = "clang-19"

APT_PACKAGES = {ASSEMBLER: "llvm-19", LINKER: "lld-19", EMULATOR: "qemu-user", SYMBOLS: "llvm-19",
                COMPILER: "clang-19"}

ASSEMBLER_FLAGS = ["-arch=hexagon", "-mcpu=hexagonv66", "-mhvx", "-mattr=+hvx-length128b"]


class ToolchainError(Exception):
    """A missing tool, a rejected program, or a program that failed under QEMU."""


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolchainError(
            f"{name} not found: install it with `apt-get install {APT_PACKAGES[name]}`"
        )
    return path


def missing_tools() -> list[str]:
    return [name for name in APT_PACKAGES if shutil.which(name) is None]


def _run(command: list[str], what: str, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    try:
        result = subprocess.run(command, capture_output=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{what}: timed out after {timeout:.0f} s") from None
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        index = next((i for i, line in enumerate(message) if "error" in line), 0)
        detail = " | ".join(line.strip() for line in message[index : index + 2])
        raise ToolchainError(f"{what} failed (exit {result.returncode}): {detail}")
    return result


def assemble(asm: str, folder: Path) -> Path:
    source, obj = folder / "program.s", folder / "program.o"
    source.write_text(asm)
    # `.incbin` paths of model inputs are relative to the program's folder
    _run([tool(ASSEMBLER), *ASSEMBLER_FLAGS, "-filetype=obj", source.name, "-o", obj.name],
         "llvm-mc", 120, cwd=folder)
    return obj


def _clang_command(output: str) -> list[str]:
    from mobile_opt.backends.hexagon.c_printer import CLANG_FLAGS

    include = _run([tool(COMPILER), "-print-resource-dir"], "clang", 60).stdout.decode().strip()
    # freestanding: the compiler's own headers only (stdint.h, the HVX intrinsics)
    return [tool(COMPILER), *CLANG_FLAGS, "-nostdinc", "-isystem", f"{include}/include",
            output, "-x", "c", "-"]


def compile_c(source: str, folder: Path) -> Path:
    """C text (`c_printer`) to an object file in `folder`."""
    obj = folder / "kernels.o"
    _run([*_clang_command("-c"), "-o", str(obj)], "clang", 300, input=source.encode())
    return obj


def compile_c_to_assembly(source: str) -> str:
    """What `clang -S` makes of the C text."""
    return _run([*_clang_command("-S"), "-o", "-"], "clang", 300, input=source.encode()).stdout.decode()


def link(*objects: Path) -> Path:
    executable = objects[0].with_suffix("")
    _run([tool(LINKER), "--no-rosegment", *map(str, objects), "-o", str(executable)], "ld.lld", 120)
    return executable


def build(asm: str, folder: Path, c_source: str | None = None) -> Path:
    """Assembly text (and C text, compiled by clang) to a linked executable in `folder`."""
    objects = [assemble(asm, folder)]
    if c_source is not None:
        objects.append(compile_c(c_source, folder))
    return link(*objects)


def run(executable: Path, timeout: float = 600) -> bytes:
    """Run under QEMU; what the program wrote to standard output."""
    return _run([tool(EMULATOR), str(executable)], "qemu-hexagon", timeout).stdout


def function_addresses(executable: Path) -> list[tuple[int, str]]:
    """(address, name) of the text symbols, sorted."""
    out = _run([tool(SYMBOLS), "--defined-only", str(executable)], "llvm-nm", 60).stdout.decode()
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT" and not parts[2].startswith(".L"):
            symbols.append((int(parts[0], 16), parts[2]))
    return sorted(symbols)


_TRACE = re.compile(rb"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/", re.MULTILINE)


@dataclass
class Execution:
    output: bytes
    packets: Counter[str]
    """Packets executed per function."""

    @property
    def total_packets(self) -> int:
        return sum(self.packets.values())


def run_counting(executable: Path, timeout: float = 1800) -> Execution:
    """Run under QEMU one packet at a time and count the packets of each function."""
    symbols = function_addresses(executable)
    starts = [address for address, _ in symbols]
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "exec.log"
        result = _run(
            [tool(EMULATOR), "-singlestep", "-d", "exec,nochain", "-D", str(log), str(executable)],
            "qemu-hexagon", timeout,
        )
        per_pc: Counter[int] = Counter()
        with open(log, "rb") as f:
            while chunk := f.read(1 << 24):
                tail = f.readline()
                per_pc.update(int(pc, 16) for pc in _TRACE.findall(chunk + tail))
    packets: Counter[str] = Counter()
    for pc, count in per_pc.items():
        index = bisect.bisect_right(starts, pc) - 1
        packets[symbols[index][1] if index >= 0 else "?"] += count
    return Execution(result.stdout, packets)


def scratch_folder() -> tempfile.TemporaryDirectory:
    root = os.environ.get("MOBILE_OPT_SCRATCH")
    return tempfile.TemporaryDirectory(prefix="mobile-opt-hexagon-", dir=root)
