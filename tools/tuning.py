"""
Measuring kernel configurations: a node of an `onnx`-level module, under each of a
list of `TileConfig`s, compiled by the GPU pipeline (`pipelines.gpu_pipeline`) and built
for an OpenCL device and run; its kernel's time from profiling events (the least of a
few runs after a warm-up; `retime` interleaves the runs of a few configurations). This
is the executor that `mobile-tune`'s searches, `mobile-probe`'s kernel-groups probe and
`bench/tmmodel.py` share. It compiles with passes and runs with a backend, so it sits
above both, here; the passes only read the choices it leads to (`texture.tile`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.backends.opencl.executor import CompiledModel, OpenCLRunError
from mobile_opt.checking import make_inputs
from mobile_opt.dialects import ocl
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.pipelines import apply, gpu_pipeline
from mobile_opt.transforms.onnx_to_texture.nodes import names_node
from mobile_opt.reference.interpreter import describe_location, find_function


@dataclass
class Measurement:
    config: TileConfig
    seconds: float
    """The node's kernel time (infinite where the device cannot launch it)."""
    cost_seconds: float
    """What measuring it took: lowering, building and the runs."""


def node_name(op: Operation) -> str:
    """The ONNX node's name (kernel time records name their nodes by it)."""
    return describe_location(op.location) or op.name


def random_feeds(module: ModuleOp, seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for the module's graph, drawn as `mobile-run` draws them."""
    return make_inputs(find_function(module, "main_graph"), {}, seed)


def build(module: ModuleOp, device) -> CompiledModel:
    """An `onnx`-level module compiled (in place) by the default GPU pipeline and built for
    `device`; texture-tile keeps a configuration an op carries. The configurations are the
    image kernels' (TMModel's: one-pixel and blocked), so tensors stay in images on a device
    that prefers buffers."""
    passes, _ = gpu_pipeline("onnx-to-texture{buffers=false}", device)
    apply(module, passes)
    return CompiledModel(module, device)


def _build(module: ModuleOp, node: str, config: TileConfig, device) -> CompiledModel:
    """The module with node `node` under `config`, compiled and built for `device`."""
    clone = module.clone()
    target = next(op for op in clone.walk() if _is_node(op, node))
    config.apply(target)
    return build(clone, device)


class _Builds:
    """
    Builds of node `node` under configurations, one per thread tile and layout: the
    configurations that differ only in their work group share it, each launched in its
    own. A blocked configuration is launched as built: its block sets its group (and a
    split's adds kernel takes the driver's). `keep` bounds the builds held (a scan
    visits each tile's groups together).
    """

    def __init__(self, module: ModuleOp, node: str, device, keep: int | None = None):
        self.module, self.node, self.device, self.keep = module, node, device, keep
        self._built: dict[TileConfig, CompiledModel] = {}

    def __call__(self, config: TileConfig) -> CompiledModel | None:
        """The build under `config`; None where the device cannot hold its images."""
        key = replace(config, group=None)
        if key not in self._built:
            if self.keep is not None and len(self._built) >= self.keep:
                self._built.pop(next(iter(self._built)))
            try:
                self._built[key] = _build(self.module, self.node, key, self.device)
            except DiagnosticException as e:
                if UNBUILDABLE not in str(e):
                    raise
                self._built[key] = None
        if self._built[key] is None or config.plan is not None:
            return self._built[key]
        return self._built[key].with_local_size(lambda launch: names_node(launch.node, self.node),
                                                config.group)


UNBUILDABLE = "over the limit"
"""The lowering's refusal of a configuration whose images exceed the device's limits,
which may be below those of its profile, from which the candidates come (Debian's PoCL
takes 8192 rows where pip's, which measured the `pocl` profile, takes 16384)."""

UNLAUNCHABLE = ("OUT_OF_RESOURCES", "INVALID_WORK_GROUP_SIZE")
"""A driver's refusals of a configuration (too many registers or too large a group for
this kernel), not failures of the measurement."""


def _unlaunchable(error: OpenCLRunError) -> bool:
    return any(reason in str(error) for reason in UNLAUNCHABLE)


def _node_seconds(compiled: CompiledModel | None, feeds: dict[str, np.ndarray],
                  node: str) -> float:
    """One run's time of the node's kernels; infinite where the device cannot build or
    launch them."""
    if compiled is None:
        return math.inf
    try:
        run = compiled.run(feeds)
    except OpenCLRunError as e:
        if not _unlaunchable(e):
            raise
        return math.inf  # a configuration never to pick
    return sum(t.seconds for t in run.kernel_times if names_node(t.node, node))


def measure(module: ModuleOp, node: str, configs: Sequence[TileConfig], device,
            repeat: int = 3, progress: Callable[[str], None] | None = None) -> list[Measurement]:
    """Each configuration of node `node` (its label) measured on `device` (a DeviceInfo)."""
    feeds = random_feeds(module)
    builds = _Builds(module, node, device, keep=1)
    results = []
    for index, config in enumerate(configs):
        if progress:
            progress(f"{node} {config.describe()} ({index + 1}/{len(configs)})")
        start = time.perf_counter()
        compiled = builds(config)
        times = [_node_seconds(compiled, feeds, node) for _ in range(repeat + 1)]
        results.append(Measurement(config, min(times[1:]), time.perf_counter() - start))
    return results


@dataclass
class KernelTiming:
    """One kernel of a node under a configuration: as built, as launched, and its times."""

    config: TileConfig
    kernel: ocl.KernelOp
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    seconds: list[float]
    """Each run's time after a warm-up run."""


def time_kernels(module: ModuleOp, node: str, configs: Sequence[TileConfig], device,
                 repeat: int = 5, progress: Callable[[str], None] | None = None
                 ) -> Iterator[KernelTiming]:
    """
    Each kernel of node `node` under each configuration, timed alone over `repeat` runs
    after a warm-up (a split product's two kernels apart); configurations the device
    cannot build or launch are left out. What a learned cost model trains on.
    """
    feeds = random_feeds(module)
    builds = _Builds(module, node, device, keep=1)
    for index, config in enumerate(configs):
        if progress:
            progress(f"{node} {config.describe()} ({index + 1}/{len(configs)})")
        compiled = builds(config)
        if compiled is None:
            continue
        try:
            runs = [compiled.run(feeds).kernel_times for _ in range(repeat + 1)][1:]
        except OpenCLRunError as e:
            if not _unlaunchable(e):
                raise
            continue
        kernels = {op.sym_name.data: op for op in compiled.module.walk()
                   if isinstance(op, ocl.KernelOp)}
        for i, (record, global_size, local_size) in enumerate(compiled.launch_sizes):
            if names_node(record.node, node):
                yield KernelTiming(config, kernels[record.kernel], tuple(global_size),
                                   local_size, [run[i].seconds for run in runs])


def retime(module: ModuleOp, node: str, configs: Sequence[TileConfig], device,
           rounds: int = 10, progress: Callable[[str], None] | None = None) -> list[Measurement]:
    """
    A few configurations measured again, interleaved: every round runs each once, so a
    slow spell of the device (another process on a CPU, clocks) falls on all of them
    alike rather than on whichever was measured then. The least of the rounds after a
    warm-up; a verdict between configurations a scan found close is taken this way, not
    from the scan whose minimum favours a lucky measurement.
    """
    feeds = random_feeds(module)
    start = time.perf_counter()
    builds = _Builds(module, node, device)
    built = [builds(config) for config in configs]
    times: list[list[float]] = [[] for _ in configs]
    for round_ in range(rounds + 1):
        if progress:
            progress(f"{node} retiming {len(configs)} ({round_ + 1}/{rounds + 1})")
        for compiled, seen in zip(built, times):
            seen.append(_node_seconds(compiled, feeds, node))
    share = (time.perf_counter() - start) / max(len(configs), 1)
    return [Measurement(config, min(seen[1:]), share) for config, seen in zip(configs, times)]


CONFIRMED_FASTEST = 5
"""The scan's fastest configurations a search times again before it settles on one."""


def fastest(module: ModuleOp, node: str, configs: Sequence[TileConfig], device,
            progress: Callable[[str], None] | None = None
            ) -> tuple[list[Measurement], Measurement]:
    """
    A measured search: every configuration measured (the scan), then the scan's fastest
    few timed again (`retime`); the scan, and the least of the re-timed with its re-timed
    time and what the whole re-timing took.
    """
    scan = measure(module, node, configs, device, progress=progress)
    leaders = [m.config for m in sorted(scan, key=lambda m: m.seconds)[:CONFIRMED_FASTEST]
               if math.isfinite(m.seconds)]
    if len(leaders) < 2:
        return scan, min(scan, key=lambda m: m.seconds)
    confirmed = retime(module, node, leaders, device, progress=progress)
    best = min(confirmed, key=lambda m: m.seconds)
    return scan, replace(best, cost_seconds=sum(m.cost_seconds for m in confirmed))


def _is_node(op: Operation, node: str) -> bool:
    return op.name.startswith("onnx.") and node_name(op) == node
