"""
The weight store: a file of a compiled model's weights, already packed into the pixels
of their storage (layout, element type) and read by memory map, so that a run, streamed
or not, neither parses the ONNX protobuf nor packs anything.

    MOBILE-OPT-WEIGHTS 1\\n
    <header length, 8 bytes little-endian><header: JSON>
    <each weight's pixels, row-major, at a 4096-byte aligned offset>

The header lists each weight of the host plan (`plan.weights`) by its storage value name
with its kind, width, height, element type, layout, shape, byte offset and size, and the
chunk size S the store is cut into: chunk k of a weight is bytes [k S, (k + 1) S) of its
pixels (the last may be short), which a streaming run copies through its staging ring.
`check` rejects a store written for another program in one line.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from mobile_opt.backends.opencl.host_pack import OpenCLRunError, host_value, pack_pixels
from mobile_opt.backends.opencl.plan import PackRecord, Plan
from mobile_opt.dialects.stream.attributes import chunks_of
from mobile_opt.models.storage import pixel_bytes

MAGIC = b"MOBILE-OPT-WEIGHTS 1\n"
ALIGN = 4096
DEFAULT_CHUNK = 256 * 1024
"""S when the module has no `#stream.plan`."""
_FIELDS = ("kind", "width", "height", "element_type", "layout", "shape")


class WeightStoreError(OpenCLRunError):
    """The store cannot be read, or was written for another program."""


def _entry(record: PackRecord) -> dict:
    return {f: getattr(record, f) for f in _FIELDS}


def weight_pixels(plan: Plan) -> Iterator[tuple[PackRecord, np.ndarray]]:
    """
    Each weight of the plan and its pixels, computed from the module (host ops, packing).
    A weight file that cannot be read, or a derived one whose content does not match its
    name, is the weight reader's error naming the file: nothing corrupt is packed.
    """
    values: dict = {}
    for record in plan.weights:
        host_value(record.source_value, values)
        yield record, pack_pixels(record, values[record.source_value])


def write_store(path: Path, plan: Plan, chunk_bytes: int = DEFAULT_CHUNK,
                progress=None) -> int:
    """
    Write the store of `plan`'s weights to `path` atomically (a temporary file renamed);
    returns its size. `progress(n)` is called with each weight's bytes.
    """
    return write_pixels(path, plan.function, plan.weights,
                        (pixels for _, pixels in weight_pixels(plan)), chunk_bytes, progress)


def write_pixels(path: Path, function: str, records: Sequence[PackRecord],
                 pixels: Iterable[np.ndarray], chunk_bytes: int = DEFAULT_CHUNK,
                 progress=None) -> int:
    """`write_store` of the weights `records` of `function`, whose pixels `pixels` gives in
    their order (computed one at a time, as they are written)."""
    path = Path(path)
    entries, offset = [], 0
    for record in records:
        nbytes = record.width * record.height * pixel_bytes(record.element_type)
        offset = -(-offset // ALIGN) * ALIGN
        entries.append({"name": record.value, **_entry(record), "offset": offset,
                        "nbytes": nbytes, "chunks": chunks_of(nbytes, chunk_bytes)})
        offset += nbytes
    header = json.dumps({"function": function, "chunk_bytes": chunk_bytes,
                         "weights": entries}).encode()
    start = -(-(len(MAGIC) + 8 + len(header)) // ALIGN) * ALIGN
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(header)) + header)
            for entry, array in zip(entries, pixels, strict=True):
                data = array.tobytes()
                assert len(data) == entry["nbytes"], entry["name"]
                f.seek(start + entry["offset"])
                f.write(data)
                if progress is not None:
                    progress(len(data))
            f.truncate(start + offset)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return start + offset


class WeightStore:
    """A weight store opened by memory map."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(MAGIC) + 8)
                if len(head) < len(MAGIC) + 8 or not head.startswith(MAGIC):
                    raise WeightStoreError(f"{self.path}: not a mobile-opt weight store")
                (size,) = struct.unpack("<Q", head[len(MAGIC):])
                header = json.loads(f.read(size))
        except OSError as e:
            raise WeightStoreError(f"{self.path}: cannot read: {e.strerror}") from None
        except (ValueError, UnicodeDecodeError):
            raise WeightStoreError(f"{self.path}: the store's header is corrupt") from None
        self.function = header["function"]
        self.chunk_bytes: int = header["chunk_bytes"]
        self.entries = {e["name"]: e for e in header["weights"]}
        start = -(-(len(MAGIC) + 8 + size) // ALIGN) * ALIGN
        end = max((e["offset"] + e["nbytes"] for e in self.entries.values()), default=0)
        if os.path.getsize(self.path) < start + end:
            raise WeightStoreError(f"{self.path}: the store is truncated")
        self.data = (np.memmap(self.path, np.uint8, "r", offset=start, shape=(end,))
                     if end else np.zeros(0, np.uint8))

    def check(self, plan: Plan) -> None:
        """Raise unless the store holds exactly `plan`'s weights, as the plan packs them."""
        names = {r.value for r in plan.weights}
        for record in plan.weights:
            entry = self.entries.get(record.value)
            if entry is None:
                raise WeightStoreError(f"{self.path}: written for another program: it has no "
                                       f"weight '{record.value}'")
            want = _entry(record)
            got = {f: entry[f] for f in _FIELDS}
            if got != want:
                field = next(f for f in _FIELDS if got[f] != want[f])
                raise WeightStoreError(
                    f"{self.path}: written for another program: weight '{record.value}' has "
                    f"{field} {got[field]}, the program {want[field]}")
        extra = sorted(set(self.entries) - names)
        if extra:
            raise WeightStoreError(f"{self.path}: written for another program: weight "
                                   f"'{extra[0]}' is not the program's")

    def bytes_of(self, name: str) -> np.ndarray:
        """A weight's packed bytes, from the map."""
        e = self.entries[name]
        return self.data[e["offset"]: e["offset"] + e["nbytes"]]

    def pixels(self, name: str) -> np.ndarray:
        """A weight's packed pixels, (height, width, 4), read from the map."""
        e = self.entries[name]
        dtype = np.float16 if e["element_type"] == "f16" else np.float32
        return self.bytes_of(name).view(dtype).reshape(e["height"], e["width"], 4)

    def chunk_range(self, name: str, k: int, chunk_bytes: int) -> tuple[int, int]:
        """Where bytes [k S, (k + 1) S) of a weight's pixels lie in `data` (S = `chunk_bytes`)."""
        e = self.entries[name]
        lo = e["offset"] + k * chunk_bytes
        return lo, min(lo + chunk_bytes, e["offset"] + e["nbytes"])

    def chunk(self, name: str, k: int, chunk_bytes: int) -> np.ndarray:
        """Chunk k of a weight's pixels, from the map."""
        lo, hi = self.chunk_range(name, k, chunk_bytes)
        return self.data[lo:hi]
