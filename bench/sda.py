"""
SDA VLIW packing benchmark: GCD²'s soft-dependency-aware packer against its ablations,
a list scheduler and LLVM 19's own Hexagon packetizer, on the DSP path's kernels.

Kernels: the int8 MatMul cubes (32/64/96/128), ResNet-50's first eight Conv2D shapes,
two depthwise 3×3 convolutions (the kernels of `bench/hvx_kernels.py`, each in the layout
the cycle model picks), and GCD² Fig. 5's element-wise `R = A + B + C`. Each kernel is
unrolled by `hvx-unroll`'s output-shape heuristic, then:

- packed by `vliw-pack` with `sda` (its w/p grid tuned per block by the cycle model),
  `soft-to-hard`, `soft-to-none` and `list`. For each: the packets of the hot loop's body
  (the innermost loop that executes the most packets) and their modelled cycles (GCD²'s
  pipeline, `models/hvx_cycles.py`), the whole kernel's modelled cycles, and the packets
  QEMU executes, the output checked bit for bit;
- printed as C with HVX intrinsics (`-t hexagon-c`, the same unrolled loops, LLVM's own
  unrolling off) and compiled with `clang-19 -O3 -mcpu=hexagonv66 -mhvx
  -mhvx-length=128b`: its hot loop's packets counted in the `-S` output (read with the
  Lark grammar), and the packets QEMU executes, the output checked bit for bit.

It also compares the unroll heuristic's factor with the best of 1, 2 and 4 by SDA's
modelled kernel cycles. The geometric means are of per-kernel ratios.

    python3 bench/sda.py                # everything (about ten minutes)
    python3 bench/sda.py --only matmul  # kernels whose name contains "matmul"

Results go to `bench/results/sda-qemu-hexagonv66.json` and a chart to `.svg` beside it.
Needs clang-19, llvm-mc-19, ld.lld-19 and qemu-hexagon (apt-get install clang-19 llvm-19
lld-19 qemu-user).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block

from hvx_kernels import executed_shape, kernels, save_results

from mobile_opt import pipelines
from mobile_opt.backends.hexagon.asm_parser import (
    AsmPacket,
    NotSupported,
    import_packets,
    innermost_loops,
    parse_assembly,
)
from mobile_opt.checking.hvx_kernels import (
    ConvCase,
    ConvProgram,
    compile_and_run,
    conv_program,
    elementwise_sum_program,
)
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS
from mobile_opt.dialects.vliw.packets import slot_names
from mobile_opt.models.hvx_bounds import PackingBound, packing_bound
from mobile_opt.models.hvx_cycles import block_cost, kernel_cost
from mobile_opt.transforms import hvx_unroll
from mobile_opt.transforms.hvx_regalloc import allocate_registers
from mobile_opt.transforms.hvx_unroll import unroll_function
from mobile_opt.transforms.onnx_to_hvx.conv import KernelInfeasible
from mobile_opt.transforms.onnx_to_hvx.program import Program

BENCH_DIR = Path(__file__).resolve().parent
DEVICE = "qemu-hexagonv66"
PACKERS = ("sda", "soft-to-hard", "soft-to-none", "list")
UNROLL_FACTORS = (1, 2, 4)


@dataclass
class Case:
    """A kernel in a program that runs it, and how to check what it wrote."""

    name: str
    shape: str
    layout: str
    program: Program
    kernel: ops.FuncOp
    output: str
    check: Callable[[np.ndarray], bool]

    def run(self, packing: str, keep: Path | None = None) -> tuple[bool, int, ops.FuncOp]:
        """
        Exact output? packets QEMU executed in the kernel, and the kernel as it ran, packed
        by `packing` (a `vliw-pack` algorithm, or "llvm": the kernel as C through clang).
        """
        kernel = self.kernel.clone()  # the back end allocates and packs it in place
        self.program.kernels = [kernel]
        outputs, execution = compile_and_run(
            self.program, "greedy" if packing == "llvm" else packing, pipelines.dsp_back_end,
            counting=True, keep=keep, kernels_in_c=packing == "llvm",
        )
        executed = execution.packets[self.kernel.sym_name.data]
        return self.check(outputs[self.output]), executed, kernel


def conv_case(name: str, shape, seed: int) -> Case:
    shape = executed_shape(shape)
    case = ConvCase.random(shape, seed)
    best: tuple[int, object, ConvProgram] | None = None
    for layout in MATRIX_LAYOUTS:  # the layout the cycle model picks, as onnx-to-hvx does
        try:
            candidate = conv_program(layout, case)
        except KernelInfeasible:
            continue
        allocated = candidate.kernel.func.clone()  # the kernel itself stays unallocated
        allocate_registers(allocated)
        cycles = kernel_cost(allocated).cycles
        if best is None or cycles < best[0]:
            best = (cycles, layout, candidate)
    assert best is not None, name
    _, layout, built = best
    expected = case.expected()
    described = f"{shape.channels}x{shape.height}x{shape.width}->{shape.out_channels}" \
        f"x{shape.out_height}x{shape.out_width} k{shape.kernel[0]} s{shape.stride[0]}"
    return Case(name, described, str(layout), built.program, built.kernel.func, "y",
                lambda raw: bool(np.array_equal(built.out_geo.unpack(raw), expected)))


def elementwise_case(vectors: int) -> Case:
    program, expected = elementwise_sum_program(vectors)
    return Case("elementwise R=A+B+C (Fig. 5)", f"{vectors * 128} uint8 -> int16", "row",
                program, program.kernels[0], "r", lambda raw: bool(np.array_equal(raw, expected)))


def all_cases(only: str | None) -> list[Callable[[], Case]]:
    makers: list[tuple[str, Callable[[], Case]]] = [
        (name, lambda name=name, shape=shape, seed=seed: conv_case(name, shape, seed))
        for seed, (name, shape) in enumerate(kernels(quick=False))
    ]
    makers.append(("elementwise R=A+B+C (Fig. 5)", lambda: elementwise_case(256)))
    return [make for name, make in makers if not only or only in name]


# ----------------------------------------------------------------------------
# Measuring
# ----------------------------------------------------------------------------


def hot_block(func: ops.FuncOp) -> Block:
    """The body of the innermost loop that executes the most packets (or the function's)."""

    def executions(loop: ops.LoopOp) -> int:
        n, op = 1, loop
        while isinstance(op, ops.LoopOp):
            n *= op.trip.value.data
            op = op.parent_op()
        return n

    innermost = hvx_unroll.innermost_loops(func.body.block)
    if not innermost:
        return func.body.block
    hot = max(innermost, key=lambda loop: executions(loop) * block_cost(loop.body.block).packets)
    return hot.body.block


def instruction_words(block: Block) -> list[str]:
    """The machine-description names of a block's instructions and extender words."""
    return [name for op in block.walk() if isinstance(op, ops.Instruction)
            for name in slot_names(op)]


def llvm_bound(loop: list[AsmPacket]) -> PackingBound | None:
    """The bound of LLVM's loop body, where the parser has IR for all its instructions."""
    try:
        return packing_bound(instruction_words(import_packets(loop).body.block))
    except NotSupported:  # e.g. predicate logic, which our kernels never emit
        return None


def packed(kernel: ops.FuncOp, algorithm: str) -> ops.FuncOp:
    """An allocated copy of `kernel`, packed as a run packs it."""
    func = kernel.clone()
    pipelines.apply(ModuleOp([func]), pipelines.dsp_back_end(algorithm))
    func.detach()
    return func


@dataclass
class Packing:
    body_packets: int
    body_cycles: int
    kernel_cycles: int
    qemu_packets: int
    exact: bool


@dataclass
class LlvmPacking:
    body_packets: int
    body_instructions: int
    qemu_packets: int
    exact: bool
    bound: PackingBound | None
    """The least any packing of LLVM's loop body could take (None: no loop, or unread)."""


@dataclass
class Row:
    kernel: str
    shape: str
    layout: str
    unroll: int
    body_instructions: int
    bound: PackingBound = PackingBound(0, 0)
    """The least any packing of our loop body could take (`models/hvx_bounds.py`)."""
    packings: dict[str, Packing] = field(default_factory=dict)
    llvm: LlvmPacking | None = None
    unroll_cycles: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0


def measure(case: Case) -> Row:
    start = time.time()
    original = case.kernel.clone()
    factor = unroll_function(case.kernel, 0)
    row = Row(case.name, case.shape, case.layout, factor, 0)
    for algorithm in PACKERS:
        exact, executed, func = case.run(algorithm)
        cost = block_cost(hot_block(func))
        row.packings[algorithm] = Packing(cost.packets, cost.cycles, kernel_cost(func).cycles,
                                          executed, exact)
    body = hot_block(func)  # the same instructions whichever packer formed its packets
    row.body_instructions = sum(1 for op in body.walk() if isinstance(op, ops.Instruction))
    row.bound = packing_bound(instruction_words(body))
    with tempfile.TemporaryDirectory() as folder:
        exact, executed, _ = case.run("llvm", keep=Path(folder))
        asm = parse_assembly((Path(folder) / "kernels.s").read_text(), "kernels.s")
    name = case.kernel.sym_name.data
    loops = innermost_loops(asm, name)
    loop = list(max(loops, key=len)) if loops else asm.function(name).packets()
    row.llvm = LlvmPacking(len(loop), sum(len(p.instructions) for p in loop), executed, exact,
                           llvm_bound(loop) if loops else None)
    for most in UNROLL_FACTORS:
        func = original.clone()
        if unroll_function(func, most) == most:  # else the registers do not hold it
            row.unroll_cycles[most] = kernel_cost(packed(func, "sda")).cycles
    row.seconds = time.time() - start
    return row


# ----------------------------------------------------------------------------
# Reporting
# ----------------------------------------------------------------------------


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def summary(rows: list[Row]) -> dict:
    sda = [r.packings["sda"] for r in rows]
    llvm = [r.llvm for r in rows]
    hard = [r.packings["soft-to-hard"] for r in rows]
    best_unroll = [min(r.unroll_cycles.values()) for r in rows]
    return {
        "kernels": len(rows),
        "all_outputs_exact": all(p.exact for r in rows for p in [*r.packings.values(), r.llvm]),
        "sda_over_llvm_body_packets_geomean": geomean(
            [s.body_packets / l.body_packets for s, l in zip(sda, llvm)]),
        "sda_over_llvm_executed_packets_geomean": geomean(
            [s.qemu_packets / l.qemu_packets for s, l in zip(sda, llvm)]),
        "soft_to_hard_over_sda_body_cycles_geomean": geomean(
            [h.body_cycles / s.body_cycles for h, s in zip(hard, sda)]),
        # what no packer of these instruction streams can pass (`models/hvx_bounds.py`)
        "bound_over_llvm_body_packets_geomean": geomean(
            [r.bound.packets / l.body_packets for r, l in zip(rows, llvm)]),
        "sda_over_bound_body_packets_geomean": geomean(
            [s.body_packets / r.bound.packets for s, r in zip(sda, rows)]),
        "llvm_over_its_own_bound_body_packets_geomean": geomean(
            [l.body_packets / l.bound.packets for l in llvm if l.bound]),
        "soft_to_hard_over_cycle_bound_geomean": geomean(
            [h.body_cycles / r.bound.cycles for h, r in zip(hard, rows)]),
        "soft_to_hard_over_sda_kernel_cycles_geomean": geomean(
            [h.kernel_cycles / s.kernel_cycles for h, s in zip(hard, sda)]),
        "soft_to_none_over_sda_body_cycles_geomean": geomean(
            [r.packings["soft-to-none"].body_cycles / s.body_cycles for r, s in zip(rows, sda)]),
        "list_over_sda_body_cycles_geomean": geomean(
            [r.packings["list"].body_cycles / s.body_cycles for r, s in zip(rows, sda)]),
        "unroll_heuristic_over_best_kernel_cycles_geomean": geomean(
            [r.unroll_cycles.get(r.unroll, r.packings["sda"].kernel_cycles) / b
             for r, b in zip(rows, best_unroll)]),
        "unroll_heuristic_is_best": sum(
            r.unroll_cycles.get(r.unroll) == b for r, b in zip(rows, best_unroll)),
    }


def table(rows: list[Row]) -> str:
    columns = ["kernel", "layout", "unroll", "instrs"]
    columns += [f"{a} pk/cyc" for a in PACKERS] + ["bound pk/cyc", "llvm pk", "llvm bound",
                                                   "sda/llvm", "bound/llvm", "hard/sda cyc",
                                                   "hard/bound cyc", "QEMU sda", "QEMU llvm"]
    lines = []
    for r in rows:
        s, h = r.packings["sda"], r.packings["soft-to-hard"]
        cells = [r.kernel, r.layout, str(r.unroll), str(r.body_instructions)]
        cells += [f"{r.packings[a].body_packets}/{r.packings[a].body_cycles}" for a in PACKERS]
        cells += [f"{r.bound.packets}/{r.bound.cycles}", str(r.llvm.body_packets),
                  str(r.llvm.bound.packets) if r.llvm.bound else "-", f"{s.body_packets / r.llvm.body_packets:.2f}",
                  f"{r.bound.packets / r.llvm.body_packets:.2f}",
                  f"{h.body_cycles / s.body_cycles:.2f}",
                  f"{h.body_cycles / r.bound.cycles:.2f}", str(s.qemu_packets),
                  str(r.llvm.qemu_packets)]
        lines.append(cells)
    widths = [max(len(c), *(len(line[i]) for line in lines)) for i, c in enumerate(columns)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([fmt(columns), fmt(["-" * w for w in widths]), *map(fmt, lines)])


def write_svg(rows: list[Row], path: Path) -> None:
    """Grouped bars: each packer's hot-loop packets relative to LLVM's, per kernel."""
    from hvx_kernels import write_grouped_bars

    series = {a: {r.kernel: (r.bound.packets if a == "bound" else r.packings[a].body_packets)
                  / r.llvm.body_packets for r in rows}
              for a in ("sda", "soft-to-hard", "soft-to-none", "list", "bound")}
    write_grouped_bars(path, "hot-loop packets relative to LLVM 19 (clang -O3); lower is better\n"
                       "bound: the fewest packets any packing of the same instructions could take",
                       [r.kernel for r in rows], series, "packets / LLVM's",
                       ((1.0, "LLVM"), (0.8, "the 0.80 target")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="substring of the kernels to run")
    parser.add_argument("--out", help="JSON path (default bench/results/sda-<device>.json)")
    args = parser.parse_args()
    from tqdm import tqdm

    rows: list[Row] = []
    with tqdm(all_cases(args.only), file=sys.stderr, unit="kernel") as bar:
        for make in bar:
            case = make()
            bar.set_postfix_str(case.name)
            rows.append(measure(case))
    print(table(rows))
    result = summary(rows)
    print()
    for key, value in result.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    out = Path(args.out) if args.out else BENCH_DIR / "results" / f"sda-{DEVICE}.json"
    save_results(out, f"{DEVICE} (qemu-hexagon user mode, HVX 128-byte; packets, and cycles of "
                 "GCD²'s pipeline model)", result, rows, write_svg,
                 llvm="clang-19 -O3 -mcpu=hexagonv66 -mhvx -mhvx-length=128b")
    return 0 if result["all_outputs_exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
