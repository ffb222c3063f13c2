"""
Choosing the OpenCL device to run on: `pocl` (the Portable Computing Language
platform, the default), `gpu` or `cpu` (the first such device of any platform), or any
substring of a platform or device name (`intel`, `AMD EPYC`, ...).

A device is chosen only once a child process has run the compiler's kind of kernels on it
and checked their numbers (`runtime_probe.py`, its verdict cached per runtime and CPU): a
runtime whose compiler aborts (pip's PoCL on AMD family 25) or refuses this CPU (on family
26) is passed over, by default with a remark, on `--device` with an error that says what
to use instead.

The Intel CPU runtime (`pip install intel-opencl-rt intel-cmplr-lib-rt`) brings
real `cl_khr_fp16`, but it installs its `.icd` file under the environment's
`etc/OpenCL/vendors`, where no ICD loader looks, naming a library path of its
build machine. `register_pip_vendors` writes a correct `.icd` for it into a folder of this
environment's (keyed by `sys.prefix`, in the user's cache or a private temporary folder)
together with copies of the system's ones and pocl-binary-distribution's, and points
`OCL_ICD_VENDORS` there. The ICD loader reads that variable when the first platform query
runs, so it must happen before then (importing pyopencl is fine); `available_devices` does
it first.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shlex
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from mobile_opt.backends.opencl import runtime_probe

SYSTEM_VENDORS = Path("/etc/OpenCL/vendors")
POCL_PLATFORM = "Portable Computing Language"
DEBIAN_POCL_HINT = "apt-get install pocl-opencl-icd"
INTEL_HINT = "pip install intel-opencl-rt intel-cmplr-lib-rt"


class DeviceError(Exception):
    """No OpenCL device matches the request; the message lists those there are."""


@dataclass(frozen=True)
class DeviceInfo:
    """An OpenCL device and what the compiler needs to know of it."""

    device: object  # pyopencl.Device
    platform: str
    name: str
    kind: str  # "GPU", "CPU", ...
    max_image_width: int
    max_image_height: int
    fp16: bool
    platform_version: str = ""

    @property
    def identity(self) -> tuple[str, str, str]:
        """How a child process finds this device again (`runtime_probe.Verdict.device`)."""
        return (self.platform, self.platform_version, self.name)

    def describe(self) -> str:
        half = "cl_khr_fp16" if self.fp16 else "no cl_khr_fp16"
        return (
            f"{self.name} [{self.platform}] ({self.kind}; image2d up to "
            f"{self.max_image_width}x{self.max_image_height}; {half})"
        )


# ICD vendors -------------------------------------------------------------------------
def _installed_file(distribution: str, filename: str) -> Path | None:
    """Where `distribution` (a pip package) installed a file called `filename`, if it did."""
    try:
        files = metadata.files(distribution) or []
    except metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.name == filename:
            path = Path(entry.locate()).resolve()
            if path.is_file():
                return path
    return None


def intel_cpu_runtime() -> Path | None:
    """`libintelocl.so` of the pip-installed Intel CPU OpenCL runtime, if any."""
    found = _installed_file("intel-opencl-rt", "libintelocl.so")
    if found is not None:
        return found
    for prefix in {sys.prefix, sys.base_prefix}:
        candidate = Path(prefix) / "lib" / "libintelocl.so"
        if candidate.is_file():
            return candidate
    return None


def pocl_runtime() -> Path | None:
    """pocl-binary-distribution's `libpocl*.so` (it installs into pyopencl's `.libs`)."""
    icd = _installed_file("pocl-binary-distribution", "pocl.icd")
    if icd is None:
        return None
    library = icd.read_text().strip()
    path = Path(library) if os.path.isabs(library) else icd.parent / library
    return path if path.is_file() else None


def cache_folder() -> Path | None:
    """
    `mobile-opt` in the user's cache folder, if it is a folder of the user's that no one
    else can write (a folder planted there could hand the ICD loader a library to load).
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    folder = Path(base) / "mobile-opt"
    return folder if private_folder(folder, owner_only=False) else None


def private_folder(folder: Path, owner_only: bool = True) -> bool:
    """
    Whether `folder` (made if missing) is a real folder, no link, of this user's that no
    one else can write (its group may where it is the user's own, as umask 002 leaves
    it); with `owner_only`, that no one else can even read (mode 0700).
    """
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    if owner_only:
        return not info.st_mode & 0o077
    return not info.st_mode & (0o002 if info.st_gid == os.getgid() else 0o022)


def vendor_folders() -> list[Path]:
    """
    Where this interpreter's `.icd` files may go, best first: one folder per environment
    (`sys.prefix`), as two environments name different libraries.
    """
    tag = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    folders = []
    cache = cache_folder()
    if cache is not None:
        folders.append(cache / f"opencl-vendors-{tag}")
    folders.append(Path(tempfile.gettempdir()) / f"mobile-opt-{os.getuid()}-{tag}-icd")
    return folders


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text() == text:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


PREFIX_FILE = "prefix"
"""In each environment's vendor folder: the environment's `sys.prefix`."""


def _fill(folder: Path, icds: dict[str, str]) -> None:
    for stale in folder.glob("*.icd"):
        if stale.name not in icds:
            stale.unlink()
    for name, text in {**icds, PREFIX_FILE: sys.prefix}.items():
        _write_if_changed(folder / name, text)


def _sweep_vendor_folders(cache: Path) -> None:
    """Remove the vendor folders of environments that are gone (a removed venv's)."""
    for folder in cache.glob("opencl-vendors-*"):
        try:
            prefix = (folder / PREFIX_FILE).read_text()
            if not prefix or os.path.exists(prefix) or folder.is_symlink():
                continue
            for entry in [*folder.glob("*.icd"), folder / PREFIX_FILE]:
                entry.unlink()
            folder.rmdir()
        except OSError:
            continue


def register_pip_vendors() -> Path | None:
    """
    Make the pip-installed runtimes (Intel's CPU runtime, pocl-binary-distribution) visible
    next to the system's platforms: write `.icd` files for them and for each system vendor
    into this environment's folder and set `OCL_ICD_VENDORS` to it. Does nothing when
    neither is installed or the user set `OCL_ICD_VENDORS`. Returns the folder.
    """
    if "OCL_ICD_VENDORS" in os.environ:
        return None
    icds = {}
    intel = intel_cpu_runtime()
    if intel is not None:
        icds["intel-cpu-pip.icd"] = f"{intel}\n"
    pocl = pocl_runtime()
    if pocl is not None:
        icds["pocl-pip.icd"] = f"{pocl}\n"
    if not icds:
        return None
    if SYSTEM_VENDORS.is_dir():
        for icd in sorted(SYSTEM_VENDORS.glob("*.icd")):
            try:
                icds.setdefault(icd.name, icd.read_text())
            except OSError:
                continue
    cache = cache_folder()
    if cache is not None:
        _sweep_vendor_folders(cache)
    for folder in vendor_folders():
        # a folder someone else planted or can write is passed over, never filled
        if not private_folder(folder):
            continue
        try:
            _fill(folder, icds)
        except OSError:
            continue
        os.environ["OCL_ICD_VENDORS"] = str(folder)
        return folder
    try:  # a fresh private folder of this process's
        folder = Path(tempfile.mkdtemp(prefix="mobile-opt-icd-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _fill(folder, icds)
    except OSError:
        return None
    os.environ["OCL_ICD_VENDORS"] = str(folder)
    return folder


def runtime_libraries() -> list[str]:
    """The libraries the ICD loader loads: those `OCL_ICD_VENDORS` names, or the system's."""
    named = os.environ.get("OCL_ICD_VENDORS")
    if named and not os.path.isdir(named):
        return [named]  # one library
    folder = Path(named) if named else SYSTEM_VENDORS
    libraries = []
    for icd in sorted(folder.glob("*.icd")) if folder.is_dir() else []:
        try:
            library = icd.read_text().strip()
        except OSError:
            continue
        if library and library not in libraries:
            libraries.append(library)
    return libraries


# choosing ----------------------------------------------------------------------------
def _info(platform, device) -> DeviceInfo:
    import pyopencl as cl

    return DeviceInfo(
        device,
        platform.name.strip(),
        device.name.strip(),
        cl.device_type.to_string(device.type).replace("ALL | ", ""),
        int(device.image2d_max_width),
        int(device.image2d_max_height),
        "cl_khr_fp16" in device.extensions.split(),
        platform.version.strip(),
    )


def available_devices() -> list[DeviceInfo]:
    """Every OpenCL device, once each (a platform two `.icd` files name counts once)."""
    register_pip_vendors()
    return [_info(platform, device) for platform, device in runtime_probe.platform_devices()]


_verdicts: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}


def probe_verdict(info: DeviceInfo) -> tuple[str | None, str | None]:
    """
    The library that serves `info` (None where unknown) and why the compiler's kernels
    cannot run on it, or None if they can: the child-process probe of `runtime_probe.py`,
    its verdict cached per runtime and CPU, and per process here.
    """
    key = info.identity
    if key in _verdicts:
        return _verdicts[key]
    cache = runtime_probe.ProbeCache(
        None if (folder := cache_folder()) is None else folder / "device-probe.json")
    # the library whose name hints at the platform first: a first run probes few
    hint = "pocl" if info.platform == POCL_PLATFORM else re.match("[a-z]*",
                                                                  info.platform.lower())[0]
    libraries = sorted(runtime_libraries(), key=lambda lib: hint not in lib.lower())
    for library in [*libraries, None]:  # None: every runtime at once, where none matched
        verdicts = cache.verdicts(library)
        for verdict in verdicts:
            _verdicts.setdefault(verdict.device, (library, verdict.problem))
        if key in _verdicts:
            return _verdicts[key]
        if library is None and len(verdicts) == 1 and not any(verdicts[0].device[:2]):
            # the runtimes' probe died before naming any device
            _verdicts[key] = (None, verdicts[0].problem)
            return _verdicts[key]
    _verdicts[key] = (None, "the probe did not find it")
    return _verdicts[key]


def build_problem(info: DeviceInfo) -> str | None:
    """
    Why the compiler's kernels cannot run on this device (its compiler fails, aborts or
    hangs on them, or computes wrong numbers), or None if they can. Asked of a child
    process: no kernel is built in this one on a device that has not passed.
    """
    return probe_verdict(info)[1]


def matches(info: DeviceInfo, spec: str) -> bool:
    """Whether `--device spec` names this device."""
    key = spec.strip().lower()
    if key == "pocl":
        return info.platform == POCL_PLATFORM
    if key in ("gpu", "cpu"):
        return key.upper() in info.kind
    return key in info.platform.lower() or key in info.name.lower()


def _pocl_version(info: DeviceInfo) -> tuple[int, ...]:
    found = re.search(r"PoCL (\d+)\.(\d+)", info.platform_version)
    return tuple(int(g) for g in found.groups()) if found else ()


def _named(devices: list[DeviceInfo], spec: str) -> list[DeviceInfo]:
    """
    The devices `spec` names, those whose platform it names first (on an Intel host PoCL's
    CPU device is named "...Intel(R) Xeon(R)...", but `intel` means Intel's runtime); for
    `pocl`, the newest PoCL first (its LLVM knows more CPUs).
    """
    key = spec.strip().lower()
    named = [info for info in devices if matches(info, spec)]
    if key == "pocl":
        return sorted(named, key=_pocl_version, reverse=True)
    return sorted(named, key=lambda info: key not in info.platform.lower())


def device_option(info: DeviceInfo, devices: list[DeviceInfo]) -> str:
    """The shortest `--device` that picks `info` among `devices`."""
    for spec in ("pocl", "intel", "gpu", "cpu"):
        picked = next((d for d in _named(devices, spec) if build_problem(d) is None), None)
        if picked == info:
            return f"--device {spec}"
    return f"--device {shlex.quote(info.name)}"


def _is_pip_pocl(info: DeviceInfo) -> bool:
    library = probe_verdict(info)[0]
    pip = pocl_runtime()
    return library is not None and pip is not None and Path(library) == pip


def choose_device(spec: str = "pocl") -> DeviceInfo:
    """
    The first device `spec` names that passes the probe (`build_problem`); a one-line
    `DeviceError` otherwise, saying why and which device to use instead.
    """
    devices = available_devices()
    named = _named(devices, spec)
    for info in named:
        if build_problem(info) is None:
            return info
    if named:
        first = named[0]
        others = [d for d in devices if d not in named and "CPU" in d.kind] + \
            [d for d in devices if d not in named and "CPU" not in d.kind]
        instead = next((d for d in others if build_problem(d) is None), None)
        hints = [device_option(instead, devices)] if instead is not None else []
        if first.platform == POCL_PLATFORM and (instead is None
                                                or instead.platform != POCL_PLATFORM):
            hints.append(f"a PoCL that knows this CPU ({DEBIAN_POCL_HINT})")
        elif intel_cpu_runtime() is None:
            hints.append(f"Intel's CPU runtime ({INTEL_HINT})")
        label = "pip's PoCL" if _is_pip_pocl(first) else f"{first.name} [{first.platform}]"
        raise DeviceError(
            f"{label} cannot run the compiler's kernels on this host: "
            f"{build_problem(first)}; use {' or '.join(hints)} instead"
        )
    listed = "; ".join(f"{d.name} [{d.platform}]" for d in devices) or "none"
    hint = ""
    if "intel" in spec.lower() and intel_cpu_runtime() is None:
        hint = f" (the Intel CPU runtime: {INTEL_HINT})"
    elif spec.lower() == "pocl":
        hint = f" ({DEBIAN_POCL_HINT}, or pip install pocl-binary-distribution)"
    raise DeviceError(f"no OpenCL device matches '{spec}'{hint}; available: {listed}")


def named_or_default(spec: str | None) -> tuple[DeviceInfo, str | None]:
    """The device `spec` names (`choose_device`), or with none the default one
    (`default_device`), and the remark on that choice; DeviceError where there is none."""
    return (choose_device(spec), None) if spec is not None else default_device()


def default_device() -> tuple[DeviceInfo, str | None]:
    """
    The device a run takes when none is named: the newest PoCL that passes the probe, or
    else the first CPU device that does, with a one-line remark that says why PoCL was
    passed over.
    """
    devices = available_devices()
    pocls = _named(devices, "pocl")
    for info in pocls:
        if build_problem(info) is None:
            return info, None
    for info in devices:
        if "CPU" in info.kind and info not in pocls and build_problem(info) is None:
            if not pocls:
                why = "no PoCL device"
            else:
                what = "pip's PoCL" if _is_pip_pocl(pocls[0]) else f"PoCL ({pocls[0].name})"
                why = f"{what} cannot run on this CPU ({build_problem(pocls[0])})"
            return info, f"{why}; running on {info.name} [{info.platform}] instead"
    return choose_device("pocl"), None  # raises, saying why
