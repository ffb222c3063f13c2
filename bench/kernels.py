"""
Single kernels against the vendors' libraries. Each MatMul and Conv shape is
a one-node ONNX model, compiled by the default GPU pipeline for the device
(`e2e.compile_model`, as `mobile-run` compiles it) and checked against onnxruntime. Our
time is the median over `--repeat` runs of the kernels' summed OpenCL profiling time.
Beside it, on the same shapes:
- onnxruntime's CPU provider, the median wall time of a run (a CPU device: the same
  cores);
- with `--torch-cuda`, PyTorch on CUDA with TF32 off (cuBLAS, cuDNN): the median of CUDA
  events around the op, inputs already on the device.

Shapes: `issue` (the first table: MatMul 2048³ and 4096³, three 3×3 convs), `resnet50`
and `mobilenetv2` (their layers' distinct conv shapes at batch 1, 224², and the
classifier), `winograd` (3×3 stride-1 convs: ResNet-50's four and others). On a CPU device
shapes over `--cpu-gflop` are left out.

`--winograd` times each conv a second time as `onnx-to-texture{winograd=false}` builds it
(in buffers: the direct wide kernel where Winograd F(2x2, 3x3) is the default), the two
builds' runs interleaved so that a busy machine slows both alike, and adds the direct
kernel's time and direct/ours beside (results in `kernels-winograd-<device>.json`).

    python3 bench/kernels.py --device pocl [--sets issue resnet50 mobilenetv2]
    python3 bench/kernels.py --device pocl --sets winograd --winograd --no-ort
    python3 bench/kernels.py --device gpu --torch-cuda

Results: a table, `bench/results/kernels-<device>.json` and a plot of ours/theirs beside
it (`--plot JSON...` redraws saved results).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
from tqdm import tqdm

import e2e
from e2e import BENCH_DIR, git_commit, one_line, pick_device, slug, torch_or_none

from mobile_opt import checking, pipelines


@dataclass(frozen=True)
class Shape:
    """One op: a MatMul [m, k] x [k, n], or a Conv of `c` to `m` channels at `hw`²."""

    name: str
    op: str  # "MatMul" or "Conv"
    m: int
    k: int = 0
    n: int = 0
    c: int = 0
    hw: int = 0
    kernel: int = 1
    stride: int = 1
    group: int = 1

    @property
    def out_hw(self) -> int:
        return (self.hw + 2 * (self.kernel // 2) - self.kernel) // self.stride + 1

    @property
    def flop(self) -> int:
        if self.op == "MatMul":
            return 2 * self.m * self.k * self.n
        return 2 * self.m * (self.c // self.group) * self.kernel**2 * self.out_hw**2


def conv(c: int, m: int, hw: int, kernel: int = 1, stride: int = 1, group: int = 1) -> Shape:
    kind = "dw" if group == c == m and group > 1 else f"{kernel}x{kernel}"
    s = f"s{stride} " if stride > 1 else ""
    return Shape(f"conv {kind} {s}{c}->{m} @{hw}", "Conv", m, c=c, hw=hw, kernel=kernel,
                 stride=stride, group=group)


def matmul(m: int, k: int, n: int) -> Shape:
    return Shape(f"matmul {m}x{k}x{n}", "MatMul", m, k, n)


SETS = {
    "issue": [matmul(2048, 2048, 2048), matmul(4096, 4096, 4096), conv(256, 256, 14, 3),
              conv(512, 512, 7, 3), conv(64, 64, 56, 3)],
    "resnet50": [
        conv(3, 64, 224, 7, 2), conv(64, 64, 56), conv(64, 64, 56, 3), conv(64, 256, 56),
        conv(256, 64, 56), conv(256, 128, 56), conv(128, 128, 56, 3, 2), conv(128, 512, 28),
        conv(256, 512, 56, 1, 2), conv(512, 128, 28), conv(128, 128, 28, 3),
        conv(512, 256, 28), conv(256, 256, 28, 3, 2), conv(256, 1024, 14),
        conv(512, 1024, 28, 1, 2), conv(1024, 256, 14), conv(256, 256, 14, 3),
        conv(1024, 512, 14), conv(512, 512, 14, 3, 2), conv(512, 2048, 7),
        conv(1024, 2048, 14, 1, 2), conv(2048, 512, 7), conv(512, 512, 7, 3),
        matmul(1, 2048, 1000),
    ],
    "transformer": [matmul(128, 768, 3072), matmul(512, 4096, 4096)],
    "winograd": [
        conv(64, 64, 56, 3), conv(128, 128, 28, 3), conv(256, 256, 14, 3), conv(512, 512, 7, 3),
        conv(256, 256, 7, 3), conv(512, 512, 14, 3), conv(64, 64, 14, 3), conv(32, 32, 112, 3),
        conv(128, 128, 56, 3), conv(16, 32, 56, 3), conv(8, 32, 56, 3), conv(4, 32, 56, 3),
    ],
    "mobilenetv2": [
        conv(3, 32, 224, 3, 2), conv(32, 32, 112, 3, 1, 32), conv(32, 16, 112),
        conv(16, 96, 112), conv(96, 96, 112, 3, 2, 96), conv(96, 24, 56), conv(24, 144, 56),
        conv(144, 144, 56, 3, 1, 144), conv(144, 24, 56), conv(144, 144, 56, 3, 2, 144),
        conv(144, 32, 28), conv(32, 192, 28), conv(192, 192, 28, 3, 1, 192),
        conv(192, 32, 28), conv(192, 64, 14), conv(64, 384, 14),
        conv(384, 384, 14, 3, 1, 384), conv(384, 64, 14), conv(384, 96, 14),
        conv(96, 576, 14), conv(576, 96, 14), conv(576, 576, 14, 3, 2, 576),
        conv(576, 160, 7), conv(160, 960, 7), conv(960, 960, 7, 3, 1, 960),
        conv(960, 160, 7), conv(960, 320, 7), conv(320, 1280, 7), matmul(1, 1280, 1000),
    ],
}


def one_node_model(shape: Shape, path: Path, seed: int) -> Path:
    """`shape` as an ONNX model with a random constant weight (and bias for a conv)."""
    rng = np.random.default_rng(seed)

    def weight(name, dims, scale):
        data = (rng.standard_normal(dims) * scale).astype(np.float32)
        return helper.make_tensor(name, TensorProto.FLOAT, dims, data.ravel())

    if shape.op == "MatMul":
        x = [shape.m, shape.k]
        y = [shape.m, shape.n]
        inits = [weight("w", [shape.k, shape.n], shape.k**-0.5)]
        node = helper.make_node("MatMul", ["x", "w"], ["y"])
    else:
        x = [1, shape.c, shape.hw, shape.hw]
        y = [1, shape.m, shape.out_hw, shape.out_hw]
        fan_in = shape.c // shape.group * shape.kernel**2
        inits = [weight("w", [shape.m, shape.c // shape.group, shape.kernel, shape.kernel],
                        fan_in**-0.5), weight("b", [shape.m], 0.1)]
        pad = shape.kernel // 2
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[pad] * 4,
                                strides=[shape.stride] * 2, group=shape.group,
                                kernel_shape=[shape.kernel] * 2)
    graph = helper.make_graph(
        [node], "kernel", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@dataclass
class Result:
    shape: str
    op: str
    gflop: float
    ours_ms: float | None = None
    ours_spread: float | None = None
    kernels: int = 0
    rel_err: float | None = None
    ort_ms: float | None = None
    direct_ms: float | None = None
    """With `--winograd`: the conv built with `onnx-to-texture{winograd=false}`."""
    torch_ms: float | None = None
    torch_compile_ms: float | None = None
    torch_autotune_ms: float | None = None
    torch_cudagraphs_ms: float | None = None
    """With `--torch-compile`: GPU ms of `torch.compile`'s three modes (`e2e.TORCH_COMPILE_MODES`)."""
    torch_compile_s: dict = field(default_factory=dict)
    torch_compile_rel_err: dict = field(default_factory=dict)
    torch_compile_error: dict = field(default_factory=dict)
    torch_autotune_pick: str | None = None
    """The candidate `max-autotune` timed fastest: its name and kind."""
    triton_best_ms: float | None = None
    aten_best_ms: float | None = None
    """The fastest Triton template and ATen (cuBLAS/cuDNN) candidates, as the autotuner timed them."""
    error: str | None = None
    dims: dict = field(default_factory=dict)

    @property
    def best_torch_ms(self) -> float | None:
        times = [t for t in (self.torch_ms, self.torch_compile_ms, self.torch_autotune_ms,
                             self.torch_cudagraphs_ms) if t]
        return min(times) if times else None

    def rate(self, ms: float | None) -> float | None:
        return self.gflop / ms if ms else None  # GFLOP per ms = TFLOP/s


def time_ours(path: Path, device, repeat: int, spec: str,
              other: str | None = None) -> tuple[float, float, int, float, float | None]:
    """(median ms, relative spread, kernels, error against onnxruntime) of our build, and
    the median ms of a build by the `other` spec, its runs interleaved with ours."""
    module, feeds = e2e.import_model(path, 0)
    model = e2e.compile_model(module, device, spec, "f32")
    first = model.run(feeds)
    expected = checking.session_outputs(checking.onnxruntime_session(str(path)), feeds)
    error = checking.worst_relative_error(first.outputs, expected)
    models = [model]
    if other is not None:
        models.append(e2e.compile_model(e2e.import_model(path, 0)[0], device, other, "f32"))
        models[1].run(feeds)  # PoCL builds a kernel at its first launch
    times: list[list[float]] = [[] for _ in models]
    for _ in range(repeat):
        for m, t in zip(models, times):
            t.append(sum(k.seconds for k in m.run(feeds).kernel_times) * 1e3)
    median = statistics.median(times[0])
    spread = (statistics.quantiles(times[0], n=4)[2]
              - statistics.quantiles(times[0], n=4)[0]) / median
    return (median, spread, len(first.kernel_times), error,
            statistics.median(times[1]) if other is not None else None)


def torch_op(shape: Shape):
    """`shape` as a PyTorch function on CUDA and its random inputs, TF32 off."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    generator = torch.Generator(dev).manual_seed(0)

    def randn(*dims):
        return torch.randn(*dims, device=dev, generator=generator)

    if shape.op == "MatMul":
        def matmul(a, b):
            return a @ b
        return matmul, (randn(shape.m, shape.k), randn(shape.k, shape.n))

    def conv2d(x, w, bias):
        return torch.nn.functional.conv2d(x, w, bias, shape.stride, shape.kernel // 2, 1,
                                          shape.group)
    return conv2d, (randn(1, shape.c, shape.hw, shape.hw),
                    randn(shape.m, shape.c // shape.group, shape.kernel, shape.kernel),
                    randn(shape.m))


def gpu_ms(op, inputs, repeat: int) -> float:
    """Median ms of CUDA events around `op(*inputs)`, after three warm-up calls."""
    return e2e.cuda_event_ms(lambda: op(*inputs), repeat, warmup=3)


def time_torch(shape: Shape, repeat: int) -> float:
    """Median ms of the op in PyTorch eager on CUDA (cuBLAS, cuDNN; TF32 off)."""
    return gpu_ms(*torch_op(shape), repeat)


def compiled_op(shape: Shape, column: str):
    """The op under `torch.compile` in `column`'s mode, compiled afresh at its first call
    (`inputs` with it); that call's seconds; and, from `max-autotune`, each candidate kernel
    that Inductor timed, by name, with its kind (`TritonTemplateCaller`: a Triton template;
    `ExternKernelCaller`: cuBLAS/cuDNN through ATen) and milliseconds."""
    import time

    import torch

    op, inputs = torch_op(shape)
    torch._dynamo.reset()
    compiled = torch.compile(op, mode=e2e.TORCH_COMPILE_MODES[column])
    timed: list[dict] = []
    from torch._inductor import select_algorithm

    def saver(timings, *_):
        timed.extend({"name": getattr(c, "name", str(c)), "kind": type(c).__name__,
                      "ms": float(t)} for c, t in timings.items() if math.isfinite(t))
    if hasattr(select_algorithm, "add_feedback_saver"):  # else no candidates' timings
        select_algorithm.add_feedback_saver(saver)
    start = time.perf_counter()
    with torch.inference_mode():
        got = compiled(*inputs)
        want = op(*inputs)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    error = float((got - want).abs().max() / want.abs().max())
    getattr(select_algorithm, "clear_feedback_savers", lambda: None)()
    return compiled, inputs, seconds, error, timed


def compile_job(shape: Shape, lock: str | None) -> dict:
    """Every `torch.compile` mode of one shape (a `--compile-worker` child): by column, the
    first call's seconds, its error against eager and the autotuner's candidates."""
    if lock:
        e2e.serialize_gpu_timing(Path(lock))
    done = {}
    for column in e2e.TORCH_COMPILE_MODES:
        try:
            _, _, seconds, error, timed = compiled_op(shape, column)
            done[column] = {"compile_s": seconds, "rel_err": error, "candidates": timed}
        except Exception as e:  # noqa: BLE001 - a shape that does not compile is a result
            done[column] = {"error": one_line(e)}
    return done


def fill_torch_compile(result: Result, shape: Shape, repeat: int, ahead: dict) -> None:
    """`result`'s `torch.compile` columns: each mode's GPU time on resident inputs, its
    compile (from `ahead`, the compile done before any timing, where there is one), and
    which kernel `max-autotune` chose with the best Triton and ATen candidates' times."""
    for column in e2e.TORCH_COMPILE_MODES:
        known = ahead.get(column, {})
        if "error" in known:
            result.torch_compile_error[column] = known["error"]
            continue
        try:
            compiled, inputs, seconds, error, timed = compiled_op(shape, column)
            setattr(result, f"torch_{column}_ms", gpu_ms(compiled, inputs, repeat))
        except Exception as e:  # noqa: BLE001 - a shape that does not compile is a result
            result.torch_compile_error[column] = one_line(e)
            continue
        result.torch_compile_s[column] = known.get("compile_s", seconds)
        result.torch_compile_rel_err[column] = error
        timed = known.get("candidates") or timed
        if column == "autotune" and timed:
            best = min(timed, key=lambda c: c["ms"])
            result.torch_autotune_pick = f"{best['name']} ({best['kind']})"
            for kind, field_name in (("Triton", "triton_best_ms"), ("Extern", "aten_best_ms")):
                times = [c["ms"] for c in timed if c["kind"].startswith(kind)]
                setattr(result, field_name, min(times) if times else None)


def bench(shape: Shape, device, args, scratch: Path, ahead: dict | None = None) -> Result:
    result = Result(shape.name, shape.op, shape.flop / 1e9,
                    dims={k: v for k, v in asdict(shape).items() if k not in ("name", "op")})
    path = one_node_model(shape, scratch / f"{slug(shape.name)}.onnx", args.seed)
    direct = (f"{args.passes},onnx-to-texture{{winograd=false}}"
              if args.winograd and shape.op == "Conv" else None)
    try:
        (result.ours_ms, result.ours_spread, result.kernels, result.rel_err,
         result.direct_ms) = time_ours(path, device, args.repeat, args.passes, direct)
    except Exception as e:  # a failed shape is a row, not the end of the run
        result.error = one_line(e)
    if args.ort:
        module, feeds = e2e.import_model(path, 0)
        result.ort_ms = e2e.run_onnxruntime(path, feeds, args.repeat)[0]
    if args.torch_cuda:
        result.torch_ms = time_torch(shape, args.repeat)
    if args.torch_compile:
        fill_torch_compile(result, shape, args.repeat, ahead or {})
    return result


def fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def table(results: list[Result], theirs: str, winograd: bool = False) -> str:
    lines = [f"{'shape':30s} {'GFLOP':>7s} {'ours ms':>9s} {'GFLOP/s':>8s} "
             f"{theirs + ' ms':>10s} {'GFLOP/s':>8s} {'ours/theirs':>11s} {'err':>8s}"
             + (f" {'direct ms':>9s} {'direct/ours':>13s}" if winograd else "")]
    for r in results:
        other = r.torch_ms if theirs == "torch" else r.ort_ms
        ratio = r.ours_ms / other if r.ours_ms and other else None
        lines.append(
            f"{r.shape:30s} {r.gflop:7.3f} {fmt(r.ours_ms, '9.3f')} "
            f"{fmt(r.rate(r.ours_ms) and r.rate(r.ours_ms) * 1e3, '8.1f')} "
            f"{fmt(other, '10.3f')} {fmt(r.rate(other) and r.rate(other) * 1e3, '8.1f')} "
            f"{fmt(ratio, '11.2f')} {fmt(r.rel_err, '8.1e')}"
            + (f" {fmt(r.direct_ms, '9.3f')} "
               f"{fmt(r.direct_ms and r.ours_ms and r.direct_ms / r.ours_ms, '13.2f')}"
               if winograd else "")
            + (f"  {r.error}" if r.error else ""))
    return "\n".join(lines)


def compile_table(results: list[Result]) -> str:
    """Ours beside PyTorch eager and `torch.compile`'s modes, GPU ms, and what
    `max-autotune` picked."""
    rows = [["shape", "ours ms", "eager ms", "compile ms", "autotune ms", "graphs ms",
             "ours/best", "autotune pick", "best Triton ms", "best ATen ms"]]
    for r in results:
        best = r.best_torch_ms
        rows.append([r.shape, fmt(r.ours_ms, ".3f"), fmt(r.torch_ms, ".3f"),
                     fmt(r.torch_compile_ms, ".3f"), fmt(r.torch_autotune_ms, ".3f"),
                     fmt(r.torch_cudagraphs_ms, ".3f"),
                     fmt(r.ours_ms / best if r.ours_ms and best else None),
                     r.torch_autotune_pick or "-", fmt(r.triton_best_ms, ".3f"),
                     fmt(r.aten_best_ms, ".3f")])
    return checking.format_table(rows)


def plot(rows: list[dict], baseline: str, title: str, path: Path) -> None:
    """Ours/theirs (time) per shape as bars on a log axis, a line at parity and one at the
    issue's 1.25 (0.8x the library's speed); shapes without both times are left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key = "torch_ms" if baseline == "torch-cuda" else "ort_ms"
    kept = [r for r in rows if r.get("ours_ms") and r.get(key)]
    if not kept:
        return
    ratios = [r["ours_ms"] / r[key] for r in kept]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(kept) + 1.2))
    colours = ["tab:green" if x <= 1.0 else "tab:orange" if x <= 1.25 else "tab:red"
               for x in ratios]
    ax.barh(range(len(kept)), ratios, color=colours)
    ax.set_yticks(range(len(kept)), [r["shape"] for r in kept], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", lw=0.8)
    ax.axvline(1.25, color="grey", lw=0.8, ls="--")
    other = "PyTorch (cuBLAS/cuDNN)" if baseline == "torch-cuda" else "onnxruntime"
    ax.set_xlabel(f"our time / {other}'s (log; left of 1 is faster)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_saved(path: Path) -> Path:
    """The plot of a saved result, beside it."""
    data = json.loads(path.read_text())
    out = path.with_suffix(".png")
    plot(data["rows"], data["settings"]["baseline"],
         f"{data['device']} at {data.get('commit') or '?'}", out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", help="pocl, gpu, or a substring of a device name")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--repeat", type=int, default=7, help="timed runs (default 7)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu-gflop", type=float, default=5.0,
                        help="on a CPU device, leave out shapes over this (default 5)")
    parser.add_argument("--torch-cuda", action="store_true", help="PyTorch on CUDA beside")
    parser.add_argument("--no-ort", dest="ort", action="store_false",
                        help="no onnxruntime beside (on a GPU, where it is not the baseline)")
    parser.add_argument("--winograd", action="store_true",
                        help="time each conv also as onnx-to-texture{winograd=false} builds "
                             "it, interleaved (the direct kernel beside Winograd)")
    parser.add_argument("--passes", default=pipelines.GRAPH_PASSES,
                        help="the pipeline spec, e.g. with 'onnx-to-texture{buffers=true}' "
                             "last (default: the graph passes, as mobile-run)")
    parser.add_argument("--out", help="JSON (default bench/results/kernels-<device>.json); "
                        "a plot of the ratios goes beside it (.png)")
    parser.add_argument("--plot", nargs="+", type=Path, metavar="JSON",
                        help="only draw the plots of saved results")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also torch.compile's three modes on CUDA, with the kernel "
                             "max-autotune picks (implies --torch-cuda)")
    parser.add_argument("--compile-jobs", type=int, default=0, metavar="N",
                        help="with --torch-compile: compile every shape first, N at once, "
                             "their autotuning timed one at a time (default: in its row)")
    parser.add_argument("--compile-timeout", type=float, default=600,
                        help="per shape with --compile-jobs (s, default %(default)s)")
    parser.add_argument("--compile-worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--gpu-lock", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.torch_cuda = args.torch_cuda or args.torch_compile
    if args.winograd and "onnx-to-texture" in args.passes:
        parser.error("--winograd appends onnx-to-texture{winograd=false} to --passes, "
                     "which must not name onnx-to-texture itself")
    if args.plot:
        for path in args.plot:
            print(f"saved {plot_saved(path)}")
        return 0
    if args.torch_cuda and (torch_or_none() is None or not torch_or_none().cuda.is_available()):
        raise SystemExit("kernels: --torch-cuda needs torch with a CUDA device")
    all_shapes = [s for name in args.sets for s in SETS[name]]
    if args.compile_worker is not None:
        print(json.dumps(compile_job(all_shapes[args.compile_worker], args.gpu_lock)))
        return 0
    device = pick_device(args.device, "kernels")
    cpu = device.kind == "CPU"
    shapes = [s for s in all_shapes if not (cpu and s.flop / 1e9 > args.cpu_gflop)]
    suffix = "-winograd" if args.winograd else ""
    out = (Path(args.out) if args.out
           else BENCH_DIR / "results" / f"kernels{suffix}-{slug(device.name)}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="mobile-opt-kernels-") as scratch:
        ahead: dict = {}
        if args.torch_compile:  # compiled afresh, not from an earlier run's caches
            for variable in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
                os.environ.setdefault(variable, str(Path(scratch) / variable.lower()))
            if args.compile_jobs:
                base = [str(Path(__file__).resolve()), "--sets", *args.sets,
                        "--gpu-lock", str(Path(scratch) / "gpu-timing.lock")]
                jobs = {(all_shapes.index(s),): [*base, "--compile-worker",
                                                 str(all_shapes.index(s))]
                        for s in sorted(shapes, key=lambda s: -s.flop)}
                ahead = {all_shapes[i]: done for (i,), done in e2e.run_ahead(
                    jobs, args.compile_jobs, args.compile_timeout, "shape").items()}
        bar = tqdm(shapes, unit="shape", file=sys.stderr)
        for shape in bar:
            bar.set_postfix_str(shape.name)
            known = ahead.get(shape, {})
            if "error" in known:  # the whole compile job failed: every mode says why
                known = {column: known for column in e2e.TORCH_COMPILE_MODES}
            results.append(bench(shape, device, args, Path(scratch), known))
            out.write_text(json.dumps({
                "device": device.name, "platform": device.platform, "commit": git_commit(),
                "settings": {"repeat": args.repeat, "sets": args.sets,
                             "cpu_gflop": args.cpu_gflop, "passes": args.passes,
                             "winograd": args.winograd,
                             "baseline": "torch-cuda" if args.torch_cuda else "onnxruntime-cpu",
                             "torch_compile_modes": (e2e.TORCH_COMPILE_MODES
                                                     if args.torch_compile else None),
                             "compile_jobs": args.compile_jobs},
                "rows": [asdict(r) for r in results]}, indent=1))
    print(f"device: {device.describe()}")
    print(table(results, "torch" if args.torch_cuda else "ort", args.winograd))
    if args.torch_compile:
        print(compile_table(results))
    print(f"saved {out} and {plot_saved(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
