"""
Global layout selection benchmark (issue 20): every solver of `select-layouts` on one
`LayoutProblem` per model, its modelled cost beside the realised measurement.

One row per (model, solver):

- cost: the selection's cost in the problem (`problem.cost`), in the target's unit
  (DSP: the cycle model's cycles of each product plus each relayout made once);
- solve s: the solver's wall time on this machine (`local`, `col4`: the rules);
- gap: the proven gap to `exact` (CP-SAT, 60 s): cost / exact's cost - 1 where CP-SAT
  proved optimality, else cost / its lower bound - 1 (an upper bound on the gap);
- pred x: local's cost / this cost (> 1: predicted better than local);
- the realised measurement and meas x, local's / this one. DSP: the packets QEMU executes
  for the whole compiled model (`pipelines.dsp_pipeline`, SDA packing), its outputs
  checked bit for bit against the integer reference (`reference/qlinear.py`).

Targets (`--target`): `dsp` today; a `gpu` part adds its model list and a measure
function to `TARGETS` (rows of the same form: measured = summed kernel ns).

DSP rows: `local` (the local rules), `col4` (one layout for every op: `layout=col4`),
`chain`, `pbqp`, `gcd2`, `exact`; QEMU runs `local`, `col4` and `gcd2` (`--measure`).
Models: the issue-4 CNN (`checking/quant_models.py` `quantized_cnn`), `mixed_layout_model`,
and torchvision ResNet-18 and MobileNetV2 quantized QDQ int8 at `--size` (default 64:
QEMU counts packets by logging every one, so a 224 input would log ~10^8 of them), made
by `bench/zoo.py`'s `quantize_cached` into `--zoo-cache` (torch needed once: run this
with /opt/zoo/bin/python's packages, or make them first with `bench/zoo.py`).

    python3 bench/select.py --target dsp
    python3 bench/select.py --target dsp --only cnn,mixed

Results: `bench/results/select-qemu-hexagonv66.json` and a plot `.png` beside it.
"""

from __future__ import annotations

import os
import sys

# Run as a script, this file's folder comes first on sys.path, where its name would hide
# the standard library's `select` (which socket, and so tqdm, import): put it last.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE] + [_HERE]

import argparse
import datetime
import json
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent

DSP_DEVICE = "qemu-hexagonv66"
GLOBAL_SOLVERS = ("chain", "pbqp", "gcd2", "exact")


@dataclass
class Row:
    model: str
    target: str
    solver: str
    nodes: int
    """Nodes of the PBQP problem (ops, graph inputs and transformed copies)."""
    unit: str
    cost: float | None
    solve_s: float | None
    optimal: bool
    """The solver proved its selection optimal."""
    exact_cost: float | None = None
    exact_optimal: bool = False
    exact_bound: float | None = None
    gap: float | None = None
    """Proven: cost over exact's optimum (or its lower bound) minus 1."""
    predicted_vs_local: float | None = None
    measured: float | None = None
    measured_unit: str = ""
    measured_vs_local: float | None = None
    correct: bool | None = None
    """Outputs bit-exact (DSP) or within tolerance (GPU)."""
    transforms: int | None = None
    """Relayout ops in the compiled model."""
    build_s: float | None = None
    """Building the problem (every candidate kernel costed), shared by all solvers."""
    note: str = ""


def modelled_rows(model: str, target: str, problem, rules: dict[str, Callable[[], Sequence[int]]],
                  partition: int = 13) -> tuple[list[Row], dict[str, Sequence[int]]]:
    """Every solver's (and each rule set's) row on `problem` (a `LayoutProblem`), with
    the proven gap to `exact`; and each row's selection."""
    from mobile_opt.models.solvers import solve
    from xdsl.utils.exceptions import DiagnosticException

    rows, selections = [], {}
    pbqp = problem.problem
    for name, rule in rules.items():
        start = time.perf_counter()
        try:
            selection = rule()
        except DiagnosticException as e:  # a forced layout some op cannot run in
            rows.append(Row(model, target, name, len(pbqp.nodes), problem.unit, None, None,
                            False, note=str(e)))
            continue
        seconds = time.perf_counter() - start
        selections[name] = selection
        rows.append(Row(model, target, name, len(pbqp.nodes), problem.unit,
                        pbqp.cost(selection), seconds, False))
    exact = None
    for name in GLOBAL_SOLVERS:
        start = time.perf_counter()
        try:
            solution = solve(pbqp, name, partition)
        except ValueError as e:  # chain on a graph that is not one
            rows.append(Row(model, target, name, len(pbqp.nodes), problem.unit, None, None,
                            False, note=str(e)))
            continue
        seconds = time.perf_counter() - start
        selections[name] = solution.selection
        rows.append(Row(model, target, name, len(pbqp.nodes), problem.unit, solution.cost,
                        seconds, solution.optimal))
        if name == "exact":
            exact = solution
    local = next(r.cost for r in rows if r.solver == "local")
    for row in rows:
        row.exact_cost, row.exact_optimal = exact.cost, exact.optimal
        row.exact_bound = exact.lower_bound
        if row.cost is None:
            continue
        reference = exact.cost if exact.optimal else exact.lower_bound
        row.gap = row.cost / reference - 1 if reference else 0.0
        row.predicted_vs_local = local / row.cost if row.cost else None
    return rows, selections


# DSP ------------------------------------------------------------------------------------


def dsp_models(size: int, cache: Path) -> dict[str, Callable[[Path], Path]]:
    """name -> make(folder) -> the ONNX file."""
    import onnx
    from mobile_opt.checking import quant_models

    def cnn(folder: Path) -> Path:
        path = folder / "cnn.onnx"
        quant_models.quantized_cnn(str(path), seed=0)
        return path

    def mixed(folder: Path) -> Path:
        path = folder / "mixed.onnx"
        onnx.save(quant_models.mixed_layout_model(), path)
        return path

    def torchvision(arch: str) -> Callable[[Path], Path]:
        def make(folder: Path) -> Path:
            path = cache / f"{arch}-{size}-qdq-qint8.onnx"
            if path.is_file():
                return path
            import zoo  # torch and torchvision, to export and quantize it once

            return zoo.quantize_cached(cache, arch, "QDQ", "QInt8", size)
        return make

    return {"cnn": cnn, "mixed": mixed,
            f"resnet18-{size}": torchvision("resnet18"),
            f"mobilenet_v2-{size}": torchvision("mobilenet_v2")}


def dsp_compile_and_run(path: Path, feeds, expected, solver: str, layout: str = "auto"):
    """(packets executed, bit-exact, relayout ops) of `path` compiled with `solver`."""
    import numpy as np
    from mobile_opt import pipelines
    from mobile_opt.backends.hexagon.runner import run_module
    from mobile_opt.dialects.hvx.ops import RelayoutOp
    from mobile_opt.frontend.onnx_import import import_onnx

    module = import_onnx(str(path))
    passes = pipelines.dsp_pipeline(layout=layout, packing="sda", solver=solver)
    pipelines.apply(module, passes[:1])
    relayouts = sum(isinstance(op, RelayoutOp) for op in module.walk())
    pipelines.apply(module, passes[1:])
    got, execution = run_module(module, feeds, counting=True)
    exact = all(np.array_equal(got[name], want) for name, want in expected.items())
    return execution.total_packets, exact, relayouts


def dsp_rows(name: str, path: Path, measure: Sequence[str], partition: int) -> list[Row]:
    import onnx
    from mobile_opt.checking import quant_models
    from mobile_opt.frontend.onnx_import import import_onnx
    from mobile_opt.reference.qlinear import run_qlinear
    from mobile_opt.transforms.onnx_to_hvx.quant_graph import find_function, read_quant_graph
    from mobile_opt.transforms.onnx_to_hvx.selection import dsp_layout_problem

    function = find_function(import_onnx(str(path)), "main_graph")
    start = time.perf_counter()
    problem = dsp_layout_problem(function, read_quant_graph(function))
    build = time.perf_counter() - start
    rows, _ = modelled_rows(name, "dsp", problem, {
        "local": problem.local, "col4": lambda: problem.rules_selection("col4")}, partition)
    for row in rows:
        row.build_s = build
    feeds = quant_models.random_inputs(onnx.load(str(path)), 0)
    expected = run_qlinear(import_onnx(str(path)), feeds)
    for row in rows:
        if row.solver not in measure or row.cost is None:
            continue
        solver, layout = ("local", "col4") if row.solver == "col4" else (row.solver, "auto")
        row.measured, row.correct, row.transforms = dsp_compile_and_run(
            path, feeds, expected, solver, layout)
        row.measured_unit = "packets"
    local = next(r.measured for r in rows if r.solver == "local")
    for row in rows:
        if row.measured and local:
            row.measured_vs_local = local / row.measured
    return rows


TARGETS = {"dsp": (DSP_DEVICE, dsp_models, dsp_rows)}
"""target -> (device name, models(size, cache), rows(name, path, measure, partition))."""


# output -----------------------------------------------------------------------------------


def _f(x, spec: str) -> str:
    width = int(spec.split(".")[0])
    return f"{'-':>{width}}" if x is None else format(x, spec)


def table(rows: list[Row]) -> str:
    lines = [(f"{'model':<18} {'solver':<6} {'cost':>12} {'solve s':>8} {'gap':>8} "
              f"{'pred x':>7} {'measured':>11} {'meas x':>7} {'exact':>5} {'ok':>3}")]
    for r in rows:
        gap = "-" if r.gap is None else f"{100 * r.gap:.2f}%"
        ok = "-" if r.correct is None else ("yes" if r.correct else "NO")
        lines.append(
            f"{r.model:<18} {r.solver:<6} {_f(r.cost, '12.0f')} {_f(r.solve_s, '8.3f')} "
            f"{gap:>8} {_f(r.predicted_vs_local, '7.3f')} {_f(r.measured, '11.0f')} "
            f"{_f(r.measured_vs_local, '7.3f')} {'opt' if r.exact_optimal else 'bound':>5} "
            f"{ok:>3}" + (f"  ({r.note})" if r.note else ""))
    return "\n".join(lines)


def summary(rows: list[Row], solver: str = "gcd2") -> dict:
    chosen = [r for r in rows if r.solver == solver and r.measured_vs_local is not None]
    return {
        "solver": solver,
        "never_worse_than_local_measured": all(r.measured_vs_local >= 1 for r in chosen),
        "best_measured_vs_local": max((r.measured_vs_local for r in chosen), default=None),
        "max_gap_to_exact": max((r.gap for r in rows if r.solver == solver
                                 and r.gap is not None), default=None),
        "all_correct": all(r.correct for r in rows if r.correct is not None),
    }


def plot(rows: list[Row], out: Path) -> None:
    """Predicted and measured ratio to local, per model, for each measured solver."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r.model for r in rows))
    solvers = [s for s in dict.fromkeys(r.solver for r in rows if r.measured is not None)
               if s != "local"]
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(models), 4))
    width = 0.8 / (2 * max(len(solvers), 1))
    for i, solver in enumerate(solvers):
        for j, kind in enumerate(("predicted", "measured")):
            values = []
            for model in models:
                row = next((r for r in rows if r.model == model and r.solver == solver), None)
                value = None if row is None else (
                    row.predicted_vs_local if kind == "predicted" else row.measured_vs_local)
                values.append(value or 0)
            offset = (2 * i + j) * width - 0.4 + width / 2
            ax.bar([m + offset for m in range(len(models))], values, width,
                   label=f"{solver} {kind}", hatch="" if kind == "predicted" else "//")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(models)), models)
    ax.set_ylabel("local / solver (> 1: better than local)")
    ax.set_title("select-layouts: modelled and QEMU-measured ratio to local")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def save(out: Path, device: str, settings: dict, rows: list[Row]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "device": device,
        "host": platform.node(),
        "date": datetime.date.today().isoformat(),
        "settings": settings,
        "summary": summary(rows),
        "rows": [asdict(r) for r in rows],
    }, indent=1) + "\n")
    plot(rows, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=sorted(TARGETS), default="dsp")
    parser.add_argument("--only", help="comma-separated model names (prefixes)")
    parser.add_argument("--size", type=int, default=64, help="torchvision input size")
    parser.add_argument("--zoo-cache", type=Path, default=Path("/tmp/zoo/cache"),
                        help="where bench/zoo.py's quantized exports are (or go)")
    parser.add_argument("--measure", default="local,col4,gcd2",
                        help="solvers whose compiled model is run and measured")
    parser.add_argument("--partition", type=int, default=13)
    parser.add_argument("--out", type=Path, help="JSON path (default "
                        "bench/results/select-<device>.json)")
    args = parser.parse_args()
    from tqdm import tqdm

    device, models, rows_of = TARGETS[args.target]
    chosen = models(args.size, args.zoo_cache)
    if args.only:
        wanted = args.only.split(",")
        chosen = {k: v for k, v in chosen.items() if any(k.startswith(w) for w in wanted)}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder, \
            tqdm(list(chosen.items()), file=sys.stderr, unit="model") as bar:
        for name, make in bar:
            bar.set_postfix_str(name)
            rows += rows_of(name, make(Path(folder)), args.measure.split(","), args.partition)
    print(table(rows))
    result = summary(rows)
    print(json.dumps(result))
    out = args.out or BENCH_DIR / "results" / f"select-{device}.json"
    save(out, f"{device} (qemu-hexagon user mode, HVX 128-byte; executed packets)"
         if args.target == "dsp" else device,
         {"size": args.size, "partition": args.partition, "measure": args.measure,
          "exact_seconds": 60}, rows)
    return 0 if result["all_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
