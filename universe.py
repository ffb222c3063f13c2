"""
The single `Universe` of this project, published under the `xdsl.universe` entry
point so that stock `xdsl-opt` and `mobile-opt` both see its dialects and passes.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


def _onnx() -> Dialect:
    from mobile_opt.dialects.onnx import ONNX

    return ONNX


def _fold_constants() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_fold_constants import OnnxFoldConstantsPass

    return OnnxFoldConstantsPass


def _fold_batchnorm() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_fold_batchnorm import OnnxFoldBatchNormPass

    return OnnxFoldBatchNormPass


def _fuse() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_fuse import OnnxFusePass

    return OnnxFusePass


def _canonicalize() -> type[ModulePass]:
    from mobile_opt.transforms.onnx_canonicalize import OnnxCanonicalizePass

    return OnnxCanonicalizePass


DIALECTS: dict[str, Callable[[], Dialect]] = {"onnx": _onnx}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "onnx-fold-constants": _fold_constants,
    "onnx-fold-batchnorm": _fold_batchnorm,
    "onnx-fuse": _fuse,
    "onnx-canonicalize": _canonicalize,
}

MOBILE_OPT_UNIVERSE = Universe(all_dialects=DIALECTS, all_passes=PASSES)
