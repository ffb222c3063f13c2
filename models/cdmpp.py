"""
CDMPP's predictor (`../shared/seeds/cdmpp.txt` §5.1) as a numpy forward pass, so that
compiling with a trained model needs no torch: `mobile-learn train` (torch, the `learn`
extra) writes the weights as one `.npz`, and `Predictor.load` reads them.

The network: the compact AST's leaves with their positional encoding
(`cdmpp_features.CompactAST.encoded`), projected to `d` and through a Transformer encoder
(post-norm layers: self-attention, then a ReLU feed-forward); a linear layer per leaf count
takes the encoder's outputs, flattened, to the embedding z_x (a leaf count training never
saw takes the layer over the outputs' mean and maximum instead); an MLP takes the device's
features to z_v; the decoder takes z_x ⊙ z_v to the label, the latency in microseconds
through a Box-Cox transform and standardised. `Predictor.seconds` inverts both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mobile_opt.models.cdmpp_features import CompactAST

POOLED = 0
"""The leaf-count key of the layer over pooled encoder outputs."""

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
"""Shipped predictors, `cdmpp-<device profile>.npz`."""


def box_cox(x: np.ndarray, lam: float) -> np.ndarray:
    return np.log(x) if lam == 0 else (np.power(x, lam) - 1) / lam


def inverse_box_cox(y: np.ndarray, lam: float) -> np.ndarray:
    if lam == 0:
        return np.exp(y)
    return np.power(np.maximum(lam * y + 1, 1e-12), 1 / lam)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@dataclass
class Predictor:
    """A trained CDMPP predictor: its weights by torch's parameter names, and its labels'
    transform."""

    weights: dict[str, np.ndarray]
    layers: int
    heads: int
    leaf_counts: tuple[int, ...]
    boxcox_lambda: float
    label_mean: float
    label_std: float

    @classmethod
    def load(cls, path: Path | str) -> Predictor:
        return cls.of_arrays(dict(np.load(path, allow_pickle=False)))

    @classmethod
    def of_arrays(cls, arrays: dict[str, np.ndarray]) -> Predictor:
        """A predictor of the arrays its weights file holds."""
        data = dict(arrays)
        meta = {k: data.pop(k) for k in ("layers", "heads", "leaf_counts", "boxcox_lambda",
                                         "label_mean", "label_std")}
        return cls(data, int(meta["layers"]), int(meta["heads"]),
                   tuple(int(n) for n in meta["leaf_counts"]), float(meta["boxcox_lambda"]),
                   float(meta["label_mean"]), float(meta["label_std"]))

    @classmethod
    def shipped(cls, profile: str) -> Predictor:
        """The predictor shipped for a device profile (`models/weights/`)."""
        return cls.load(WEIGHTS_DIR / f"cdmpp-{profile}.npz")

    def _linear(self, name: str, x: np.ndarray) -> np.ndarray:
        return x @ self.weights[f"{name}.weight"].T + self.weights[f"{name}.bias"]

    def _encoder_layer(self, i: int, x: np.ndarray) -> np.ndarray:
        """torch's TransformerEncoderLayer (batch first, post-norm, ReLU, no dropout)."""
        p = f"encoder.layers.{i}"
        w, b = self.weights[f"{p}.self_attn.in_proj_weight"], self.weights[
            f"{p}.self_attn.in_proj_bias"]
        leaves, width = x.shape
        q, k, v = np.split(x @ w.T + b, 3, axis=-1)
        size = width // self.heads
        heads = [(q[:, h * size:(h + 1) * size], k[:, h * size:(h + 1) * size],
                  v[:, h * size:(h + 1) * size]) for h in range(self.heads)]
        attended = np.concatenate([_softmax(qh @ kh.T / math.sqrt(size)) @ vh
                                   for qh, kh, vh in heads], axis=-1)
        x = _layer_norm(x + self._linear(f"{p}.self_attn.out_proj", attended),
                        self.weights[f"{p}.norm1.weight"], self.weights[f"{p}.norm1.bias"])
        hidden = np.maximum(self._linear(f"{p}.linear1", x), 0)
        return _layer_norm(x + self._linear(f"{p}.linear2", hidden),
                           self.weights[f"{p}.norm2.weight"], self.weights[f"{p}.norm2.bias"])

    def label(self, encoded: np.ndarray, device: np.ndarray) -> float:
        """The standardised Box-Cox label of one kernel (its `CompactAST.encoded()` leaves)."""
        x = self._linear("embed", encoded.astype(np.float64))
        for i in range(self.layers):
            x = self._encoder_layer(i, x)
        count = len(encoded)
        if count in self.leaf_counts:
            z_x = self._linear(f"by_leaves.{count}", x.reshape(-1))
        else:
            z_x = self._linear(f"by_leaves.{POOLED}", np.concatenate([x.mean(0), x.max(0)]))
        z_v = self._linear("device.2", np.maximum(self._linear("device.0", device), 0))
        hidden = np.maximum(self._linear("decoder.0", z_x * z_v), 0)
        return float(self._linear("decoder.2", hidden)[0])

    def check(self) -> float:
        """The largest difference between this pass's labels and torch's for the kernels
        saved with the weights (`mobile-learn train`)."""
        offsets, leaves = self.weights["check_offsets"], self.weights["check_leaves"]
        return max(abs(self.label(leaves[a:b], self.weights["check_device"]) - want)
                   for a, b, want in zip(offsets[:-1], offsets[1:],
                                         self.weights["check_labels"]))

    def seconds(self, ast: CompactAST, device: np.ndarray) -> float:
        """The predicted latency of a kernel on the device of these features."""
        label = self.label(ast.encoded(), device) * self.label_std + self.label_mean
        return float(inverse_box_cox(np.asarray(label), self.boxcox_lambda)) * 1e-6
