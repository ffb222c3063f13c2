"""
End-to-end benchmark of the OpenCL path on whole models.

For each model: import the ONNX file, compile it with the GPU pipeline
(`pipelines.gpu_pipeline`, as `mobile-run` does, with `--passes` as its graph passes),
build it for one OpenCL device and run it on seeded random inputs. One row per model
says

- `ours_ms`: median wall-clock time of `CompiledModel.run` (input upload, every
  kernel, output download) over `--repeat` runs after one warm-up run;
  `ours_kernel_ms`: the median over the same runs of the summed kernel times
  that OpenCL profiling reports;
- `ort_ms`: median latency of onnxruntime's CPU provider on the same inputs, in
  the same process (its default thread count);
- `torch_cuda_ms` (with `--torch-cuda` on a machine with CUDA): PyTorch eager in
  fp32 with TF32 off, timed from the host input to the host output like ours, for
  the models that are PyTorch models (`bench/models.py`, run as their own
  `nn.Module`); the onnx package's light models and other `.onnx` files are converted
  by onnx2torch (`torch_source`) where it is installed, else their torch cells stay
  empty;
- with `--torch-compile` (on CUDA): the same module under `torch.compile` in three
  modes, each compiled afresh (`TORCH_COMPILE_MODES`): `torch_compile_ms` (the default
  mode), `torch_autotune_ms` (`max-autotune-no-cudagraphs`) and `torch_cudagraphs_ms`
  (`reduce-overhead`: its launches replayed as a CUDA graph), each timed host to host
  like ours, and its `*_gpu_ms` twin: CUDA events around the call on inputs already on the
  device. `torch_compile_s` keeps each mode's compile time (its first call), apart from
  the timings; `torch_compile_rel_err` each mode's error against onnxruntime, and
  `torch_compile_error` the one-line reason of a mode that failed. `torch_cuda_gpu_ms` is
  eager's GPU time the same way. Each run compiles into fresh Inductor and Triton caches.
  `--compile-jobs N` (with `--isolate`) compiles every model's modes before any timing, N
  at once in child processes, with each candidate timing of their autotuning holding a
  lock so that it runs alone on the GPU; `torch_compile_s` is then that compile, and the
  timed run loads it from the cache (`torch_compile_cached_s`, `torch_compile_cache_hits`).
  `--ahead-out FILE` stops after those compiles, and a later run with `--ahead-in FILE`
  times them, both with `TORCHINDUCTOR_CACHE_DIR`/`TRITON_CACHE_DIR` set to folders that
  outlive a run: a machine whose calls are limited in time compiles in one, times in the next;
- `rel_err`: max |ours - onnxruntime| / max |onnxruntime| over every output
  (`checking.worst_relative_error`).

The inputs are drawn as `mobile-run` draws them (`checking.make_inputs`). The light
models fill every weight with one constant, so their outputs do not depend on the
input; by default (`--weights random`) they get seeded random weights instead and
their pre-Softmax logits as one more output, so that `rel_err` checks something
(`checking.checkable`).

A model that fails to compile or run gets its stage and one-line error instead.
The table is printed and the rows go to `bench/results/e2e-<device>.json` (or `--out`).
`--roofline DIR` adds each model's launches to its row (`roofline`: per launch, in
program order, its median time, FLOPs, bytes, GFLOP/s, GB/s and their shares of the
device profile's peaks, as `mobile-run --profile-kernels` reports them) and writes its
roofline plot to `DIR/<model>.png` (`tools/roofline_report.py`).

    python3 bench/e2e.py --device pocl --models mobilenetv2_small,light_squeezenet
    python3 bench/e2e.py --device gpu --torch-cuda --repeat 20

Needs the package's dependencies; torch is optional. The repository need not be
installed: its root is imported as the `mobile_opt` package.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import inspect
import json
import operator
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx
from tqdm import tqdm

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent

LIGHT_MODELS = [
    "light_resnet50",
    "light_densenet121",
    "light_inception_v1",
    "light_inception_v2",
    "light_squeezenet",
    "light_shufflenet",
    "light_vgg19",
    "light_bvlc_alexnet",
    "light_zfnet512",
]
"""The onnx package's shipped light models (`onnx/backend/test/data/light/NAME.onnx`)."""

EXPORTED_MODELS = ["vit_tiny", "mobilenetv2_small", "gpt2_small"]
"""The models of `bench/models.py`; committed copies are in `tests/models/NAME.onnx`."""


def import_repo_package() -> None:
    """Make `import mobile_opt` work from a plain copy of the repository (not installed)."""
    try:
        import mobile_opt  # noqa: F401

        return
    except ImportError:
        pass
    spec = importlib.util.spec_from_file_location(
        "mobile_opt", REPO_ROOT / "__init__.py", submodule_search_locations=[str(REPO_ROOT)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mobile_opt"] = module
    spec.loader.exec_module(module)


import_repo_package()

from mobile_opt import checking, pipelines  # noqa: E402


def bench_models_module():
    """`bench/models.py`, imported (it needs torch)."""
    name = "mobile_opt_bench_models"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH_DIR / "models.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def torch_or_none():
    try:
        import torch

        return torch
    except ImportError:
        return None


def one_line(e: BaseException) -> str:
    """A failure as one line: the exception's type and the message line that says most."""
    from mobile_opt.tools.cli import one_line as message

    text = message(e)
    return text if text == type(e).__name__ else f"{type(e).__name__}: {text}"[:300]


# devices ----------------------------------------------------------------------------


def pick_device(spec: str | None, program: str = "e2e"):
    """
    The OpenCL device (a `DeviceInfo`) that `spec` names as `mobile-run --device`
    does: `pocl`, `gpu`, `cpu` or a substring of a platform or device name; with
    none, the first GPU if there is one, else PoCL. One line naming `program` and exit
    1 if there is no such device.
    """
    from mobile_opt.backends.opencl.devices import DeviceError, available_devices, choose_device

    if not spec:
        spec = "gpu" if any("GPU" in d.kind for d in available_devices()) else "pocl"
    try:
        return choose_device(spec)
    except DeviceError as e:
        raise SystemExit(f"{program}: {e}") from None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "device"


def device_mib() -> int | None:
    """The device memory this process holds (context, objects, any driver copies), as
    nvidia-smi reports it; None without one."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                               "--format=csv,noheader,nounits"], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stdout.splitlines():
        pid, _, used = line.partition(",")
        if pid.strip() == str(os.getpid()):
            return int(used)
    return None


def host_cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# models -----------------------------------------------------------------------------


@dataclass
class ModelSource:
    """Where a model's ONNX file is and how PyTorch can run it (or not)."""

    name: str
    path: Path
    torch_factory: Callable[[], object] | None = None
    """Builds the `nn.Module` for the exported models; None for the others."""


def resolve_models(names: Iterable[str], scratch: Path) -> list[ModelSource]:
    """
    The models `names` refers to: a light model (the `light_` prefix may be left
    out), an exported model, or a path to an `.onnx` file. Exported models are
    exported afresh when torch is importable (so the ONNX file and the module agree),
    else read from `tests/models/`.
    """
    torch = torch_or_none()
    sources = []
    for name in names:
        if name.endswith(".onnx"):
            sources.append(ModelSource(Path(name).stem, Path(name)))
        elif name in EXPORTED_MODELS:
            if torch is not None:
                models = bench_models_module()
                path = models.export(name, scratch / f"{name}.onnx")
                sources.append(ModelSource(name, path, lambda n=name, m=models: m.build(n)))
            else:
                sources.append(ModelSource(name, REPO_ROOT / "tests" / "models" / f"{name}.onnx"))
        else:
            path = checking.light_model(name)
            sources.append(ModelSource(path.stem, path))
    return sources


def prepare_model(source: ModelSource, scratch: Path, weights: str, seed: int) -> Path:
    """The file to benchmark: as given, or `checking.checkable`'s if it has filled weights."""
    if weights == "shipped":
        return source.path
    model = onnx.load(str(source.path))
    prepared = checking.checkable(model, seed)
    if prepared is model:
        return source.path
    path = scratch / f"{source.name}.random.onnx"
    onnx.save(prepared, str(path))
    return path


def op_types(path: Path) -> list[str]:
    model = onnx.load(str(path), load_external_data=False)
    return sorted({n.op_type for n in model.graph.node})


# measuring --------------------------------------------------------------------------


def median_ms(run: Callable[[], object], repeat: int, warmup: int = 1) -> tuple[float, list]:
    """Median wall-clock milliseconds of `run()` over `repeat` calls after `warmup` calls."""
    for _ in range(warmup):
        run()
    times, results = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        results.append(run())
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), results


def run_onnxruntime(path: Path, feeds, repeat: int):
    """(median ms, outputs by name) of onnxruntime's CPU provider on the model file `path`."""
    session = checking.onnxruntime_session(str(path))
    ms, results = median_ms(lambda: checking.session_outputs(session, feeds), repeat)
    return ms, results[-1]


def import_model(path: Path, seed: int):
    """`path` imported, and the inputs to feed it, drawn as `mobile-run` draws them."""
    from mobile_opt import api
    from mobile_opt.reference.interpreter import find_function

    _, module = api.read_model(path)
    return module, checking.make_inputs(find_function(module, "main_graph"), {}, seed)


def compile_model(module, device, passes: str, storage: str):
    """
    The imported `module` compiled for `device` (a `DeviceInfo`) by the GPU pipeline, as
    `mobile-run` compiles it, and built: a `CompiledModel`.
    """
    from mobile_opt import api

    return api.compile(module, device=device, passes=passes, fp16=storage == "f16").executor


TORCH_COMPILE_MODES = {
    "compile": "default",
    "autotune": "max-autotune-no-cudagraphs",
    "cudagraphs": "reduce-overhead",
}
"""`torch.compile`'s modes by the column they fill (`torch_<column>_ms`)."""


@dataclass(frozen=True)
class TorchTiming:
    """One way of running a PyTorch module: its times and outputs."""

    wall_ms: float
    """Median host-to-host milliseconds: inputs uploaded, outputs downloaded, like ours."""
    gpu_ms: float | None
    """Median milliseconds between CUDA events around the call on device-resident inputs."""
    outputs: dict
    compile_s: float | None = None
    """Seconds of the first call, where it compiles."""
    cache_hits: int | None = None
    """Inductor's FX graph cache hits in that call: graphs loaded, not compiled afresh."""


def run_torch(factory: Callable[[], object], path: Path, feeds, repeat: int,
              device_name: str = "cuda", mode: str | None = None) -> TorchTiming:
    """
    The `nn.Module` that `factory` builds, in PyTorch fp32 (on CUDA: TF32 off): eager, or
    under `torch.compile(mode=mode)`, compiled afresh at its first call.
    """
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(device_name)
    cuda = device.type == "cuda"
    synchronize = torch.cuda.synchronize if cuda else (lambda: None)
    module = factory().to(device).eval()
    compile_s = None
    if mode is not None:
        torch._dynamo.reset()  # each mode compiles from nothing
        module = torch.compile(module, mode=mode)
    names = [o.name for o in onnx.load(str(path)).graph.output]

    def call(inputs):
        with torch.inference_mode():
            got = module(*inputs)
        return [got] if isinstance(got, torch.Tensor) else list(got)

    def step():
        inputs = [torch.from_numpy(v).to(device) for v in feeds.values()]
        outputs = {name: t.cpu().numpy() for name, t in zip(names, call(inputs), strict=True)}
        synchronize()
        return outputs

    resident = [torch.from_numpy(v).to(device) for v in feeds.values()]
    cache_hits = None
    if mode is not None:
        counters = torch._dynamo.utils.counters["inductor"]
        hits = counters["fxgraph_cache_hit"]
        start = time.perf_counter()
        call(resident)
        synchronize()
        compile_s = time.perf_counter() - start
        cache_hits = counters["fxgraph_cache_hit"] - hits
        for _ in range(3):  # reduce-overhead records its graph over the first calls
            call(resident)
    ms, results = median_ms(step, repeat)
    gpu_ms = cuda_event_ms(lambda: call(resident), repeat) if cuda else None
    return TorchTiming(ms, gpu_ms, results[-1], compile_s, cache_hits)


def cuda_event_ms(run: Callable[[], object], repeat: int, warmup: int = 0) -> float:
    """Median milliseconds between CUDA events around `run()` over `repeat` calls, after
    `warmup` calls, under `torch.inference_mode`."""
    import torch

    with torch.inference_mode():
        for _ in range(warmup):
            run()
        times = []
        for _ in range(repeat):
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            run()
            end.record()
            end.synchronize()
            times.append(begin.elapsed_time(end))
    return statistics.median(times)


def fill_torch_compile(row: Row, measure: Callable[[str], TorchTiming], expected,
                       skip: Iterable[str] = ()) -> None:
    """
    Each `torch.compile` column of `row` (but those in `skip`) from `measure(mode)`; a mode
    that fails gets its one-line reason in `torch_compile_error` and null times, and the
    others still run.
    """
    for column, mode in TORCH_COMPILE_MODES.items():
        if column in skip:
            continue
        try:
            timing = measure(mode)
        except Exception as e:  # noqa: BLE001 - a model torch.compile cannot take is a result
            row.torch_compile_error[column] = one_line(e)
            continue
        setattr(row, f"torch_{column}_ms", timing.wall_ms)
        setattr(row, f"torch_{column}_gpu_ms", timing.gpu_ms)
        row.torch_compile_s[column] = timing.compile_s
        row.torch_compile_cache_hits[column] = timing.cache_hits
        row.torch_compile_rel_err[column] = checking.worst_relative_error(timing.outputs,
                                                                          expected)


def merge_ahead(row: Row, ahead: dict[str, dict]) -> None:
    """
    The compiles done ahead of the timings (`compile_ahead`, by column) into `row`: their
    seconds become `torch_compile_s`, the timed run's first call (a load from Inductor's
    cache) moves to `torch_compile_cached_s`, and a compile that failed ahead is the
    column's error.
    """
    for column, result in ahead.items():
        if "error" in result:
            row.torch_compile_error[column] = f"compiling ahead: {result['error']}"
            continue
        if column in row.torch_compile_s:
            row.torch_compile_cached_s[column] = row.torch_compile_s[column]
        row.torch_compile_s[column] = result["compile_s"]


def torch_module(source: ModelSource, path: Path) -> tuple[Callable[[], object] | None, str]:
    """
    How PyTorch runs the model: its own `nn.Module`, else the ONNX file (as prepared:
    the same weights) converted by onnx2torch where that is installed; and which.
    """
    if source.torch_factory is not None:
        return source.torch_factory, "nn.Module"
    try:
        import onnx2torch
    except ImportError:
        return None, "none (no PyTorch model; onnx2torch converts one)"
    def convert():
        model = onnx.load(str(path))
        weights = {w.name for w in model.graph.initializer}  # old exports list them as inputs
        feeds = [i for i in model.graph.input if i.name not in weights]
        del model.graph.input[:]
        model.graph.input.extend(feeds)
        model.ir_version = max(model.ir_version, 4)  # where initializers need not be inputs
        for node in model.graph.node:
            if node.op_type == "Dropout":  # inference: the identity (onnx2torch lacks opset 7's)
                node.op_type = "Identity"
                del node.attribute[:], node.input[1:], node.output[1:]
        return constant_reshapes(onnx2torch.convert(model))

    return convert, "onnx2torch"


def onnx_reshape(data, dims: tuple[int, ...]):
    """ONNX's Reshape to constant `dims` (0 keeps the input's dim there)."""
    return data.reshape([data.shape[i] if d == 0 else d for i, d in enumerate(dims)])


def constant_reshapes(module):
    """
    onnx2torch's module with each Reshape to a constant shape (an initializer or a
    `Constant`) calling `onnx_reshape` with those dims as Python ints: its own Reshape
    builds `torch.Size` from the shape tensor's values, which `torch.compile` cannot trace.
    """
    graph = module.graph
    for node in list(graph.nodes):
        if (node.op != "call_module"
                or type(module.get_submodule(node.target)).__name__ != "OnnxReshape"):
            continue
        data, shape = node.args[:2]
        if shape.op == "get_attr":
            value = operator.attrgetter(shape.target)(module)
        elif shape.op == "call_module" and not shape.args:
            value = module.get_submodule(shape.target)()
        else:
            continue
        dims = tuple(int(d) for d in value.reshape(-1).tolist())
        with graph.inserting_after(node):
            reshaped = graph.call_function(onnx_reshape, (data, dims))
        node.replace_all_uses_with(reshaped)
        graph.erase_node(node)
    graph.eliminate_dead_code()
    module.recompile()
    return module


# one model --------------------------------------------------------------------------


@dataclass
class Row:
    """The measurements of one model; None where a step failed or was skipped."""

    model: str
    status: str = "ok"
    error: str | None = None
    ours_ms: float | None = None
    ours_kernel_ms: float | None = None
    kernels: int | None = None
    ort_ms: float | None = None
    torch_cuda_ms: float | None = None
    torch_cuda_gpu_ms: float | None = None
    torch_source: str | None = None
    torch_compile_ms: float | None = None
    torch_compile_gpu_ms: float | None = None
    torch_autotune_ms: float | None = None
    torch_autotune_gpu_ms: float | None = None
    torch_cudagraphs_ms: float | None = None
    torch_cudagraphs_gpu_ms: float | None = None
    torch_compile_s: dict[str, float | None] = field(default_factory=dict)
    torch_compile_cached_s: dict[str, float | None] = field(default_factory=dict)
    """With `--compile-jobs`: the timed run's first call, served by Inductor's cache."""
    torch_compile_cache_hits: dict[str, int | None] = field(default_factory=dict)
    torch_compile_rel_err: dict[str, float] = field(default_factory=dict)
    torch_compile_error: dict[str, str] = field(default_factory=dict)
    rel_err: float | None = None
    torch_rel_err: float | None = None
    compile_s: float | None = None
    onnx_ops: list[str] = field(default_factory=list)
    roofline: list[dict] | None = None
    """With `--roofline`: per launch, its time, work and rates (`roofline_report.rows`)."""

    @property
    def ours_vs_ort(self) -> float | None:
        return self.ours_ms / self.ort_ms if self.ours_ms and self.ort_ms else None

    @property
    def ours_vs_torch(self) -> float | None:
        return self.ours_ms / self.torch_cuda_ms if self.ours_ms and self.torch_cuda_ms else None

    @property
    def ours_vs_best_torch(self) -> float | None:
        """Ours over the fastest PyTorch column, eager or compiled, host to host."""
        times = [t for t in (self.torch_cuda_ms, self.torch_compile_ms, self.torch_autotune_ms,
                             self.torch_cudagraphs_ms) if t]
        return self.ours_ms / min(times) if self.ours_ms and times else None


def bench_model(source: ModelSource, device, args, scratch: Path) -> Row:
    """Every measurement of one model; failures are recorded in the row, not raised."""
    row = Row(source.name)
    stage = "load"
    try:
        if not source.path.is_file():
            raise FileNotFoundError(f"{source.path}: no such file")
        path = prepare_model(source, scratch, args.weights, args.seed)
        row.onnx_ops = op_types(path)
        stage = "compile"  # the import is the compile's first step; it knows the inputs
        start = time.perf_counter()
        module, feeds = import_model(path, args.seed)
        imported = time.perf_counter() - start
        stage = "onnxruntime"
        row.ort_ms, expected = run_onnxruntime(path, feeds, args.repeat)
        if args.torch_cuda:
            stage = "torch"
            factory, kind = torch_module(source, path)
            if factory is None:
                row.torch_source = kind
            else:
                try:
                    eager = run_torch(factory, path, feeds, args.repeat)
                    row.torch_cuda_ms, row.torch_cuda_gpu_ms = eager.wall_ms, eager.gpu_ms
                    row.torch_source = kind
                    row.torch_rel_err = checking.worst_relative_error(eager.outputs, expected)
                except Exception as e:  # noqa: BLE001 - torch is optional: note why and go on
                    row.torch_source = f"skipped ({one_line(e)})"
                if args.torch_compile:
                    fill_torch_compile(
                        row, lambda mode: run_torch(factory, path, feeds, args.repeat,
                                                    mode=mode), expected,
                        (args.skip_compile or "").split(","))
        stage = "compile"
        start = time.perf_counter()
        compiled = compile_model(module, device, args.passes, args.storage)
        row.compile_s = imported + time.perf_counter() - start
        stage = "run"
        row.ours_ms, results = median_ms(lambda: compiled.run(feeds), args.repeat)
        kernel_ms = [sum(k.seconds for k in r.kernel_times) * 1e3 for r in results]
        row.ours_kernel_ms = statistics.median(kernel_ms)
        row.kernels = len(results[-1].kernel_times)
        row.rel_err = checking.worst_relative_error(results[-1].outputs, expected)
        row.status = "ok" if row.rel_err <= args.tol else "mismatch"
        if args.roofline:
            stage = "roofline"
            row.roofline = save_roofline(compiled, results, device, source.name,
                                         Path(args.roofline))
    except Exception as e:  # noqa: BLE001 - any failure is a result of the benchmark
        row.status, row.error = f"{stage} failed", one_line(e)
        if args.verbose:
            traceback.print_exc()
    return row


def save_roofline(compiled, results, device, name: str, folder: Path) -> list[dict]:
    """The launches' roofline rows at their median times over `results`, and their plot
    as `folder/<name>.png`: what `mobile-run --profile-kernels --roofline` gives."""
    from mobile_opt.tools import roofline_report

    times = [statistics.median(r.kernel_times[i].seconds for r in results)
             for i in range(len(compiled.plan.launches))]
    works = roofline_report.launch_works(compiled.plan, times)
    peaks, _ = roofline_report.device_peaks(device)
    png = roofline_report.plot_png(works, peaks, f"{name} on {device.name}")
    (folder / f"{name}.png").write_bytes(png)
    return roofline_report.rows(works, peaks)


def bench_model_isolated(name: str, args, timeout: float, skip: Iterable[str] = ()) -> Row:
    """`bench_model` in a child process, so a crash or a hang costs only that model; the
    `torch.compile` columns in `skip` are left out."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        name,
        "--repeat",
        str(args.repeat),
        "--seed",
        str(args.seed),
        "--passes",
        args.passes,
        "--storage",
        args.storage,
        "--tol",
        str(args.tol),
        "--weights",
        args.weights,
    ]
    command += ["--device", args.device] if args.device else []
    command += ["--torch-cuda"] if args.torch_cuda else []
    command += ["--torch-compile"] if args.torch_compile else []
    command += ["--roofline", args.roofline] if args.roofline else []
    command += ["--skip-compile", ",".join(skip)] if skip else []
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Row(name, "timeout", f"no result within {timeout:g} s")
    data = last_json(done)
    if data is None:
        return Row(name, "crashed", child_failure(done))
    for derived in ("ours_vs_ort", "ours_vs_torch", "ours_vs_best_torch"):
        data.pop(derived, None)
    return Row(**data)


# compiling ahead --------------------------------------------------------------------


def serialize_gpu_timing(lock: Path) -> int:
    """
    Make Inductor's autotuning time its candidates on the GPU one process at a time (an
    exclusive lock on `lock`), so that compiles running side by side do not skew each
    other's choices; their CPU work still overlaps. The number of timing methods wrapped
    (0 where this torch has none by those names).
    """
    import fcntl
    import threading

    from torch._inductor.runtime import benchmarking

    depth = threading.local()

    def alone(method):
        def timed_alone(*args, **kwargs):
            if getattr(depth, "n", 0):  # a timing method calling another holds the lock
                return method(*args, **kwargs)
            with lock.open("a") as held:
                deadline = time.monotonic() + 300  # a holder that never lets go: time anyway
                while time.monotonic() < deadline:
                    try:
                        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        time.sleep(0.001)
                depth.n = 1
                try:
                    return method(*args, **kwargs)
                finally:
                    depth.n = 0
        return timed_alone

    wrapped = 0
    for cls in list(vars(benchmarking).values()):
        if not isinstance(cls, type):
            continue
        for name, method in list(vars(cls).items()):
            if name.startswith("benchmark") and inspect.isfunction(method):
                setattr(cls, name, alone(method))
                wrapped += 1
    return wrapped


def compile_job(name: str, column: str, args, scratch: Path) -> dict:
    """
    One model compiled by `torch.compile` in one mode (a `--compile-worker` child): the
    seconds of its first call, which fills Inductor's on-disk caches for the timed run.
    """
    (source,) = resolve_models([name], scratch)
    path = prepare_model(source, scratch, args.weights, args.seed)
    _, feeds = import_model(path, args.seed)
    factory, kind = torch_module(source, path)
    if factory is None:
        return {"error": kind}
    locked = serialize_gpu_timing(Path(args.gpu_lock)) if args.gpu_lock else 0
    timing = run_torch(factory, path, feeds, 1, mode=TORCH_COMPILE_MODES[column])
    return {"compile_s": timing.compile_s, "timing_methods_locked": locked}


def last_json(done: subprocess.CompletedProcess) -> dict | None:
    """The JSON object a child printed last on stdout, if any."""
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return None


def child_failure(done: subprocess.CompletedProcess) -> str:
    """The last line a child that printed no result wrote on stderr."""
    return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1][:300]


def run_ahead(jobs: dict[tuple, list[str]], parallel: int, timeout: float,
              unit: str) -> dict[tuple, dict]:
    """
    Each job's command (its key to its arguments after this Python) in a child process,
    `parallel` at once, in the order given, with a progress bar: by key, the JSON object
    the child printed last, or `{"error": ...}`.
    """
    env = dict(os.environ)  # Inductor's compile workers shared out among the jobs
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(max(1, (os.cpu_count() or 1) // parallel)))

    def run(key):
        try:
            done = subprocess.run([sys.executable, *jobs[key]], capture_output=True, text=True,
                                  timeout=timeout, check=False, env=env)
        except subprocess.TimeoutExpired:
            return key, {"error": f"no result within {timeout:g} s"}
        return key, last_json(done) or {"error": child_failure(done)}

    results = {}
    with ThreadPoolExecutor(parallel) as pool:
        bar = tqdm(total=len(jobs), file=sys.stderr, unit=unit, desc="torch.compile ahead")
        for future in as_completed([pool.submit(run, key) for key in jobs]):
            key, results[key] = future.result()
            bar.set_postfix_str(" ".join(map(str, key)))
            bar.update()
        bar.close()
    return results


def compile_ahead(names: list[str], args, scratch: Path) -> dict[str, dict[str, dict]]:
    """
    Every model's `torch.compile` modes compiled before any timing, `args.compile_jobs` at
    once (each in a child process, the slowest mode first), each candidate timing of
    their autotuning alone on the GPU: by model and column, `{"compile_s": ...}` or
    `{"error": ...}`. Their caches serve the timed runs, which then load, not compile.
    """
    base = [str(Path(__file__).resolve()), "--seed", str(args.seed), "--weights", args.weights,
            "--gpu-lock", str(scratch / "gpu-timing.lock")]
    order = ["autotune", *[c for c in TORCH_COMPILE_MODES if c != "autotune"]]
    jobs = {(name, column): [*base, "--compile-worker", f"{name}:{column}"]
            for column in order for name in names}
    results = run_ahead(jobs, args.compile_jobs, args.compile_timeout, "compile")
    ahead: dict[str, dict[str, dict]] = {name: {} for name in names}
    for (name, column), result in results.items():
        ahead[name][column] = result
    return ahead


# report -----------------------------------------------------------------------------


def _fmt(x: float | None, spec: str | None = None) -> str:
    if x is None:
        return "-"
    return format(x, spec or (".3f" if abs(x) < 1 else ".2f"))


def format_table(rows: list[Row]) -> str:
    compiled = any(r.torch_compile_s or r.torch_compile_error for r in rows)
    extra = ["compile ms", "autotune ms", "graphs ms", "ours/best torch"] if compiled else []
    table = [["model", "ours ms", "kernel ms", "ORT CPU ms", "ours/ORT", "torch CUDA ms",
              "ours/torch", *extra, "rel err", "status"]]
    for r in rows:
        status = r.status if r.error is None else f"{r.status}: {r.error}"
        more = [_fmt(r.torch_compile_ms), _fmt(r.torch_autotune_ms), _fmt(r.torch_cudagraphs_ms),
                _fmt(r.ours_vs_best_torch)] if compiled else []
        table.append([r.model, _fmt(r.ours_ms), _fmt(r.ours_kernel_ms), _fmt(r.ort_ms),
                      _fmt(r.ours_vs_ort), _fmt(r.torch_cuda_ms), _fmt(r.ours_vs_torch), *more,
                      _fmt(r.rel_err, ".1e"), status])
    return checking.format_table(table)


def row_json(row: Row) -> dict:
    data = asdict(row)
    data["ours_vs_ort"], data["ours_vs_torch"] = row.ours_vs_ort, row.ours_vs_torch
    data["ours_vs_best_torch"] = row.ours_vs_best_torch
    return data


def report(device, args, rows: list[Row]) -> dict:
    import onnxruntime
    import pyopencl as cl

    torch = torch_or_none()
    cuda_name = None
    if args.torch_cuda and torch is not None and torch.cuda.is_available():
        cuda_name = torch.cuda.get_device_name(0)
    cl_device = device.device
    return {
        "device": device.name,
        "platform": device.platform,
        "device_kind": device.kind,
        "device_version": cl_device.version.strip(),
        "driver_version": cl_device.driver_version.strip(),
        "compute_units": cl_device.max_compute_units,
        "image2d_max": [device.max_image_width, device.max_image_height],
        "fp16": device.fp16,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "host_cpu": host_cpu(),
        "host_cores": os.cpu_count(),
        "python": platform.python_version(),
        "versions": {
            "numpy": np.__version__,
            "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__,
            "pyopencl": cl.VERSION_TEXT,
            "torch": getattr(torch, "__version__", None),
        },
        "torch_cuda_device": cuda_name,
        "settings": {
            "repeat": args.repeat,
            "warmup": 1,
            "seed": args.seed,
            "passes": args.passes,
            "storage": args.storage,
            "tol": args.tol,
            "weights": args.weights,
            "roofline": args.roofline,
            "torch_compile_modes": TORCH_COMPILE_MODES if args.torch_compile else None,
            "compile_jobs": args.compile_jobs,
        },
        "rows": [row_json(r) for r in rows],
    }


TORCH_COLUMNS = {"eager": "torch_cuda", **{c: f"torch_{c}" for c in TORCH_COMPILE_MODES}}
"""Each PyTorch column of a row by its name in the report, to its field's stem."""


def kernel_losses(launches: list[dict], top: int = 3) -> list[dict]:
    """
    The kernels that carry a model's time: its launches (`--roofline` rows) grouped by
    kind (the kernel's name without its number: `matmul`, `conv`, ...), the `top` largest
    by their share of the summed kernel time, each with its launches, seconds, and its
    work's fraction of the device's peak FLOP/s and of its peak bandwidth (the group's
    summed FLOPs and bytes over its summed seconds).
    """
    groups: dict[str, dict] = {}
    for launch in launches:
        kind = re.sub(r"_\d+$", "", launch["kernel"])
        group = groups.setdefault(kind, {"kernel": kind, "launches": 0, "seconds": 0.0,
                                         "flops": 0, "bytes": 0,
                                         "peak_gflops": launch.get("peak_gflops"),
                                         "peak_gbs": launch.get("peak_gbs")})
        group["launches"] += 1
        group["seconds"] += launch["seconds"]
        group["flops"] += launch.get("flops") or 0
        group["bytes"] += launch.get("bytes") or 0
    total = sum(g["seconds"] for g in groups.values()) or 1.0
    kept = sorted(groups.values(), key=lambda g: -g["seconds"])[:top]
    for g in kept:
        g["share"] = g["seconds"] / total
        seconds = g["seconds"] or 1e-12
        g["peak_flops_fraction"] = (g["flops"] / seconds / 1e9 / g["peak_gflops"]
                                    if g["peak_gflops"] else None)
        g["peak_bytes_fraction"] = (g["bytes"] / seconds / 1e9 / g["peak_gbs"]
                                    if g["peak_gbs"] else None)
    return kept


def markdown_report(data: dict, loss: float = 1.1) -> str:
    """
    Saved results (`--out`) as Markdown: per model our wall and kernel times beside each
    PyTorch column's wall (host to host) and GPU time, ours over the fastest; then, for
    each model where ours is over `loss` times the fastest column's wall time, the kernels
    that carry our time (`kernel_losses`, from `--roofline`).
    """
    def cell(x, spec=".3f"):
        return "-" if x is None else format(x, spec)

    head = ["model", "ours ms (kernels)", *[f"{c} ms (GPU)" for c in TORCH_COLUMNS],
            "ours / best"]
    lines = [f"On {data['device']}" + (f" at {data['commit']}" if data.get("commit") else "")
             + f", torch {data.get('versions', {}).get('torch') or '-'}; wall ms host to host"
             " (GPU ms on resident inputs).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    losses = []
    for r in data["rows"]:
        best = min((r.get(f"{stem}_ms") or float("inf"), column)
                   for column, stem in TORCH_COLUMNS.items())
        ratio = r["ours_ms"] / best[0] if r.get("ours_ms") and best[0] < float("inf") else None
        cells = [r["model"], f"{cell(r.get('ours_ms'))} ({cell(r.get('ours_kernel_ms'))})"]
        for column, stem in TORCH_COLUMNS.items():
            wall = r.get(f"{stem}_ms")
            reason = (r.get("torch_compile_error") or {}).get(column)
            cells.append(f"{cell(wall)} ({cell(r.get(f'{stem}_gpu_ms'))})" if wall is not None
                         else f"failed: {reason}" if reason else "-")
        cells.append(f"{cell(ratio, '.2f')} ({best[1]})" if ratio else r.get("status", "-"))
        lines.append("| " + " | ".join(cells) + " |")
        if ratio and ratio > loss:
            losses.append((r, best, ratio))
    for r, (best_ms, column), ratio in losses:
        gpu = r.get(f"{TORCH_COLUMNS[column]}_gpu_ms")
        kernels = r.get("ours_kernel_ms")
        split = (f" Kernels: ours {kernels:.3f} ms, its GPU time {gpu:.3f} ms "
                 f"({kernels / gpu:.2f}x); the rest, host and launches: ours "
                 f"{r['ours_ms'] - kernels:.3f} ms, its {best_ms - gpu:.3f} ms."
                 if kernels and gpu else "")
        lines += ["", f"**{r['model']}**: {ratio:.2f}x {column}'s wall time ({r['ours_ms']:.3f} "
                  f"against {best_ms:.3f} ms).{split}"]
        for g in kernel_losses(r.get("roofline") or []):
            flops = g["peak_flops_fraction"]
            byts = g["peak_bytes_fraction"]
            lines.append(f"- `{g['kernel']}` x{g['launches']}: {g['share']:.0%} of our kernel "
                         f"time ({g['seconds'] * 1e3:.3f} ms), "
                         f"{'-' if flops is None else format(flops * 100, '.2g') + '%'} of peak FLOP/s, "
                         f"{'-' if byts is None else format(byts * 100, '.2g') + '%'} of peak bandwidth")
        if not r.get("roofline"):
            lines.append("- (no launches saved: run with `--roofline`)")
    return "\n".join(lines)


def progress(items: list, label: Callable[[object], str]):
    """`items` with a tqdm bar on stderr that names the item at hand."""
    bar = tqdm(items, file=sys.stderr, unit="model")
    for item in bar:
        bar.set_postfix_str(label(item))
        yield item


# command line -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--device", help="pocl, gpu, or a substring of an OpenCL platform/device name"
    )
    parser.add_argument("--models", help="comma-separated names or .onnx paths (default: all)")
    parser.add_argument(
        "--repeat", type=int, default=10, help="timed runs per model (default %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=0, help="input seed (default %(default)s)")
    parser.add_argument("--passes", default=pipelines.GRAPH_PASSES,
                        help="graph passes before lowering")
    parser.add_argument("--storage", default="f32", choices=["f32", "f16"], help="pixel type")
    parser.add_argument(
        "--tol", type=float, default=1e-3, help="rel err for status ok (default %(default)s)"
    )
    parser.add_argument(
        "--weights",
        default="random",
        choices=["random", "shipped"],
        help="light models: seeded random weights and logits as an output (default), or as shipped",
    )
    parser.add_argument("--torch-cuda", action="store_true", help="also time PyTorch eager on CUDA")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time torch.compile's three modes on CUDA (implies --torch-cuda)")
    parser.add_argument("--isolate", action="store_true", help="run each model in a child process")
    parser.add_argument("--compile-jobs", type=int, default=0, metavar="N",
                        help="with --torch-compile and --isolate: compile every model's modes "
                             "first, N at once, their autotuning timed one at a time; the "
                             "timed runs then load them from Inductor's cache (default: "
                             "each compiles in its timed run)")
    parser.add_argument("--compile-timeout", type=float, default=900,
                        help="per compile with --compile-jobs (s, default %(default)s)")
    parser.add_argument("--ahead-out", metavar="JSON",
                        help="with --compile-jobs: only compile ahead, save what each compile "
                             "gave there and stop (set TORCHINDUCTOR_CACHE_DIR and "
                             "TRITON_CACHE_DIR to folders that outlive the run)")
    parser.add_argument("--ahead-in", metavar="JSON",
                        help="the compiles an --ahead-out run saved, into the same caches: "
                             "the timed runs load them")
    parser.add_argument("--timeout", type=float, default=600, help="per model with --isolate (s)")
    parser.add_argument("--out", help="JSON file (default bench/results/e2e-<device>.json)")
    parser.add_argument("--roofline", metavar="DIR",
                        help="a roofline plot per model in DIR, its launches in the rows")
    parser.add_argument("--list-devices", action="store_true", help="list OpenCL devices and exit")
    parser.add_argument("--report", metavar="JSON", type=Path,
                        help="only print saved results as Markdown, with the kernels behind "
                             "each loss to the fastest PyTorch column")
    parser.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of failures")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # one model, a JSON row on stdout
    parser.add_argument("--compile-worker", help=argparse.SUPPRESS)  # MODEL:COLUMN, compile_job
    parser.add_argument("--gpu-lock", help=argparse.SUPPRESS)
    parser.add_argument("--skip-compile", help=argparse.SUPPRESS)  # columns compiled ahead badly
    return parser


def git_commit() -> str | None:
    """The repository's commit that a benchmark's results name."""
    done = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.compile_jobs or args.ahead_in) and not (args.torch_compile and args.isolate):
        parser.error("--compile-jobs and --ahead-in need --torch-compile and --isolate")
    if args.ahead_out and not args.compile_jobs:
        parser.error("--ahead-out needs --compile-jobs")
    if args.report:
        print(markdown_report(json.loads(args.report.read_text())))
        return 0
    if args.compile_worker:
        name, _, column = args.compile_worker.rpartition(":")
        with tempfile.TemporaryDirectory(prefix="mobile-opt-e2e-") as scratch:
            try:
                result = compile_job(name, column, args, Path(scratch))
            except Exception as e:  # noqa: BLE001 - the parent records why
                result = {"error": one_line(e)}
        print(json.dumps(result))
        return 0
    args.torch_cuda = args.torch_cuda or args.torch_compile
    if args.torch_cuda:
        torch = torch_or_none()
        if torch is None or not torch.cuda.is_available():
            print(
                "e2e: --torch-cuda: no CUDA device for torch; torch timings are null",
                file=sys.stderr,
            )
            args.torch_cuda = args.torch_compile = False
    if args.list_devices:
        from mobile_opt.backends.opencl.devices import available_devices

        for info in available_devices():
            print(info.describe())
        return 0
    device = pick_device(args.device)
    if args.roofline:
        Path(args.roofline).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mobile-opt-e2e-") as scratch:
        if args.worker:
            (source,) = resolve_models([args.worker], Path(scratch))
            print(json.dumps(row_json(bench_model(source, device, args, Path(scratch)))))
            return 0
        names = args.models.split(",") if args.models else LIGHT_MODELS + EXPORTED_MODELS
        print(f"device: {device.describe()}", file=sys.stderr)
        rows: list[Row] = []
        out = (
            Path(args.out) if args.out else BENCH_DIR / "results" / f"e2e-{slug(device.name)}.json"
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        if args.torch_compile:  # each mode compiles afresh, not from an earlier run's caches
            for variable in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
                os.environ.setdefault(variable, str(Path(scratch) / variable.lower()))
        if args.isolate:
            items = [n.strip() for n in names if n.strip()]
            ahead = (compile_ahead(items, args, Path(scratch))
                     if args.torch_compile and args.compile_jobs else {})
            if args.ahead_in:  # compiled by an earlier --ahead-out run into the same caches
                ahead = {**json.loads(Path(args.ahead_in).read_text()), **ahead}
            if args.ahead_out:
                Path(args.ahead_out).write_text(json.dumps(ahead, indent=1) + "\n")
                print(f"compiled ahead: {args.ahead_out}", file=sys.stderr)
                return 0
            for name in progress(items, str):
                done = ahead.get(name, {})
                row = bench_model_isolated(name, args, args.timeout,
                                           [c for c, r in done.items() if "error" in r])
                merge_ahead(row, done)
                rows.append(row)
                out.write_text(json.dumps(report(device, args, rows), indent=1) + "\n")
        else:
            sources = resolve_models([n.strip() for n in names if n.strip()], Path(scratch))
            for source in progress(sources, lambda s: s.name):
                rows.append(bench_model(source, device, args, Path(scratch)))
                out.write_text(json.dumps(report(device, args, rows), indent=1) + "\n")
    print(format_table(rows))
    print(f"results: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
