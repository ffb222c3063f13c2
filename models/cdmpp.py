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

A weights file may hold an `Ensemble` instead: several predictors fine-tuned alike from
different seeds (`mobile-learn adapt --members`), which predict the geometric mean of
their latencies.
"""

from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mobile_opt.models.cdmpp_features import LEAF_FIELDS, CompactAST

POOLED = 0
"""The leaf-count key of the layer over pooled encoder outputs."""

BATCH = 256
"""Kernels a forward pass takes at once (bounds the attention's memory)."""

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
"""Shipped predictors, `cdmpp-<device profile>.npz`."""


UNREADABLE = (OSError, ValueError, KeyError, zipfile.BadZipFile)
"""What reading a weights file or dataset (`.npz`) that is none, or of another version,
raises."""


MEMBERS = "members"
"""The key of an ensemble's member count in its weights file; member i's arrays are keyed
`member<i>.<name>`."""


def ensemble_arrays(members: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """One weights file's arrays for predictors' arrays (`Predictor.load` reads it as an
    `Ensemble`)."""
    return {MEMBERS: np.asarray(len(members))} | {
        f"member{i}.{k}": v for i, arrays in enumerate(members) for k, v in arrays.items()}


def shipped_path(profile: str) -> Path:
    """Where the predictor shipped for a device profile (its name) lives."""
    return WEIGHTS_DIR / f"cdmpp-{profile}.npz"


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
    def load(cls, path: Path | str) -> Predictor | Ensemble:
        return cls.of_arrays(dict(np.load(path, allow_pickle=False)))

    @classmethod
    def of_arrays(cls, arrays: dict[str, np.ndarray]) -> Predictor | Ensemble:
        """A predictor (or an ensemble of them) of the arrays its weights file holds."""
        if MEMBERS in arrays:
            count = int(arrays[MEMBERS])
            if count < 1:
                raise ValueError("an ensemble of no predictors")
            return Ensemble([cls.of_arrays({k.removeprefix(f"member{i}."): v
                                            for k, v in arrays.items()
                                            if k.startswith(f"member{i}.")})
                             for i in range(count)])
        data = dict(arrays)
        if data["embed.weight"].shape[1] != len(LEAF_FIELDS):
            raise ValueError(f"it takes leaves of {data['embed.weight'].shape[1]} fields, "
                             f"not this version's {len(LEAF_FIELDS)}")
        meta = {k: data.pop(k) for k in ("layers", "heads", "leaf_counts", "boxcox_lambda",
                                         "label_mean", "label_std")}
        return cls(data, int(meta["layers"]), int(meta["heads"]),
                   tuple(int(n) for n in meta["leaf_counts"]), float(meta["boxcox_lambda"]),
                   float(meta["label_mean"]), float(meta["label_std"]))

    @classmethod
    def shipped(cls, profile: str) -> Predictor | Ensemble:
        """The predictor shipped for a device profile (`models/weights/`)."""
        return cls.load(shipped_path(profile))

    def _linear(self, name: str, x: np.ndarray) -> np.ndarray:
        return x @ self.weights[f"{name}.weight"].T + self.weights[f"{name}.bias"]

    def _encoder_layer(self, i: int, x: np.ndarray) -> np.ndarray:
        """torch's TransformerEncoderLayer (batch first, post-norm, ReLU, no dropout) over
        a batch [kernels, leaves, width]."""
        p = f"encoder.layers.{i}"
        w, b = self.weights[f"{p}.self_attn.in_proj_weight"], self.weights[
            f"{p}.self_attn.in_proj_bias"]
        batch, leaves, width = x.shape
        size = width // self.heads
        # [3, kernels, heads, leaves, size]
        qkv = (x @ w.T + b).reshape(batch, leaves, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv
        attention = _softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(size))
        attended = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, leaves, width)
        x = _layer_norm(x + self._linear(f"{p}.self_attn.out_proj", attended),
                        self.weights[f"{p}.norm1.weight"], self.weights[f"{p}.norm1.bias"])
        hidden = np.maximum(self._linear(f"{p}.linear1", x), 0)
        return _layer_norm(x + self._linear(f"{p}.linear2", hidden),
                           self.weights[f"{p}.norm2.weight"], self.weights[f"{p}.norm2.bias"])

    def labels(self, encoded: np.ndarray, device: np.ndarray) -> np.ndarray:
        """The standardised Box-Cox labels of kernels of one leaf count (their
        `CompactAST.encoded()` leaves stacked: [kernels, leaves, fields])."""
        x = self._linear("embed", encoded.astype(np.float64))
        for i in range(self.layers):
            x = self._encoder_layer(i, x)
        count = encoded.shape[1]
        if count in self.leaf_counts:
            z_x = self._linear(f"by_leaves.{count}", x.reshape(len(x), -1))
        else:
            z_x = self._linear(f"by_leaves.{POOLED}", np.concatenate([x.mean(1), x.max(1)], -1))
        z_v = self._linear("device.2", np.maximum(self._linear("device.0", device), 0))
        hidden = np.maximum(self._linear("decoder.0", z_x * z_v), 0)
        return self._linear("decoder.2", hidden)[:, 0]

    def label(self, encoded: np.ndarray, device: np.ndarray) -> float:
        """The label of one kernel (its encoded leaves)."""
        return float(self.labels(encoded[None], device)[0])

    def check(self) -> float:
        """The largest difference between this pass's labels and torch's for the kernels
        saved with the weights (`mobile-learn train`)."""
        offsets, leaves = self.weights["check_offsets"], self.weights["check_leaves"]
        return max(abs(self.label(leaves[a:b], self.weights["check_device"]) - want)
                   for a, b, want in zip(offsets[:-1], offsets[1:],
                                         self.weights["check_labels"]))

    def seconds(self, ast: CompactAST, device: np.ndarray) -> float:
        """The predicted latency of a kernel on the device of these features."""
        return float(self.seconds_of([ast], device)[0])

    def seconds_of(self, asts: list[CompactAST], device: np.ndarray) -> np.ndarray:
        """The predicted latencies of kernels on the device of these features, in batches of
        one leaf count."""
        labels = np.zeros(len(asts))
        by_count: dict[int, list[int]] = {}
        for i, ast in enumerate(asts):
            by_count.setdefault(ast.size, []).append(i)
        for members in by_count.values():
            for j in range(0, len(members), BATCH):
                part = members[j:j + BATCH]
                labels[part] = self.labels(np.stack([asts[i].encoded() for i in part]), device)
        return inverse_box_cox(labels * self.label_std + self.label_mean,
                               self.boxcox_lambda) * 1e-6


@dataclass
class Ensemble:
    """Predictors trained alike from different seeds: the geometric mean of their latencies
    (their errors partly cancel; one seed's choice of configurations is partly luck)."""

    members: list[Predictor]

    def check(self) -> float:
        return max(m.check() for m in self.members)

    def seconds(self, ast: CompactAST, device: np.ndarray) -> float:
        return float(self.seconds_of([ast], device)[0])

    def seconds_of(self, asts: list[CompactAST], device: np.ndarray) -> np.ndarray:
        return self.combine([m.seconds_of(asts, device) for m in self.members])

    @staticmethod
    def combine(latencies: list[np.ndarray]) -> np.ndarray:
        """The ensemble's latencies of its members' (one array a member)."""
        return np.exp(np.mean(np.log(latencies), 0))
