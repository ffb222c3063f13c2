"""
The real-model set: models that others wrote, run through `mobile-run` as a user runs it.

Each model is exported (or found) once and cached outside the repository, then
`mobile-run` (its default pipeline, in a child process with a time limit) runs it on
seeded random inputs that onnxruntime runs too. One row per model says:

- status: PASS (the tool passed and, on the GPU path, the error is within `--tol`),
  FAIL (it ran, out of tolerance), ERROR (the tool stopped with a one-line error),
  CRASH (a traceback), TIMEOUT, or EXPORT (the model could not be made);
- err: max |ours - ort| / max |ort| over every output (scale-aware); on the DSP path
  also the largest difference in units of the output's quantization step (LSB). There
  the verdict is the tool's own exact check, and onnxruntime may be the inexact side
  (the row says so where `mobile-run` does);
- |ort|: the expected output's largest magnitude; below 1e-3 the row is flagged, as
  an output that small passes any absolute tolerance and says nothing;
- ours ms: the median wall time of runs 2..N of `mobile-run --repeat N` (GPU path;
  the DSP path runs in QEMU, which says nothing of a DSP's speed);
  ort ms: onnxruntime's CPU provider, median of `--repeat` runs after one warm-up;
  tool s: the whole `mobile-run` call (import, compile, run, check);
- the failure's one line.

Models (`--list` prints them):

- torchvision classification models at 224x224, batch 1, random weights (no
  downloads): BatchNorm statistics re-estimated on random inputs (train mode,
  cumulative averages) and its affine parameters drawn, zero-initialised Linear
  layers (ViT's head) re-initialised, and heads initialised at std 0.01 (AlexNet, VGG,
  MobileNetV3) scaled so that logits spread 0.5: outputs are O(1); each exported by
  TorchScript (`dynamo=False`) at opsets 17 and 18 and by the dynamo exporter at
  opset 18 (`NAME-op17`, `NAME-op18`, `NAME-op18-dynamo`);
- `transformer_encoder`: `nn.Embedding` (1000 tokens) on int64 ids [1, 128], then a
  6-layer `nn.TransformerEncoder` (d 256, 8 heads); `mha_block`: LayerNorm and
  `nn.MultiheadAttention` (d 256, 8 heads) with a residual on [1, 128, 256];
  the same three exports each;
- PaddleOCR's PP-OCRv4 det (1x3x640x640) and rec (1x3x48x320) and the v2.0 text
  direction classifier (1x3x48x192, stored with a -1 batch dim and H, W both named
  '?', so sized by axis: `--dim x:0=1 --dim x:2=48 --dim x:3=192`) as shipped in the
  `rapidocr-onnxruntime` wheel;
- ResNet-18 and MobileNetV2 (224x224) quantized by onnxruntime's `quantize_static`
  (calibrated on 8 random inputs, per-tensor int8 weights): QDQ with uint8
  activations (`-qdq-u8`), QDQ with int8 activations (`-qdq-s8`), and QOperator
  form with uint8 activations (`-qop`, with com.microsoft QLinearAdd,
  QLinearGlobalAveragePool, QGemm). These run on the DSP path
  (`mobile-run --target hexagon`, QEMU), the float models on the GPU path.

Usage (torch, torchvision, onnxscript, tqdm and rapidocr-onnxruntime are the `zoo`
extra: `pip install -e .[zoo]`):

    python3 bench/zoo.py                                  # everything
    python3 bench/zoo.py --only resnet18,vit_b_16-op17    # a name, or a prefix at '-'
    python3 bench/zoo.py --only quantized                 # a group: torchvision,
                                                          # transformer, ppocr, quantized
    python3 bench/zoo.py --target opencl --device pocl    # the GPU-path models only
    python3 bench/zoo.py --write-test-models tests/models/zoo

Rows go to `bench/results/zoo-<device>.json` (the OpenCL device's name, or
`qemu-hexagonv66` for the DSP path); a run of some models replaces their rows there
and keeps the others. `--write-test-models` writes the small ONNX files that
`tests/test_zoo_models.py` runs (the same op patterns, width-reduced).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import logging
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx

from e2e import git_commit
from mobile_opt import checking
from mobile_opt.frontend.dims import UNNAMED
from mobile_opt.tools.mobile_run import output_stem

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent

RECIPE = 2
"""Version of the export recipes below; a cached model made by another is made again."""

TOL = 1e-3
"""Scale-aware error below which a GPU-path row passes (the e2e benchmark's)."""

TINY = 1e-3
"""An expected output whose largest magnitude is below this says nothing (atol is 1e-4)."""

DSP_DEVICE = "qemu-hexagonv66"


def bench_module(name: str):
    """`bench/NAME.py` as a module (bench scripts are not a package)."""
    key = f"mobile_opt_bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, BENCH_DIR / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


E2E = bench_module("e2e")
"""`bench/e2e.py`: its onnxruntime timing, one-line errors and device names serve here too."""


class ZooError(Exception):
    """Bad input to this script: one line, exit 1."""


# the models ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ZooModel:
    """One row of the set: how to make its ONNX file, its inputs and where it runs."""

    name: str
    group: str  # torchvision | transformer | ppocr | quantized
    target: str  # opencl | hexagon
    make: Callable[[Path, int], Path]
    """(cache dir, image size override or 0) -> the ONNX file."""
    shapes: dict[str, tuple[int, ...]]
    """Every graph input's shape, as fed."""
    token_range: int = 0
    """int64 inputs are ids below this."""
    source: str = ""


TORCHVISION = [
    "resnet18",
    "resnet50",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "mobilenet_v3_large",
    "efficientnet_b0",
    "squeezenet1_1",
    "shufflenet_v2_x1_0",
    "mnasnet1_0",
    "densenet121",
    "googlenet",
    "regnet_y_400mf",
    "vit_b_16",
    "alexnet",
    "vgg11",
]
IMAGE = 224
"""The torchvision models' (and the quantized ones') input size."""

EXPORTS = [("op17", 17, False), ("op18", 18, False), ("op18-dynamo", 18, True)]
"""(suffix, opset, dynamo) of each export of a torch model."""

SEQ, VOCAB, WIDTH, HEADS = 128, 1000, 256, 8
"""The transformer models' sequence length, vocabulary, width and heads."""

PPOCR = {
    "ppocr_det": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 640, 640)),
    "ppocr_rec": ("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320)),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192)),
}
"""PP-OCR models of the `rapidocr-onnxruntime` wheel and the input sizes rapidocr uses."""

QUANTIZED = [
    ("qdq-u8", "QDQ", "QUInt8"),
    ("qdq-s8", "QDQ", "QInt8"),
    ("qop", "QOperator", "QUInt8"),
]
"""(suffix, quant_format, activation_type) of each quantized form; weights are QInt8."""


def zoo_models() -> dict[str, ZooModel]:
    """The whole set by name, in table order."""
    models: list[ZooModel] = []
    for arch in TORCHVISION:
        for suffix, opset, dynamo in EXPORTS:
            models.append(
                ZooModel(
                    f"{arch}-{suffix}", "torchvision", "opencl",
                    lambda cache, size, a=arch, o=opset, d=dynamo: export_cached(
                        cache, a, o, d, size or IMAGE
                    ),
                    {"input": (1, 3, IMAGE, IMAGE)},
                    source=f"torchvision.models.{arch}",
                )
            )
    for arch, shape, ids in (
        ("transformer_encoder", (1, SEQ), VOCAB),
        ("mha_block", (1, SEQ, WIDTH), 0),
    ):
        for suffix, opset, dynamo in EXPORTS:
            models.append(
                ZooModel(
                    f"{arch}-{suffix}", "transformer", "opencl",
                    lambda cache, size, a=arch, o=opset, d=dynamo: export_cached(
                        cache, a, o, d, 0
                    ),
                    {"input": shape}, ids, source="torch.nn",
                )
            )
    for name, (file, shape) in PPOCR.items():
        models.append(
            ZooModel(name, "ppocr", "opencl", lambda cache, size, f=file: ppocr_file(f),
                     {"x": shape}, source=f"rapidocr_onnxruntime/models/{file}")
        )
    for arch in ("resnet18", "mobilenet_v2"):
        for suffix, form, activations in QUANTIZED:
            models.append(
                ZooModel(
                    f"{arch}-{suffix}", "quantized", "hexagon",
                    lambda cache, size, a=arch, f=form, t=activations: quantize_cached(
                        cache, a, f, t, size or IMAGE
                    ),
                    {"input": (1, 3, IMAGE, IMAGE)},
                    source=f"torchvision.models.{arch} + onnxruntime quantize_static",
                )
            )
    return {m.name: m for m in models}


def select(models: dict[str, ZooModel], only: str | None, target: str | None) -> list[ZooModel]:
    """The models `--only` names (a name, else a prefix at '-' or a group), in table order."""
    if not only:
        return [m for m in models.values() if target is None or m.target == target]
    chosen: set[str] = set()
    for item in (s.strip() for s in only.split(",")):
        if not item:
            continue
        hits = [item] if item in models else [
            m.name for m in models.values() if item == m.group or m.name.startswith(item + "-")
        ]
        if not hits:
            raise ZooError(
                f"--only {item}: no such model or group (groups: torchvision, transformer, "
                "ppocr, quantized; `--list` prints the names)"
            )
        chosen.update(hits)
    return [m for m in models.values() if m.name in chosen]


# making models with torch --------------------------------------------------------------


def default_cache() -> Path:
    return Path(
        os.environ.get("MOBILE_OPT_ZOO_DIR") or Path.home() / ".cache" / "mobile-opt" / "zoo"
    )


def _versions_key() -> dict[str, str]:
    import torch
    import torchvision

    return {"recipe": str(RECIPE), "torch": torch.__version__,
            "torchvision": torchvision.__version__}


def _cached(path: Path, key: dict[str, str], make: Callable[[Path], None]) -> Path:
    """`path`, made by `make(tmp)` unless it exists with the same `key` (a JSON beside it)."""
    meta = path.with_suffix(".json")
    if path.is_file() and meta.is_file() and json.loads(meta.read_text()) == key:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        make(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    meta.write_text(json.dumps(key) + "\n")
    return path


def settle(model, example, seed: int = 0, steps: int = 3, batch: int = 4):
    """
    `model` with weights that give O(1) outputs, in eval mode. Random initialisation
    with BatchNorm's initial statistics (mean 0, variance 1) shrinks activations layer
    after layer (MobileNet outputs ~1e-9); here every BatchNorm gets drawn affine
    parameters and statistics re-estimated on random inputs like `example` (train mode,
    cumulative averages), zero-initialised Linear layers (ViT's head) are drawn anew,
    and a last Linear layer whose outputs spread less than 0.1 is scaled to 0.5.
    """
    import torch
    from torch import nn

    generator = torch.Generator().manual_seed(seed)
    norms = []
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear) and not m.weight.any():
                m.reset_parameters()
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.reset_running_stats()
                m.momentum = None  # a cumulative average over the steps
                if m.affine:
                    m.weight.uniform_(0.5, 1.5, generator=generator)
                    m.bias.uniform_(-0.2, 0.2, generator=generator)
                norms.append(m)
        if norms:
            model.train()
            for _ in range(steps):
                model(random_like(example, batch, generator))
        model.eval()
        # heads initialised at std 0.01 (AlexNet, VGG, MobileNetV3) give logits ~0.02
        heads = [m for m in model.modules() if isinstance(m, nn.Linear)]
        spread = float(model(random_like(example, batch, generator)).std())
        if heads and 0 < spread < 0.1:
            heads[-1].weight.mul_(0.5 / spread)
            heads[-1].bias.mul_(0.5 / spread)
    return model


def random_like(example, batch: int, generator):
    """A random batch like `example`: floats uniform in [-1, 1), int64 ids below its max + 1."""
    import torch

    shape = (batch, *example.shape[1:])
    if example.dtype == torch.int64:
        return torch.randint(0, int(example.max()) + 1, shape, generator=generator)
    return torch.rand(shape, generator=generator) * 2 - 1


class TokenEncoder:
    """Factory of `nn.Embedding` + 6-layer `nn.TransformerEncoder` + LayerNorm on int64 ids."""

    def __new__(cls, vocab=VOCAB, width=WIDTH, heads=HEADS, layers=6, seq=SEQ):
        import torch
        from torch import nn

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, width)
                self.position = nn.Parameter(torch.randn(1, seq, width) * 0.02)
                layer = nn.TransformerEncoderLayer(
                    width, heads, 4 * width, dropout=0.0, batch_first=True
                )
                self.encoder = nn.TransformerEncoder(
                    layer, layers, norm=nn.LayerNorm(width), enable_nested_tensor=False
                )
                # the layers are deep copies of `layer`: draw each one's weights anew
                for m in self.encoder.modules():
                    for reset in ("reset_parameters", "_reset_parameters"):
                        if hasattr(m, reset) and not isinstance(m, nn.LayerNorm):
                            getattr(m, reset)()

            def forward(self, ids):
                return self.encoder(self.embed(ids) + self.position)

        return Encoder()


class AttentionBlock:
    """Factory of x + MultiheadAttention(LayerNorm(x)) (self attention, batch first)."""

    def __new__(cls, width=WIDTH, heads=HEADS):
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(width)
                self.attn = nn.MultiheadAttention(width, heads, dropout=0.0, batch_first=True)

            def forward(self, x):
                y = self.norm(x)
                return x + self.attn(y, y, y, need_weights=False)[0]

        return Block()


def build_torch(arch: str, size: int, seed: int = 0):
    """(module in eval mode with settled weights, example input) for a zoo architecture."""
    import torch
    import torchvision

    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed + 1)
    if arch == "transformer_encoder":
        model, example = TokenEncoder(), torch.randint(0, VOCAB, (1, SEQ), generator=generator)
    elif arch == "mha_block":
        model, example = AttentionBlock(), torch.rand(1, SEQ, WIDTH, generator=generator) * 2 - 1
    else:
        model = torchvision.models.get_model(arch, weights=None)
        example = torch.rand(1, 3, size, size, generator=generator) * 2 - 1
    return settle(model, example, seed), example


def export_torch(model, example, path: Path, opset: int, dynamo: bool) -> None:
    """`model` exported to one self-contained ONNX file, input `input`, output `output`."""
    import contextlib
    import io

    import torch

    options = {"external_data": False} if dynamo else {"do_constant_folding": True}
    # under no_grad in eval mode, nn.MultiheadAttention and nn.TransformerEncoderLayer take
    # a fused fast path that no exporter knows; exported models take the composite one
    fast_path = torch.backends.mha.get_fastpath_enabled()
    talk = io.StringIO()  # the exporters talk on stdout and stderr; keep the table readable
    try:
        torch.backends.mha.set_fastpath_enabled(False)
        with torch.no_grad(), contextlib.redirect_stdout(talk), contextlib.redirect_stderr(talk):
            torch.onnx.export(
                model, (example,), str(path), input_names=["input"], output_names=["output"],
                opset_version=opset, dynamo=dynamo, **options,
            )
    finally:
        torch.backends.mha.set_fastpath_enabled(fast_path)


def export_cached(cache: Path, arch: str, opset: int, dynamo: bool, size: int) -> Path:
    kind = "dynamo" if dynamo else "ts"
    stem = f"{arch}-op{opset}-{kind}" + (f"-{size}" if size else "")

    def make(tmp: Path) -> None:
        model, example = build_torch(arch, size)
        export_torch(model, example, tmp, opset, dynamo)

    return _cached(cache / f"{stem}.onnx", _versions_key(), make)


def quantize_cached(cache: Path, arch: str, form: str, activations: str, size: int) -> Path:
    """The opset-17 TorchScript export of `arch`, quantized by onnxruntime's `quantize_static`."""
    import onnxruntime

    source = export_cached(cache, arch, 17, False, size)
    suffix = {"QDQ": "qdq", "QOperator": "qop"}[form] + "-" + activations.lower()
    key = {**_versions_key(), "onnxruntime": onnxruntime.__version__}
    return _cached(
        cache / f"{arch}-{size}-{suffix}.onnx", key,
        lambda tmp: quantize(source, tmp, form, activations, (1, 3, size, size), "input"),
    )


def quantize(source: Path, out: Path, form: str, activations: str, shape, input_name: str,
             seed: int = 0, samples: int = 8) -> None:
    """`quantize_static` with per-tensor int8 weights, calibrated (MinMax) on random inputs."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    rng = np.random.default_rng(seed)

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.batches = iter(
                [{input_name: rng.uniform(-1, 1, shape).astype(np.float32)}
                 for _ in range(samples)]
            )

        def get_next(self):
            return next(self.batches, None)

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its advice to pre-process, once per model
    try:
        quantize_static(
            str(source), str(out), Calibration(), quant_format=QuantFormat[form],
            activation_type=QuantType[activations], weight_type=QuantType.QInt8,
            per_channel=False,
        )
    finally:
        root.setLevel(level)


def ppocr_file(file: str) -> Path:
    """A model of the `rapidocr-onnxruntime` wheel, where it is installed."""
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("rapidocr-onnxruntime is not installed (pip install it)")
    path = Path(list(spec.submodule_search_locations)[0]) / "models" / file
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not in the installed rapidocr-onnxruntime")
    return path


# inputs, sizes and onnxruntime -----------------------------------------------------------


def make_feeds(path: Path, model: ZooModel, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs of the shapes `model.shapes` gives: floats in [-1, 1), int64 ids."""
    proto = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in proto.graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in proto.graph.input:
        if value.name in initializers:
            continue
        shape = model.shapes[value.name]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        if dtype.kind in "iu":
            feeds[value.name] = rng.integers(0, model.token_range or 3, shape).astype(dtype)
        else:
            feeds[value.name] = rng.uniform(-1, 1, shape).astype(dtype)
    return feeds


def dim_options(path: Path, shapes: dict[str, tuple[int, ...]]) -> list[str]:
    """
    `--dim` options that size every input's symbolic dims as `shapes` gives them: by
    name where a name stands for one size, else by input and axis (`INPUT:AXIS=N`),
    as for a -1 or unnamed dim or a name that two axes of different sizes share.
    """
    proto = onnx.load(str(path), load_external_data=False)
    by_name: dict[str, set[int]] = {}
    open_axes = []
    for value in proto.graph.input:
        if value.name not in shapes:
            continue
        for axis, (dim, size) in enumerate(zip(value.type.tensor_type.shape.dim,
                                               shapes[value.name])):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                continue
            param = "" if dim.dim_param in UNNAMED else dim.dim_param
            open_axes.append((value.name, axis, param, size))
            if param:
                by_name.setdefault(param, set()).add(size)
    options, named = [], set()
    for name, axis, param, size in open_axes:
        if param and len(by_name[param]) == 1:
            if param not in named:
                named.add(param)
                options += ["--dim", f"{param}={size}"]
        else:
            options += ["--dim", f"{name}:{axis}={size}"]
    return options



def output_steps(path: Path) -> dict[str, float]:
    """The quantization step of each graph output a DequantizeLinear with a constant scale makes."""
    proto = onnx.load(str(path), load_external_data=False)
    constants = {t.name: onnx.numpy_helper.to_array(t) for t in proto.graph.initializer}
    for node in proto.graph.node:
        if node.op_type == "Constant" and node.attribute[0].name == "value":
            constants[node.output[0]] = onnx.numpy_helper.to_array(node.attribute[0].t)
    producers = {o: n for n in proto.graph.node for o in n.output}
    steps = {}
    for output in proto.graph.output:
        node = producers.get(output.name)
        if node is not None and node.op_type == "DequantizeLinear":
            scale = constants.get(node.input[1])
            if scale is not None and scale.size == 1:
                steps[output.name] = float(scale.reshape(-1)[0])
    return steps



# one model ------------------------------------------------------------------------------


@dataclass
class Row:
    """One model's result; None where a step did not happen."""

    model: str
    group: str
    target: str
    status: str = "PASS"
    message: str = ""
    rel_err: float | None = None
    lsb_err: float | None = None
    ort_max: float | None = None
    tiny: bool = False
    ours_ms: float | None = None
    ours_kernel_ms: float | None = None
    ort_ms: float | None = None
    tool_s: float | None = None
    compile_s: float | None = None
    """DSP path: `mobile-run`'s compile time, where it prints one (and QEMU's below)."""
    qemu_s: float | None = None
    make_s: float | None = None
    notes: list[str] = field(default_factory=list)
    """`mobile-run`'s notes and warnings."""
    tool_status: str = ""
    inputs: dict[str, list[int]] = field(default_factory=dict)
    file_mb: float | None = None
    ops: list[str] = field(default_factory=list)
    source: str = ""
    date: str = ""
    commit: str | None = None

    @property
    def ratio(self) -> float | None:
        return self.ours_ms / self.ort_ms if self.ours_ms and self.ort_ms else None



def parse_tool_output(stdout: str, row: Row) -> None:
    """Our times from `mobile-run`'s report: wall time per run, summed kernel time."""
    wall = re.search(r"^wall time per run \(ms\): (.*)$", stdout, re.M)
    if wall:
        text = wall.group(1)
        median = re.search(r"median ([\d.]+)", text)
        if median:
            row.ours_ms = float(median.group(1))
        else:
            times = [float(t) for t in re.findall(r"[\d.]+", text)]
            if times:
                row.ours_ms = statistics.median(times[1:] or times)
    kernels = re.search(r"^total \(\d+ launches\)\s+([\d.]+)", stdout, re.M)
    if kernels:
        row.ours_kernel_ms = float(kernels.group(1))
    dsp = re.search(r"^compile ([\d.]+) s, assemble and run under QEMU ([\d.]+) s", stdout, re.M)
    if dsp:
        row.compile_s, row.qemu_s = float(dsp.group(1)), float(dsp.group(2))
    row.notes = [line for line in stdout.splitlines() if line.startswith(("note:", "warning:"))]


def run_tool(command: list[str], timeout: float) -> tuple[int | None, str, str, float]:
    """(exit status or None on timeout, stdout, stderr, seconds); a timeout kills the group."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # so that a timeout also ends qemu-hexagon and the like
    )
    try:
        out, err = process.communicate(timeout=timeout)
        status: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        status = None
    return status, out, err, time.perf_counter() - start


def error_line(stderr: str) -> tuple[str, str]:
    """(status, message) from a failed `mobile-run`'s stderr: its one line, or a traceback's."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("mobile-run: error: "):
            return "ERROR", line.removeprefix("mobile-run: error: ")
    if any(line.startswith("Traceback") for line in lines):
        return "CRASH", lines[-1][:300]
    return "", lines[-1][:300] if lines else ""


def run_model(model: ZooModel, args, cache: Path, scratch: Path) -> Row:
    """Make, feed and run one model; every failure is a row, never an exception."""
    row = Row(model.name, model.group, args.target or model.target, source=model.source)
    row.date = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    row.commit = git_commit()
    try:
        return _run_model(row, model, args, cache, scratch)
    except Exception as e:  # noqa: BLE001 - a bug of this script costs one row, not the rest
        row.status, row.message = "CRASH", f"zoo: {E2E.one_line(e)}"
        return row


def _run_model(row: Row, model: ZooModel, args, cache: Path, scratch: Path) -> Row:
    start = time.perf_counter()
    try:
        path = model.make(cache, args.size)
    except Exception as e:  # noqa: BLE001 - an export that fails is a result
        row.status, row.message = "EXPORT", E2E.one_line(e)
        row.make_s = time.perf_counter() - start
        return row
    row.make_s = time.perf_counter() - start
    row.file_mb = path.stat().st_size / 1e6
    proto = onnx.load(str(path), load_external_data=False)
    row.ops = sorted({(f"{n.domain}." if n.domain else "") + n.op_type for n in proto.graph.node})
    del proto
    shapes = dict(model.shapes)
    if args.size and model.group in ("torchvision", "quantized"):
        shapes = {"input": (1, 3, args.size, args.size)}
    model = ZooModel(model.name, model.group, model.target, model.make, shapes,
                     model.token_range, model.source)
    feeds = make_feeds(path, model, args.seed)
    row.inputs = {k: list(v.shape) for k, v in feeds.items()}
    try:
        row.ort_ms, expected = E2E.run_onnxruntime(path, feeds, args.repeat)
    except Exception as e:  # noqa: BLE001 - onnxruntime rejects the model: a result too
        row.status, row.message = "EXPORT", f"onnxruntime: {E2E.one_line(e)}"
        return row
    folder = scratch / model.name
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "mobile_opt.tools.mobile_run", str(path),
               "--save-dir", str(folder / "out"), *dim_options(path, shapes)]
    used: set[str] = set()
    for name, value in feeds.items():
        file = folder / f"{output_stem(name, used)}.npy"
        np.save(file, value)
        command += ["--input", f"{name}={file}"]
    if row.target == "hexagon":
        command += ["--target", "hexagon"]
    else:
        command += ["--repeat", str(args.tool_repeat)]
        command += ["--device", args.device] if args.device else []
    status, out, err, row.tool_s = run_tool(command, args.timeout)
    err = err.replace(str(path), path.name)  # the cache's path would fill the table
    if status is None:
        row.status, row.message = "TIMEOUT", f"no result within {args.timeout:g} s"
        return row
    parse_tool_output(out, row)
    compare(row, folder / "out", expected, output_steps(path))
    verdicts = re.findall(r"\b(PASS|FAIL)\b", out)
    row.tool_status = "FAIL" if "FAIL" in verdicts else ("PASS" if verdicts else "")
    if status != 0 and row.tool_status != "FAIL":
        kind, row.message = error_line(err)
        row.status = kind or f"EXIT {status}"
        return row
    within = row.rel_err is not None and (row.target == "hexagon" or row.rel_err <= args.tol)
    if status == 0 and within:
        row.status = "PASS"
    else:
        row.status = "FAIL"
        row.message = (
            "mobile-run reports FAIL" if status != 0 else f"error above {args.tol:g}"
        )
    remarks = [row.message] if row.message else []
    if row.tiny:
        remarks.append(f"max |ort| {row.ort_max:.1e}: too small to say anything")
    if any("onnxruntime is the inexact side" in note for note in row.notes):
        remarks.append("onnxruntime is the inexact side")
    if row.compile_s is not None:
        remarks.append(f"compile {row.compile_s:.0f} s, QEMU {row.qemu_s:.0f} s")
    row.message = "; ".join(remarks)
    return row


def compare(row: Row, folder: Path, expected: dict[str, np.ndarray], steps: dict[str, float]):
    """The scale-aware error (and LSBs) of the outputs `mobile-run` saved in `folder`."""
    used: set[str] = set()
    worst, worst_lsb, scale = 0.0, 0.0, 0.0
    for name, want in expected.items():
        file = folder / f"{output_stem(name, used)}.npy"
        if not file.is_file():
            return
        got = np.load(file).astype(np.float64)
        want = np.asarray(want, np.float64)
        if got.shape != want.shape:
            row.rel_err = float("inf")
            return
        result = checking.compare(got, want, checking.Criterion(0.0, 0.0))
        scale = max(scale, result.scale)
        worst = max(worst, result.relative)
        if name in steps:
            worst_lsb = max(worst_lsb, result.max_abs / steps[name])
    row.rel_err, row.ort_max = worst, scale
    row.tiny = scale < TINY
    row.lsb_err = worst_lsb if steps else None


# the report --------------------------------------------------------------------------------


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def format_table(rows: list[Row]) -> str:
    table = [["model", "path", "status", "err", "|ort|", "ours ms", "ort ms", "ours/ort",
              "tool s", "message"]]
    for r in rows:
        err = _fmt(r.rel_err, ".1e")
        if r.lsb_err is not None:
            err += f" ({r.lsb_err:.0f} LSB)"
        status = r.status + ("*" if r.tiny else "")
        ours = _fmt(r.ours_ms, ".1f") if r.target == "opencl" else "qemu"
        table.append([r.model, "GPU" if r.target == "opencl" else "DSP", status, err,
                      _fmt(r.ort_max, ".1e"), ours, _fmt(r.ort_ms, ".1f"),
                      _fmt(r.ratio, ".1f"), _fmt(r.tool_s, ".0f"), r.message[:160]])
    lines = checking.format_table(table).splitlines()
    counts = {s: sum(r.status == s for r in rows) for s in dict.fromkeys(r.status for r in rows)}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items())
                 + ("; * output too small to say anything" if any(r.tiny for r in rows) else ""))
    return "\n".join(lines)


def environment(device_line: str) -> dict:
    import onnxruntime

    versions = {"numpy": np.__version__, "onnx": onnx.__version__,
                "onnxruntime": onnxruntime.__version__}
    for name in ("torch", "torchvision"):
        try:
            versions[name] = __import__(name).__version__
        except ImportError:
            versions[name] = None
    return {"device": device_line, "host_cpu": E2E.host_cpu(), "host_cores": os.cpu_count(),
            "python": platform.python_version(), "versions": versions, "commit": git_commit()}


def save(path: Path, device_line: str, settings: dict, rows: list[Row], order: list[str]):
    """Rows into `path`, replacing those of the same models and keeping the others."""
    kept = {}
    if path.is_file():
        try:
            kept = {r["model"]: r for r in json.loads(path.read_text()).get("rows", [])}
        except (OSError, ValueError):
            kept = {}
    for row in rows:
        kept[row.model] = {**asdict(row), "ratio": row.ratio}
    ranked = sorted(kept.values(), key=lambda r: (order.index(r["model"])
                                                  if r["model"] in order else len(order)))
    data = {**environment(device_line), "settings": settings, "rows": ranked}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def progress(items: list[ZooModel]):
    """`items` with a tqdm bar on stderr."""
    from tqdm import tqdm

    bar = tqdm(items, file=sys.stderr, unit="model")
    for item in bar:
        bar.set_postfix_str(item.name)
        yield item


# command line -------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise ZooError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="zoo", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAMES",
                        help="comma-separated model names, prefixes (resnet18) or groups")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    parser.add_argument("--device", metavar="pocl|gpu|cpu|NAME",
                        help="OpenCL device of the GPU-path models (default: mobile-run's)")
    parser.add_argument("--target", choices=("opencl", "hexagon"),
                        help="run the chosen models on this path (without --only: the models "
                        "of this path); default: each on its own path")
    parser.add_argument("--cache-dir", metavar="DIR", type=Path,
                        help="exported models (default $MOBILE_OPT_ZOO_DIR or "
                        "~/.cache/mobile-opt/zoo)")
    parser.add_argument("--timeout", type=float, default=900, metavar="S",
                        help="time limit of one mobile-run call (default %(default)s s)")
    parser.add_argument("--size", type=int, default=0, metavar="N",
                        help=f"image size of the torchvision and quantized models "
                        f"(default {IMAGE})")
    parser.add_argument("--repeat", type=int, default=5,
                        help="onnxruntime runs timed (default %(default)s)")
    parser.add_argument("--tool-repeat", type=int, default=3, metavar="N",
                        help="mobile-run --repeat on the GPU path (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="input seed (default %(default)s)")
    parser.add_argument("--tol", type=float, default=TOL,
                        help="scale-aware error for PASS on the GPU path (default %(default)s)")
    parser.add_argument("--out-dir", metavar="DIR", type=Path, default=BENCH_DIR / "results",
                        help="folder of zoo-<device>.json (default bench/results)")
    parser.add_argument("--write-test-models", metavar="DIR", type=Path,
                        help="write the small test models there and exit")
    return parser


def resolve_device(spec: str | None) -> tuple[str, str]:
    """(slug, description) of the OpenCL device mobile-run will take for `spec`."""
    from mobile_opt.backends.opencl.devices import DeviceError, choose_device, default_device

    try:
        device = choose_device(spec) if spec else default_device()[0]
    except DeviceError as e:
        raise ZooError(f"--device {spec}: {e}") from None
    return E2E.slug(device.name), device.describe()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.write_test_models:
        for path in write_test_models(args.write_test_models):
            print(f"{path} ({path.stat().st_size / 1e3:.0f} kB)")
        return 0
    models = zoo_models()
    if args.list:
        for m in models.values():
            print(f"{m.name:34} {m.group:12} {m.target:8} {m.source}")
        return 0
    for option in ("timeout", "repeat", "tool_repeat"):
        if getattr(args, option) <= 0:
            raise ZooError(f"--{option.replace('_', '-')} must be positive")
    chosen = select(models, args.only, args.target)
    needs = {"torch": [m for m in chosen if m.group != "ppocr"],
             "rapidocr_onnxruntime": [m for m in chosen if m.group == "ppocr"]}
    for module, users in needs.items():
        if users and importlib.util.find_spec(module) is None:
            raise ZooError(f"{users[0].name} needs {module}, which is not installed: "
                           "pip install -e .[zoo]")
    targets = {args.target or m.target for m in chosen}
    devices = {DSP_DEVICE: (DSP_DEVICE, "qemu-hexagon, Hexagon V66 HVX-128")}
    if "opencl" in targets:
        devices["opencl"] = resolve_device(args.device)
    cache = args.cache_dir or default_cache()
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                if k not in ("list", "write_test_models", "out_dir")}
    rows: dict[str, list[Row]] = {}
    order = list(models)
    for target, (slug, line) in devices.items():
        if target == "opencl" or "hexagon" in targets:
            print(f"{'GPU' if target == 'opencl' else 'DSP'} path: {line}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="mobile-opt-zoo-") as scratch:
        for model in progress(chosen):
            row = run_model(model, args, cache, Path(scratch))
            shutil.rmtree(Path(scratch) / model.name, ignore_errors=True)
            key = "opencl" if row.target == "opencl" else DSP_DEVICE
            rows.setdefault(key, []).append(row)
            slug, line = devices[key]
            save(args.out_dir / f"zoo-{slug}.json", line, settings, rows[key], order)
    every = [r for group in rows.values() for r in group]
    every.sort(key=lambda r: order.index(r.model))
    print(format_table(every))
    for key, group in rows.items():
        print(f"results: {args.out_dir / f'zoo-{devices[key][0]}.json'}", file=sys.stderr)
    return 0


# the small test models ---------------------------------------------------------------------
# `tests/test_zoo_models.py` runs these (committed under tests/models/zoo/): the op patterns
# of the set above in models of a few kB to a few hundred kB, so that the tests need no torch.


def _tiny_shufflenet():
    """ShuffleNetV2's units: the stride-1 unit's channel split (chunk) exports as
    Shape->Gather->Add->Div->Mul into Slice ends."""
    import torchvision

    return torchvision.models.ShuffleNetV2([2, 1, 1], [8, 16, 32, 64, 64], num_classes=10)


def _tiny_vit():
    """torchvision's VisionTransformer: class token, nn.MultiheadAttention (Equal/Where/Mod)."""
    import torchvision

    return torchvision.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
        num_classes=10,
    )


def _tiny_mobilenet_v3():
    """MobileNetV3 blocks: HardSwish, squeeze-excitation with Hardsigmoid, depthwise 3x3/5x5."""
    from functools import partial

    from torchvision.models.mobilenetv3 import InvertedResidualConfig, MobileNetV3

    block = partial(InvertedResidualConfig, width_mult=1.0)
    setting = [
        block(8, 3, 8, 8, True, "RE", 2, 1),
        block(8, 3, 24, 16, False, "RE", 2, 1),
        block(16, 5, 48, 16, True, "HS", 1, 1),
        block(16, 5, 48, 24, True, "HS", 2, 1),
    ]
    return MobileNetV3(setting, last_channel=64, num_classes=10)


def _tiny_efficientnet():
    """EfficientNet's MBConv: SiLU, squeeze-excitation with Sigmoid, stochastic depth."""
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig

    setting = [
        MBConvConfig(1, 3, 1, 16, 8, 1),
        MBConvConfig(6, 3, 2, 8, 16, 2),
        MBConvConfig(6, 5, 2, 16, 24, 1),
    ]
    return EfficientNet(setting, dropout=0.2, last_channel=64, num_classes=10)


def _tiny_densenet():
    """DenseNet's dense blocks (Concat of every earlier output) and transitions (AveragePool)."""
    import torchvision

    return torchvision.models.DenseNet(
        growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2, num_classes=10
    )


def _tiny_googlenet():
    """GoogLeNet's stem and Inception modules (four branches, ceil-mode MaxPool) at small width."""
    from torch import nn
    from torchvision.models.googlenet import BasicConv2d, Inception

    return nn.Sequential(
        BasicConv2d(3, 16, kernel_size=7, stride=2, padding=3),
        nn.MaxPool2d(3, stride=2, ceil_mode=True),
        Inception(16, 8, 8, 16, 4, 8, 8),
        Inception(40, 16, 8, 16, 4, 8, 8),
        nn.MaxPool2d(3, stride=2, ceil_mode=True),
        Inception(48, 16, 8, 16, 4, 8, 8),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(48, 10),
    )


def _tiny_resnet():
    """ResNet's stem (Conv, BatchNorm, ReLU, MaxPool) and two basic blocks (one downsampling),
    with torchvision's module names (the node names follow them)."""
    from torch import nn
    from torchvision.models.resnet import BasicBlock, conv1x1

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            self.layer1 = BasicBlock(8, 8)
            self.layer2 = BasicBlock(8, 16, 2, nn.Sequential(conv1x1(8, 16, 2), nn.BatchNorm2d(16)))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            return self.fc(self.avgpool(self.layer2(self.layer1(x))).flatten(1))

    return ResNet()


def _tiny_mobilenet_v2():
    """MobileNetV2's inverted residuals (ReLU6 as Clip, depthwise, residual Add)."""
    import torchvision

    return torchvision.models.MobileNetV2(
        num_classes=10, inverted_residual_setting=[[1, 8, 1, 1], [6, 12, 2, 2], [6, 16, 2, 1]],
        width_mult=0.25,
    )


def _tiny_cls():
    """A classifier like PP-OCR's text direction model: flattened by a Reshape whose shape
    comes from Shape(x)[0] and -1, HardSigmoid, Softmax over 2 classes."""
    from torch import nn

    class Cls(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.Hardswish(),
                nn.Conv2d(8, 8, 3, 1, 1, groups=8), nn.BatchNorm2d(8), nn.ReLU(),
                nn.MaxPool2d(2), nn.Conv2d(8, 16, 1), nn.Hardsigmoid(),
                nn.AdaptiveAvgPool2d(1),
            )
            self.fc = nn.Linear(16, 2)

        def forward(self, x):
            y = self.features(x)
            return self.fc(y.reshape(y.shape[0], -1)).softmax(-1)

    return Cls()


TEST_MODELS: dict[str, tuple[Callable[[], object], tuple[int, ...], int, bool]] = {
    "shufflenet_tiny": (_tiny_shufflenet, (1, 3, 32, 32), 17, False),
    "vit_tiny_tv": (_tiny_vit, (1, 3, 32, 32), 17, False),
    "mha_tiny": (lambda: AttentionBlock(32, 4), (1, 8, 32), 17, False),
    "encoder_tiny": (lambda: TokenEncoder(50, 32, 4, 2, 16), (1, 16), 17, False),
    "encoder_tiny_dynamo": (lambda: TokenEncoder(50, 32, 4, 2, 16), (1, 16), 18, True),
    "mobilenet_v3_tiny": (_tiny_mobilenet_v3, (1, 3, 32, 32), 18, False),
    "efficientnet_tiny": (_tiny_efficientnet, (1, 3, 32, 32), 17, False),
    "densenet_tiny": (_tiny_densenet, (1, 3, 32, 32), 17, False),
    "googlenet_tiny": (_tiny_googlenet, (1, 3, 32, 32), 17, False),
    "cls_tiny": (_tiny_cls, (1, 3, 16, 64), 11, False),
}
"""name: (module factory, example input shape, opset, dynamo) of the float test models."""

TEST_QUANTIZED = {"resnet_tiny": (_tiny_resnet, (1, 3, 32, 32)),
                  "mobilenet_v2_tiny": (_tiny_mobilenet_v2, (1, 3, 32, 32))}
"""name: (module factory, input shape) of the float models the quantized test models come from."""


def _example(shape: tuple[int, ...], vocab: int, seed: int):
    import torch

    generator = torch.Generator().manual_seed(seed)
    if len(shape) == 2:  # token ids
        return torch.randint(0, vocab, shape, generator=generator)
    return torch.rand(shape, generator=generator) * 2 - 1


def _finish(path: Path) -> None:
    """Self-contained, loadable by the onnxruntime of the last years, and checked."""
    proto = onnx.load(str(path))
    proto.ir_version = min(proto.ir_version, 8)
    proto.producer_name = "mobile-opt bench/zoo.py --write-test-models"
    onnx.checker.check_model(proto)
    onnx.save(proto, str(path))


def _as_ppocr_cls(path: Path) -> None:
    """Dims as PaddleOCR's exporter writes the cls model's: batch -1, H and W both '?'."""
    proto = onnx.load(str(path))
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    dims[0].Clear()
    dims[0].dim_value = -1
    for axis in (2, 3):
        dims[axis].Clear()
        dims[axis].dim_param = "?"
    out = proto.graph.output[0].type.tensor_type.shape.dim
    out[0].Clear()
    out[0].dim_value = -1
    del proto.graph.value_info[:]
    onnx.save(proto, str(path))


def write_test_models(folder: Path, seed: int = 0) -> list[Path]:
    """The small test models (float, then quantized) written to `folder`."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (factory, shape, opset, dynamo) in TEST_MODELS.items():
        torch.manual_seed(seed)
        model = factory()
        example = _example(shape, 50, seed)
        settle(model, example, seed)
        path = folder / f"{name}.onnx"
        if name == "cls_tiny":  # dynamic axes, so that the flatten is a computed Reshape
            with torch.no_grad():
                torch.onnx.export(model, (example,), str(path), input_names=["x"],
                                  output_names=["y"], opset_version=opset, dynamo=False,
                                  dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "y": {0: "n"}})
            _as_ppocr_cls(path)
        else:
            export_torch(model, example, path, opset, dynamo)
        _finish(path)
        written.append(path)
    with tempfile.TemporaryDirectory(prefix="mobile-opt-zoo-") as scratch:
        for name, (factory, shape) in TEST_QUANTIZED.items():
            torch.manual_seed(seed)
            model = factory()
            example = _example(shape, 0, seed)
            settle(model, example, seed)
            source = Path(scratch) / f"{name}.onnx"
            export_torch(model, example, source, 17, False)
            for suffix, form, activations in QUANTIZED:
                path = folder / f"{name}_{suffix.replace('-', '_')}.onnx"
                quantize(source, path, form, activations, shape, "input", seed)
                _finish(path)
                written.append(path)
    return written


def cli(argv: list[str] | None = None) -> int:
    try:
        return main(argv)
    except ZooError as e:
        print(f"zoo: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(cli())
