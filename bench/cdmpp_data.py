"""
CDMPP's dataset: this compiler's GPU kernels, each as its compact AST
(`models/cdmpp_features.py`) with its measured latency on one OpenCL device.

A *task* is one ONNX node of some shape: the nodes of the benchmark models
(`bench/e2e.py`'s, each of its Conv, ConvTranspose, MatMul, Gemm, Softmax and
LayerNormalization nodes at its shapes, as a single node over random weights), and random
kernels of TMModel's families from Table 3's ranges (`bench/tmmodel.py`'s sampler; never one of
that benchmark's own kernels, `benchmark_specs`, which score the learned model). The
configurations of a task that `texture-tile` chooses among (thread tile, work group,
blocked plans; tensors in images, as `mobile-tune` measures them; at most `--configs` of
them, sampled) are lowered, built and run (`tools/tuning.time_kernels`: a work group is a
launch parameter, so the groups of one tile share a build). Each kernel of it is one
sample: the median of `--repeat` runs after a warm-up, and the spread (median absolute
deviation over the median).

The dataset is saved as one compressed `.npz` of columns under `bench/data/`
(`cdmpp-<device>.npz`): the leaves of every sample's compact AST stacked (`leaves`,
`order`, `leaf_offsets`), and per sample its latency, spread, task, source, family,
configuration and kernel name; the task specs and the device's features beside them.
A run appends to the file it finds (its tasks are skipped) and takes the tasks in a
random order, so a long collection can be done in parts and a part is a fair sample.

`--denser DATASET` times more configurations of that dataset's tasks (of `--task-list`)
into another file, up to `--configs` each with the ones it has, and `--recheck` of those
again, so that the two runs can be compared (`bench/gpu_cdmpp_denser.sh`: the tasks that
the cross-device runs choose, whose new kernels only train there).

`--focus N` starts each new random task's sample with the N configurations that the
shipped predictor and TMModel each rank fastest (`tile_search.ranked_first`), the rest
random: the top of a ranking is where choosing among hundreds goes wrong, and 32 random
configurations of a thousand seldom reach it. It takes no task of the device's own
dataset, so that dataset's test tasks stay unseen; `bench/cdmpp.py --denser` trains on
its kernels.

    python3 bench/cdmpp_data.py --device pocl --random 20 --minutes 30
    python3 bench/cdmpp_data.py --device pocl --models '' --families matmul --random 42
    python3 bench/cdmpp_data.py --device gpu --models light_resnet50,vit_tiny
    python3 bench/cdmpp_data.py --device gpu --models '' --random 12 --seed 23 --configs 64 \
        --focus 16 --minutes 7 --out bench/data/cdmpp-nvidia-h200-focus.npz
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, shape_inference

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from e2e import EXPORTED_MODELS, LIGHT_MODELS, import_repo_package, resolve_models  # noqa: E402
from tmmodel import FAMILIES, benchmark_specs, families_of, sample_cases  # noqa: E402

import_repo_package()

from mobile_opt.backends.opencl.devices import DeviceError, choose_device  # noqa: E402
from mobile_opt.checking.tile_search import Case, ranked_first  # noqa: E402
from mobile_opt.frontend.onnx_import import import_onnx  # noqa: E402
from mobile_opt.frontend.single_node import NODE_NAME  # noqa: E402
from mobile_opt.models import texture_kernels  # noqa: E402
from mobile_opt.models.cdmpp import UNREADABLE, Ensemble, Predictor, shipped_path  # noqa: E402
from mobile_opt.models.cdmpp_features import (  # noqa: E402
    DEVICE_FIELDS,
    LEAF_FIELDS,
    compact_ast,
    device_features,
)
from mobile_opt.models.device_profile import load_profile, profile_for_device  # noqa: E402
from mobile_opt.tools.cli import noting, progress_bar  # noqa: E402
from mobile_opt.tools.tuning import node_name, time_kernels  # noqa: E402
from mobile_opt.transforms.prune_configs import HardwareLimits, kernel_of  # noqa: E402

TASK_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm", "Softmax", "LayerNormalization")
"""The node types whose kernels `texture-tile` configures."""


def model_cases(name: str, scratch: Path) -> list[Case]:
    """Each distinct configurable node of a benchmark model, at its shapes, as a Case."""
    source = resolve_models([name], scratch)[0]
    model = shape_inference.infer_shapes(onnx.load(str(source.path)))
    graph = model.graph
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*graph.input, *graph.value_info, *graph.output]}
    shapes.update({t.name: list(t.dims) for t in graph.initializer})
    cases: list[Case] = []
    for node in graph.node:
        if node.op_type not in TASK_OPS:
            continue
        inputs = [shapes.get(i) for i in node.input if i]
        if any(not s or 0 in s for s in inputs):
            continue
        attrs = tuple((a.name, _attr(helper.get_attribute_value(a))) for a in node.attribute)
        case = Case(name, node.op_type, tuple(tuple(s) for s in inputs), attrs)
        if case not in cases:
            cases.append(case)
    return cases


def _attr(value):
    if isinstance(value, bytes):
        return value.decode()
    return tuple(value) if isinstance(value, list) else value


class Dataset:
    """The columns, grown sample by sample and saved as one `.npz`."""

    def __init__(self, path: Path, device_text: str, profile: dict):
        self.path = path
        self.columns: dict[str, list] = {k: [] for k in (
            "latency", "spread", "runs", "task", "source", "family", "config", "kernel")}
        self.leaves: list[np.ndarray] = []
        self.order: list[np.ndarray] = []
        self.tasks: list[dict] = []
        self.device_text = device_text
        self.device = device_features(profile)
        self.cores = profile["compute"]["cores"]
        if path.is_file():
            self._load()

    def _load(self) -> None:
        data = np.load(self.path, allow_pickle=False)
        # each access of an npz member reads it anew: once each
        offsets, leaves, order = data["leaf_offsets"], data["leaves"], data["order"]
        self.leaves = np.split(leaves, offsets[1:-1])
        self.order = np.split(order, offsets[1:-1])
        for key in self.columns:
            self.columns[key] = data[key].tolist()
        self.tasks = json.loads(str(data["tasks"]))

    def has(self, source: str, case: Case) -> bool:
        return {"source": source, **case.spec()} in self.tasks

    def configs_of(self, task: int) -> list[str]:
        return [c for t, c in zip(self.columns["task"], self.columns["config"]) if t == task]

    def add_task(self, source: str, case: Case) -> int:
        self.tasks.append({"source": source, **case.spec()})
        return len(self.tasks) - 1

    def add(self, task: int, family: str, timing) -> None:
        ast = compact_ast(timing.kernel, timing.global_size, timing.local_size, self.cores)
        median = statistics.median(timing.seconds)
        spread = statistics.median(abs(t - median) for t in timing.seconds) / median
        self.leaves.append(ast.leaves)
        self.order.append(ast.order)
        for key, value in (("latency", median), ("spread", spread),
                           ("runs", len(timing.seconds)), ("task", task),
                           ("source", self.tasks[task]["source"]), ("family", family),
                           ("config", timing.config.describe()),
                           ("kernel", timing.kernel.sym_name.data)):
            self.columns[key].append(value)

    def __len__(self) -> int:
        return len(self.leaves)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        offsets = np.cumsum([0] + [len(leaves) for leaves in self.leaves])
        width = len(LEAF_FIELDS)
        np.savez_compressed(
            self.path,
            leaves=np.concatenate(self.leaves) if self.leaves else np.zeros((0, width),
                                                                               np.float32),
            order=np.concatenate(self.order) if self.order else np.zeros(0, np.int64),
            leaf_offsets=offsets, leaf_fields=np.asarray(LEAF_FIELDS),
            device_features=self.device, device_fields=np.asarray(DEVICE_FIELDS),
            device=np.asarray(self.device_text), tasks=np.asarray(json.dumps(self.tasks)),
            **{k: np.asarray(v) for k, v in self.columns.items()})


def sampled(space: list, configs: int, rng: np.random.Generator) -> list:
    """
    At most `configs` of a space, in its order (tiles share builds): every blocked plan
    (a MatMul's space holds one or two among a thousand, which a uniform sample would all
    but never take, and they are the kernels large products run), the rest at random.
    """
    plans = [i for i, c in enumerate(space) if c.plan is not None]
    rest = [i for i, c in enumerate(space) if c.plan is None]
    room = max(configs - len(plans), 0)
    if len(rest) > room:
        rest = list(rng.choice(rest, room, replace=False))
    return [space[i] for i in sorted(plans + rest)]


@dataclass(frozen=True)
class Focus:
    """Where a new task's sample starts (`--focus`): the `count` configurations that the
    shipped predictor and TMModel each rank fastest (`tile_search.ranked_first`)."""

    count: int
    predictor: Predictor | Ensemble
    profile: dict
    profile_name: str

    def top(self, node, kernel, space: list) -> list:
        return ranked_first(node, kernel, self.profile, self.profile_name, self.predictor,
                            space, self.count)


def sampled_from(space: list, first: list, configs: int, rng: np.random.Generator) -> list:
    """`first`, then `sampled` of the rest of `space` up to `configs` in all, in the
    space's order."""
    rest = sampled([c for c in space if c not in first], configs - len(first), rng)
    chosen = set(first) | set(rest)
    return [c for c in space if c in chosen]


def collect(case: Case, source: str, device, limits: HardwareLimits, dataset: Dataset,
            folder: Path, repeat: int, configs: int, rng: np.random.Generator, note,
            task: int | None = None, known: set[str] | None = None, recheck: int = 0,
            focus: Focus | None = None) -> int:
    """
    A task's configurations (`sampled`; with `focus`, its top ones first) timed into
    `dataset`; the samples added. With `task`, a task the dataset has: only its blocked
    plans it lacks are timed. With `known`, the configurations another dataset has of the
    task: as many others as make `configs` in all, and `recheck` of the known ones again
    (what the two runs measure apart).
    """
    module = import_onnx(str(case.save(folder)))
    node = next(o for o in module.walk() if node_name(o) == NODE_NAME)
    kernel = kernel_of(node, limits.max_image)
    if kernel is None:
        return 0
    space = list(texture_kernels.candidates(kernel, limits.max_group))
    if known is not None:
        task = dataset.add_task(source, case)
        fresh = [c for c in space if c.describe() not in known]
        again = [c for c in space if c.describe() in known]
        def some(part: list, count: int) -> list:
            return [part[i] for i in rng.choice(len(part), max(min(count, len(part)), 0), False)]

        picked = {c.describe() for c in some(fresh, configs - len(known)) + some(again, recheck)}
        space = [c for c in space if c.describe() in picked]  # in order: tiles share builds
    elif task is None:
        task = dataset.add_task(source, case)
        first = focus.top(node, kernel, space) if focus else []
        space = sampled_from(space, first, configs, rng)
    else:
        seen = set(dataset.configs_of(task))
        space = [c for c in space if c.plan is not None and c.describe() not in seen]
    before = len(dataset)
    for timing in time_kernels(module, NODE_NAME, space, device, repeat, progress=note):
        if all(math.isfinite(t) and t > 0 for t in timing.seconds):
            dataset.add(task, kernel.family, timing)
    return len(dataset) - before


def denser_tasks(path: Path, task_list: Path | None, out: Path,
                 profile: dict) -> list[tuple[str, Case, set[str]]]:
    """The tasks of another dataset of this device (those `task_list` names, or all) to
    time more configurations of, into `out`: each with the configurations it has."""
    if path.resolve() == out.resolve():
        raise ValueError(f"--denser: {path}: name another --out")
    try:
        base = np.load(path, allow_pickle=False)
        specs, task, config = json.loads(str(base["tasks"])), base["task"], base["config"]
        features = base["device_features"]
    except (OSError, ValueError, KeyError) as e:
        raise ValueError(f"{path}: not a readable dataset ({str(e).split('. ')[0]})") from None
    try:
        wanted = json.loads(task_list.read_text()) if task_list else list(range(len(specs)))
    except (OSError, ValueError) as e:
        raise ValueError(f"{task_list}: not a readable task list ({str(e).split('. ')[0]})"
                         ) from None
    if not np.allclose(features, device_features(profile)):
        raise ValueError(f"{path}: measured on a device of another profile")
    if not isinstance(wanted, list) or any(not isinstance(i, int) or not 0 <= i < len(specs)
                                           for i in wanted):
        raise ValueError(f"{task_list}: not a list of task indices of {path}")
    return [(specs[i]["source"], Case.of_spec("", specs[i]), set(config[task == i].tolist()))
            for i in wanted]


def dataset_specs(path: Path, out: Path) -> list[dict]:
    """The task specs (less their source) of the dataset at `path`, unless it is `out`
    or there is none."""
    if not path.is_file() or path.resolve() == out.resolve():
        return []
    specs = json.loads(str(np.load(path, allow_pickle=False)["tasks"]))
    return [{k: v for k, v in spec.items() if k != "source"} for spec in specs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="pocl")
    parser.add_argument("--models", default=",".join(LIGHT_MODELS + EXPORTED_MODELS),
                        help="benchmark models whose nodes are tasks ('' for none)")
    parser.add_argument("--random", type=int, default=4,
                        help="random tasks per family of TMModel's (MatMul three times)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help="the families that --random draws from")
    parser.add_argument("--repeat", type=int, default=5, help="runs per kernel after a warm-up")
    parser.add_argument("--configs", type=int, default=32,
                        help="configurations per task at most (a random sample of its space)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after the task that crosses this time (saved as it goes)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top-up", action="store_true",
                        help="time only the blocked plans the dataset's tasks lack (a run "
                             "before plans were always sampled took them by chance)")
    parser.add_argument("--denser", type=Path, metavar="DATASET",
                        help="more configurations of another dataset's tasks, up to --configs "
                             "each (with theirs), into --out, and --recheck of theirs again")
    parser.add_argument("--task-list", type=Path,
                        help="with --denser: a JSON list of its task indices (default all)")
    parser.add_argument("--recheck", type=int, default=4,
                        help="with --denser: configurations of each task that it has, "
                             "timed again")
    parser.add_argument("--focus", type=int, default=0, metavar="N",
                        help="each new task's sample starts with the N configurations that "
                             "the shipped predictor and TMModel each rank fastest (`Focus`)")
    parser.add_argument("--out", help="default bench/data/cdmpp-<device>.npz")
    args = parser.parse_args()
    families = families_of(parser, args.families)
    if args.focus < 0:
        parser.error(f"--focus: not a count: {args.focus}")
    if args.focus and (args.denser or args.top_up):
        parser.error("--focus: samples new tasks only (not with --denser or --top-up)")
    try:
        device = choose_device(args.device)
    except DeviceError as e:
        print(f"bench/cdmpp_data.py: error: {e}", file=sys.stderr)
        return 1
    profile_name = profile_for_device(device.name, device.platform)
    if profile_name is None:
        print(f"bench/cdmpp_data.py: error: no shipped profile for {device.name}: "
              "run mobile-probe", file=sys.stderr)
        return 1
    profile = load_profile(profile_name)
    limits = HardwareLimits.of(profile)
    focus = None
    if args.focus:
        try:
            focus = Focus(args.focus, Predictor.shipped(profile_name), profile, profile_name)
        except UNREADABLE as e:
            print(f"bench/cdmpp_data.py: error: --focus: no readable CDMPP predictor "
                  f"{shipped_path(profile_name)} ({e})", file=sys.stderr)
            return 1
    out = Path(args.out or BENCH_DIR / "data" / f"cdmpp-{profile_name}.npz")
    denser = None
    if args.denser:
        try:
            denser = denser_tasks(args.denser, args.task_list, out, profile)
        except ValueError as e:
            print(f"bench/cdmpp_data.py: error: {e}", file=sys.stderr)
            return 1
    dataset = Dataset(out, device.describe(), profile)
    cpu = "CPU" in device.kind
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if denser is not None:
            tasks = [(source, case, {"known": known, "recheck": args.recheck})
                     for source, case, known in denser if not dataset.has(source, case)]
        elif args.top_up:
            tasks = [(t["source"], Case.of_spec("", t), {"task": index})
                     for index, t in enumerate(dataset.tasks)]
        else:
            tasks = [(c.family, c) for name in filter(None, args.models.split(","))
                     for c in model_cases(name, folder)]
            tasks += [(f"random:{c.family}", c) for f in families for c in
                      sample_cases(f, args.random * (3 if f == "matmul" else 1), cpu, rng)]
            # none of bench/tmmodel.py's kernels, which score the learned model's choices
            held_out = benchmark_specs(profile_name, cpu)
            if focus:  # new tasks: none that the device's dataset splits into its test set
                held_out += dataset_specs(BENCH_DIR / "data" / f"cdmpp-{profile_name}.npz",
                                          out)
            # in random order, so that a run cut short by --minutes is a fair sample
            tasks = [(*tasks[i], {"focus": focus}) for i in rng.permutation(len(tasks))
                     if not dataset.has(*tasks[i]) and tasks[i][1].spec() not in held_out]
        bar = progress_bar(len(tasks), f"cdmpp data on {device.name}", "task")
        for source, case, how in tasks:
            bar.set_postfix_str(f"{source} {case.op} {case.inputs[0]}")
            collect(case, source, device, limits, dataset, folder, args.repeat, args.configs,
                    rng, noting(bar), **how)
            dataset.save()
            bar.update()
            if args.minutes and time.perf_counter() - started > 60 * args.minutes:
                break
        bar.close()
    print(f"{len(dataset)} kernels of {len(dataset.tasks)} tasks on {device.describe()}: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
