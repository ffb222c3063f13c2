"""
Hand-built DSP kernels, the data they run on and the numpy results they must give:
the fixtures the DSP tests and benchmarks share. A quantized conv/matmul case
(`ConvCase`) and its program in one layout (`conv_program`), GCD²'s element-wise sum
(`elementwise_sum_program`), and running a program under QEMU after the DSP back end.

`checking` sits beside `pipelines` and does not import it: whatever compiles a program
here is handed the back end, `pipelines.dsp_back_end`, as `back_end`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.passes import ModulePass, PassPipeline

from mobile_opt.backends.hexagon.c_printer import kernels_as_c
from mobile_opt.backends.hexagon.harness import Execution
from mobile_opt.backends.hexagon.printer import PRINTER_PACKINGS
from mobile_opt.backends.hexagon.runner import run_program
from mobile_opt.dialects.hvx import ops
from mobile_opt.dialects.hvx.layouts import ImageGeometry, SimdLayout
from mobile_opt.models.hvx_cycles import KernelCost, kernel_cost
from mobile_opt.reference.qlinear import requantize_accumulators
from mobile_opt.transforms.onnx_to_hvx.builder import KernelBuilder
from mobile_opt.transforms.onnx_to_hvx.conv import ConvKernel, ConvKernelGenerator, ConvShape
from mobile_opt.transforms.onnx_to_hvx.program import Program
from mobile_opt.transforms.onnx_to_hvx.requant import make_requantizer

BackEnd = Callable[[str], Sequence[ModulePass]]
"""The passes that allocate and pack a program for a packing: `pipelines.dsp_back_end`."""


def compile_and_run(
    program: Program,
    packing: str,
    back_end: BackEnd,
    counting: bool = False,
    keep: Path | None = None,
    kernels_in_c: bool = False,
) -> tuple[dict[str, np.ndarray], Execution | None]:
    """
    Allocate and pack `program` with `back_end(packing)` (in place: its kernels are the
    module's) and run it: the output buffers' bytes by name, and packet counts if
    `counting`. `kernels_in_c`: the kernels go to clang as C with intrinsics instead.
    """
    module = program.module(with_kernels=not kernels_in_c)
    PassPipeline(tuple(back_end(packing))).apply(Context(), module)
    c_source = None
    if kernels_in_c:
        c_source = kernels_as_c(program.kernels, [b.sym_name.data for b in program.buffers])
    printed = packing if packing in PRINTER_PACKINGS else "greedy"
    return run_program(module, program.outputs, counting, printed, keep, c_source)


def conv_reference(x, w, bias, shape: ConvShape, x_zero: int, scale: float, y_zero: int):
    """The exact quantized convolution onnxruntime computes, in numpy."""
    kh, kw = shape.kernel
    sh, sw = shape.stride
    pt, pl = shape.pads
    oh, ow = shape.out_height, shape.out_width
    padded = np.pad(x.astype(np.int64) - x_zero, ((0, 0), (pt, pt + kh), (pl, pl + kw)))
    acc = np.zeros((w.shape[0], oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = padded[:, i : i + sh * oh : sh, j : j + sw * ow : sw]
            taps = w[:, :, i, j].astype(np.int64)
            if shape.depthwise:
                acc += patch * taps[:, 0, None, None]
            else:
                acc += np.einsum("chw,nc->nhw", patch, taps)
    acc += np.asarray(bias, np.int64)[:, None, None]
    return requantize_accumulators(acc, np.float32(scale), y_zero, 0, 255)


@dataclass
class ConvRun:
    """One conv kernel run under QEMU, with what it should have computed."""

    got: np.ndarray
    expected: np.ndarray
    counted_packets: int
    predicted: KernelCost
    instruction: str
    data_bytes: int


@dataclass
class ConvCase:
    """A quantized conv/matmul kernel's data: what a kernel of its shape computes on."""

    shape: ConvShape
    x: np.ndarray
    w: np.ndarray
    bias: np.ndarray
    x_zero: int
    scale: float
    y_zero: int

    @staticmethod
    def random(shape: ConvShape, seed: int) -> ConvCase:
        """
        uint8 activations, int8 weights in [-64, 63] (so that every layout, vmpa's 16-bit
        pair sums included, has an exact kernel) and a scale that needs few corrections.
        """
        rng = np.random.default_rng(seed)
        x = rng.integers(0, 256, (shape.channels, shape.height, shape.width)).astype(np.uint8)
        per_input = 1 if shape.depthwise else shape.channels
        w = rng.integers(-64, 64, (shape.out_channels, per_input, *shape.kernel)).astype(np.int8)
        bias = rng.integers(-5000, 5000, shape.out_channels)
        x_zero, y_zero = int(rng.integers(0, 256)), int(rng.integers(0, 256))
        scale = float(np.float32(rng.uniform(2e-4, 2e-3)))
        return ConvCase(shape, x, w, bias, x_zero, scale, y_zero)

    def expected(self) -> np.ndarray:
        return conv_reference(self.x, self.w, self.bias, self.shape, self.x_zero, self.scale,
                              self.y_zero)


@dataclass
class ConvProgram:
    """A conv kernel built in one layout, in a program that runs it on its case's data."""

    program: Program
    kernel: ConvKernel
    out_geo: ImageGeometry
    data_bytes: int


def conv_program(layout: SimdLayout, case: ConvCase) -> ConvProgram:
    """Build the kernel of `case` in `layout` (KernelInfeasible if there is none)."""
    shape, w = case.shape, case.w
    folded = np.asarray(case.bias, np.int64) - case.x_zero * w.reshape(w.shape[0], -1).astype(
        np.int64).sum(1)
    top, below, left, right = shape.input_reach()
    in_geo = ImageGeometry(layout, shape.channels, shape.height, shape.width,
                           max(top, below), 1 if max(left, right) else 0)
    out_geo = ImageGeometry(layout, shape.out_channels, shape.out_height, shape.out_width)
    generator = ConvKernelGenerator(
        "conv", shape, layout, w, folded, make_requantizer(case.scale, case.y_zero), in_geo,
        out_geo, "x", "y", "w",
    )
    kernel = generator.generate()
    program = Program()
    program.data("x", in_geo.pack(case.x, case.x_zero))
    program.data("w", kernel.weights)
    program.storage("y", out_geo.size, case.y_zero)
    program.output("y", out_geo.size)
    program.kernels.append(kernel.func)
    return ConvProgram(program, kernel, out_geo, in_geo.size + out_geo.size)


def run_conv_kernel(
    layout: SimdLayout, case: ConvCase, back_end: BackEnd, packing: str = "greedy"
) -> ConvRun:
    """Build the kernel of `case` in `layout` (KernelInfeasible if there is none), run it."""
    built = conv_program(layout, case)
    outputs, execution = compile_and_run(built.program, packing, back_end, counting=True)
    return ConvRun(
        built.out_geo.unpack(outputs["y"]),
        case.expected(),
        execution.packets["conv"],
        kernel_cost(built.kernel.func),  # allocated (and packed) in place by the back end
        built.kernel.instruction,
        built.data_bytes,
    )


def elementwise_sum_program(vectors: int, seed: int = 0) -> tuple[Program, np.ndarray]:
    """
    GCD²'s Fig. 5 kernel, `R = A + B + C` on uint8 arrays into int16: per vector, three
    loads, zero-extension to halfwords, two adds per half, two stores. The program
    and the bytes R must hold.
    """
    rng = np.random.default_rng(seed)
    a, b, c = (rng.integers(0, 256, vectors * 128).astype(np.uint8) for _ in range(3))
    builder = KernelBuilder("sum3")
    pointers = [builder(ops.AddressOp(name)) for name in ("a", "b", "c", "r")]
    with builder.loop(vectors, "loop0", pointers) as loop:
        *sources, out = loop.args
        widened, advanced = [], []
        for pointer, name in zip(sources, "abc"):
            load = ops.VmemLoadPostIncOp(pointer, 1, region=name)
            builder.add(load)
            advanced.append(load.new_base)
            widened.append(builder(ops.VzxtByteOp(load.d)))
        for half in (ops.LoOp, ops.HiOp):
            x, y, z = (builder(half(w)) for w in widened)
            total = builder(ops.VaddHOp(builder(ops.VaddHOp(x, y)), z))
            store = ops.VmemStorePostIncOp(out, total, 1, region="r")
            builder.add(store)
            out = store.new_base
        loop.next(*advanced, out)
    program = Program()
    for name, values in zip("abc", (a, b, c)):
        program.data(name, values)
    program.storage("r", vectors * 256)
    program.output("r", vectors * 256)
    program.kernels.append(builder.func)
    total = (a.astype(np.int16) + b + c).reshape(vectors, 64, 2)
    expected = np.stack([total[:, :, 0], total[:, :, 1]], 1).astype("<i2").view(np.uint8).ravel()
    return program, expected
