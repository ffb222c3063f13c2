"""
`prune-configs`: Romou's hardware criteria (Table 1), which every search of kernel
configurations applies before it measures or models anything. A configuration is
dropped when its work group

- is smaller than a warp (part of every warp idles);
- needs more registers than a core has (`footprint · |G| > R`: it cannot run at once);
- loads more per loop step than the texture L1 holds (`bytes · |G| > L1`);
- takes more local memory than the device has (`local_bytes > local`; the blocked
  product's staging).

(Table 1's buffer and access-width rows do not arise: the GPU path's kernels read
images and read float4s.) The pass records each supported op's surviving
configurations on it (`texture.candidates`), which `texture-tile` then chooses from.
With `blocked` (the default) a product or convolution that `onnx-to-texture` would
block offers the blocked product's plans too, within the profile's image limits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from mobile_opt.models.device_profile import load_profile
from mobile_opt.dialects import onnx
from mobile_opt.dialects.onnx.base import is_constant_expression, is_host_packed
from mobile_opt.dialects.onnx.shapes import normalize_axis
from mobile_opt.dialects.texture import Layout
from mobile_opt.dialects.texture.tiling import TileConfig, gemm_plans
from mobile_opt.models import texture_kernels
from mobile_opt.models.texture_kernels import (
    B_LAYOUTS,
    ConvKernel,
    Kernel,
    KernelModelInputs,
    MatMulKernel,
    RowKernel,
)
from mobile_opt.dialects.texture.value_layouts import recorded_layout
from mobile_opt.transforms.onnx_to_texture.nodes import LoweringError
from mobile_opt.transforms.onnx_to_texture.conv import conv_geometry, conv_plans, conv_product
from mobile_opt.transforms.onnx_to_texture.layouts import activation_layout
from mobile_opt.transforms.onnx_to_texture.matmul import blocked_product_of

CANDIDATES = "texture.candidates"
SPACE = "texture.space"


@dataclass(frozen=True)
class HardwareLimits:
    warp: int
    registers_per_core: int
    l1_bytes: int
    max_group: int
    local_bytes: int = 2**31
    """Local memory a work group may take."""
    max_image: tuple[int, int] = (2**31, 2**31)
    """The image limits (width, height) within which the blocked product is a candidate."""

    @staticmethod
    def of(profile: dict) -> HardwareLimits:
        compute = profile.get("compute") or {}
        texture = (profile.get("caches") or {}).get("texture") or {}
        sizes = texture.get("sizes") or []
        image = profile.get("image") or {}
        return HardwareLimits(
            warp=compute.get("warp_size") or 1,
            registers_per_core=compute.get("registers_per_core") or 2**31,
            l1_bytes=sizes[0] if sizes else 2**31,
            max_group=compute.get("max_work_group_size") or 256,
            local_bytes=compute.get("local_memory_bytes") or 2**31,
            max_image=(image.get("max_width") or 2**31, image.get("max_height") or 2**31),
        )


def prune_reason(limits: HardwareLimits, described: KernelModelInputs,
                 config: TileConfig) -> str | None:
    """Which criterion drops the configuration, or None if it survives."""
    if config.group is None:
        return None  # the driver's choice is always a candidate
    threads = math.prod(config.group)
    if threads < limits.warp:
        return "warp"
    if described.footprint * threads > limits.registers_per_core:
        return "registers"
    if described.loaded_bytes * threads > limits.l1_bytes:
        return "L1"
    if described.local_bytes > limits.local_bytes:
        return "local memory"
    return None


def surviving(limits: HardwareLimits, kernel: Kernel,
              configs: Iterable[TileConfig]) -> list[TileConfig]:
    return [c for c in configs if prune_reason(limits, kernel.model_inputs(c), c) is None]


def kernel_of(op, blocked_within: tuple[int, int] | None = None) -> Kernel | None:
    """
    The kernel `onnx-to-texture` emits for `op`, as the model sees it: 2-D MatMul and
    Gemm; rank-4 Conv and ConvTranspose whose result is stored `nc4hw4`; Softmax,
    LogSoftmax and LayerNormalization over the last axis. None for anything else. A
    product's B may take another layout where the host packs it (a weight or graph input).
    With `blocked_within` (image limits: tensors in images, the blocked kernels on), a
    product or conv that the lowering can block (its own test, with the layouts that
    `select-layouts`' local rules give) offers the blocked product's plans.
    """

    def layout_of(value) -> Layout:
        return recorded_layout(value) or activation_layout(value)

    shapes = [list(v.type.get_shape()) for v in op.operands if hasattr(v.type, "get_shape")]
    if isinstance(op, (onnx.MatMulOp, onnx.GemmOp, onnx.FusedMatMulOp, onnx.FusedGemmOp)):
        a, b = shapes[:2]
        if len(a) != 2 or len(b) != 2:
            return None
        trans = isinstance(op, (onnx.GemmOp, onnx.FusedGemmOp))
        m, k = (a[1], a[0]) if trans and op.int_attr("transA") else (a[0], a[1])
        trans_b = bool(trans and op.int_attr("transB"))
        n = b[0] if trans_b else b[1]
        layouts = B_LAYOUTS if is_host_packed(op.operands[1]) else (None,)
        product = blocked_within and blocked_product_of(op, layout_of, blocked_within)
        plans = tuple(gemm_plans(*product)) if product else ()
        return MatMulKernel(m, k, n, trans_b, layouts, plans)
    if isinstance(op, (onnx.ConvOp, onnx.FusedConvOp, onnx.ConvTransposeOp)):
        # the result's layout: recorded, or the one select-layouts' local rules will record
        if len(shapes[0]) != 4 or layout_of(op.results[0]) is not Layout.NC4HW4:
            return None
        try:
            geometry = conv_geometry(op)
        except LoweringError:
            return None  # its lowering will say what is wrong
        product = blocked_within and conv_product(
            geometry, layout_of(op.operands[0]), is_constant_expression(op.operands[1]),
            blocked_within)
        return ConvKernel(geometry, tuple(conv_plans(product, blocked_within)) if product else ())
    if isinstance(op, (onnx.SoftmaxOp, onnx.LogSoftmaxOp, onnx.LayerNormalizationOp)):
        x = shapes[0]
        if not x or normalize_axis(op.int_attr("axis"), len(x)) != len(x) - 1:
            return None
        name = "LayerNormalization" if isinstance(op, onnx.LayerNormalizationOp) else "Softmax"
        return RowKernel(name, math.prod(x[:-1]), x[-1])
    return None


@dataclass(frozen=True)
class PruneConfigsPass(ModulePass):
    """`prune-configs{device=...}`: record each GPU kernel's configurations that pass Table 1."""

    name = "prune-configs"
    device: str = "pocl"
    blocked: bool = True
    """The blocked product's plans are candidates (`onnx-to-texture{blocked=true}`, images)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        profile = load_profile(self.device)
        limits = HardwareLimits.of(profile)
        for node in op.walk():
            kernel = kernel_of(node, limits.max_image if self.blocked else None)
            if kernel is None:
                continue
            space = list(texture_kernels.candidates(kernel, limits.max_group))
            kept = surviving(limits, kernel, space)
            node.attributes[CANDIDATES] = ArrayAttr([c.attribute() for c in kept])
            node.attributes[SPACE] = IntegerAttr(len(space), i64)
