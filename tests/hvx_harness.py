"""Shared helpers of the DSP-path tests: run one conv/matmul kernel under QEMU."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mobile_opt.backends.hexagon.program import Program
from mobile_opt.dialects.hvx.layouts import ImageGeometry, SimdLayout
from mobile_opt.models.hvx_cycles import KernelCost, kernel_cost
from mobile_opt.transforms.onnx_to_hvx.conv import ConvKernelGenerator, ConvPlan, ConvShape
from mobile_opt.reference.qlinear import requantize_accumulators
from mobile_opt.transforms.onnx_to_hvx.requant import make_requantizer


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
        pair sums included, has an exact plan) and a scale that needs few corrections.
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
    plan: ConvPlan
    out_geo: ImageGeometry
    data_bytes: int


def conv_program(layout: SimdLayout, case: ConvCase) -> ConvProgram:
    """Build the kernel of `case` in `layout` (PlanInfeasible if there is none)."""
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
    plan = generator.generate()
    program = Program()
    program.data("x", in_geo.pack(case.x, case.x_zero))
    program.data("w", plan.weights)
    program.storage("y", out_geo.size, case.y_zero)
    program.output("y", out_geo.size)
    program.kernels.append(plan.func)
    return ConvProgram(program, plan, out_geo, in_geo.size + out_geo.size)


def run_conv_kernel(
    layout: SimdLayout, shape: ConvShape, x, w, bias, x_zero, scale, y_zero, packing: str = "greedy"
) -> ConvRun:
    """Build the kernel of `shape` in `layout` (PlanInfeasible if there is none) and run it."""
    case = ConvCase(shape, x, w, np.asarray(bias), x_zero, scale, y_zero)
    built = conv_program(layout, case)
    outputs, execution = built.program.run(counting=True, packing=packing)
    return ConvRun(
        built.out_geo.unpack(outputs["y"]),
        case.expected(),
        execution.packets["conv"],
        kernel_cost(built.plan.func),  # the function was allocated in place by the run
        built.plan.instruction,
        built.data_bytes,
    )


def elementwise_sum_program(vectors: int, seed: int = 0):
    """
    GCD²'s Fig. 5 kernel, `R = A + B + C` on uint8 arrays into int16: per vector, three
    loads, zero-extension to halfwords, two adds per half, two stores. The program
    and the bytes R must hold.
    """
    from mobile_opt.dialects.hvx import ops
    from mobile_opt.transforms.onnx_to_hvx.builder import KernelBuilder

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
