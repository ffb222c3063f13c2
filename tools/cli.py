"""
What every console tool shares: one-line diagnostics with exit status 1 for user
errors (`UserError`, the API's one error type), output files that appear whole or not
at all (`api/files.py`), option parsing and progress bars.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable
from typing import NoReturn

from tqdm import tqdm

# the API's error and file machinery, which every tool shares; named here for the tools
from mobile_opt.api.errors import USER_ERRORS, one_line  # noqa: F401
from mobile_opt.api.files import (  # noqa: F401
    MANIFEST,
    SCRATCH_PREFIX,
    check_save_dir,
    output_folder,
    scratch_folder,
    staged_save_dir,
    sweep_scratch,
    write_atomically,
    write_save_dir,
)
from mobile_opt.dialects.limits import (
    INT64_LIMIT,
    MAX_TENSOR_HELP,
    MAX_TENSOR_OPTION,
    LimitError,
    parse_size,
    set_max_tensor_bytes,
)
from mobile_opt.frontend.errors import UserError


class UsageError(UserError):
    """Options that do not go together or a malformed option value; exit status 2, as
    argparse's own usage errors."""


def run_tool(name: str, body: Callable[[], int | None]) -> None:
    """Run a tool's body; user errors become `name: error: ...` and exit 1 (2 for usage)."""
    # pyopencl's two-line warning that a build said anything ("compilation done"); its
    # PYOPENCL_COMPILER_OUTPUT=1 still shows the output itself
    warnings.filterwarnings("ignore", message="Non-empty compiler output")
    try:
        status = body()
    except UsageError as e:
        print(f"{name}: error: {one_line(e)}", file=sys.stderr)
        sys.exit(2)
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


class ToolParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, `tool: error: ...`, exit 2."""

    def error(self, message: str) -> NoReturn:
        tool = self.prog.split()[0]  # a subcommand's parser is `tool sub`
        message = " ".join(message.split("\n"))
        self.exit(2, f"{tool}: error: {message}\n")


def seed(text: str) -> int:
    """A `--seed` option's value: a count from 0 (numpy's generators take no other)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expects a whole number from 0 to 2^32-1, got '{text}'")
    return value


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
            raise UsageError(f"--dim expects NAME=N or INPUT:AXIS=N with N >= 1, got '{item}'")
        if int(value) >= INT64_LIMIT:  # past the dialect's integers
            raise UsageError(f"--dim {name}: N must be below 2^63, got {value}")
        if dims.get(name, int(value)) != int(value):
            raise UsageError(f"--dim {name} is given twice, as {dims[name]} and {value}")
        dims[name] = int(value)
    return dims


def add_limit_option(parser: argparse.ArgumentParser) -> None:
    """The `--max-tensor-size` option (`dialects/limits.py`), the same in every tool."""
    parser.add_argument(MAX_TENSOR_OPTION, metavar="SIZE", help=MAX_TENSOR_HELP)


def apply_limit_option(args: argparse.Namespace) -> None:
    """Set the tensor limit from `--max-tensor-size`, if given (a one-line error if bad)."""
    size = getattr(args, "max_tensor_size", None)
    set_max_tensor_bytes(None if size is None else option_size(size, MAX_TENSOR_OPTION))


def option_size(text: str, option: str, most: int | None = None) -> int:
    """An option's size ('200MB', '1.5GB'); a malformed or too large one is a usage error."""
    try:
        return parse_size(text, option) if most is None else parse_size(text, option, most)
    except LimitError as e:
        raise UsageError(str(e)) from None
