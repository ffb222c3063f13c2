"""
The roofline model (Williams, Waterman and Patterson, CACM 2009) of the kernels a
lowered model launches: the work of each launch against the peaks of the device's
profile. A kernel's arithmetic intensity is its FLOPs over the bytes it moves; under
the ridge point (peak FLOP/s over peak bytes/s) the memory roof bounds it (it can run
no faster than its bytes at the bandwidth), above it the compute roof.

Work, counted where the ONNX ops are still visible (`onnx-to-texture` records a
kernel's FLOPs on its `ocl.launch` as `FLOPS_ATTR`; the host plan adds the bytes):

- FLOPs of a contraction, 2 per multiply-add: MatMul 2·M·N·K (times the batch), Gemm
  2·M·N·K, Conv 2·N·Cout·Hout·Wout·(Cin/group)·kh·kw, ConvTranspose the same over its
  input, and their fused and QLinear forms. A bias or an alpha/beta scaling is left out
  (one FLOP an output against 2·K), a fused activation counts one an output;
- a windowed pool one per window element of each output (`kernel_shape`); a global
  pool, a reduction or a normalisation over an axis one per input element;
- data movement (Reshape, Transpose, Concat, Gather, Cast, ...) none; any other op, an
  elementwise one, one per output element. A fused kernel adds its epilogue's ops;
- bytes: the storage (images, buffers) of every argument of the launch, each once:
  what it reads and writes in device memory, padding lanes included.

Peaks: `compute.peak_gflops` (fp32 FMA throughput, an FMA being 2 FLOPs, measured by
`mobile-probe --only peak-flops`) and `bandwidth_gbs` (`buffer` and `texture` reads): a
kernel over buffers alone meets the buffer roof, over images alone the texture roof,
over both the larger of the two.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mobile_opt.models.storage import Storage

FLOPS_ATTR = "onnx.flops"
"""The `ocl.launch` attribute that holds the FLOPs of the ONNX ops its kernel computes."""

CONVOLUTIONS = frozenset({"Conv", "FusedConv", "QLinearConv"})
MATRIX_PRODUCTS = frozenset({"MatMul", "FusedMatMul", "QLinearMatMul", "Gemm", "FusedGemm"})
WINDOW_POOLS = frozenset({"MaxPool", "AveragePool"})
OVER_INPUT = frozenset({
    "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax",
    "Softmax", "LogSoftmax", "LayerNormalization", "LRN",
})
"""Ops that reduce over their input: one FLOP per input element."""
MOVEMENT = frozenset({
    "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
    "Gather", "Pad", "Resize", "Expand", "Shape", "Identity", "Dropout", "Cast", "Range",
    "Trilu", "ConstantOfShape", "Constant", "Weight",
})
"""Ops that move or make values without arithmetic: no FLOPs."""


def op_type(op: Operation) -> str:
    """The ONNX op type of an `onnx` dialect op (`onnx.Conv`: Conv)."""
    return op.name.split(".", 1)[-1]


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    """A tensor's static shape; None if it is not a tensor of known shape."""
    t = value.type
    if not isinstance(t, TensorType):
        return None
    shape = tuple(t.get_shape())
    return None if any(d < 0 for d in shape) else shape


def _elements(value: SSAValue) -> int | None:
    shape = _shape(value)
    return None if shape is None else math.prod(shape)


def _operand(op: Operation, *names: str) -> SSAValue:
    """The operand of the first of `names` the op has (Conv's W is QLinearConv's w)."""
    for name in names:
        value = getattr(op, name, None)
        if isinstance(value, SSAValue):
            return value
    raise ValueError(f"{op.name} has no operand {' or '.join(names)}")


def _activation(op: Operation) -> int:
    """1 if a fused op ends in an activation (one FLOP an output), else 0."""
    return 1 if getattr(getattr(op, "activation", None), "data", "") else 0


def op_flops(op: Operation) -> int | None:
    """The FLOPs of one `onnx` op as the module docstring counts them; None if a shape
    it needs is not static."""
    kind = op_type(op)
    if kind in MOVEMENT or not op.results:
        return 0
    out = _elements(op.results[0])
    if kind in CONVOLUTIONS:
        weight = _shape(_operand(op, "W", "w"))
        if out is None or weight is None:
            return None
        return 2 * out * math.prod(weight[1:]) + _activation(op) * out
    if kind == "ConvTranspose":  # every input pixel scatters into Cout/group x kernel outputs
        x, weight = _elements(op.X), _shape(op.W)
        return None if x is None or weight is None else 2 * x * math.prod(weight[1:])
    if kind in MATRIX_PRODUCTS:
        a = _shape(_operand(op, "A", "a"))
        if out is None or a is None:
            return None
        transposed = getattr(op, "transA", None)  # Gemm's; MatMul's A is never transposed
        depth = a[0] if transposed is not None and transposed.value.data else a[-1]
        return 2 * out * depth + _activation(op) * out
    if kind in WINDOW_POOLS:
        window = getattr(op, "kernel_shape", None)
        if out is None or window is None:
            return None
        return out * math.prod(int(k) for k in window.get_values())
    if kind in OVER_INPUT:
        return _elements(op.operands[0])
    return out


def kernel_flops(op: Operation, epilogue: Sequence[Operation] = ()) -> int | None:
    """The FLOPs of a kernel that computes `op` and then its fused `epilogue`."""
    counts = [op_flops(o) for o in (op, *epilogue)]
    return None if any(c is None for c in counts) else sum(counts)


def launch_bytes(storages: Iterable[Storage]) -> int:
    """The bytes a launch moves: the storage of its arguments, each value once."""
    return sum({s.value: s.nbytes for s in storages}.values())


# peaks and bounds ---------------------------------------------------------------------
@dataclass(frozen=True)
class Peaks:
    """A device's roofs as its profile gives them; None where it has no reading."""

    device: str
    gflops: float | None
    """fp32 FMA throughput, GFLOP/s (an FMA is 2 FLOPs)."""
    buffer_gbs: float | None
    texture_gbs: float | None

    @classmethod
    def of_profile(cls, profile: dict) -> Peaks:
        bandwidth = profile.get("bandwidth_gbs") or {}
        peak = (profile.get("compute") or {}).get("peak_gflops")
        return cls((profile.get("identity") or {}).get("name") or "device",
                   None if peak is None else float(peak),
                   bandwidth.get("buffer"), bandwidth.get("texture"))

    def gbs(self, kinds: Iterable[str] = ()) -> float | None:
        """The bandwidth roof of a kernel over storage of `kinds` ("buffer", "image"):
        that memory's reading; over both kinds or none, the larger."""
        by_kind = {"buffer": self.buffer_gbs, "image": self.texture_gbs}
        wanted = set(kinds)
        chosen = [by_kind[k] for k in wanted if k in by_kind] if len(wanted) == 1 else []
        figures = [g for g in chosen or by_kind.values() if g]
        return max(figures) if figures else None

    def ridge(self, kinds: Iterable[str] = ()) -> float | None:
        """The arithmetic intensity (FLOP/byte) where the two roofs meet."""
        gbs = self.gbs(kinds)
        return self.gflops / gbs if self.gflops and gbs else None


@dataclass(frozen=True)
class LaunchWork:
    """One kernel launch: its time, its work and the storage kinds of its arguments."""

    kernel: str
    node: str
    seconds: float
    flops: int | None
    nbytes: int
    kinds: tuple[str, ...]

    @property
    def gflops(self) -> float | None:
        """Achieved GFLOP/s."""
        return self.flops / self.seconds / 1e9 if self.flops is not None and self.seconds else None

    @property
    def gbs(self) -> float | None:
        """Achieved GB/s."""
        return self.nbytes / self.seconds / 1e9 if self.seconds else None

    @property
    def intensity(self) -> float | None:
        """FLOP per byte."""
        return self.flops / self.nbytes if self.flops is not None and self.nbytes else None

    def bound(self, peaks: Peaks) -> str | None:
        """"compute" or "memory": the roof over the kernel's intensity; None without
        a peak FLOP/s or a bandwidth."""
        ridge, intensity = peaks.ridge(self.kinds), self.intensity
        if ridge is None or intensity is None:
            return None
        return "compute" if intensity >= ridge else "memory"


def total(works: Sequence[LaunchWork]) -> LaunchWork:
    """The launches summed as one (FLOPs unknown if any launch's are)."""
    flops = [w.flops for w in works]
    kinds = tuple(sorted({k for w in works for k in w.kinds}))
    return LaunchWork(f"total ({len(works)} launches)", "", sum(w.seconds for w in works),
                      None if None in flops else sum(flops), sum(w.nbytes for w in works), kinds)
