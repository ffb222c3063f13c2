"""
Choosing the OpenCL device to run on: `pocl` (the Portable Computing Language
platform, the default), `gpu` or `cpu` (the first such device of any platform), or any
substring of a platform or device name (`intel`, `AMD EPYC`, ...).

The Intel CPU runtime (`pip install intel-opencl-rt intel-cmplr-lib-rt`) brings
real `cl_khr_fp16`, but it installs its `.icd` file under the environment's
`etc/OpenCL/vendors`, where no ICD loader looks, naming a library path of its
build machine. `register_pip_vendors` writes a correct `.icd` for it into a cache
folder together with copies of the system's ones and pocl-binary-distribution's,
and points `OCL_ICD_VENDORS` there. The ICD loader reads that variable when the
first platform query runs, so it must happen before then (importing pyopencl is
fine); `available_devices` does it first.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

SYSTEM_VENDORS = Path("/etc/OpenCL/vendors")
POCL_PLATFORM = "Portable Computing Language"
DEBIAN_POCL_HINT = "apt-get install pocl-opencl-icd"
_BUILD_HINTS = {
    POCL_PLATFORM: f" (a newer PoCL knows this CPU: {DEBIAN_POCL_HINT}; or --device intel)"
}
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


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "mobile-opt" / "opencl-vendors"


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text() == text:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def register_pip_vendors() -> Path | None:
    """
    Make the pip-installed Intel CPU runtime visible next to the usual platforms:
    write `.icd` files for it, for PoCL and for each system vendor into one folder
    and set `OCL_ICD_VENDORS` to it. Does nothing when the runtime is absent or the
    user set `OCL_ICD_VENDORS`. Returns the folder.
    """
    if "OCL_ICD_VENDORS" in os.environ:
        return None
    intel = intel_cpu_runtime()
    if intel is None:
        return None
    icds = {"intel-cpu-pip.icd": f"{intel}\n"}
    pocl = pocl_runtime()
    if pocl is not None:
        icds["pocl-pip.icd"] = f"{pocl}\n"
    if SYSTEM_VENDORS.is_dir():
        for icd in sorted(SYSTEM_VENDORS.glob("*.icd")):
            try:
                icds.setdefault(icd.name, icd.read_text())
            except OSError:
                continue
    for folder in (_cache_dir(), Path(tempfile.gettempdir()) / f"mobile-opt-{os.getuid()}-icd"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for stale in folder.glob("*.icd"):
                if stale.name not in icds:
                    stale.unlink()
            for name, text in icds.items():
                _write_if_changed(folder / name, text)
        except OSError:
            continue
        os.environ["OCL_ICD_VENDORS"] = str(folder)
        return folder
    return None


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
    )


def available_devices() -> list[DeviceInfo]:
    """Every OpenCL device, once each (a platform two `.icd` files name counts once)."""
    register_pip_vendors()
    import pyopencl as cl

    try:
        platforms = cl.get_platforms()
    except cl.Error:  # an ICD loader that finds no platform raises
        return []
    seen: set[int] = set()
    found = []
    for platform in platforms:
        if platform.int_ptr in seen:
            continue
        seen.add(platform.int_ptr)
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        found += [_info(platform, d) for d in devices]
    return found


_TRIVIAL_KERNEL = "__kernel void probe(__global float *a) { a[get_global_id(0)] += 1.0f; }"
_build_problems: dict[int, str | None] = {}


def build_problem(info: DeviceInfo) -> str | None:
    """
    Why this device's compiler cannot build a trivial kernel, or None if it can.
    pocl-binary-distribution 3.0 carries LLVM 14, which does not know CPUs newer than
    its release (AMD family 26, say): it then asks for target CPU 'generic' and every
    build fails. Checked once per device and process.
    """
    key = info.device.int_ptr
    if key not in _build_problems:
        import pyopencl as cl

        try:
            context = cl.Context([info.device])
            cl.Program(context, _TRIVIAL_KERNEL).build()
            _build_problems[key] = None
        except cl.Error as e:
            # the compiler's own first error line, else pyopencl's summary
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            errors = [ln for ln in lines if ln.startswith("error")]
            _build_problems[key] = (errors or lines or [type(e).__name__])[0]
    return _build_problems[key]


def matches(info: DeviceInfo, spec: str) -> bool:
    """Whether `--device spec` names this device."""
    key = spec.strip().lower()
    if key == "pocl":
        return info.platform == POCL_PLATFORM
    if key in ("gpu", "cpu"):
        return key.upper() in info.kind
    return key in info.platform.lower() or key in info.name.lower()


def choose_device(spec: str = "pocl") -> DeviceInfo:
    """
    The first device `spec` names whose compiler works on this host, those whose
    platform it names first (on an Intel host PoCL's CPU device is named "...Intel(R)
    Xeon(R)...", but `intel` means Intel's runtime); a one-line `DeviceError` listing
    the devices otherwise.
    """
    devices = available_devices()
    named = sorted((info for info in devices if matches(info, spec)),
                   key=lambda info: spec.strip().lower() not in info.platform.lower())
    for info in named:
        if build_problem(info) is None:
            return info
    if named:
        raise DeviceError(
            f"{named[0].name} [{named[0].platform}] cannot build OpenCL on this host: "
            f"{build_problem(named[0])}{_BUILD_HINTS.get(named[0].platform, '')}"
        )
    listed = "; ".join(f"{d.name} [{d.platform}]" for d in devices) or "none"
    hint = ""
    if "intel" in spec.lower() and intel_cpu_runtime() is None:
        hint = f" (the Intel CPU runtime: {INTEL_HINT})"
    elif spec.lower() == "pocl":
        hint = " (pip install pocl-binary-distribution)"
    raise DeviceError(f"no OpenCL device matches '{spec}'{hint}; available: {listed}")


def default_device() -> tuple[DeviceInfo, str | None]:
    """
    The device a run takes when none is named: PoCL, or else the first CPU device
    that builds here, with a remark that says why PoCL was passed over.
    """
    try:
        return choose_device("pocl"), None
    except DeviceError as pocl_error:
        for info in available_devices():
            if matches(info, "cpu") and build_problem(info) is None:
                return info, f"{pocl_error}; running on {info.name} [{info.platform}] instead"
        raise
