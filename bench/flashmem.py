"""
FlashMem on this compiler: models run streamed under a memory budget beside
preload-all, with the default GPU pipeline.

For each model the budget is its activation arena plus `--share` (0.25) of its weight
bytes, or the least budget that works where that is less than some layer needs alone.
`flashmem-plan` plans it (time, status, tier; the checker; the two naive baselines of
§5.4 and preload-all replayed on the same problem), the weights are written to a weight
store, and each mode runs in cold processes of its own (`--child`; a first one each, not
counted, fills the driver's kernel cache, as an app's earlier launches would): the
integrated latency is loading the weights plus the first inference (making the program,
printing its OpenCL C and building it, is given apart: a deployed model has it done ahead
of time), the execution latency the median of the later inferences, and the peak the
counting allocator's. Every output is checked against onnxruntime. `--sources ring map`
runs each mode with its weights through the staging ring and straight from the map too.

The overlap microbenchmark times a model's kernels alone, the copy of its streamed
weights' chunks from the runtime's source alone (the staging ring; a discrete GPU's pinned
store), and both: from the pinned store the copies are enqueued in step with the kernels,
as the runtime enqueues them; through the ring, after all the kernels (the host waits for
staging buffers there). The copies are repeated to take about the kernels' time, and
overlap is wall / max(copy, compute) (1.0 perfect, 2.0 none).

    python3 bench/flashmem.py [--models resnet50 gpt2_base vit_b16] [--device pocl|gpu]

Models: resnet50 is the onnx package's light_resnet50 with random weights; gpt2_base and
vit_b16 are exported by bench/models.py (torch) into `--models-dir`, or read from it.
Results: `bench/results/flashmem-<device>.json` and a plot of the resident bytes over the
layers of the first inference, preload-all and streamed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

import e2e
from e2e import BENCH_DIR, device_mib, one_line, pick_device, slug

from mobile_opt import api, checking, pipelines

MODELS = ["resnet50", "gpt2_base", "vit_b16"]
MIB = 1 << 20


def model_file(name: str, models_dir: Path, scratch: Path, seed: int) -> Path:
    """The ONNX file of a benchmark model, exported or with random weights as needed."""
    if name.endswith(".onnx"):
        return Path(name)
    if name == "resnet50":
        (source,) = e2e.resolve_models(["light_resnet50"], scratch)
        return e2e.prepare_model(source, scratch, "random", seed)
    path = models_dir / f"{name}.onnx"
    if not path.exists():
        if e2e.torch_or_none() is None:
            raise SystemExit(f"flashmem: {path} is missing and torch is not installed to "
                             "export it (bench/models.py)")
        models_dir.mkdir(parents=True, exist_ok=True)
        e2e.bench_models_module().export(name, path, seed)
    return path


# the cold process ---------------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    """One mode of one model in this process: JSON on stdout, outputs to `--out`."""
    started = time.perf_counter()
    from mobile_opt.backends.opencl.executor import CompiledModel
    from mobile_opt.backends.opencl.streaming import StreamingModel
    from mobile_opt.backends.opencl.weight_store import WeightStore
    from xdsl.parser import Parser

    device = pick_device(args.device, "flashmem")
    module = Parser(pipelines.context(), Path(args.module).read_text(), args.module).parse_module()
    feeds = dict(np.load(args.inputs))
    imported = time.perf_counter()
    store = WeightStore(Path(args.store))
    direct = args.direct if args.direct is None else args.direct == "map"
    if args.pinned_store:
        from mobile_opt.backends.opencl import memory
        memory.PINNED_REGISTERED = args.pinned_store[0] != "mapped"
        if args.pinned_store[0] == "packed":
            memory.PINNED_ALIGN = 1
    if args.child == "streamed":
        model = StreamingModel(module, device, store, direct=direct)
    else:
        model = CompiledModel(module, device, store=store, direct=direct)
    loaded = time.perf_counter()
    moving = [0.0]  # each run's host time in chunk moves
    waiting = [0.0]  # and in waits for memory
    if isinstance(model, StreamingModel):
        move = model.copier.move

        def timed_move(*a, **kw):
            t = time.perf_counter()
            try:
                return move(*a, **kw)
            finally:
                moving[-1] += time.perf_counter() - t

        model.copier.move = timed_move
    first = model.run(feeds)
    done = time.perf_counter()
    marks = [m for _, m in model.memory.marks]
    runs = []
    for _ in range(args.iterations - 1):
        moving.append(0.0)
        waited = getattr(model, "wait_seconds", 0.0)
        runs.append(model.run(feeds).wall_seconds)
        waiting.append(getattr(model, "wait_seconds", 0.0) - waited)
    np.savez(args.out, **first.outputs)
    print(json.dumps({
        "import_s": imported - started, "build_s": model.build_seconds,
        "load_s": loaded - imported - model.build_seconds, "first_s": done - loaded,
        "integrated_s": loaded - imported - model.build_seconds + done - loaded,
        "execution_s": statistics.median(runs) if runs else done - loaded, "runs_s": runs,
        "kernel_s": sum(k.seconds for k in first.kernel_times),
        "peak": model.memory.peak, "host_pinned": model.memory.host_pinned,
        "settle_s": getattr(model, "settle_seconds", 0.0), "upload_s": model.upload_seconds,
        "source_s": model.source_seconds, "first_move_s": moving[0],
        "move_s": statistics.median(moving[1:]) if runs else 0.0,
        "wait_s": statistics.median(waiting[1:]) if runs else 0.0, "direct": model.direct,
        "resident_end": model.memory.resident, "device_mib": device_mib(),
        "resident": marks}))


def cold(mode: str, module: Path, store: Path, inputs: Path, out: Path, args,
         direct: str | None = None, pinned: str | None = None) -> dict:
    return run_child([mode, "--module", str(module), "--store", str(store), "--inputs",
                      str(inputs), "--out", str(out), "--iterations", str(args.iterations)]
                     + (["--direct", direct] if direct else [])
                     + (["--pinned-store", pinned] if pinned else []), args)


def run_child(child_args: list[str], args, env: dict[str, str] | None = None) -> dict:
    """This script as `--child ...` in a process of its own; the JSON of its last line."""
    command = [sys.executable, __file__, "--child", *child_args] + (
        ["--device", args.device] if args.device else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                          check=False, env=env)
    if done.returncode:
        raise RuntimeError(f"{child_args[0]} run failed: "
                           f"{done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# the overlap microbenchmark ----------------------------------------------------------


def overlap(module, device, store_path: Path, streamed: list[str], chunk: int,
            repeat: int, targets: str = "image") -> dict:
    """
    Kernels alone, chunk copies alone, and both: the medians over `repeat` rounds of the
    wall time and of this process's CPU time (all its threads, a CPU device's workers
    included). The copies go into the weights' textures, or into buffers of their bytes
    (`targets="buffer"`), to tell the copy engine's image writes apart.
    """
    import pyopencl as cl

    from mobile_opt.backends.opencl.executor import CompiledModel
    from mobile_opt.backends.opencl.memory import ChunkCopier, PinnedStore, discrete
    from mobile_opt.backends.opencl.streaming import FLUSH_EVERY
    from mobile_opt.backends.opencl.weight_store import WeightStore

    store = WeightStore(store_path)
    model = CompiledModel(module, device, store=store)
    records = [r for r in model.plan.weights if r.value in streamed] or model.plan.weights
    # the source the streaming runtime takes on this device
    source = (PinnedStore(model.context, model.memory, store, [r.value for r in records])
              if discrete(model.device) else None)
    copier = ChunkCopier(model.context, model.memory, chunk, 8, source)
    if targets == "buffer":
        records = [dataclasses.replace(r, kind="buffer") for r in records]
        dests = {r.value: model.memory.buffer(store.entries[r.value]["nbytes"])
                 for r in records}
    else:
        dests = {r.value: model.memory.slot(model.plan.slots[r.slot]) for r in records}

    rounds = 1  # copies of the streamed weights per measurement, to match the kernels' time

    def timed(kernels: bool, copying: bool) -> tuple[float, float]:
        # no user-event gate: pyopencl waits on the events of a host copy's wait list
        jobs = [r for _ in range(rounds) for r in records] if copying else []
        events: list = []
        launches = len(model.plan.launches)

        def copies(upto: int) -> None:
            for r in jobs[len(events): upto]:
                events.append(copier.move(store, r, dests[r.value], 0,
                                          store.entries[r.value]["chunks"]))

        def each(i: int) -> None:
            # the copies enqueued in step with the kernels, as the runtime enqueues a
            # layer's loads after its kernel: all after all kernels, they would start only
            # once the host had enqueued every kernel (2.5 ms of ViT-B/16's 11 on the H100)
            copies(len(jobs) * i // launches)
            if i % FLUSH_EVERY == 0:
                model.queue.flush()

        start, cpu = time.perf_counter(), time.process_time()
        # through the ring the host waits for staging buffers, which a CPU device frees
        # only behind the kernels: there all kernels go first (microseconds to enqueue)
        launched = model.launch(each=each if source is not None else None) if kernels else []
        model.queue.flush()
        copies(len(jobs))
        copier.queue.flush()
        cl.wait_for_events(events + launched)
        model.queue.finish()
        copier.queue.finish()
        return time.perf_counter() - start, time.process_time() - cpu

    timed(True, True)  # warm-up
    # a balanced load: as many copy rounds as take about the kernels' time
    rounds = max(1, round(timed(True, False)[0] / timed(False, True)[0]))
    samples: dict[str, list[tuple[float, float]]] = {"compute": [], "copy": [], "both": []}
    for _ in range(repeat):
        samples["compute"].append(timed(True, False))
        samples["copy"].append(timed(False, True))
        samples["both"].append(timed(True, True))
    result: dict = {k: statistics.median(w for w, _ in v) for k, v in samples.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in samples.items()}
    result["cpu"] = cpu
    result["bytes"] = rounds * sum(store.entries[r.value]["nbytes"] for r in records)
    result["rounds"] = rounds
    result["targets"] = targets
    longest = max(result["compute"], result["copy"])
    result["ratio"] = result["both"] / longest
    if model.device.type & cl.device_type.CPU:
        # kernels and copies share the host's cores: `both` takes at least their CPU
        # time over the cores (so the ratio can be no better than this)
        cores = len(os.sched_getaffinity(0))
        result["cores"] = cores
        result["ratio_bound"] = max(1.0, (cpu["compute"] + cpu["copy"]) / cores / longest)
    copier.close()
    if source is not None:
        source.close()
    result["source"] = "pinned store" if source is not None else "staging ring"
    for dest in dests.values():
        model.memory.free(dest)
    model.unload()
    return result


def overlap_child(args: argparse.Namespace) -> None:
    """The overlap microbenchmark in a process of its own (`POCL_MAX_PTHREAD_COUNT` is
    read when the platform starts)."""
    from xdsl.parser import Parser

    device = pick_device(args.device, "flashmem")
    module = Parser(pipelines.context(), Path(args.module).read_text(), args.module).parse_module()
    spec = json.loads(Path(args.inputs).read_text())
    print(json.dumps(overlap(module, device, Path(args.store), spec["streamed"], spec["chunk"],
                             spec["repeat"], spec["targets"])))


def overlaps(module: Path, store: Path, streamed: list[str], chunk: int, args,
             scratch: Path, cpu_device: bool) -> dict:
    """
    The overlap microbenchmark into textures and into buffers; on a CPU device also with
    one core kept from the kernels (`POCL_MAX_PTHREAD_COUNT`), as a SoC's copy engine
    is not the cores that compute.
    """
    spec = scratch / "overlap.json"
    out = {}
    cores = len(os.sched_getaffinity(0))
    variants = [("image", None), ("buffer", None)]
    if cpu_device and cores > 1:
        variants.append(("image", cores - 1))
    for targets, threads in variants:
        spec.write_text(json.dumps({"streamed": streamed, "chunk": chunk,
                                    "repeat": args.repeat, "targets": targets}))
        env = dict(os.environ)
        if threads:
            env["POCL_MAX_PTHREAD_COUNT"] = str(threads)
        key = targets if not threads else f"{targets}, {threads} of {cores} cores computing"
        out[key] = run_child(["overlap", "--module", str(module), "--store", str(store),
                              "--inputs", str(spec)], args, env)
    return {**out["image"], "variants": out}


# one model ----------------------------------------------------------------------------


class Planned(NamedTuple):
    """A benchmark model compiled both ways, the streamed one planned at the bench's budget."""

    path: Path
    stem: str
    """The scratch files' names (a model may be named by an .onnx path)."""
    preload: ModuleOp
    planned: ModuleOp
    feeds: dict
    weight_bytes: int
    arena: int
    target: int
    least: object
    budget: int
    checked: tuple
    """`checked_plan` of the plan, made before `flashmem-stream` replaced the packs."""
    solve_s: float


def plan_model(name: str, device, args, scratch: Path) -> Planned:
    """
    `name` imported and compiled by the default pipeline (preload-all) and by the pipeline
    under a budget (flashmem-split, flashmem-plan, flashmem-stream) at the arena plus
    `args.share` of the weight bytes, or the least budget that works where that is more.
    """
    from mobile_opt.models import flashmem
    from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass

    path = model_file(name, Path(args.models_dir), scratch, args.seed)
    module, feeds = e2e.import_model(path, args.seed)
    source = module.clone()
    # preload-all: what a run without a budget compiles (in place; built by the children)
    api.compile(module, device=device, build=False)
    chunk = args.chunk_kb * 1024
    problem, _, storage = lowered_problem(module, device, 1, chunk)
    weights = sum(w.bytes for w in problem.weights)
    arena = storage.arena_bytes()
    target = arena + int(args.share * weights)
    # streamed: the pipeline under the budget (flashmem-split, flashmem-plan,
    # flashmem-stream), as mobile-run's
    planned = source
    stream = FlashMemPlanPass(budget_mb=target / MIB, chunk_kb=args.chunk_kb,
                              time_limit_s=args.time_limit, workers=args.workers)
    passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, device, stream=stream)
    *lowering, plan_pass, stream_pass = passes
    pipelines.apply(planned, lowering)
    split, packs, _ = lowered_problem(planned, device, target, chunk)
    least = flashmem.least_budget(split, 10, args.workers)
    budget = max(target, least.least)
    started = time.perf_counter()
    pipelines.apply(planned, [dataclasses.replace(plan_pass, budget_mb=budget / MIB)])
    solve_s = time.perf_counter() - started
    checked = checked_plan(planned, split, packs)
    pipelines.apply(planned, [stream_pass])
    return Planned(path, Path(name).stem, module, planned, feeds, weights, arena, target,
                   least, budget, checked, solve_s)


def checked_plan(planned: ModuleOp, split, packs: dict):
    """
    The plan of `planned` again from its attributes (`flashmem-plan` wrote them on the
    packs of `split`, its problem), checked independently, and the baselines replayed on
    the same problem: (problem, weight plans, replay, scores).
    """
    from mobile_opt.models import flashmem

    head = planned.attributes["stream.plan"]
    problem = dataclasses.replace(split, budget_bytes=head.budget.data)
    weight_plans = flashmem.weight_plans(
        {n: p.attributes["stream.weight_plan"] for n, p in packs.items()})
    replayed = flashmem.replay(problem, weight_plans)
    made = flashmem.Plan(weight_plans, head.status.data, "flashmem-plan", 0, True,
                         replayed.peak, replayed.peak_layer)
    flashmem.check(problem, made)
    return problem, weight_plans, replayed, flashmem.compare(problem, made)


def fused_build(p: Planned, device, args) -> tuple[ModuleOp, dict]:
    """
    `p`'s model compiled under its budget with `flashmem-fuse` in the graph passes (the
    budget pipeline puts `flashmem-split` before it; the same budget, chunk and device
    profile as `flashmem-plan`), and its plan's score: the layers (kernel launches) and the
    checked plan's chunks over capacity.
    """
    from mobile_opt.models.device_profile import profile_for_device
    from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass

    module, _ = e2e.import_model(p.path, args.seed)
    profile = profile_for_device(device.name, device.platform)
    fuse = (f"flashmem-fuse{{budget-mb={p.budget / MIB} chunk-kb={args.chunk_kb} "
            f"workers={args.workers}" + (f" device={profile}}}" if profile else "}"))
    stream = FlashMemPlanPass(budget_mb=p.budget / MIB, chunk_kb=args.chunk_kb,
                              time_limit_s=args.time_limit, workers=args.workers)
    passes, _ = pipelines.gpu_pipeline(f"{pipelines.GRAPH_PASSES},{fuse}", device,
                                       stream=stream)
    pipelines.apply(module, passes[:-1])  # the plan's score before flashmem-stream
    problem, packs, _ = lowered_problem(module, device, p.budget, args.chunk_kb * 1024)
    scores = checked_plan(module, problem, packs)[3]
    pipelines.apply(module, passes[-1:])
    return module, {"layers": problem.n, "over_capacity": scores["flashmem"].over_capacity}


def lowered_problem(module: ModuleOp, device, budget: int, chunk: int):
    """FlashMem's problem of a lowered module at `budget`, with the load ratios of the
    device's shipped profile, as `flashmem-plan` builds it: (problem, packs, storage)."""
    from mobile_opt.models import flashmem
    from mobile_opt.models.device_profile import load_profile, profile_for_device
    from mobile_opt.transforms.flashmem_plan import flashmem_problem
    from xdsl.dialects import func

    function = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp))
    kernels = {k.sym_name.data: k for k in module.body.block.ops if k.name == "ocl.kernel"}
    profile = profile_for_device(device.name, device.platform)
    ratios = flashmem.load_ratios(load_profile(profile) if profile else None)
    return flashmem_problem(function, budget, chunk, kernels=kernels, ratios=ratios)


def bench_model(name: str, device, args, scratch: Path) -> dict:
    import pyopencl as cl

    from mobile_opt.backends.opencl.plan import build_plan
    from mobile_opt.backends.opencl.weight_store import write_store

    p = plan_model(name, device, args, scratch)
    path, stem, module, planned, feeds = p.path, p.stem, p.preload, p.planned, p.feeds
    least, budget, chunk = p.least, p.budget, args.chunk_kb * 1024
    problem, weight_plans, replayed, scores = p.checked
    head = planned.attributes["stream.plan"]
    plan = build_plan(planned)
    stores = {"streamed": scratch / f"{stem}.weights", "preload": scratch / f"{stem}.all.weights"}
    write_store(stores["streamed"], plan, chunk)
    write_store(stores["preload"], build_plan(module), chunk)
    mlirs = {"streamed": scratch / f"{stem}.mlir", "preload": scratch / f"{stem}.all.mlir"}
    mlirs["streamed"].write_text(str(planned))
    mlirs["preload"].write_text(str(module))
    inputs = scratch / f"{stem}.inputs.npz"
    np.savez(inputs, **feeds)
    expected = checking.run_onnxruntime(path, feeds)
    row = {"model": name, "layers": problem.n, "weights": len(problem.weights),
           "weight_bytes": p.weight_bytes, "arena_bytes": p.arena, "target_budget": p.target,
           "least_budget": least.least, "budget": budget,
           "solver": {"seconds": p.solve_s, "status": head.status.data.value,
                      "plan_peak": replayed.peak,
                      "streamed": sum(1 for p in weight_plans.values() if not p.preloaded)},
           "plans": {k: {"peak": v.peak, "over_capacity": v.over_capacity, "fits": v.fits,
                         "cost": v.cost} for k, v in scores.items()}}
    # (key, mode, weight source, pinned store): the runtime's defaults, or each of
    # --sources and --pinned-store (the first of each under the plain keys; preload-all
    # has no pinned store)
    variants = [
        ("@".join([mode] + [t for t, k in ((source, i), (pinned, j)) if k]), mode, mode,
         source, pinned)
        for i, source in enumerate(args.sources or [None])
        for j, pinned in enumerate(args.pinned_store or [None])
        for mode in ("preload", "streamed") if j == 0 or mode == "streamed"]
    if args.fuse:  # the streamed build with flashmem-fuse in its pipeline
        try:
            fused, row["fuse"] = fused_build(p, device, args)
        except DiagnosticException as e:  # a split can raise the least budget past it
            row["fuse"] = {"error": one_line(e)}
        else:
            write_store(stores.setdefault("fuse", scratch / f"{stem}.fuse.weights"),
                        build_plan(fused), chunk)
            mlirs["fuse"] = scratch / f"{stem}.fuse.mlir"
            mlirs["fuse"].write_text(str(fused))
            variants.append(("streamed@fuse", "streamed", "fuse", None, None))
    runs: dict[str, list[dict]] = {key: [] for key, *_ in variants}
    for key, mode, build, *how in variants:  # a first process each fills the driver's program
        cold(mode, mlirs[build], stores[build], inputs, scratch / "warm.npz", args, *how)
    for i in range(args.cold):  # cold processes in alternating order
        for key, mode, build, *how in variants if i % 2 == 0 else variants[::-1]:
            out = scratch / f"{stem}.{mode}.npz"
            run = cold(mode, mlirs[build], stores[build], inputs, out, args, *how)
            got = dict(np.load(out))
            run["outputs"] = {k: checking.compare(got[k], v, checking.criterion(v)).status
                              for k, v in expected.items()}
            runs[key].append(run)
    for key, cold_runs in runs.items():
        row[key] = {**cold_runs[0], "cold_runs": cold_runs}
        for k in ("integrated_s", "execution_s", "load_s", "first_s", "build_s", "settle_s",
                  "upload_s", "source_s", "first_move_s", "move_s", "wait_s"):
            row[key][k] = statistics.median(r[k] for r in cold_runs)
        row[key]["peak"] = max(r["peak"] for r in cold_runs)
        row[key]["outputs"] = {k: "PASS" if all(r["outputs"][k] == "PASS" for r in cold_runs)
                               else "FAIL" for k in expected}
    if args.skip_overlap:
        return row
    streamed_values = [s.value for s in plan.streams]
    row["overlap"] = overlaps(mlirs["streamed"], stores["streamed"], streamed_values, chunk,
                              args, scratch, bool(device.device.type & cl.device_type.CPU))
    return row


# report -----------------------------------------------------------------------------


def ms(seconds: float) -> str:
    """Milliseconds to three significant figures or whole."""
    return f"{seconds * 1e3:.3g}" if seconds < 0.1 else f"{seconds * 1e3:.0f}"


def overlap_cell(o: dict) -> str:
    """The ratio into textures; into buffers; and on a CPU device, the cores' bound and
    the ratio with a core kept from the kernels."""
    v = o.get("variants", {})
    cell = f"{o['ratio']:.2f}" + (f" (buf {v['buffer']['ratio']:.2f}" if "buffer" in v else " (")
    if "ratio_bound" in o:
        cell += f", bound {o['ratio_bound']:.2f}"
    kept = [x for k, x in v.items() if "cores computing" in k]
    if kept:
        cell += f", core kept {kept[0]['ratio']:.2f}"
    return cell + ")"


VARIANTS = {"ring": "weights from the ring", "map": "weights from the map",
            "registered": "pinned store registered", "mapped": "pinned store mapped",
            "packed": "pinned store registered, weights back to back",
            "fuse": "with flashmem-fuse"}


def table(rows: list[dict]) -> str:
    head = ["model", "weights MiB", "budget MiB", "peak preload", "peak streamed", "memory ×",
            "integrated ms (pre/str)", "execution ms (pre/str)", "solve s", "overlap"]
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append([r["model"], "error: " + r["error"]] + [""] * (len(head) - 2))
            continue
        p, s = r["preload"], r["streamed"]
        lines.append([
            r["model"], f"{r['weight_bytes'] / MIB:.1f}", f"{r['budget'] / MIB:.1f}",
            f"{p['peak'] / MIB:.1f}",
            f"{s['peak'] / MIB:.1f}" + ("" if s["peak"] <= r["budget"] else " OVER"),
            f"{p['peak'] / s['peak']:.2f}",
            f"{ms(p['integrated_s'])}/{ms(s['integrated_s'])}",
            f"{ms(p['execution_s'])}/{ms(s['execution_s'])}",
            f"{r['solver']['seconds']:.1f} {r['solver']['status']}",
            overlap_cell(r["overlap"]) if "overlap" in r else "-"])
        for tag in sorted({k.partition("@")[2] for k in r if "@" in k}):
            # preload-all of the same source (it has no pinned copies to vary)
            p = r.get(f"preload@{tag}", r.get(f"preload@{tag.partition('@')[0]}", p))
            s = r[f"streamed@{tag}"]
            fuse = r.get("fuse", {})
            label = VARIANTS.get(tag, tag) + (
                f" ({fuse['layers']} layers, {fuse['over_capacity']} chunks over capacity)"
                if tag == "fuse" else "")
            lines.append([f"  {label}", "", "", "", "", "",
                          f"{ms(p['integrated_s'])}/{ms(s['integrated_s'])}",
                          f"{ms(p['execution_s'])}/{ms(s['execution_s'])}", "", ""])
    return checking.format_table(lines)


def plot(rows: list[dict], path: Path, device: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("flashmem: no matplotlib, no plot", file=sys.stderr)
        return
    rows = [r for r in rows if "error" not in r]
    if not rows:
        return
    fig, axes = plt.subplots(1, len(rows), figsize=(5 * len(rows), 3.6), squeeze=False)
    for ax, r in zip(axes[0], rows):
        for mode, style in (("preload", "-"), ("streamed", "-")):
            resident = [b / MIB for b in r[mode]["resident"]]
            ax.plot(range(1, len(resident) + 1), resident, style, label=mode)
        ax.axhline(r["budget"] / MIB, color="gray", ls="--", lw=1, label="budget")
        ax.set_title(f"{r['model']}")
        ax.set_xlabel("layer (kernel launch)")
        ax.set_ylabel("resident MiB")
        ax.legend(fontsize=8)
    fig.suptitle(f"FlashMem: resident device memory over the first inference ({device})",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--device", help="pocl (default without a GPU), gpu, or a name")
    parser.add_argument("--share", type=float, default=0.25,
                        help="budget: the arena plus this share of the weight bytes")
    parser.add_argument("--chunk-kb", type=int, default=256)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="CP-SAT workers (2: this box)")
    parser.add_argument("--iterations", type=int, default=6,
                        help="inferences per cold process (execution: runs 2..N)")
    parser.add_argument("--repeat", type=int, default=5, help="overlap rounds")
    parser.add_argument("--cold", type=int, default=2,
                        help="cold processes per mode, in alternating order (medians)")
    parser.add_argument("--models-dir", default=str(Path(tempfile.gettempdir()) / "zoo-large"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", help="JSON path (default bench/results/flashmem-<device>.json)")
    parser.add_argument("--merge", nargs="+", metavar="JSON",
                        help="merge these runs' results into --out (no measuring)")
    parser.add_argument("--sources", nargs="+", choices=["ring", "map"],
                        help="also run each mode with its weights through the staging ring "
                        "or straight from the map (an A/B in the same cold-process order)")
    parser.add_argument("--pinned-store", nargs="+", choices=["registered", "mapped", "packed"],
                        help="also run streamed with the pinned store in registered host "
                        "memory (each weight at a page boundary), a mapped buffer, or "
                        "registered with the weights back to back (an A/B, as --sources)")
    parser.add_argument("--fuse", action="store_true",
                        help="also run streamed with flashmem-fuse in its pipeline (an A/B, "
                        "as --sources)")
    parser.add_argument("--skip-overlap", action="store_true",
                        help="no overlap microbenchmark (an A/B of --sources alone)")
    for name in ("child", "module", "store", "inputs", "direct"):
        parser.add_argument(f"--{name}", help=argparse.SUPPRESS)
    return parser


def merge(paths: list[Path], out: Path) -> int:
    """The rows of several runs of this script (one model each, as a time-limited machine
    takes them) in one JSON, with its table and plot; the first run's device and settings."""
    runs = [json.loads(p.read_text()) for p in paths]
    devices = {r["device"] for r in runs}
    if len(devices) > 1:
        raise SystemExit(f"flashmem: the runs are of different devices: {sorted(devices)}")
    rows = [row for r in runs for row in r["rows"]]
    out.write_text(json.dumps({**{k: v for k, v in runs[0].items() if k != "rows"},
                               "rows": rows}, indent=1) + "\n")
    print(table(rows))
    plot(rows, out.with_suffix(".png"), runs[0]["device"])
    print(f"saved {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.child == "overlap":
        overlap_child(args)
        return 0
    if args.child:
        child(args)
        return 0
    if args.merge:
        if not args.out:
            raise SystemExit("flashmem: --merge needs --out")
        return merge([Path(p) for p in args.merge], Path(args.out))
    device = pick_device(args.device, "flashmem")
    rows = []
    from tqdm import tqdm

    with tempfile.TemporaryDirectory() as folder:
        for name in tqdm(args.models, desc="flashmem", unit="model", file=sys.stderr):
            try:
                rows.append(bench_model(name, device, args, Path(folder)))
            except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired,
                    DiagnosticException) as e:  # a budget no plan fits, among others
                rows.append({"model": name, "error": one_line(e)})
            print(table(rows[-1:]), file=sys.stderr)
    print(f"device: {device.describe()}")
    print(table(rows))
    out = Path(args.out) if args.out else BENCH_DIR / "results" / f"flashmem-{slug(device.name)}.json"
    settings = {k: getattr(args, k) for k in ("share", "chunk_kb", "time_limit", "workers",
                                             "iterations", "repeat", "cold", "seed")}
    out.write_text(json.dumps({"device": device.describe(), "host": e2e.host_cpu(),
                               "commit": e2e.git_commit(), "settings": settings,
                               "rows": rows}, indent=1) + "\n")
    plot(rows, out.with_suffix(".png"), device.describe())
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
