"""
`mobile-run MODEL... --memory-budget SIZE`: run models streamed under a device-memory
budget (FlashMem), beside preload-all.

Each model is compiled with the GPU pipeline, `flashmem-plan` at the budget and
`flashmem-stream` (a lowered `.mlir` module takes the passes `-p` names, the plan and its
stream ops), its weights written packed to a weight store (in `--save-dir`, or a
temporary folder), and run by the streaming runtime (`backends/opencl/streaming.py`).
Several models run one after another (FIFO), each with its own plan, under the one
budget: a model's memory is freed before the next one loads, for `--iterations` rounds.
Preload-all runs each model from the same store with every weight resident. For each,
the table gives the peak resident bytes the allocator counted, the integrated latency
(loading the weights and the first inference; making the program, the same for both,
apart) and the execution latency (the median of the later inferences). Every output of every run is checked
against onnxruntime; the exit status is 1 if any fails or the peak passes the budget.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
from tqdm import tqdm
from xdsl.dialects.builtin import ModuleOp

from mobile_opt import api
from mobile_opt.api import traces
from mobile_opt.backends.opencl.plan import Plan
from mobile_opt.checking import format_table, output_lsbs
from mobile_opt.pass_lists import MOST_BUDGET
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.reference.interpreter import find_function
from mobile_opt.tools.cli import (
    UsageError,
    UserError,
    one_line,
    option_size,
    parse_dims,
    scratch_folder,
    staged_save_dir,
)
from mobile_opt.tools.model_checks import (
    model_inputs,
    model_path,
    report_outputs,
    write_traces,
)


def mib(n: float) -> str:
    return f"{n / (1 << 20):.1f}"


@dataclass
class Measured:
    """One model in one mode."""

    peak: int = 0
    load_s: float = 0.0
    first_s: float = 0.0
    runs_s: list[float] = field(default_factory=list)
    build_s: float = 0.0

    @property
    def integrated_s(self) -> float:
        return self.load_s + self.first_s

    @property
    def execution_s(self) -> float:
        return statistics.median(self.runs_s) if self.runs_s else self.first_s


class Compiled(NamedTuple):
    """A model compiled and planned under the budget, with its store and inputs."""

    path: Path
    module: ModuleOp
    plan: Plan
    store: Path
    feeds: dict[str, np.ndarray]
    args: argparse.Namespace
    """mobile-run's options with MODEL this model."""
    lsbs: dict[str, float]

    def report(self, outputs: dict[str, np.ndarray]) -> int:
        """mobile-run's error table against onnxruntime; 1 if an output fails."""
        return report_outputs(self.path, self.feeds, outputs, self.args, lsbs=self.lsbs)


def run_memory_budget_mode(args: argparse.Namespace) -> int:
    """The mode of the module docstring."""
    from mobile_opt.backends.opencl.devices import DeviceError, named_or_default

    # no device holds a petabyte; the planner's integers overflow long before int64 does
    budget = option_size(args.memory_budget, "--memory-budget", most=MOST_BUDGET)
    if args.iterations < 1:
        raise UsageError(f"--iterations expects N >= 1, got {args.iterations}")
    for option, given in (("--fp16", args.fp16), ("--reference", args.reference),
                          ("--input", args.input)):
        if given:
            raise UsageError(f"{option} does not apply with --memory-budget")
    try:
        device = named_or_default(args.device or None)[0]
    except DeviceError as e:
        raise UserError(str(e)) from None
    if not args.save_dir:
        folder = scratch_folder()
        try:
            return _run(args, device, budget, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    # the stores go to the folder as one set once every run is checked; none on an error
    with staged_save_dir(args.save_dir) as staging:
        return _run(args, device, budget, staging)


def _run(args, device, budget: int, folder: Path) -> int:
    import pyopencl as cl

    from mobile_opt.backends.opencl.executor import CompiledModel, DeviceMemory, OpenCLRunError
    from mobile_opt.backends.opencl.streaming import StreamingModel
    from mobile_opt.backends.opencl.weight_store import WeightStore, write_store

    models = []
    specs = list(args.model)
    for index, spec in enumerate(tqdm(specs, desc="plan", unit="model", file=sys.stderr, disable=None)):
        one = argparse.Namespace(**{**vars(args), "model": spec})
        path = model_path(one)
        # planned within the budget; built here, each in its turn, on one context
        compiled = api.compile(path, "gpu", device=device, dims=parse_dims(args.dim),
                               memory_budget=budget, solver=args.solver, passes=args.passes,
                               function=args.function, chunk_kb=args.chunk_kb,
                               time_limit=args.time_limit, build=False)
        function = find_function(compiled.imported, args.function)
        lsbs = output_lsbs(function)
        feeds = model_inputs(function, one, path)
        module, plan = compiled.module, compiled.plan
        store = folder / f"{index}-{Path(path).stem}.weights"
        with tqdm(total=plan.weight_bytes, desc=f"store {Path(path).name}", unit="B",
                  unit_scale=True, file=sys.stderr, leave=False, disable=None) as bar:
            try:
                write_store(store, plan, args.chunk_kb * 1024, bar.update)
            except (OpenCLRunError, ReferenceRunError) as e:  # names the node: add the file
                raise UserError(f"{path}: {one_line(e)}") from None
        models.append(Compiled(path, module, plan, store, feeds, one, lsbs))

    context = cl.Context([getattr(device, "device", device)])
    memory = DeviceMemory(context)
    streamed = [Measured() for _ in models]
    built = []
    failed = False
    try:
        for c in models:
            # build each program once; its memory is loaded in its turn
            started = time.perf_counter()
            model = StreamingModel(c.module, device, WeightStore(c.store), args.function,
                                   c.plan, budget, context, memory)
            model.unload()
            built.append(model)
            streamed[len(built) - 1].build_s = time.perf_counter() - started
        peak, checks = 0, []
        traced = None  # the last streamed run, for --trace
        rounds = tqdm(range(args.iterations * len(models)), desc="run", unit="inference",
                      file=sys.stderr, disable=None)
        for i in rounds:
            which = i % len(models)
            model, m, c = built[which], streamed[which], models[which]
            peak = max(peak, memory.peak)
            memory.peak = memory.resident  # this run's peak from here
            started = time.perf_counter()
            model.load()
            loaded = time.perf_counter()
            last = i == args.iterations * len(models) - 1
            result = model.run(c.feeds, trace=last and bool(args.trace or args.trace_png))
            done = time.perf_counter()
            model.unload()
            if last:
                traced = result
            m.peak = max(m.peak, memory.peak)
            if i < len(models):
                m.load_s, m.first_s = loaded - started, done - loaded
            else:
                m.runs_s.append(done - loaded)
            checks.append((f"{c.path} (streamed, round {i // len(models) + 1}):", c,
                           result.outputs))
        rounds.close()
        peak = max(peak, memory.peak)
        for title, c, outputs in checks:
            print(title)
            failed |= c.report(outputs) != 0
        preload = []
        for c in models:
            m = Measured()
            started = time.perf_counter()
            model = CompiledModel(c.module, device, args.function, c.plan,
                                  WeightStore(c.store), context)
            m.build_s = model.build_seconds
            m.load_s = time.perf_counter() - started - model.build_seconds
            result = model.run(c.feeds)
            m.first_s = result.wall_seconds
            for _ in range(max(args.iterations - 1, 1)):
                m.runs_s.append(model.run(c.feeds).wall_seconds)
            m.peak = model.memory.peak
            model.unload()
            preload.append(m)
            print(f"{c.path} (preload-all):")
            failed |= c.report(result.outputs) != 0
    except (OpenCLRunError, ReferenceRunError) as e:
        raise UserError(one_line(e)) from None
    rows = [["model", "mode", "peak MiB", "integrated ms", "execution ms", "build s"]]
    for c, s, p in zip(models, streamed, preload):
        rows.append([Path(c.path).name, "preload-all", mib(p.peak), f"{p.integrated_s * 1e3:.1f}",
                     f"{p.execution_s * 1e3:.1f}", f"{p.build_s:.1f}"])
        rows.append(["", "streamed", mib(s.peak), f"{s.integrated_s * 1e3:.1f}",
                     f"{s.execution_s * 1e3:.1f}", f"{s.build_s:.1f}"])
    print(f"\ndevice: {device.describe()}; budget {mib(budget)} MiB; {args.iterations} "
          f"round(s) of {len(models)} model(s), one after another")
    print(format_table(rows))
    print(f"streamed peak over all runs: {mib(peak)} MiB of the {mib(budget)} MiB budget "
          f"(preload-all, largest model: {mib(max(p.peak for p in preload))} MiB)")
    c = models[-1]
    other = {"mode": "streamed", "budget_bytes": budget, "chunk_bytes": args.chunk_kb * 1024}
    write_traces(args, lambda path: traces.write_trace(path, traced, c.plan, Path(c.path).name,
                                                       device.name, other))
    if peak > budget:
        print(f"error: the streamed runs held {peak} bytes, over the budget of {budget}",
              file=sys.stderr)
        failed = True
    return 1 if failed else 0
