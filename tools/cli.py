"""
What every console tool shares: one-line diagnostics with exit status 1 for user
errors, output files that appear whole or not at all, and progress bars.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import fcntl
import os
import re
import shutil
import stat
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from typing import NoReturn
from pathlib import Path

from tqdm import tqdm
from xdsl.utils.exceptions import DiagnosticException, ParseError

from mobile_opt.backends.hexagon.harness import ToolchainError
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.frontend.errors import file_kind
from mobile_opt.frontend.onnx_import import OnnxImportError
from mobile_opt.dialects.weights import WeightStoreError
from mobile_opt.dialects.onnx.graph import printable
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


class UsageError(UserError):
    """Options that do not go together or a malformed option value; exit status 2, as
    argparse's own usage errors."""


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
    """An error's message as one line; control characters (from a name, a library's own
    message) escaped, so that none can forge a line or move the terminal's cursor."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if isinstance(error, ParseError) and len(lines) > 1:
        # xDSL puts "file:line:col" first and the message last
        return printable(f"{lines[0]}: {lines[-1]}")
    return printable(lines[0]) if lines else type(error).__name__


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


def _refusal(path: Path) -> str | None:
    """Why the entry at `path` may not be replaced by an output file; None where it may (it
    is absent or a regular file). Never opens it, so a FIFO or device is never touched."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        return e.strerror
    if stat.S_ISREG(mode):
        return None
    return file_kind(mode)


def output_folder(path: str | Path) -> Path:
    """
    The folder an output file goes to, after checking that the file may be written:
    absent or a regular file (a directory, symbolic link, FIFO, socket or device is
    refused), in a folder that exists. A UserError otherwise; call it before long work.
    """
    text = str(path)
    path = Path(path)
    if text.endswith(os.sep) or path.name in ("", ".", ".."):
        raise UserError(f"{text}: is a directory; not replaced")
    why = _refusal(path)
    if why is not None:
        raise UserError(f"{path}: {why}; not replaced")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"{path}: folder {folder} does not exist")
    return folder


def _mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: str | Path, text: str | bytes) -> None:
    """Write `path` through a temporary file in the same folder and a rename, where
    `output_folder` allows it."""
    path = Path(path)
    folder = output_folder(path)
    try:  # a file replaced keeps its permissions
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = _mode()
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise UserError(f"{path}: cannot write: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        os.unlink(tmp)
        if isinstance(e, OSError):
            raise UserError(f"{path}: cannot write: {e.strerror}") from None
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
    found = re.fullmatch(rf"\.?{re.escape(SCRATCH_PREFIX)}(\d+)\.(\d*)-\w+", name)
    return (int(found[1]), found[2]) if found else None


def _scratch_prefix() -> str:
    """The start of this run's scratch names: its process id and start, for `sweep_scratch`."""
    pid = os.getpid()
    return f"{SCRATCH_PREFIX}{pid}.{_process_start(pid) or ''}-"


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
    folder = Path(tempfile.mkdtemp(prefix=_scratch_prefix(), dir=root))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


MANIFEST = ".mobile-run"
"""The list of the files the last run wrote into a `--save-dir` folder, one per line."""


def check_save_dir(folder: str | Path) -> Path:
    """`--save-dir` before long work: a folder or absent, in a folder that exists."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--save-dir {folder}: not a folder")
    parent = folder.resolve().parent
    if not folder.exists() and not parent.is_dir():
        raise UserError(f"--save-dir {folder}: folder {parent} does not exist")
    return folder


@contextlib.contextmanager
def staged_save_dir(folder: str | Path) -> Iterator[Path]:
    """
    A fresh staging folder inside `folder` (made if absent) to write a run's files into.
    When the block ends without an error they replace the previous run's files as one set,
    under an exclusive lock of `folder` (a second run waits for it): the files the
    previous run's manifest lists and this run did not write go; files no run wrote stay.
    On an error the staging folder goes, with `folder` if this call made it.
    """
    folder = check_save_dir(folder)
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        sweep_scratch(folder)  # staging folders of runs killed before they could remove them
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=f".{_scratch_prefix()}"))
    except OSError as e:
        raise UserError(f"--save-dir {folder}: {e.strerror}") from None
    try:
        yield staging
        _install(folder, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _install(folder: Path, staging: Path) -> None:
    names = sorted(p.name for p in staging.iterdir())
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the close
        for name in (*names, MANIFEST):
            why = _refusal(folder / name)
            if why is not None:
                raise UserError(f"{folder / name}: {why}; not replaced")
        try:
            earlier = (folder / MANIFEST).read_text().split("\n")
        except (OSError, UnicodeDecodeError):
            earlier = []
        for name in names:
            os.replace(staging / name, folder / name)
        for name in set(earlier) - set(names):
            if name and "/" not in name and not name.startswith(".") \
                    and _refusal(folder / name) is None:
                (folder / name).unlink(missing_ok=True)
        manifest = staging / MANIFEST
        manifest.write_text("".join(f"{n}\n" for n in names))
        os.replace(manifest, folder / MANIFEST)
    except OSError as e:
        raise UserError(f"--save-dir {folder}: {e.strerror}") from None
    finally:
        os.close(fd)


def write_save_dir(folder: str | Path, files: dict[str, str | bytes]) -> None:
    """`files` (name to contents) into `folder` as one set (`staged_save_dir`)."""
    with staged_save_dir(folder) as staging:
        for name, data in files.items():
            (staging / name).write_bytes(data.encode() if isinstance(data, str) else data)


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
