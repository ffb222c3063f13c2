"""
Files that appear whole or not at all: an output file written through a temporary one
and a rename (`write_atomically`), a folder of files replaced as one set under a lock
(`staged_save_dir`, what `Compiled.save` and `mobile-run --save-dir` write), and private
scratch folders that outlive no run (`scratch_folder`). Every refusal is a `UserError`.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mobile_opt.frontend.errors import UserError, file_kind


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
"""The list of the files the last run wrote into a save folder, one per line."""

SAVE_DIR = "--save-dir"
"""How messages name a save folder (`mobile-run`'s option); the API passes ''."""


def _named(option: str, folder: Path) -> str:
    return f"{option} {folder}" if option else str(folder)


def check_save_dir(folder: str | Path, option: str = SAVE_DIR) -> Path:
    """A save folder before long work: a folder or absent, in a folder that exists."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{_named(option, folder)}: not a folder")
    parent = folder.resolve().parent
    if not folder.exists() and not parent.is_dir():
        raise UserError(f"{_named(option, folder)}: folder {parent} does not exist")
    return folder


@contextlib.contextmanager
def staged_save_dir(folder: str | Path, option: str = SAVE_DIR) -> Iterator[Path]:
    """
    A fresh staging folder inside `folder` (made if absent) to write a run's files into.
    When the block ends without an error they replace the previous run's files as one set,
    under an exclusive lock of `folder` (a second run waits for it): the files the
    previous run's manifest lists and this run did not write go; files no run wrote stay.
    On an error the staging folder goes, with `folder` if this call made it.
    """
    folder = check_save_dir(folder, option)
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        sweep_scratch(folder)  # staging folders of runs killed before they could remove them
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=f".{_scratch_prefix()}"))
    except OSError as e:
        raise UserError(f"{_named(option, folder)}: {e.strerror}") from None
    try:
        yield staging
        _install(folder, staging, option)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _install(folder: Path, staging: Path, option: str) -> None:
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
        raise UserError(f"{_named(option, folder)}: {e.strerror}") from None
    finally:
        os.close(fd)


def write_save_dir(folder: str | Path, files: dict[str, str | bytes],
                   option: str = SAVE_DIR) -> None:
    """`files` (name to contents) into `folder` as one set (`staged_save_dir`)."""
    with staged_save_dir(folder, option) as staging:
        for name, data in files.items():
            (staging / name).write_bytes(data.encode() if isinstance(data, str) else data)
