"""
Global layout selection benchmark: every solver of `select-layouts` on one
`LayoutProblem` per model, its modelled cost beside the realised measurement.

One row per (model, solver):

- cost: the selection's cost in the problem (`problem.cost`), in the target's unit
  (DSP: the cycle model's cycles of each product plus each relayout made once; GPU:
  TMModel's ns of each kernel plus each copy kernel made once);
- solve s: the solver's wall time on this machine (`local`, `col4`: the rules);
- gap: the proven gap to `exact` (CP-SAT, 60 s): cost / exact's cost - 1 where CP-SAT
  proved optimality, else cost / its lower bound - 1 (an upper bound on the gap);
- pred x: local's cost / this cost (> 1: predicted better than local);
- the realised measurement and meas x, local's / this one. DSP: the packets QEMU executes
  for the whole compiled model (`pipelines.dsp_pipeline`, SDA packing), its outputs
  checked bit for bit against the integer reference (`reference/qlinear.py`). GPU: the
  summed kernel time OpenCL profiling reports for the whole compiled model
  (`mobile_opt.compile`, the default pipeline), in ns, with noise, kernels and transform kernels (below);
- ops: the ONNX graph's nodes (what the issue's solve-time targets count).

Targets (`--target`), each an entry of `TARGETS`:

DSP rows: `local` (the local rules), `col4` (one layout for every op: `layout=col4`),
`chain`, `pbqp`, `gcd2`, `exact`; QEMU runs `local`, `col4` and `gcd2` (`--measure`).
Models: the quantized CNN (`checking/quant_models.py` `quantized_cnn`), `mixed_layout_model`,
and torchvision ResNet-18 and MobileNetV2 quantized QDQ int8 at `--size` (default 64:
QEMU counts packets by logging every one, so a 224 input would log ~10^8 of them), made
by `bench/zoo.py`'s `quantize_cached` into `--zoo-cache` (torch needed once: run this
with /opt/zoo/bin/python's packages, or make them first with `bench/zoo.py`).

GPU rows: `local`, `chain`, `pbqp`, `gcd2`, `exact` on `gpu_layout_problem` of the module
as the default pipeline has it just before `select-layouts` (graph passes, `texture-tile`),
costed with the device's shipped profile (else PoCL's). The OpenCL device is chosen as
bench/e2e.py chooses it (`--device pocl|gpu|NAME`). Models: the 12 benchmark models of
bench/e2e.py (`bench12`, random weights as e2e runs them), torchvision's MobileNetV2/V3,
EfficientNet-B0, ResNet-18/50 at 224 (`torchvision`), and two large graphs for the solve
times (`large`): DenseNet-201 and a 24-layer GPT-2 (`Gpt2Small(tokens=128, dim=1024,
heads=16, depth=24)`, 1200 ONNX nodes), all read from `--zoo-cache` or exported there
when torch is at hand; a model neither cached nor exportable is a row note. The models
`--measure` names (default `bench12`) are compiled with `local` and `gcd2` (the default),
warmed up once and run `--repeat` times each, interleaved, the order rotating every round:
measured = the median summed kernel ns; noise = (p75 - p25) / median of the solver's own
runs; a/a = a second, separately built `local` measured in the same rounds, its median over
local's minus 1 (two builds of one program differ by this much, so a gap within it is no
gap); xfm = transform kernels among the kernels a run launches (relayout copies and
data-movement kernels, by name: `TRANSFORM_KERNELS`), xfm% their share of the measured
time (removing them all, for free, could gain at most 1 / (1 - xfm%)); ok =
`checking.worst_relative_error` against onnxruntime within `--tol` (1e-3).

    python3 bench/select_layouts.py --target dsp
    python3 bench/select_layouts.py --target dsp --only cnn,mixed
    python3 bench/select_layouts.py --target gpu --device pocl --repeat 3
    python3 bench/select_layouts.py --target gpu --device gpu --measure bench12,torchvision

Results: `bench/results/select-qemu-hexagonv66.json`, `select-<OpenCL device>.json` (the
device named as bench/e2e.py names it) and a plot `.png` beside each.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
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
    """Relayout ops in the compiled model (GPU: its transform kernels, `transform_kernels`)."""
    kernels: int | None = None
    """GPU: kernels one run of the compiled model launches."""
    noise: float | None = None
    """GPU: the spread of this solver's own runs, (p75 - p25) / median of the measured."""
    aa: float | None = None
    """GPU, local's row: a second compile of local measured in the same rounds, its median
    over local's minus 1: what two builds of one program differ by (the A/A floor)."""
    transform_share: float | None = None
    """GPU: the share of the measured kernel time spent in transform kernels."""
    rel_err: float | None = None
    """GPU: `checking.worst_relative_error` against onnxruntime."""
    onnx_nodes: int | None = None
    """Nodes of the ONNX graph (the issue's solve-time targets count these)."""
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
        except (ValueError, ImportError) as e:  # chain on a graph that is not one; no ortools
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
        if row.cost is None:
            continue
        row.predicted_vs_local = local / row.cost if row.cost else None
        if exact is None:
            continue
        row.exact_cost, row.exact_optimal = exact.cost, exact.optimal
        row.exact_bound = exact.lower_bound
        reference = exact.cost if exact.optimal else exact.lower_bound
        row.gap = row.cost / reference - 1 if reference else 0.0
    return rows, selections


# DSP ------------------------------------------------------------------------------------


def dsp_models(args) -> dict[str, Callable[[Path], Path]]:
    """name -> make(folder) -> the ONNX file."""
    import onnx
    from mobile_opt.checking import quant_models

    size, cache = args.size, args.zoo_cache

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


def dsp_rows(name: str, path: Path, args) -> list[Row]:
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
    measure = (args.measure or "local,col4,gcd2").split(",")
    rows, _ = modelled_rows(name, "dsp", problem, {
        "local": problem.local, "col4": lambda: problem.rules_selection("col4")}, args.partition)
    nodes = len(onnx.load(str(path), load_external_data=False).graph.node)
    for row in rows:
        row.build_s, row.onnx_nodes = build, nodes
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


def dsp_device(args) -> tuple[str, str]:
    return DSP_DEVICE, f"{DSP_DEVICE} (qemu-hexagon user mode, HVX 128-byte; executed packets)"


# GPU ------------------------------------------------------------------------------------

GPU_MEASURED = ("local", "gcd2")
"""The solvers whose compiled model runs on the device (gcd2: the default pipeline's)."""
AA = "local'"
"""A second build of local, measured beside it for the A/A floor (`Row.aa`)."""
BUILDS = {**{s: s for s in GPU_MEASURED}, AA: "local"}
"""The builds run side by side -> the solver each is compiled with."""

TORCHVISION = ("mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0",
               "resnet18", "resnet50")
"""Exported at 224 by `bench/zoo.py` (`export_cached`, opset 17, TorchScript)."""

GPT2_24 = "gpt2-t128-d1024-h16-l24-op17-ts.onnx"
"""`Gpt2Small(tokens=128, dim=1024, heads=16, depth=24)` in `--zoo-cache`: 1200 ONNX nodes."""

TRANSFORM_KERNELS = frozenset({"relayout", "copy", "split", "transpose", "reshape", "concat",
                               "gather", "slice", "flatten", "squeeze", "unsqueeze", "expand"})
"""Kernel name stems (`split_3`) of relayout copies and data-movement kernels."""


class ModelMissing(Exception):
    """A model that is neither cached nor exportable here (no torch): a row note."""


def gpu_groups() -> dict[str, tuple[str, ...]]:
    """`--measure` / `--only` group names -> model names."""
    import e2e

    return {"bench12": (*e2e.LIGHT_MODELS, *e2e.EXPORTED_MODELS), "torchvision": TORCHVISION,
            "large": ("densenet201", "gpt2_24")}


def gpu_device(args) -> tuple[str, str]:
    """The OpenCL device chosen as bench/e2e.py chooses it (kept in `args.cl_device`)."""
    import e2e

    args.cl_device = e2e.pick_device(args.device, "select")
    return e2e.slug(args.cl_device.name), args.cl_device.describe()


def gpu_models(args) -> dict[str, Callable[[Path], Path]]:
    """The 12 benchmark models (random weights, as bench/e2e.py runs them), torchvision's
    at 224, and two large graphs for the solve times (DenseNet-201, a 24-layer GPT-2)."""
    import e2e

    cache = args.zoo_cache

    def bench(name: str) -> Callable[[Path], Path]:
        def make(folder: Path) -> Path:
            (source,) = e2e.resolve_models([name], folder)
            if not source.path.is_file():
                raise ModelMissing(f"{source.path}: no such file")
            return e2e.prepare_model(source, folder, "random", args.seed)
        return make

    def exported(file: str, export: Callable[[Path], None]) -> Callable[[Path], Path]:
        def make(folder: Path) -> Path:
            path = cache / file
            if path.is_file():
                return path
            if e2e.torch_or_none() is None:
                raise ModelMissing(f"{path}: not cached, and no torch to export it")
            cache.mkdir(parents=True, exist_ok=True)
            export(path)
            return path
        return make

    def torchvision(arch: str) -> Callable[[Path], None]:
        def export(path: Path) -> None:
            try:
                import torchvision  # noqa: F401
            except ImportError:
                raise ModelMissing(f"{path}: not cached, and no torchvision to export it") from None
            import zoo

            zoo.export_cached(cache, arch, 17, False, 224)
        return export

    def gpt2_24(path: Path) -> None:
        import zoo

        models = e2e.bench_models_module()
        model = models.Gpt2Small(tokens=128, dim=1024, heads=16, depth=24).eval()
        partial = path.with_suffix(".partial")
        zoo.export_torch(model, models.example_input(model), partial, 17, False)
        partial.rename(path)

    groups = gpu_groups()
    return {**{name: bench(name) for name in groups["bench12"]},
            **{arch: exported(f"{arch}-op17-ts-224.onnx", torchvision(arch))
               for arch in TORCHVISION},
            "densenet201": exported("densenet201-op17-ts-224.onnx", torchvision("densenet201")),
            "gpt2_24": exported(GPT2_24, gpt2_24)}


def gpu_measured(args) -> set[str]:
    """The models `--measure` names (groups, names or `none`; default `bench12`)."""
    groups = gpu_groups()
    names: set[str] = set()
    for word in (args.measure or "bench12").split(","):
        names.update(groups.get(word, () if word in ("", "none") else (word,)))
    return names


def is_transform(kernel_time) -> bool:
    return kernel_time.kernel.rsplit("_", 1)[0] in TRANSFORM_KERNELS


def gpu_compile(path: Path, device, solver: str):
    """`path` compiled by the default GPU pipeline with `solver`, built for `device`: the
    API's executor (`CompiledModel`), whose runs give each launch's time."""
    from mobile_opt import api

    return api.compile(path, device=device, solver=solver).executor


def run_builds(path: Path, device, feeds, repeat: int) -> dict[str, list]:
    """Each of `BUILDS` compiled by the default pipeline and warmed up once, then run
    `repeat` rounds, the order rotating every round: each build's runs (`RunResult`s)."""
    compiled = {name: gpu_compile(path, device, s) for name, s in BUILDS.items()}
    for model in compiled.values():
        model.run(feeds)
    names = list(compiled)
    runs: dict[str, list] = {name: [] for name in names}
    for round_ in range(repeat):
        turn = round_ % len(names)
        for name in names[turn:] + names[:turn]:
            runs[name].append(compiled[name].run(feeds))
    return runs


def gpu_measure(rows: list[Row], path: Path, args) -> None:
    """Each of `GPU_MEASURED`'s rows gets the summed kernel time of its compiled model
    (median over `--repeat` runs, the solvers' runs interleaved after one warm-up each),
    its spread, kernels, transform kernels and error against onnxruntime."""
    import statistics

    import e2e
    from mobile_opt import checking

    _, feeds = e2e.import_model(path, args.seed)
    expected = checking.session_outputs(checking.onnxruntime_session(str(path)), feeds)
    runs = run_builds(path, args.cl_device, feeds, args.repeat)

    def summed_ns(results) -> list[float]:
        return [sum(k.seconds for k in r.kernel_times) * 1e9 for r in results]

    for row in rows:
        if row.solver not in GPU_MEASURED:
            continue
        results = runs[row.solver]
        ns = summed_ns(results)
        row.measured, row.measured_unit = statistics.median(ns), "kernel ns"
        low, _, high = statistics.quantiles(ns, n=4) if len(ns) > 1 else (ns[0],) * 3
        row.noise = (high - low) / row.measured if row.measured else None
        last = results[-1].kernel_times
        row.kernels = len(last)
        row.transforms = sum(map(is_transform, last))
        total = sum(k.seconds for k in last)
        row.transform_share = sum(k.seconds for k in last if is_transform(k)) / total
        row.rel_err = checking.worst_relative_error(results[-1].outputs, expected)
        row.correct = bool(row.rel_err <= args.tol)
        if row.solver == "local":
            row.aa = statistics.median(summed_ns(runs[AA])) / row.measured - 1


def gpu_rows(name: str, path: Path, args) -> list[Row]:
    """Every solver's row on the module as the default pipeline has it just before
    `select-layouts`; the models `--measure` names are also compiled and run."""
    import e2e
    import onnx
    from mobile_opt import pipelines
    from mobile_opt.frontend.onnx_import import import_onnx
    from mobile_opt.transforms.onnx_to_texture.selection import gpu_layout_problem
    from mobile_opt.transforms.select_layouts import SelectLayoutsPass

    device = args.cl_device
    nodes = len(onnx.load(str(path), load_external_data=False).graph.node)
    try:
        module = import_onnx(str(path))
        passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, device)
        at = next(i for i, p in enumerate(passes) if isinstance(p, SelectLayoutsPass))
        pipelines.apply(module, passes[:at])
        start = time.perf_counter()
        problem = gpu_layout_problem(module, gpu_profile(device),
                                     (device.max_image_width, device.max_image_height))
        build = time.perf_counter() - start
    except Exception as e:  # noqa: BLE001 - a model the compiler refuses is a row note
        row = note_row(name, "gpu", f"problem: {e2e.one_line(e)}")
        row.onnx_nodes = nodes
        return [row]
    rows, _ = modelled_rows(name, "gpu", problem, {"local": problem.local}, args.partition)
    for row in rows:
        row.build_s, row.onnx_nodes = build, nodes
    if name not in gpu_measured(args):
        return rows
    try:
        gpu_measure(rows, path, args)
    except Exception as e:  # noqa: BLE001 - noted on the rows it left unmeasured
        for row in rows:
            if row.solver in GPU_MEASURED:
                row.note = f"measure: {e2e.one_line(e)}"
        return rows
    local = next(r.measured for r in rows if r.solver == "local")
    for row in rows:
        if row.measured and local:
            row.measured_vs_local = local / row.measured
    return rows


def gpu_profile(device) -> str:
    """The device's shipped profile, else PoCL's (as `select-layouts` costs with)."""
    from mobile_opt.models.device_profile import profile_for_device

    return profile_for_device(device.name, device.platform) or "pocl"


def note_row(model: str, target: str, note: str) -> Row:
    """A model with no problem to solve (missing, or refused), and why."""
    return Row(model, target, "-", 0, "", None, None, False, note=note)


TARGETS = {"dsp": (dsp_device, dsp_models, dsp_rows), "gpu": (gpu_device, gpu_models, gpu_rows)}
"""target -> (device(args) -> (name for the file, description), models(args) -> {name:
make(folder) -> ONNX path}, rows(name, path, args))."""


# output -----------------------------------------------------------------------------------


def _f(x, spec: str) -> str:
    width = int(spec.split(".")[0].rstrip("d"))
    return f"{'-':>{width}}" if x is None else format(x, spec)


def table(rows: list[Row]) -> str:
    lines = [(f"{'model':<18} {'ops':>5} {'nodes':>5} {'solver':<6} {'cost':>12} "
              f"{'solve s':>8} {'gap':>8} {'pred x':>7} {'measured':>11} {'meas x':>7} "
              f"{'noise':>6} {'a/a':>6} {'kern':>5} {'xfm':>4} {'xfm%':>5} {'exact':>5} "
              f"{'ok':>3}")]
    for r in rows:
        gap = "-" if r.gap is None else f"{100 * r.gap:.2f}%"
        noise = "-" if r.noise is None else f"{100 * r.noise:.1f}%"
        aa = "-" if r.aa is None else f"{100 * r.aa:+.1f}%"
        share = "-" if r.transform_share is None else f"{100 * r.transform_share:.0f}%"
        ok = "-" if r.correct is None else ("yes" if r.correct else "NO")
        lines.append(
            f"{r.model:<18} {_f(r.onnx_nodes, '5d')} {r.nodes:>5} {r.solver:<6} "
            f"{_f(r.cost, '12.0f')} {_f(r.solve_s, '8.3f')} {gap:>8} "
            f"{_f(r.predicted_vs_local, '7.3f')} {_f(r.measured, '11.0f')} "
            f"{_f(r.measured_vs_local, '7.3f')} {noise:>6} {aa:>6} "
            f"{_f(r.kernels, '5d')} {_f(r.transforms, '4d')} {share:>5} "
            f"{'opt' if r.exact_optimal else 'bound':>5} {ok:>3}"
            + (f"  ({r.note})" if r.note else ""))
    return "\n".join(lines)


def summary_noise(rows: list[Row]) -> Callable[[Row], float]:
    """A measured row's noise: the larger of its and local's spread and the A/A floor."""
    of = {(r.model, r.solver): r for r in rows}

    def noise(row: Row) -> float:
        local = of[(row.model, "local")]
        return max(local.noise or 0.0, row.noise or 0.0, abs(local.aa or 0.0))

    return noise


def summary(rows: list[Row], solver: str = "gcd2") -> dict:
    chosen = [r for r in rows if r.solver == solver and r.measured_vs_local is not None]
    of = {(r.model, r.solver): r for r in rows}
    noise = summary_noise(rows)

    return {
        "solver": solver,
        "never_worse_than_local_measured": all(r.measured_vs_local >= 1 for r in chosen),
        "never_worse_than_local_beyond_noise": all(
            1 / r.measured_vs_local - 1 <= noise(r) for r in chosen),
        "best_measured_vs_local": max((r.measured_vs_local for r in chosen), default=None),
        "max_gap_to_exact": max((r.gap for r in rows if r.solver == solver
                                 and r.gap is not None), default=None),
        "all_correct": all(r.correct for r in rows if r.correct is not None),
        "transforms_total": [sum(of[(r.model, "local")].transforms or 0 for r in chosen),
                             sum(r.transforms or 0 for r in chosen)],
        "models": {model: {
            "onnx_nodes": of[(model, solver)].onnx_nodes,
            "problem_nodes": of[(model, solver)].nodes,
            f"{solver}_solve_s": of[(model, solver)].solve_s,
            "exact_solve_s": of[(model, "exact")].solve_s,
            "exact_optimal": of[(model, solver)].exact_optimal,
            "gap": of[(model, solver)].gap,
            "measured_vs_local": of[(model, solver)].measured_vs_local,
            "noise": (noise(of[(model, solver)])
                      if of[(model, solver)].measured_vs_local is not None else None),
            "local_transform_share": of[(model, "local")].transform_share,
            "transforms": [of[(model, "local")].transforms, of[(model, solver)].transforms],
        } for model in dict.fromkeys(r.model for r in rows) if (model, solver) in of},
    }


def plot(rows: list[Row], out: Path) -> None:
    """Predicted and measured ratio to local, per model, for each measured solver."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r.model for r in rows if r.measured is not None))
    solvers = [s for s in dict.fromkeys(r.solver for r in rows if r.measured is not None)
               if s != "local"]
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(models), 4))
    width = 0.8 / (2 * max(len(solvers), 1))
    noise = summary_noise(rows)
    shown = [1.0]
    for i, solver in enumerate(solvers):
        for j, kind in enumerate(("predicted", "measured")):
            values, errors = [], []
            for model in models:
                row = next((r for r in rows if r.model == model and r.solver == solver), None)
                value = None if row is None else (
                    row.predicted_vs_local if kind == "predicted" else row.measured_vs_local)
                values.append(value or 0)
                errors.append(noise(row) * (value or 0)
                              if kind == "measured" and row is not None and value else 0)
            shown += [v for v in values if v]
            offset = (2 * i + j) * width - 0.4 + width / 2
            ax.bar([m + offset for m in range(len(models))], values, width,
                   yerr=errors if any(errors) else None, capsize=3,
                   label=f"{solver} {kind}" + (" (bar: noise floor)" if any(errors) else ""),
                   hatch="" if kind == "predicted" else "//")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylim(min(0.9, min(shown) - 0.05), max(shown) + 0.05)
    ax.set_xticks(range(len(models)), models)
    ax.set_ylabel("local / solver (> 1: better than local)")
    units = ", ".join(dict.fromkeys(r.measured_unit for r in rows if r.measured_unit))
    ax.set_title(f"select-layouts: modelled and measured ({units}) ratio to local")
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
    try:
        plot(rows, out.with_suffix(".png"))
    except ImportError as e:  # a machine without matplotlib still gets its table and JSON
        print(f"wrote {out}; no plot ({e})")
        return
    print(f"wrote {out} and {out.with_suffix('.png')}")


def merge(parts: list[Path], out: Path | None) -> int:
    """`--merge`: the parts' rows under the first part's device and settings."""
    try:
        reports = [json.loads(p.read_text()) for p in parts]
        devices = {r["device"] for r in reports}
        rows = [Row(**row) for r in reports for row in r["rows"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        import e2e

        print(f"select_layouts: --merge: not a result of this script: {e2e.one_line(e)}",
              file=sys.stderr)
        return 1
    if len(devices) != 1:
        print(f"select_layouts: --merge: the parts ran on {len(devices)} devices", file=sys.stderr)
        return 1
    settings = reports[0]["settings"] | {"merged": [p.name for p in parts]}
    if isinstance(settings.get("measure"), list):  # gpu: models; dsp: one string of solvers
        settings["measure"] = sorted({m for r in reports for m in r["settings"]["measure"]})
    save(out or parts[0], devices.pop(), settings, rows)
    print(table(rows))
    return 0 if summary(rows)["all_correct"] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=sorted(TARGETS), default="dsp")
    parser.add_argument("--only", help="comma-separated model names (prefixes; gpu: or groups)")
    parser.add_argument("--size", type=int, default=64, help="dsp: torchvision input size")
    parser.add_argument("--zoo-cache", type=Path, default=Path("/tmp/zoo/cache"),
                        help="where bench/zoo.py's exports are (or go)")
    parser.add_argument("--measure", help="dsp: solvers whose compiled model is run and "
                        "measured (default local,col4,gcd2); gpu: models or groups (bench12, "
                        "torchvision, large; none) compiled with local and gcd2 and run "
                        "(default bench12)")
    parser.add_argument("--partition", type=int, default=13)
    parser.add_argument("--device", help="gpu: pocl, gpu, or a substring of an OpenCL "
                        "platform/device name (as bench/e2e.py)")
    parser.add_argument("--repeat", type=int, default=10, help="gpu: timed runs per solver")
    parser.add_argument("--seed", type=int, default=0, help="gpu: weights and inputs")
    parser.add_argument("--tol", type=float, default=1e-3, help="gpu: rel err for ok")
    parser.add_argument("--out", type=Path, help="JSON path (default "
                        "bench/results/select-<device>.json)")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                        help="join the rows of earlier runs on one device (a run split over "
                        "several device calls) into --out, with their summary and plot")
    args = parser.parse_args()
    if args.merge:
        return merge(args.merge, args.out)
    from tqdm import tqdm

    device_of, models, rows_of = TARGETS[args.target]
    device, description = device_of(args)
    chosen = models(args)
    if args.only:
        groups = gpu_groups() if args.target == "gpu" else {}
        wanted = [m for w in args.only.split(",") for m in groups.get(w, (w,))]
        chosen = {k: v for k, v in chosen.items() if any(k.startswith(w) for w in wanted)}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder, \
            tqdm(list(chosen.items()), file=sys.stderr, unit="model") as bar:
        for name, make in bar:
            bar.set_postfix_str(name)
            try:
                path = make(Path(folder))
            except ModelMissing as e:
                rows.append(note_row(name, args.target, str(e)))
                continue
            rows += rows_of(name, path, args)
    print(table(rows))
    result = summary(rows)
    print(json.dumps({k: v for k, v in result.items() if k != "models"}))
    out = args.out or BENCH_DIR / "results" / f"select-{device}.json"
    settings = {"partition": args.partition, "exact_seconds": 60}
    if args.target == "dsp":
        settings |= {"size": args.size, "measure": args.measure or "local,col4,gcd2"}
    else:
        settings |= {"measure": sorted(gpu_measured(args)), "repeat": args.repeat,
                     "warmup": 1, "seed": args.seed, "tol": args.tol, "weights": "random",
                     "profile": gpu_profile(args.cl_device),
                     "transform_kernels": sorted(TRANSFORM_KERNELS)}
    save(out, description, settings, rows)
    return 0 if result["all_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
