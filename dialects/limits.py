"""
The size limits every stage holds tensors to before it allocates them.

A model file of a hundred bytes can declare a tensor of terabytes: an input of
`float[1000,1000,1000,1000]`, a `Tile` of 2^31 repeats, a `dense<1.0>` splat of
`tensor<800000x800000xf32>`. Each stage that would hold such a tensor (the importer and
its folding, the random inputs of checking, the reference interpreter, the OpenCL
buffers and images) checks its size here first, from the shape alone, and refuses with
one line that names the tensor, its size and the limit.

Two limits: the bytes of any one tensor (`max_tensor_bytes`), by default an eighth of
the machine's physical memory, and the bytes a whole run holds at once
(`max_run_bytes`), four times that (half the memory by default: a large model's weights
are many tensors). The tools' `--max-tensor-size SIZE` option, or the `MOBILE_OPT_MAX_TENSOR_BYTES` environment
variable, sets the tensor limit (and raises the run limit with it).

Sizes past the dialect's integer range (a dim or an element count of 2^63 or more, a
negative static dim) are refused the same way: they are no size at all.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

from xdsl.parser import Parser

MAX_TENSOR_ENV = "MOBILE_OPT_MAX_TENSOR_BYTES"
"""The environment variable that sets the tensor limit (a size such as 4GB, or bytes)."""
MAX_TENSOR_OPTION = "--max-tensor-size"
"""The tools' option that sets the tensor limit; it takes precedence over the variable."""
MAX_TENSOR_HELP = (
    "the most bytes any one tensor may hold, e.g. 4GB (default: an eighth of the "
    f"machine's memory; also ${MAX_TENSOR_ENV}); the whole run may hold four times that"
)
"""The option's help, the same in every tool."""

INT64_LIMIT = 1 << 63
"""Dims and element counts must stay below this: the dialect's integers are int64."""
TENSOR_SHARE = 8
"""The default tensor limit is physical memory over this: a run holds several copies
of a tensor (its value, onnxruntime's, the device's staging)."""
RUN_SHARE = 4
"""The run limit is the tensor limit times this."""

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(|B|KB|KIB|MB|MIB|GB|GIB|TB|TIB)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 1 << 10, "KIB": 1 << 10, "MB": 1 << 20, "MIB": 1 << 20,
          "GB": 1 << 30, "GIB": 1 << 30, "TB": 1 << 40, "TIB": 1 << 40}


class LimitError(Exception):
    """A size past a limit or past the integer range; one line that says which."""


def parse_size(text: str, option: str, most: int = INT64_LIMIT - 1) -> int:
    """
    '200MB', '1.5GB', '4096': bytes (KB, MB, GB and TB are powers of 1024), from 1 to
    `most`; a LimitError naming `option` otherwise.
    """
    m = _SIZE.match(text)
    expects = f"{option} expects a size such as 200MB or 1.5GB"
    if not m or float(m.group(1)) <= 0:
        raise LimitError(f"{expects}, not '{text}'")
    number, unit = m.group(1), _UNITS[m.group(2).upper()]
    # exact for integers, whatever their length; a float only where a fraction is given
    size = int(number) * unit if number.isdigit() else int(float(number) * unit)
    if not 0 < size <= most:
        raise LimitError(f"{expects}, at most {format_bytes(most)}, not '{text}'")
    return size


def format_bytes(n: int) -> str:
    """`3.7 GiB`: a size for a message."""
    for unit, shift in (("EiB", 60), ("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20),
                        ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def physical_memory() -> int:
    """The machine's physical memory in bytes (8 GiB where it cannot be read)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 8 << 30


_override: int | None = None


def set_max_tensor_bytes(size: int | None) -> None:
    """Set the tensor limit for this process (a tool's option); None: the default."""
    global _override
    _override = size


def max_tensor_bytes() -> int:
    """The most bytes any one tensor may hold: the option, the variable, or the default."""
    if _override is not None:
        return _override
    env = os.environ.get(MAX_TENSOR_ENV)
    if env:
        return parse_size(env, MAX_TENSOR_ENV)
    return physical_memory() // TENSOR_SHARE


def max_run_bytes() -> int:
    """The most bytes one run (folding, inputs, interpreting) may hold at once."""
    return RUN_SHARE * max_tensor_bytes()


def _source() -> str:
    """Where the limit in force comes from, for a message."""
    if _override is not None:
        return MAX_TENSOR_OPTION
    if os.environ.get(MAX_TENSOR_ENV):
        return MAX_TENSOR_ENV
    return f"default; set with {MAX_TENSOR_OPTION}"


def element_count(shape: Sequence[int], what: str) -> int:
    """
    The elements of a static shape; a LimitError naming `what` if a dim is negative or
    past int64, or if the count is.
    """
    for dim in shape:
        if not 0 <= dim < INT64_LIMIT:
            raise LimitError(
                f"{what}: shape {list(shape)} has dim {dim}, outside 0 to 2^63-1"
            )
    count = math.prod(shape)
    if count >= INT64_LIMIT:
        raise LimitError(
            f"{what}: shape {list(shape)} holds {count} elements, past the int64 range"
        )
    return count


def check_tensor(shape: Sequence[int], itemsize: int, what: str) -> int:
    """
    The bytes of a tensor of `shape` with elements of `itemsize` bytes; a LimitError
    naming `what` if that passes the tensor limit (or the shape is no size).
    """
    count = element_count(shape, what)
    return check_bytes(count * itemsize, f"{what}: {list(shape)} ({count} elements)")


def check_bytes(nbytes: int, what: str) -> int:
    """`nbytes`, or a LimitError saying `what` is over the tensor limit."""
    limit = max_tensor_bytes()
    if nbytes > limit:
        raise LimitError(
            f"{what} is {format_bytes(nbytes)}, over the limit of "
            f"{format_bytes(limit)} a tensor ({_source()})"
        )
    return nbytes


class RunTotal:
    """The bytes a run holds so far, against the run limit."""

    def __init__(self, what: str):
        self.what = what
        self.held = 0
        self.limit = max_run_bytes()

    def add(self, nbytes: int, what: str) -> None:
        """Count `nbytes` more, which `what` holds; a LimitError past the run limit."""
        self.held += nbytes
        if self.held > self.limit:
            raise LimitError(
                f"{what}: {format_bytes(nbytes)} more makes {self.what} hold "
                f"{format_bytes(self.held)}, over the limit of {format_bytes(self.limit)} a run "
                f"({_source()})"
            )


class LimitedParser(Parser):
    """xDSL's parser, refusing a `dense<...>` literal past the tensor limit before it
    materialises its elements (a splat is expanded as it is parsed)."""

    def _parse_dense_literal_type(self):
        start = self.pos
        type = super()._parse_dense_literal_type()
        try:
            check_tensor(type.get_shape(), element_bytes(type.element_type), "dense literal")
        except LimitError as e:
            self.raise_error(str(e), start, self.pos)
        return type


def element_bytes(element: object) -> int:
    """Bytes of one element of an xDSL element type (8 where it has no fixed size)."""
    size = getattr(element, "compile_time_size", None)
    return size if isinstance(size, int) and size > 0 else 8


__all__ = [
    "INT64_LIMIT",
    "LimitError",
    "LimitedParser",
    "MAX_TENSOR_ENV",
    "MAX_TENSOR_HELP",
    "MAX_TENSOR_OPTION",
    "RunTotal",
    "check_bytes",
    "check_tensor",
    "element_bytes",
    "element_count",
    "format_bytes",
    "max_run_bytes",
    "max_tensor_bytes",
    "parse_size",
    "set_max_tensor_bytes",
]
