"""
The external weight store.

Printed IR never holds large tensors. `onnx.Weight` ops name a store file and a key:
an initializer (or Constant node output) of an `.onnx` file, or a whole `.npy` file
that is memory-mapped. Weights that passes derive (folded constants, BatchNorm folded
into Conv) are written content-addressed as `.npy` under the derived-weight folder,
so the IR that names them stays valid across processes.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

INLINE_LIMIT = 16
"""Tensors with at most this many elements print inline as `dense<...>`."""


class WeightStoreError(Exception):
    """A weight reference that cannot be resolved."""


def derived_weight_dir() -> Path:
    env = os.environ.get("MOBILE_OPT_WEIGHT_DIR")
    return Path(env) if env else Path.home() / ".cache" / "mobile-opt" / "weights"


@cache
def _onnx_tensors(store: str, stamp: int) -> dict[str, onnx.TensorProto]:
    try:
        model = onnx.load(store)
    except Exception as e:  # OSError, or protobuf's own DecodeError
        raise WeightStoreError(f"{store}: cannot read weight store: {e}") from None
    tensors = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    tensors[node.output[0]] = attr.t
    return tensors


def load_weight(store: str, key: str) -> np.ndarray:
    """The array a `(store, key)` reference names; read-only and cached."""
    try:
        stamp = os.stat(store).st_mtime_ns
    except OSError as e:
        raise WeightStoreError(f"{store}: cannot read weight store: {e.strerror}") from None
    # the modification time is part of the cache key: a rewritten file is read anew
    return _load_weight(store, key, stamp)


@cache
def _load_weight(store: str, key: str, stamp: int) -> np.ndarray:
    if store.endswith(".npy"):
        try:
            return np.load(store, mmap_mode="r")
        except OSError as e:
            raise WeightStoreError(f"{store}: cannot read weight file: {e}") from None
    tensors = _onnx_tensors(store, stamp)
    if key not in tensors:
        raise WeightStoreError(f"{store}: no weight named '{key}'")
    array = numpy_helper.to_array(tensors[key], base_dir=str(Path(store).parent))
    array.setflags(write=False)
    return array


def save_derived_weight(array: np.ndarray) -> tuple[str, str]:
    """Persist a pass-derived array; returns its `(store, key)` reference."""
    array = np.ascontiguousarray(array)
    digest = hashlib.sha256(
        f"{array.dtype.str}{array.shape}".encode() + array.tobytes()
    ).hexdigest()[:24]
    folder = derived_weight_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{digest}.npy"
    if not path.exists():
        # write then rename, so a concurrent reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".npy.tmp")
        with os.fdopen(fd, "wb") as f:
            np.save(f, array)
        os.replace(tmp, path)
    return str(path), digest
