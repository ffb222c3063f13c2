"""
`texture-tile{device=... cost-model=tmmodel|cdmpp}`: choose each GPU kernel's configuration
— the access pattern A of a product's B (the layout the host packs a weight or graph
input in), its thread tile T (and with it the access pattern of its row operand) and its
work-group size G (and with it the warp shape W) — and record it on the op for
`onnx-to-texture` (`dialects/texture/tiling.py`).

The candidates are those `prune-configs` kept (the pass prunes them itself when it
runs first). `tmmodel` takes the one with the least TMModel cost
(`models/tmmodel.py`, with the constants of the device profile `device`; ties go to
the squarest warp footprint, `models/texture_kernels.py`); `cdmpp` the one of least
latency that the learned predictor shipped for `device` gives its kernels
(`transforms/cdmpp_cost.py`, `models/weights/cdmpp-<device>.npz`). Supported ops: 2-D MatMul
and Gemm, Conv (strided, depthwise, grouped) and ConvTranspose with `nc4hw4` results,
Softmax and LayerNormalization over the last axis (`models/texture_kernels.py`); others
keep the lowering's defaults. A product or ungrouped conv that the lowering can block
also has the blocked product's plans among its candidates (`blocked=false`: not), so
the model chooses between one-pixel and blocked kernels; the lowering's fixed rule
(`plan_gemm`) applies only where this pass recorded nothing.

An op that already carries a configuration keeps it: that is how a measured choice
reaches the compiler. A pass never runs anything on a device; `mobile-tune` measures the
candidates and `--save-mlir` writes the IR with the fastest recorded (`texture.tile`),
which this pass and the lowering then obey.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mobile_opt.models.device_profile import load_profile, texture_constants
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.models import texture_kernels
from mobile_opt.models.cdmpp import UNREADABLE, Ensemble, Predictor, shipped_path
from mobile_opt.transforms.cdmpp_cost import CdmppCost
from mobile_opt.transforms.prune_configs import (
    CANDIDATES,
    SPACE,
    HardwareLimits,
    kernel_of,
    surviving,
)

COST_MODELS = ("tmmodel", "cdmpp")


def _stored_candidates(op) -> list[TileConfig] | None:
    """The configurations `prune-configs` recorded on `op`, if it ran."""
    attr = op.attributes.get(CANDIDATES)
    if not isinstance(attr, ArrayAttr):
        return None
    return [TileConfig.from_attribute(e) for e in attr.data if isinstance(e, DictionaryAttr)]


@dataclass(frozen=True)
class TextureTilePass(ModulePass):
    name = "texture-tile"
    device: str = "pocl"
    """The device profile (a shipped name or a path) the model and pruning read."""
    cost_model: str = "tmmodel"
    blocked: bool = True
    """The blocked product's plans are candidates beside the one-pixel kernels'
    (`onnx-to-texture{blocked=true}` with tensors in images)."""

    def _predictor(self) -> Predictor | Ensemble:
        """The predictor shipped for the device profile (by its name or file's stem)."""
        name = Path(self.device).stem
        try:
            return Predictor.shipped(name)
        except FileNotFoundError:
            raise DiagnosticException(
                f"texture-tile: no CDMPP predictor for device '{name}' (models/weights/"
                f"{shipped_path(name).name}): train one with mobile-learn train") from None
        except UNREADABLE as e:
            raise DiagnosticException(
                f"texture-tile: the CDMPP predictor {shipped_path(name)} is unreadable "
                f"({e}): train it again with mobile-learn train") from None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.cost_model not in COST_MODELS:
            measured = " (measured searches: mobile-tune --save-mlir)" if self.cost_model in (
                "exhaustive", "random") else ""
            raise DiagnosticException(
                f"texture-tile: cost-model must be one of {', '.join(COST_MODELS)}, "
                f"not '{self.cost_model}'{measured}")
        profile = load_profile(self.device)
        limits = HardwareLimits.of(profile)
        model = texture_kernels.TMModel(texture_constants(profile))
        predictor = self._predictor() if self.cost_model == "cdmpp" else None
        for node in list(op.walk()):
            kernel = kernel_of(node, limits.max_image if self.blocked else None)
            if kernel is None or TileConfig.of(node) is not None:
                continue  # a configuration chosen before (by mobile-tune, say) stays
            configs = _stored_candidates(node)
            if configs is None:
                configs = surviving(limits, kernel,
                                    texture_kernels.candidates(kernel, limits.max_group))
            if not configs:
                continue
            if predictor is not None:
                CdmppCost(predictor, profile, self.device, node, self.blocked,
                          limits.max_image).choose(configs).apply(node)
            else:
                model.choose(kernel, configs).apply(node)
            node.attributes.pop(CANDIDATES, None)
            node.attributes.pop(SPACE, None)
