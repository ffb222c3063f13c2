"""
End-to-end benchmark of the OpenCL path on whole models.

For each model: import the ONNX file, run the graph passes, lower it
(`onnx-to-texture` with the device's image limits, `texture-to-ocl`, CSE), build it
for one OpenCL device and run it on seeded random inputs. One row per model says

- `ours_ms`: median wall-clock time of `CompiledModel.run` (input upload, every
  kernel, output download) over `--repeat` runs after one warm-up run;
  `ours_kernel_ms`: the median over the same runs of the summed kernel times
  that OpenCL profiling reports;
- `ort_ms`: median latency of onnxruntime's CPU provider on the same inputs, in
  the same process (its default thread count);
- `torch_cuda_ms` (with `--torch-cuda` on a machine with CUDA): PyTorch eager in
  fp32 with TF32 off, timed from the host input to the host output like ours. The
  exported models (`bench/models.py`) run as their own `nn.Module`; the onnx
  package's light models run through `TorchGraph`, a small eager interpreter
  of their ONNX graph built on `torch.nn.functional`;
- `rel_err`: max |ours - onnxruntime| / max |onnxruntime| over every output.

The light models fill every weight with one constant, so their outputs do not
depend on the input; by default (`--weights random`) they get seeded random
weights instead and their pre-Softmax logits as one more output, so that
`rel_err` checks something (`randomized_weights`).

A model that fails to compile or run gets its stage and one-line error instead.
The table is printed and the rows go to `bench/results/e2e-<device>.json` (or `--out`).

    python3 bench/e2e.py --device pocl --models mobilenetv2_small,light_squeezenet
    python3 bench/e2e.py --device gpu --torch-cuda --repeat 20

Needs numpy, onnx, onnxruntime, pyopencl and xdsl; torch is optional. The repository
need not be installed: its root is imported as the `mobile_opt` package.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
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
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx

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

DEFAULT_PASSES = "onnx-fold-constants,onnx-fold-batchnorm,onnx-canonicalize,onnx-fuse"


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


def device_info(device):
    """`device` as a `DeviceInfo`, whether it is one already or a `pyopencl.Device`."""
    import pyopencl as cl

    from mobile_opt.backends.opencl.devices import DeviceInfo

    if isinstance(device, DeviceInfo):
        return device
    return DeviceInfo(
        device,
        device.platform.name.strip(),
        device.name.strip(),
        cl.device_type.to_string(device.type),
        int(device.image2d_max_width),
        int(device.image2d_max_height),
        "cl_khr_fp16" in device.extensions.split(),
    )


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "device"


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


def light_model_path(name: str) -> Path:
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"{name}.onnx"


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
            light = name if name.startswith("light_") else f"light_{name}"
            sources.append(ModelSource(light, light_model_path(light)))
    return sources


def randomized_weights(model: onnx.ModelProto, seed: int) -> onnx.ModelProto:
    """
    `model` with seeded random weights (`checking.random_weights`: the light models
    fill every weight with 0.02, so each of them returns the same constant for any
    input and a comparison of outputs would check nothing), and a final Softmax's
    input exposed as one more output.
    """
    from mobile_opt.checking import random_weights

    model = random_weights(model, seed)
    graph = model.graph
    producers = {o: n for n in graph.node for o in n.output}
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    typed = {v.name: v for v in inferred.graph.value_info}
    for output in list(graph.output):
        node = producers.get(output.name)
        if node is not None and node.op_type == "Softmax" and node.input[0] in typed:
            graph.output.append(typed[node.input[0]])
    return model


def prepare_model(source: ModelSource, scratch: Path, weights: str, seed: int) -> Path:
    """The file to benchmark: as given, or with `randomized_weights` if it has filled weights."""
    if weights == "shipped":
        return source.path
    model = onnx.load(str(source.path))
    if not any(n.op_type == "ConstantOfShape" for n in model.graph.node):
        return source.path
    path = scratch / f"{source.name}.random.onnx"
    onnx.save(randomized_weights(model, seed), str(path))
    return path


def random_feeds(path: Path, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs for the graph inputs of `path` that are not initializers: floats in [-1, 1)."""
    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in value.type.tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        feeds[value.name] = rng.uniform(-1, 1, shape).astype(dtype)
    return feeds


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


def rel_error(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> float:
    """max |got - want| / max |want| (scale floored at 1e-6), the worst over all outputs."""
    worst = 0.0
    for name, expected in want.items():
        if name not in got:
            return float("inf")
        g, w = np.asarray(got[name], np.float64), np.asarray(expected, np.float64)
        if g.shape != w.shape:
            return float("inf")
        if g.size == 0:
            continue
        err = np.abs(g - w)
        err = np.where(np.isnan(g) & np.isnan(w), 0.0, err)
        worst = max(worst, float(np.nan_to_num(err, nan=np.inf).max()) / max(np.abs(w).max(), 1e-6))
    return worst


def run_onnxruntime(path: Path, feeds, repeat: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    ms, results = median_ms(lambda: session.run(None, feeds), repeat)
    return ms, dict(zip(names, results[-1]))


def compile_model(path: Path, device, passes: str, storage: str):
    """
    `path` imported and compiled for `device` (a `DeviceInfo` or `pyopencl.Device`) as
    `mobile-run` does:
    graph passes, `onnx-to-texture` within the device's image limits,
    `texture-to-ocl`, CSE; then built: a `CompiledModel`.
    """
    from mobile_opt import pipelines
    from mobile_opt.backends.opencl.executor import CompiledModel
    from mobile_opt.frontend.onnx_import import import_onnx

    device = device_info(device)
    module = import_onnx(path)
    passes, _ = pipelines.gpu_pipeline(passes, device, storage == "f16")
    pipelines.apply(module, passes)
    return CompiledModel(module, device)


def run_torch(source: ModelSource, path: Path, feeds, repeat: int, device_name: str = "cuda"):
    """(median ms, outputs by ONNX output name) of PyTorch eager fp32 (on CUDA: TF32 off)."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(device_name)
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if source.torch_factory is not None:
        module = source.torch_factory().to(device).eval()
        (out_name,) = [o.name for o in onnx.load(str(path)).graph.output]

        def forward(inputs):
            return {out_name: module(*inputs.values())}
    else:
        graph = TorchGraph(onnx.load(str(path)), device)
        forward = graph.run

    def step():
        with torch.inference_mode():
            inputs = {k: torch.from_numpy(v).to(device) for k, v in feeds.items()}
            outputs = {k: v.cpu().numpy() for k, v in forward(inputs).items()}
        synchronize()
        return outputs

    ms, results = median_ms(step, repeat)
    return ms, results[-1]


# ONNX on PyTorch eager ---------------------------------------------------------------


class TorchGraph:
    """
    An ONNX graph run op by op with PyTorch eager functions, for the ops of the
    light models and the exported models. Constant subgraphs (ConstantOfShape
    weights, shape tensors) are computed once when the graph is loaded.
    """

    def __init__(self, model: onnx.ModelProto, device):
        import torch

        self.torch, self.device = torch, device
        self.opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 21
        )
        graph = model.graph
        self.inputs = [
            i.name for i in graph.input if i.name not in {t.name for t in graph.initializer}
        ]
        self.outputs = [o.name for o in graph.output]
        self.constants: dict[str, object] = {
            t.name: self._tensor(onnx.numpy_helper.to_array(t)) for t in graph.initializer
        }
        self.nodes = []
        for node in graph.node:
            if all(i in self.constants or not i for i in node.input):
                values = self._eval(node, self.constants)
                self.constants.update(zip(node.output, values))
            else:
                self.nodes.append(node)

    def _tensor(self, array: np.ndarray):
        return self.torch.from_numpy(np.array(array)).to(self.device)

    def run(self, inputs: dict) -> dict:
        values = dict(self.constants)
        values.update(inputs)
        for node in self.nodes:
            values.update(zip(node.output, self._eval(node, values)))
        return {name: values[name] for name in self.outputs}

    def _eval(self, node: onnx.NodeProto, values: dict) -> list:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        args = [values[i] if i else None for i in node.input]
        handler = getattr(self, f"_op_{node.op_type}", None)
        if handler is None:
            raise NotImplementedError(f"TorchGraph has no {node.op_type}")
        out = handler(args, attrs)
        return list(out) if isinstance(out, tuple | list) else [out]

    # ops ----------------------------------------------------------------------------
    def _ints(self, t) -> list[int]:
        return [int(v) for v in t.reshape(-1).tolist()]

    def _op_Constant(self, args, a):
        return self._tensor(onnx.numpy_helper.to_array(a["value"]))

    def _op_ConstantOfShape(self, args, a):
        value = onnx.numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
        return self._tensor(np.full(self._ints(args[0]), value.reshape(-1)[0], value.dtype))

    def _op_Identity(self, args, a):
        return args[0]

    _op_Dropout = _op_Identity

    def _op_Add(self, args, a):
        return args[0] + args[1]

    def _op_Sub(self, args, a):
        return args[0] - args[1]

    def _op_Mul(self, args, a):
        return args[0] * args[1]

    def _op_Div(self, args, a):
        return args[0] / args[1]

    def _op_Pow(self, args, a):
        return self.torch.pow(args[0], args[1])

    def _op_Sum(self, args, a):
        out = args[0]
        for x in args[1:]:
            out = out + x
        return out

    def _op_Relu(self, args, a):
        return self.torch.relu(args[0])

    def _op_Tanh(self, args, a):
        return self.torch.tanh(args[0])

    def _op_Erf(self, args, a):
        return self.torch.erf(args[0])

    def _op_Sqrt(self, args, a):
        return self.torch.sqrt(args[0])

    def _op_Sigmoid(self, args, a):
        return self.torch.sigmoid(args[0])

    def _op_Clip(self, args, a):
        lo = args[1] if len(args) > 1 and args[1] is not None else a.get("min")
        hi = args[2] if len(args) > 2 and args[2] is not None else a.get("max")
        return self.torch.clamp(args[0], lo, hi)

    def _op_Softmax(self, args, a):
        x = args[0]
        axis = a.get("axis", -1 if self.opset >= 13 else 1)
        if self.opset >= 13:
            return self.torch.softmax(x, axis)
        axis %= x.dim()  # before opset 13: softmax over the flattened trailing dims
        flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
        return self.torch.softmax(flat, 1).reshape(x.shape)

    def _op_Conv(self, args, a):
        import torch.nn.functional as F

        x, w = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise NotImplementedError("TorchGraph Conv: auto_pad")
        rank = w.dim() - 2
        pads = a.get("pads", [0] * 2 * rank)
        begin, end = pads[:rank], pads[rank:]
        if begin != end:
            x = F.pad(x, [p for i in reversed(range(rank)) for p in (begin[i], end[i])])
            begin = [0] * rank
        conv = F.conv2d if rank == 2 else F.conv1d
        return conv(
            x,
            w,
            bias,
            a.get("strides", [1] * rank),
            begin,
            a.get("dilations", [1] * rank),
            a.get("group", 1),
        )

    def _pool_pads(self, x, a, rank, value):
        import torch.nn.functional as F

        pads = a.get("pads", [0] * 2 * rank)
        begin, end = pads[:rank], pads[rank:]
        if begin == end and all(2 * p <= k for p, k in zip(begin, a["kernel_shape"])):
            return x, begin
        return F.pad(
            x, [p for i in reversed(range(rank)) for p in (begin[i], end[i])], value=value
        ), [0] * rank

    def _op_MaxPool(self, args, a):
        import torch.nn.functional as F

        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise NotImplementedError("TorchGraph MaxPool: auto_pad")
        x, pads = self._pool_pads(args[0], a, 2, float("-inf"))
        return F.max_pool2d(
            x,
            a["kernel_shape"],
            a.get("strides", [1, 1]),
            pads,
            a.get("dilations", [1, 1]),
            bool(a.get("ceil_mode", 0)),
        )

    def _op_AveragePool(self, args, a):
        import torch.nn.functional as F

        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise NotImplementedError("TorchGraph AveragePool: auto_pad")
        include = bool(a.get("count_include_pad", 0))
        kernel, strides, ceil = (
            a["kernel_shape"],
            a.get("strides", [1, 1]),
            bool(a.get("ceil_mode", 0)),
        )
        x, pads = self._pool_pads(args[0], a, 2, 0.0)
        if pads == [0, 0] and any(a.get("pads", [0])) and not include:
            # explicitly padded: divide the window sums by the count of real elements
            ones = self._pool_pads(self.torch.ones_like(args[0][:1, :1]), a, 2, 0.0)[0]
            total = F.avg_pool2d(x, kernel, strides, 0, ceil, True)
            return total / F.avg_pool2d(ones, kernel, strides, 0, ceil, True)
        return F.avg_pool2d(x, kernel, strides, pads, ceil, include)

    def _op_GlobalAveragePool(self, args, a):
        return args[0].mean(dim=tuple(range(2, args[0].dim())), keepdim=True)

    def _op_LRN(self, args, a):
        import torch.nn.functional as F

        return F.local_response_norm(
            args[0], a["size"], a.get("alpha", 1e-4), a.get("beta", 0.75), a.get("bias", 1.0)
        )

    def _op_BatchNormalization(self, args, a):
        import torch.nn.functional as F

        x, scale, bias, mean, var = args[:5]
        return F.batch_norm(x, mean, var, scale, bias, False, 0.0, a.get("epsilon", 1e-5))

    def _op_LayerNormalization(self, args, a):
        import torch.nn.functional as F

        x, scale = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        axis = a.get("axis", -1) % x.dim()
        return F.layer_norm(x, x.shape[axis:], scale, bias, a.get("epsilon", 1e-5))

    def _op_Gemm(self, args, a):
        x, w = args[0], args[1]
        if a.get("transA", 0):
            x = x.t()
        if a.get("transB", 0):
            w = w.t()
        out = a.get("alpha", 1.0) * (x @ w)
        if len(args) > 2 and args[2] is not None:
            out = out + a.get("beta", 1.0) * args[2]
        return out

    def _op_MatMul(self, args, a):
        return self.torch.matmul(args[0], args[1])

    def _op_ReduceMean(self, args, a):
        axes = a.get("axes") if "axes" in a else (self._ints(args[1]) if len(args) > 1 else None)
        dims = tuple(axes) if axes else tuple(range(args[0].dim()))
        return args[0].mean(dim=dims, keepdim=bool(a.get("keepdims", 1)))

    def _op_Reshape(self, args, a):
        x = args[0]
        shape = a["shape"] if "shape" in a else self._ints(args[1])
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
        return x.reshape(shape)

    def _op_Flatten(self, args, a):
        x = args[0]
        axis = a.get("axis", 1) % (x.dim() + 1) if x.dim() else 0
        return x.reshape(int(np.prod(x.shape[:axis])), -1)

    def _op_Transpose(self, args, a):
        perm = a.get("perm", list(reversed(range(args[0].dim()))))
        return args[0].permute(*perm)

    def _op_Concat(self, args, a):
        return self.torch.cat(args, dim=a["axis"])

    def _op_Unsqueeze(self, args, a):
        x = args[0]
        axes = a["axes"] if "axes" in a else self._ints(args[1])
        rank = x.dim() + len(axes)
        for axis in sorted(ax % rank for ax in axes):
            x = x.unsqueeze(axis)
        return x

    def _op_Squeeze(self, args, a):
        x = args[0]
        axes = a.get("axes") if "axes" in a else (self._ints(args[1]) if len(args) > 1 else None)
        if axes is None:
            return x.squeeze()
        for axis in sorted((ax % x.dim() for ax in axes), reverse=True):
            x = x.squeeze(axis)
        return x

    def _op_Split(self, args, a):
        x, axis = args[0], a.get("axis", 0)
        sizes = (
            a.get("split")
            if "split" in a
            else (self._ints(args[1]) if len(args) > 1 and args[1] is not None else None)
        )
        if sizes is None:
            parts = a.get("num_outputs")
            if parts is None:
                raise NotImplementedError("TorchGraph Split: number of outputs unknown")
            sizes = [x.shape[axis] // parts] * parts
        return self.torch.split(x, list(sizes), dim=axis)

    def _op_Gather(self, args, a):
        x, index = args[0], args[1].long()
        axis = a.get("axis", 0) % x.dim()
        index = self.torch.where(index < 0, index + x.shape[axis], index)
        out = self.torch.index_select(x, axis, index.reshape(-1))
        return out.reshape(*x.shape[:axis], *index.shape, *x.shape[axis + 1 :])

    def _op_Shape(self, args, a):
        return self.torch.tensor(list(args[0].shape), dtype=self.torch.int64, device=self.device)


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
    torch_source: str | None = None
    rel_err: float | None = None
    torch_rel_err: float | None = None
    compile_s: float | None = None
    onnx_ops: list[str] = field(default_factory=list)

    @property
    def ours_vs_ort(self) -> float | None:
        return self.ours_ms / self.ort_ms if self.ours_ms and self.ort_ms else None

    @property
    def ours_vs_torch(self) -> float | None:
        return self.ours_ms / self.torch_cuda_ms if self.ours_ms and self.torch_cuda_ms else None


def bench_model(source: ModelSource, device, args, scratch: Path) -> Row:
    """Every measurement of one model; failures are recorded in the row, not raised."""
    row = Row(source.name)
    stage = "load"
    try:
        if not source.path.is_file():
            raise FileNotFoundError(f"{source.path}: no such file")
        path = prepare_model(source, scratch, args.weights, args.seed)
        row.onnx_ops = op_types(path)
        feeds = random_feeds(path, args.seed)
        stage = "onnxruntime"
        row.ort_ms, expected = run_onnxruntime(path, feeds, args.repeat)
        if args.torch_cuda:
            stage = "torch"
            try:
                row.torch_cuda_ms, torch_out = run_torch(source, path, feeds, args.repeat)
                row.torch_source = "nn.Module" if source.torch_factory else "TorchGraph"
                row.torch_rel_err = rel_error(torch_out, expected)
            except Exception as e:  # noqa: BLE001 - torch is optional: note why and go on
                row.torch_source = f"skipped ({one_line(e)})"
        stage = "compile"
        start = time.perf_counter()
        compiled = compile_model(path, device, args.passes, args.storage)
        row.compile_s = time.perf_counter() - start
        stage = "run"
        row.ours_ms, results = median_ms(lambda: compiled.run(feeds), args.repeat)
        kernel_ms = [sum(k.seconds for k in r.kernel_times) * 1e3 for r in results]
        row.ours_kernel_ms = statistics.median(kernel_ms)
        row.kernels = len(results[-1].kernel_times)
        row.rel_err = rel_error(results[-1].outputs, expected)
        row.status = "ok" if row.rel_err <= args.tol else "mismatch"
    except Exception as e:  # noqa: BLE001 - any failure is a result of the benchmark
        row.status, row.error = f"{stage} failed", one_line(e)
        if args.verbose:
            traceback.print_exc()
    return row


def bench_model_isolated(name: str, args, timeout: float) -> Row:
    """`bench_model` in a child process, so a crash or a hang costs only that model."""
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
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Row(name, "timeout", f"no result within {timeout:g} s")
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            data = json.loads(line)
            data.pop("ours_vs_ort", None)
            data.pop("ours_vs_torch", None)
            return Row(**data)
    tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return Row(name, "crashed", tail[:300])


# report -----------------------------------------------------------------------------


def _fmt(x: float | None, spec: str | None = None) -> str:
    if x is None:
        return "-"
    return format(x, spec or (".3f" if abs(x) < 1 else ".2f"))


def format_table(rows: list[Row]) -> str:
    table = [
        [
            "model",
            "ours ms",
            "kernel ms",
            "ORT CPU ms",
            "ours/ORT",
            "torch CUDA ms",
            "ours/torch",
            "rel err",
            "status",
        ]
    ]
    for r in rows:
        status = r.status if r.error is None else f"{r.status}: {r.error}"
        table.append(
            [
                r.model,
                _fmt(r.ours_ms),
                _fmt(r.ours_kernel_ms),
                _fmt(r.ort_ms),
                _fmt(r.ours_vs_ort),
                _fmt(r.torch_cuda_ms),
                _fmt(r.ours_vs_torch),
                _fmt(r.rel_err, ".1e"),
                status,
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths + [0])).rstrip() for line in table
    )


def row_json(row: Row) -> dict:
    data = asdict(row)
    data["ours_vs_ort"], data["ours_vs_torch"] = row.ours_vs_ort, row.ours_vs_torch
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
        },
        "rows": [row_json(r) for r in rows],
    }


def progress(items: list, label: Callable[[object], str]):
    """`items` with a progress bar: tqdm if installed, else a counter on stderr."""
    try:
        from tqdm import tqdm

        bar = tqdm(items, file=sys.stderr, unit="model")
        for item in bar:
            bar.set_postfix_str(label(item))
            yield item
        return
    except ImportError:
        pass
    for i, item in enumerate(items):
        print(f"[{i + 1}/{len(items)}] {label(item)}", file=sys.stderr, flush=True)
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
    parser.add_argument("--passes", default=DEFAULT_PASSES, help="graph passes before lowering")
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
    parser.add_argument("--isolate", action="store_true", help="run each model in a child process")
    parser.add_argument("--timeout", type=float, default=600, help="per model with --isolate (s)")
    parser.add_argument("--out", help="JSON file (default bench/results/e2e-<device>.json)")
    parser.add_argument("--list-devices", action="store_true", help="list OpenCL devices and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print tracebacks of failures")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # one model, a JSON row on stdout
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import_repo_package()
    if args.torch_cuda:
        torch = torch_or_none()
        if torch is None or not torch.cuda.is_available():
            print(
                "e2e: --torch-cuda: no CUDA device for torch; torch timings are null",
                file=sys.stderr,
            )
            args.torch_cuda = False
    if args.list_devices:
        from mobile_opt.backends.opencl.devices import available_devices

        for info in available_devices():
            print(info.describe())
        return 0
    device = pick_device(args.device)
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
        if args.isolate:
            items = [n.strip() for n in names if n.strip()]
            for name in progress(items, str):
                rows.append(bench_model_isolated(name, args, args.timeout))
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
