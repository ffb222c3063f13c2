"""
The single `Universe` of this project, published under the `xdsl.universe` entry
point so that stock `xdsl-opt` and `mobile-opt` both see its dialects, passes (the
named pipelines `gpu-pipeline` and `dsp-pipeline` among them) and targets.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target


def _onnx() -> Dialect:
    from mobile_opt.dialects.onnx import ONNX

    return ONNX


def _texture() -> Dialect:
    from mobile_opt.dialects.texture import TEXTURE

    return TEXTURE


def _ocl() -> Dialect:
    from mobile_opt.dialects.ocl import OCL

    return OCL


def _hvx() -> Dialect:
    from mobile_opt.dialects.hvx import HVX

    return HVX


def _vliw() -> Dialect:
    from mobile_opt.dialects.vliw import VLIW

    return VLIW


def _stream() -> Dialect:
    from mobile_opt.dialects.stream import STREAM

    return STREAM


def _onnx_to_texture() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_to_texture import OnnxToTexturePass

    return OnnxToTexturePass


def _texture_to_ocl() -> type[ModulePass]:
    from mobile_opt.transforms.texture_to_ocl import TextureToOclPass

    return TextureToOclPass


def _texture_tile() -> type[ModulePass]:
    from mobile_opt.transforms.texture_tile import TextureTilePass

    return TextureTilePass


def _select_layouts() -> type[ModulePass]:
    from mobile_opt.transforms.select_layouts import SelectLayoutsPass

    return SelectLayoutsPass


def _ace() -> type[ModulePass]:
    from mobile_opt.transforms.ace import AddressCalculationEliminationPass

    return AddressCalculationEliminationPass


def _prune_configs() -> type[ModulePass]:
    from mobile_opt.transforms.prune_configs import PruneConfigsPass

    return PruneConfigsPass


def _fold_constants() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_fold_constants import OnnxFoldConstantsPass

    return OnnxFoldConstantsPass


def _fold_batchnorm() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_fold_batchnorm import OnnxFoldBatchNormPass

    return OnnxFoldBatchNormPass


def _fuse() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_fuse import OnnxFusePass

    return OnnxFusePass


def _flashmem_fuse() -> type[ModulePass]:
    from mobile_opt.transforms.flashmem_fuse import FlashMemFusePass

    return FlashMemFusePass


def _canonicalize() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_canonicalize import OnnxCanonicalizePass

    return OnnxCanonicalizePass


def _hvx_regalloc() -> type[ModulePass]:
    from mobile_opt.transforms.hvx_regalloc import HvxRegisterAllocationPass

    return HvxRegisterAllocationPass


def _onnx_to_hvx() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_to_hvx.lower import OnnxToHvxPass

    return OnnxToHvxPass


def _hvx_unroll() -> type[ModulePass]:
    from mobile_opt.transforms.hvx_unroll import HvxUnrollPass

    return HvxUnrollPass


def _vliw_pack() -> type[ModulePass]:
    from mobile_opt.transforms.vliw_pack import VliwPackPass

    return VliwPackPass


def _flashmem_split() -> type[ModulePass]:
    from mobile_opt.transforms.flashmem_split import FlashMemSplitPass

    return FlashMemSplitPass


def _flashmem_plan() -> type[ModulePass]:
    from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass

    return FlashMemPlanPass


def _flashmem_stream() -> type[ModulePass]:
    from mobile_opt.transforms.flashmem_stream import FlashMemStreamPass

    return FlashMemStreamPass


def _gpu_pipeline() -> type[ModulePass]:
    from mobile_opt.pass_lists import GpuPipelinePass

    return GpuPipelinePass


def _dsp_pipeline() -> type[ModulePass]:
    from mobile_opt.pass_lists import DspPipelinePass

    return DspPipelinePass


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "onnx": _onnx,
    "texture": _texture,
    "ocl": _ocl,
    "hvx": _hvx,
    "vliw": _vliw,
    "stream": _stream,
}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "onnx-fold-constants": _fold_constants,
    "onnx-fold-batchnorm": _fold_batchnorm,
    "onnx-fuse": _fuse,
    "onnx-canonicalize": _canonicalize,
    "flashmem-fuse": _flashmem_fuse,
    "select-layouts": _select_layouts,
    "onnx-to-texture": _onnx_to_texture,
    "texture-to-ocl": _texture_to_ocl,
    "prune-configs": _prune_configs,
    "ace": _ace,
    "texture-tile": _texture_tile,
    "hvx-regalloc": _hvx_regalloc,
    "onnx-to-hvx": _onnx_to_hvx,
    "hvx-unroll": _hvx_unroll,
    "vliw-pack": _vliw_pack,
    "flashmem-plan": _flashmem_plan,
    "flashmem-stream": _flashmem_stream,
    "flashmem-split": _flashmem_split,
    # named pipelines: each expands to one of pass_lists.py's lists
    "gpu-pipeline": _gpu_pipeline,
    "dsp-pipeline": _dsp_pipeline,
}


def _opencl() -> type[Target]:
    from mobile_opt.backends.opencl.targets import OpenCLTarget

    return OpenCLTarget


def _opencl_plan() -> type[Target]:
    from mobile_opt.backends.opencl.targets import OpenCLPlanTarget

    return OpenCLPlanTarget


def _hexagon_asm() -> type[Target]:
    from mobile_opt.backends.hexagon.printer import HexagonAsmTarget

    return HexagonAsmTarget


def _hexagon_c() -> type[Target]:
    from mobile_opt.backends.hexagon.c_printer import HexagonCTarget

    return HexagonCTarget


TARGETS: dict[str, Callable[[], type[Target]]] = {
    "opencl": _opencl,
    "opencl-plan": _opencl_plan,
    "hexagon-asm": _hexagon_asm,
    "hexagon-c": _hexagon_c,
}

MOBILE_OPT_UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES, all_targets=TARGETS)
