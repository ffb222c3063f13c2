"""
HVX kernel benchmark: GCD²'s three SIMD layouts on the DSP path's kernels.

Kernels: the MatMul cubes of GCD²'s Table II (M = K = N = 32, 64, 96, 128), the first
eight distinct Conv2D shapes of ResNet-50 (224×224 input) and two depthwise 3×3
convolutions, all int8 (uint8 activations, int8 weights in [-64, 63] so that every
layout, vmpa's 16-bit pair sums included, has an exact kernel).

For each kernel and layout (`col1`/vmpy, `col2`/vmpa, `col4`/vrmpy) it builds the
kernel, gives the cycle model's prediction (packets and cycles, `models/hvx_cycles.py`),
runs it under `qemu-hexagon -singlestep` counting the packets it executes, checks the
output bit for bit against numpy, and checks that the layout with the fewest predicted
cycles is the one with the fewest measured packets. Like GCD²'s Table II it also gives
each layout's packets and padded data size relative to `col1`.

The table is printed; rows go to `bench/results/hvx_kernels-qemu-hexagonv66.json` and a
bar chart of relative packets to `bench/results/hvx_kernels-qemu-hexagonv66.svg`.

    python3 bench/hvx_kernels.py              # everything (about ten minutes)
    python3 bench/hvx_kernels.py --quick      # ResNet shapes at a quarter of the resolution

Needs llvm-mc-19, ld.lld-19 and qemu-hexagon (apt-get install llvm-19 lld-19 qemu-user).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from mobile_opt.checking.hvx_kernels import ConvCase, run_conv_kernel
from mobile_opt.dialects.hvx.layouts import MATRIX_LAYOUTS
from mobile_opt.pipelines import dsp_back_end
from mobile_opt.transforms.onnx_to_hvx.conv import ConvShape, KernelInfeasible

BENCH_DIR = Path(__file__).resolve().parent

DEVICE = "qemu-hexagonv66"


def kernels(quick: bool) -> list[tuple[str, ConvShape]]:
    scale = 4 if quick else 1
    r = lambda size: max(size // scale, 7)  # noqa: E731
    cases = [(f"matmul {n}x{n}x{n}", ConvShape(n, 1, n, n)) for n in (32, 64, 96, 128)]
    cases += [
        ("resnet50 conv1 7x7/2", ConvShape(3, r(224), r(224), 64, (7, 7), (2, 2), (3, 3))),
        ("resnet50 l1 1x1 64-64", ConvShape(64, r(56), r(56), 64)),
        ("resnet50 l1 3x3 64-64", ConvShape(64, r(56), r(56), 64, (3, 3), (1, 1), (1, 1))),
        ("resnet50 l1 1x1 64-256", ConvShape(64, r(56), r(56), 256)),
        ("resnet50 l1 1x1 256-64", ConvShape(256, r(56), r(56), 64)),
        ("resnet50 l2 1x1 256-128", ConvShape(256, r(56), r(56), 128)),
        ("resnet50 l2 3x3/2 128-128", ConvShape(128, r(56), r(56), 128, (3, 3), (2, 2), (1, 1))),
        ("resnet50 l2 1x1 128-512", ConvShape(128, r(28), r(28), 512)),
        ("depthwise 3x3 64@56", ConvShape(64, r(56), r(56), 64, (3, 3), (1, 1), (1, 1), True)),
        ("depthwise 3x3/2 128@56", ConvShape(128, r(56), r(56), 128, (3, 3), (2, 2), (1, 1), True)),
    ]
    return cases


def executed_shape(shape: ConvShape) -> ConvShape:
    """
    A pointwise convolution runs as a matrix product over all H·W pixels, as onnx-to-hvx
    stores tensors that only pointwise layers touch.
    """
    if shape.kernel == (1, 1) and shape.stride == (1, 1) and not shape.depthwise:
        return ConvShape(shape.channels, 1, shape.height * shape.width, shape.out_channels)
    return shape


@dataclass
class Row:
    kernel: str
    shape: str
    layout: str
    instruction: str
    predicted_packets: int | None
    predicted_cycles: int | None
    measured_packets: int | None
    exact: bool | None
    data_bytes: int | None
    seconds: float
    note: str = ""


def run_one(name: str, shape: ConvShape, layout, seed: int) -> Row:
    start = time.time()
    shape = executed_shape(shape)
    case = ConvCase.random(shape, seed)
    described = f"{shape.channels}x{shape.height}x{shape.width}->{shape.out_channels}" \
        f"x{shape.out_height}x{shape.out_width} k{shape.kernel[0]} s{shape.stride[0]}"
    try:
        run = run_conv_kernel(layout, case, dsp_back_end)
    except KernelInfeasible as e:
        instruction = "vmpy" if shape.depthwise else layout.instruction
        return Row(name, described, str(layout), instruction, None, None, None, None, None,
                   time.time() - start, f"no kernel: {e}")
    return Row(name, described, str(layout), run.instruction, run.predicted.packets,
               run.predicted.cycles, run.counted_packets, bool(np.array_equal(run.got, run.expected)),
               run.data_bytes, time.time() - start)


def table(rows: list[Row]) -> str:
    header = ["kernel", "layout", "instr", "pred packets", "pred cycles", "QEMU packets",
              "rel pkts", "rel data", "exact", "best?"]
    lines = [header]
    for name in dict.fromkeys(r.kernel for r in rows):
        group = [r for r in rows if r.kernel == name]
        base = next((r for r in group if r.layout == "col1" and r.measured_packets), None)
        ran = [r for r in group if r.measured_packets]
        model_best = min(ran, key=lambda r: r.predicted_cycles).layout if ran else None
        measured_best = min(ran, key=lambda r: r.measured_packets).layout if ran else None
        for r in group:
            rel = f"{r.measured_packets / base.measured_packets:.2f}" if base and r.measured_packets else "-"
            reld = f"{r.data_bytes / base.data_bytes:.2f}" if base and r.data_bytes else "-"
            mark = ""
            if r.layout == measured_best:
                mark = "measured" + (" = model" if model_best == measured_best else f" (model: {model_best})")
            lines.append([r.kernel, r.layout, r.instruction,
                          str(r.predicted_packets or "-"), str(r.predicted_cycles or "-"),
                          str(r.measured_packets or r.note or "-"), rel, reld,
                          {True: "yes", False: "NO", None: "-"}[r.exact], mark])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)


def summary(rows: list[Row]) -> dict:
    names = list(dict.fromkeys(r.kernel for r in rows))
    agree = 0
    for name in names:
        ran = [r for r in rows if r.kernel == name and r.measured_packets]
        if min(ran, key=lambda r: r.predicted_cycles).layout == min(
                ran, key=lambda r: r.measured_packets).layout:
            agree += 1
    exact_prediction = all(r.predicted_packets == r.measured_packets for r in rows if r.measured_packets)
    return {
        "kernels": len(names),
        "model_choice_equals_measured_best": agree,
        "predicted_packets_equal_measured": exact_prediction,
        "all_outputs_exact": all(r.exact for r in rows if r.exact is not None),
    }


def write_svg(rows: list[Row], path: Path) -> None:
    """Grouped bars: each layout's packets relative to col1, per kernel."""
    names = list(dict.fromkeys(r.kernel for r in rows))
    values: dict[str, dict[str, float]] = {layout: {} for layout in ("col1", "col2", "col4")}
    for name in names:
        base = next((r.measured_packets for r in rows if r.kernel == name and r.layout == "col1"), None)
        for r in rows:
            if r.kernel == name and r.measured_packets and base:
                values[r.layout][name] = r.measured_packets / base
    write_grouped_bars(path, "QEMU packets relative to col1 (vmpy); lower is better", names,
                       values, "packets / col1's")


def write_grouped_bars(path: Path, title: str, groups: list[str],
                       series: dict[str, dict[str, float]], y_label: str,
                       references: tuple[tuple[float, str], ...] = ()) -> None:
    """
    A bar per series in each group (a missing value leaves a gap), and a horizontal
    line per reference (value, label), drawn with matplotlib in the format of
    `path`'s suffix.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    bars = len(groups) * (len(series) + 1)
    figure = Figure(figsize=(max(7.0, 0.11 * bars + 1.5), 5.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    width = 0.8 / max(len(series), 1)
    for j, (name, values) in enumerate(series.items()):
        at = [(k, values[g]) for k, g in enumerate(groups) if g in values]
        axes.bar([k + (j - (len(series) - 1) / 2) * width for k, _ in at], [v for _, v in at],
                 width, label=name)
    for value, label in references:
        axes.axhline(value, color="black", linestyle="--" if value != 1.0 else "-",
                     linewidth=1, label=label)
    axes.set_xticks(range(len(groups)), groups, rotation=60, ha="right", fontsize="small")
    axes.set_xlabel("kernel")
    axes.set_ylabel(y_label)
    axes.set_title(title, fontsize="medium")
    axes.grid(True, axis="y", color="0.9")
    axes.set_axisbelow(True)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    figure.savefig(path)


def save_results(out: Path, device: str, result: dict, rows: list, write_svg, **extra) -> None:
    """The summary and rows as JSON at `out`, their chart beside it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "device": device, **extra,
        "host": platform.node(),
        "date": datetime.date.today().isoformat(),
        "summary": result,
        "rows": [asdict(r) for r in rows],
    }, indent=1) + "\n")
    write_svg(rows, out.with_suffix(".svg"))
    print(f"wrote {out} and {out.with_suffix('.svg')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="ResNet shapes at a quarter resolution")
    parser.add_argument("--only", help="substring of the kernels to run")
    parser.add_argument("--out", help="JSON path (default bench/results/hvx_kernels-<device>.json)")
    args = parser.parse_args()
    cases = [c for c in kernels(args.quick) if not args.only or args.only in c[0]]
    from tqdm import tqdm

    rows: list[Row] = []
    with tqdm(total=len(cases) * len(MATRIX_LAYOUTS), file=sys.stderr, unit="kernel") as bar:
        for index, (name, shape) in enumerate(cases):
            for layout in MATRIX_LAYOUTS:
                bar.set_postfix_str(f"{name} {layout}")
                rows.append(run_one(name, shape, layout, seed=index))
                bar.update()
    print(table(rows))
    result = summary(rows)
    print(f"\nthe model's best layout is the measured best for {result['model_choice_equals_measured_best']}"
          f" of {result['kernels']} kernels; predicted packets equal QEMU's: "
          f"{result['predicted_packets_equal_measured']}; outputs exact: {result['all_outputs_exact']}")
    suffix = "-quick" if args.quick else ""
    out = Path(args.out) if args.out else BENCH_DIR / "results" / f"hvx_kernels-{DEVICE}{suffix}.json"
    save_results(out, f"{DEVICE} (qemu-hexagon user mode, HVX 128-byte; packets, not cycles)",
                 result, rows, write_svg)
    return 0 if result["all_outputs_exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
