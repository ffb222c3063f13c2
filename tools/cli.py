"""
What every console tool shares: one-line diagnostics with exit status 1 for user
errors, output files that appear whole or not at all, and progress bars.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm
from xdsl.utils.exceptions import DiagnosticException, ParseError

from mobile_opt.backends.hexagon.harness import ToolchainError
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.frontend.onnx_import import OnnxImportError
from mobile_opt.dialects.weights import WeightStoreError


class UserError(Exception):
    """A mistake in the tool's input or options; reported as one line."""


USER_ERRORS = (
    UserError,
    OnnxImportError,
    WeightStoreError,
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
    # pyopencl's two-line warning that a build said anything ("compilation done"); its
    # PYOPENCL_COMPILER_OUTPUT=1 still shows the output itself
    warnings.filterwarnings("ignore", message="Non-empty compiler output")
    try:
        status = body()
    except USER_ERRORS as e:
        print(f"{name}: error: {one_line(e)}", file=sys.stderr)
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


SCRATCH_PREFIX = "mobile-run-"


def _process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), None if there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:  # no /proc: alive or not, by a signal 0
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return ""
    return text.rpartition(")")[2].split()[19]  # field 22, after the command's name


def _scratch_owner(name: str) -> tuple[int, str] | None:
    found = re.fullmatch(rf"{re.escape(SCRATCH_PREFIX)}(\d+)\.(\d*)-\w+", name)
    return (int(found[1]), found[2]) if found else None


def sweep_scratch(root: Path) -> None:
    """Remove the scratch folders of this user's runs that are gone (killed, crashed)."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        owner = _scratch_owner(entry.name)
        if owner is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        started = _process_start(owner[0])
        if started is None or (started and owner[1] and started != owner[1]):
            shutil.rmtree(entry.path, ignore_errors=True)


def scratch_folder() -> Path:
    """
    A private temporary folder for one run's scratch files, removed at exit. A run that is
    killed cannot remove its own: the folder's name holds the run's process id and start,
    and every run first removes those of runs that are gone.
    """
    root = Path(tempfile.gettempdir())
    sweep_scratch(root)
    pid = os.getpid()
    folder = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{pid}.{_process_start(pid) or ''}-",
                                   dir=root))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


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
        if dims.get(name, int(value)) != int(value):
            raise UserError(f"--dim {name} is given twice, as {dims[name]} and {value}")
        dims[name] = int(value)
    return dims
