"""
What every console tool shares: one-line diagnostics with exit status 1 for user
errors, output files that appear whole or not at all, and progress bars.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm
from xdsl.utils.exceptions import DiagnosticException, ParseError

from mobile_opt.backends.hexagon.harness import ToolchainError
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.frontend.onnx_import import OnnxImportError
from mobile_opt.dialects.weights import WeightStoreError
from mobile_opt.dialects.limits import (
    INT64_LIMIT,
    MAX_TENSOR_HELP,
    MAX_TENSOR_OPTION,
    LimitError,
    parse_size,
    set_max_tensor_bytes,
)


class UserError(Exception):
    """A mistake in the tool's input or options; reported as one line."""


USER_ERRORS = (
    UserError,
    OnnxImportError,
    WeightStoreError,
    LimitError,
    ReferenceRunError,
    ToolchainError,
    DiagnosticException,
    ParseError,
)


def one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if isinstance(error, ParseError) and len(lines) > 1:
        # xDSL puts "file:line:col" first and the message last
        return f"{lines[0]}: {lines[-1]}"
    return lines[0] if lines else type(error).__name__


def run_tool(name: str, body: Callable[[], int | None]) -> None:
    """Run a tool's body; user errors become `name: error: ...` and exit 1."""
    try:
        status = body()
    except USER_ERRORS as e:
        print(f"{name}: error: {one_line(e)}", file=sys.stderr)
        sys.exit(1)
    except MemoryError:
        # the limits (dialects/limits.py) size each stage alone; what they all hold at once
        # may still not fit
        print(f"{name}: error: out of memory: the run holds more than this machine has "
              f"(a lower {MAX_TENSOR_OPTION} refuses such models before they run)",
              file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        # the reader (e.g. `| head`) left: stop quietly, as a C tool would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    sys.exit(status or 0)


def output_folder(path: str | Path) -> Path:
    """The folder an output file goes to; a UserError if there is none (check before long work)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"{path}: folder {folder} does not exist")
    return folder


def write_atomically(path: str | Path, text: str | bytes) -> None:
    """Write `path` through a temporary file in the same folder and a rename."""
    path = Path(path)
    folder = output_folder(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def progress_bar(total: int, title: str, unit: str) -> tqdm:
    """A tqdm bar on stderr for `total` steps of long work (probing, tuning)."""
    # miniters=0: a note (update(0), see `noting`) redraws too, at most every mininterval
    return tqdm(total=total, desc=title, unit=unit, file=sys.stderr, miniters=0)


def noting(bar: tqdm) -> Callable[[str], None]:
    """A progress callback that shows what the current step is doing beside `bar`."""

    def note(what: str) -> None:
        bar.set_postfix_str(what, refresh=False)
        bar.update(0)

    return note


DIM_HELP = (
    "static size of a dynamic input dim: NAME=N sizes every input dim named NAME, "
    "INPUT:AXIS=N one axis of one input (a -1, '?' or unnamed dim); repeatable"
)
"""The `--dim` option's help, the same in every tool."""


def parse_dims(items: list[str] | None) -> dict[str, int]:
    """
    `--dim NAME=N` and `--dim INPUT:AXIS=N` options as a mapping from `NAME` or
    `INPUT:AXIS` to N; the importer says which names the model lacks.
    """
    dims: dict[str, int] = {}
    for item in items or []:
        name, _, value = item.rpartition("=")
        if not name or not value.isdigit() or int(value) < 1:
            raise UserError(f"--dim expects NAME=N or INPUT:AXIS=N with N >= 1, got '{item}'")
        if int(value) >= INT64_LIMIT:  # past the dialect's integers
            raise UserError(f"--dim {name}: N must be below 2^63, got {value}")
        if dims.get(name, int(value)) != int(value):
            raise UserError(f"--dim {name} is given twice, as {dims[name]} and {value}")
        dims[name] = int(value)
    return dims


def add_limit_option(parser: argparse.ArgumentParser) -> None:
    """The `--max-tensor-size` option (`dialects/limits.py`), the same in every tool."""
    parser.add_argument(MAX_TENSOR_OPTION, metavar="SIZE", help=MAX_TENSOR_HELP)


def apply_limit_option(args: argparse.Namespace) -> None:
    """Set the tensor limit from `--max-tensor-size`, if given (a one-line error if bad)."""
    size = getattr(args, "max_tensor_size", None)
    set_max_tensor_bytes(None if size is None else parse_size(size, MAX_TENSOR_OPTION))
