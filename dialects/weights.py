"""
The external weight store.

Printed IR never holds large tensors. `onnx.Weight` ops name a store file and a key:
an initializer (or Constant node output) of an `.onnx` file, or a whole `.npy` file
that is memory-mapped. Weights that passes derive (folded constants, BatchNorm folded
into Conv) are written content-addressed as `.npy` under the derived-weight folder,
so the IR that names them stays valid across processes.

A derived weight's file name is the digest of its dtype, shape and bytes, and its key
the same digest: a reader hashes the file once per process and version of the file
(path, modification time, size) and refuses one that does not match, removing it, and
a pass that derives the weight again finds the damage and rewrites the file.
"""

from __future__ import annotations

import hashlib
import os
import stat
import re
import sys
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


DIGEST_CHARS = 24
"""Hex digits of the SHA-256 that name a derived weight."""

_DIGEST = re.compile(f"[0-9a-f]{{{DIGEST_CHARS}}}")
_HASH_CHUNK = 1 << 24
_NPY_MAGIC = b"\x93NUMPY"


def derived_weight_dir() -> Path:
    env = os.environ.get("MOBILE_OPT_WEIGHT_DIR")
    # absolute: the IR records store paths, which must not depend on the cwd
    return Path(env).expanduser().absolute() if env else (
        Path.home() / ".cache" / "mobile-opt" / "weights")


def weight_digest(array: np.ndarray) -> str:
    """The content address of an array: a hash of its dtype, shape and C-order bytes."""
    digest = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    for start in range(0, flat.size, _HASH_CHUNK):  # no copy of a mapped file
        digest.update(flat[start : start + _HASH_CHUNK])
    return digest.hexdigest()[:DIGEST_CHARS]


def is_derived_weight(store: str, key: str) -> bool:
    """Whether `(store, key)` names a content-addressed derived weight file."""
    path = Path(store)
    return path.suffix == ".npy" and path.stem == key and _DIGEST.fullmatch(key) is not None


_VERIFIED: set[tuple[str, int, int]] = set()
"""Versions (path, mtime, size) of derived weight files known to match their name."""


def _version(path: Path) -> tuple[str, int, int]:
    st = os.stat(path)
    return str(path), st.st_mtime_ns, st.st_size


def _open_derived(path: Path, digest: str) -> np.ndarray | str:
    """The mapped array of a derived weight file, or why its content is corrupt."""
    try:
        version = _version(path)
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError as e:
        raise WeightStoreError(f"{path}: cannot read weight file: {e.strerror or e}") from None
    except Exception as e:  # numpy's header and size checks raise ValueError, EOFError, ...
        with open(path, "rb") as f:
            if f.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
                return "not an .npy file"
        lines = str(e).strip().splitlines()
        return f"bad header or size: {lines[0] if lines else type(e).__name__}"
    if version not in _VERIFIED:
        extra = version[2] - getattr(array, "offset", 0) - array.nbytes
        if extra > 0:
            return f"bad header or size: {extra} bytes after the array"
        if weight_digest(array) != digest:
            return "hash mismatch"
        _VERIFIED.add(version)
    return array


def _remove_if_unchanged(path: Path, version: tuple[str, int, int]) -> None:
    """Remove a corrupt file unless someone has replaced it meanwhile."""
    try:
        if _version(path) == version:
            path.unlink()
    except OSError:
        pass


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
    """
    The array a `(store, key)` reference names; read-only and cached. A derived weight
    file whose content does not match its name is removed and a WeightStoreError.
    """
    try:
        st = os.stat(store)
    except FileNotFoundError:
        if is_derived_weight(store, key):
            raise WeightStoreError(f"{store}: derived weight file is missing: compile the "
                                   "model again to rebuild it") from None
        raise WeightStoreError(f"{store}: cannot read weight store: no such file") from None
    except OSError as e:
        raise WeightStoreError(f"{store}: cannot read weight store: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block, a device never end
        raise WeightStoreError(f"{store}: cannot read weight store: not a regular file")
    # the file's version is part of the cache key: a rewritten file is read anew
    return _load_weight(store, key, st.st_mtime_ns, st.st_size)


@cache
def _load_weight(store: str, key: str, stamp: int, size: int) -> np.ndarray:
    if is_derived_weight(store, key):
        path = Path(store)
        array = _open_derived(path, key)
        if isinstance(array, str):
            _remove_if_unchanged(path, (str(path), stamp, size))
            raise WeightStoreError(
                f"{store}: derived weight corrupt ({array}); removed it: compile the model "
                "again to rebuild it")
        return array
    if store.endswith(".npy"):
        try:
            return np.load(store, mmap_mode="r", allow_pickle=False)
        except OSError as e:
            raise WeightStoreError(f"{store}: cannot read weight file: {e.strerror or e}") from None
        except Exception as e:  # not an .npy file, or shorter than its header says
            lines = str(e).strip().splitlines()
            raise WeightStoreError(
                f"{store}: not a readable .npy file: {lines[0] if lines else type(e).__name__}"
            ) from None
    tensors = _onnx_tensors(store, stamp)
    if key not in tensors:
        raise WeightStoreError(f"{store}: no weight named '{key}'")
    try:
        array = numpy_helper.to_array(tensors[key], base_dir=str(Path(store).parent))
    except Exception as e:  # external data gone, short or refused since the import
        lines = str(e).strip().splitlines()
        raise WeightStoreError(f"{store}: weight '{key}': "
                               f"{lines[0] if lines else type(e).__name__}") from None
    array.setflags(write=False)
    return array


def _exists(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError:  # absent, or a folder that is no folder: `_write` says which
        return False
    return True


def _folder_error(folder: Path, reason: str) -> WeightStoreError:
    return WeightStoreError(f"{folder}: cannot use as the derived-weight folder: {reason}")


def save_derived_weight(array: np.ndarray) -> tuple[str, str]:
    """
    Persist a pass-derived array; returns its `(store, key)` reference. A file of that
    name whose content does not verify is rewritten, with a remark on stderr.
    """
    array = np.ascontiguousarray(array)
    digest = weight_digest(array)
    folder = derived_weight_dir()
    path = folder / f"{digest}.npy"
    damage = None
    if _exists(path):
        damage = _open_derived(path, digest)
        if not isinstance(damage, str):
            return str(path), digest
    _write(folder, path, array)
    if damage is not None:
        print(f"remark: {path}: derived weight corrupt ({damage}); rebuilt", file=sys.stderr)
    return str(path), digest


def _write(folder: Path, path: Path, array: np.ndarray) -> None:
    """Write `array` to `path` through a temporary file in `folder` and a rename."""
    if _exists(folder) and not os.path.isdir(folder):
        raise _folder_error(folder, "it is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except NotADirectoryError as e:
        above = next((p for p in folder.parents if _exists(p) and not os.path.isdir(p)), None)
        reason = f"{above} is not a folder" if above else e.strerror
        raise _folder_error(folder, reason) from None
    except OSError as e:
        raise _folder_error(folder, e.strerror or str(e)) from None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.stem}.", suffix=".tmp")
    except OSError as e:
        raise _folder_error(folder, f"cannot create a file in it: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, array, allow_pickle=False)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would keep the cache private
        os.replace(tmp, path)  # a concurrent reader never sees half a file
    except OSError as e:
        os.unlink(tmp)
        raise WeightStoreError(f"{path}: cannot write derived weight: {e.strerror or e}") from None
    except BaseException:
        os.unlink(tmp)
        raise
    _VERIFIED.add(_version(path))
