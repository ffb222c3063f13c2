"""
Whether an OpenCL runtime can run the compiler's kernels on this host, asked of a child
process so that a runtime whose compiler aborts or hangs takes the child down, not the tool.

pocl-binary-distribution carries LLVM 14: on AMD family 26 it refuses every build, and on
family 25 it builds a trivial kernel but aborts the whole process (`LLVM ERROR: Cannot
select ... fma`) on the real ones. So the child (this file run as a script: it imports
nothing of mobile_opt, only numpy and pyopencl) builds one program that uses what the
printed kernels use (the `cl_khr_fp16` preamble, `float16` accumulators and `fma` over
them, `vload16`/`vload4`/`vstore4`, `vload_half`/`vstore_half` half storage, `image2d_t`
reads and writes through the shared sampler, `__local` memory and barriers), runs each
kernel and checks its numbers against numpy. It prints one JSON line per device, before and
after its check, so that a child that dies names the device it died on.

`probe` runs the child for the runtime in one `.icd` library (or every runtime the ICD loader
sees); `ProbeCache` keeps the verdicts per runtime (library path, size and modification
time), CPU (vendor, family, model, stepping) and version of this file, so that a host pays
the probe once.

For tests only: MOBILE_OPT_PROBE_FAULT=abort|hang|wrong makes the child abort, hang or
report wrong numbers, as a broken runtime does; `abort:TEXT` (and so on) only on the devices
whose platform name, version or device name holds TEXT.
"""

from __future__ import annotations

from collections.abc import Iterator
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

FAULT_VARIABLE = "MOBILE_OPT_PROBE_FAULT"
TIMEOUT_S = 60.0
"""A child with no answer by then hangs (a first build of Intel's runtime takes seconds)."""

# the printed program's preamble, as `printer.py` writes it
SOURCE = r"""
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#else
#define half4 float4
#define read_imageh read_imagef
#define write_imageh write_imagef
#define convert_half4 convert_float4
#endif

__constant sampler_t SMP = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

// the wide conv's inner loop: float16 accumulators, fma over float16 vectors
__kernel void wide(__global float* restrict out, __global const float* restrict in,
                   __global const float* restrict weight, const int steps) {
  const int g = (int)get_global_id(0);
  float16 acc = vload16(0, weight);
  for (int i = 0; i < steps; i++) {
    const float4 x = vload4(g * steps + i, in);
    const float16 w = vload16(0, weight + 16 * (i + 1));
    acc = fma((float16)(x.x), w, acc);
    acc = fma((float16)(x.y), w, acc);
    acc.s0123 = fma(acc.s4567, (float4)(x.z), acc.s0123);
    acc.s8 = fma(x.w, acc.s9, acc.s8);
  }
  acc = fmax(acc, (float16)(0.0f));
  vstore4(acc.s0123, 4 * g, out);
  vstore4(acc.s4567, 4 * g + 1, out);
  vstore4(acc.s89ab, 4 * g + 2, out);
  vstore4(acc.scdef, 4 * g + 3, out);
}

// half storage in buffers: vload_half/vstore_half are core OpenCL
__kernel void halves(__global half* out, __global const half* in) {
  const int g = (int)get_global_id(0);
  const float4 v = vload_half4(g, in);
  vstore_half4(fma(v, v, (float4)(1.0f)), g, out);
  const float16 w = vload_half16(g, in + 64);
  vstore_half16(w * 2.0f, g, out + 64);
}

// images: float pixels, and half pixels through the preamble's fallbacks
__kernel void image(__write_only image2d_t out, __read_only image2d_t in,
                    __write_only image2d_t hout, __read_only image2d_t hin,
                    __global const float* restrict bias) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const float4 p = read_imagef(in, SMP, (int2)(x, y));
  write_imagef(out, (int2)(x, y), fma(p, vload4(x, bias), (float4)(0.5f)));
  const half4 q = read_imageh(hin, SMP, (int2)(x, y));
  write_imageh(hout, (int2)(x, y), q + convert_half4(p));
}

// local memory and barriers: a work group's sum and exp
__kernel void reduce(__global float* restrict out, __global const float* restrict in) {
  __local float tile[16];
  const int l = (int)get_local_id(0);
  tile[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    float s = 0.0f;
    for (int i = 0; i < 16; i++) s += tile[i];
    out[get_group_id(0)] = exp(s / 16.0f);
  }
}
"""


# child ------------------------------------------------------------------------------
def _check(name: str, got, want, rtol: float = 1e-5, atol: float = 1e-5) -> str | None:
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return f"wrong results: kernel '{name}' gave no finite result of the expected shape"
    error = np.abs(got - want)
    if np.any(error > atol + rtol * np.abs(want)):
        return f"wrong results: kernel '{name}' is off numpy by up to {float(error.max()):.3g}"
    return None


def _run_kernels(device, ident: list[str]) -> str | None:
    """The probe on one device: None, or what is wrong (a build error, wrong numbers)."""
    import numpy as np
    import pyopencl as cl

    fault, _, where = os.environ.get(FAULT_VARIABLE, "").partition(":")
    if where and not any(where in part for part in ident):
        fault = ""
    if fault == "abort":
        os.abort()
    if fault == "hang":
        while True:
            signal.pause()
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    try:
        program = cl.Program(context, SOURCE).build(devices=[device])
    except cl.Error as e:
        # the compiler's own first error line, else pyopencl's summary
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("error")]
        return "cannot build: " + (errors or lines or [type(e).__name__])[0]
    mf = cl.mem_flags
    rng = np.random.default_rng(0)

    def grid(shape, scale=8):  # values exact in half and in float sums
        return (rng.integers(-8, 9, size=shape) / scale).astype(np.float32)

    def to_device(array):
        return cl.Buffer(context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=array)

    problems = []
    # wide
    groups, steps = 8, 5
    x = grid((groups, steps, 4))
    w = grid((steps + 1, 16), scale=16)
    out = np.empty((groups, 16), np.float32)
    out_buf = cl.Buffer(context, mf.WRITE_ONLY, out.nbytes)
    program.wide(queue, (groups,), None, out_buf, to_device(x), to_device(w), np.int32(steps))
    cl.enqueue_copy(queue, out, out_buf)
    want = np.empty_like(out, dtype=np.float64)
    for g in range(groups):
        acc = w[0].astype(np.float64)
        for i in range(steps):
            acc = x[g, i, 0] * w[i + 1] + acc
            acc = x[g, i, 1] * w[i + 1] + acc
            acc[0:4] = acc[4:8] * x[g, i, 2] + acc[0:4]
            acc[8] = x[g, i, 3] * acc[9] + acc[8]
        want[g] = np.maximum(acc, 0)
    problems.append(_check("wide", out, want, rtol=1e-4))
    # halves
    h = grid(64 + 16 * 4).astype(np.float16)
    hout = np.empty_like(h)
    hout_buf = cl.Buffer(context, mf.WRITE_ONLY, hout.nbytes)
    program.halves(queue, (4,), None, hout_buf, to_device(h))
    cl.enqueue_copy(queue, hout, hout_buf)
    f = h.astype(np.float64)
    problems.append(_check("halves", np.concatenate([hout[:16], hout[64:]]),
                           np.concatenate([f[:16] * f[:16] + 1, f[64:] * 2])))
    # image
    width, height = 8, 4
    fmt32 = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    fmt16 = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.HALF_FLOAT)
    pixels = grid((height, width, 4))
    hpixels = grid((height, width, 4)).astype(np.float16)
    bias = grid((width, 4))
    image_in = cl.Image(context, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt32, (width, height),
                        hostbuf=pixels)
    himage_in = cl.Image(context, mf.READ_ONLY | mf.COPY_HOST_PTR, fmt16, (width, height),
                         hostbuf=hpixels)
    image_out = cl.Image(context, mf.WRITE_ONLY, fmt32, (width, height))
    himage_out = cl.Image(context, mf.WRITE_ONLY, fmt16, (width, height))
    program.image(queue, (width, height), None, image_out, image_in, himage_out, himage_in,
                  to_device(bias))
    got = np.empty_like(pixels)
    hgot = np.empty_like(hpixels)
    cl.enqueue_copy(queue, got, image_out, origin=(0, 0), region=(width, height))
    cl.enqueue_copy(queue, hgot, himage_out, origin=(0, 0), region=(width, height))
    problems.append(_check("image", got, pixels * bias[None] + 0.5))
    problems.append(_check("image (half)", hgot, hpixels.astype(np.float64) + pixels, 1e-3))
    # reduce
    values = grid(64)
    sums = np.empty(4, np.float32)
    sums_buf = cl.Buffer(context, mf.WRITE_ONLY, sums.nbytes)
    program.reduce(queue, (64,), (16,), sums_buf, to_device(values))
    cl.enqueue_copy(queue, sums, sums_buf)
    queue.finish()
    problems.append(_check("reduce", sums, np.exp(values.reshape(4, 16).mean(axis=1))))
    problem = next((p for p in problems if p), None)
    if fault == "wrong" and problem is None:
        problem = _check("wide", out + 1, out)
    return problem


def _identity(platform_, device) -> list[str]:
    return [platform_.name.strip(), platform_.version.strip(), device.name.strip()]


def platform_devices() -> Iterator[tuple[object, object]]:
    """Every (platform, device) the ICD loader sees, a platform two `.icd` files name once."""
    import pyopencl as cl

    try:
        platforms = cl.get_platforms()
    except cl.Error:  # an ICD loader that finds no platform raises
        return
    seen: set[int] = set()
    for platform_ in platforms:
        if platform_.int_ptr in seen:
            continue
        seen.add(platform_.int_ptr)
        try:
            devices = platform_.get_devices()
        except cl.Error:
            continue
        for device in devices:
            yield platform_, device


def child_main(argv: list[str]) -> int:
    """Probe every device of every platform the ICD loader sees, from device `argv[0]` on."""
    import warnings

    import pyopencl as cl

    warnings.simplefilter("ignore")  # pyopencl's compiler-output chatter
    start = int(argv[0]) if argv else 0
    index = 0
    for platform_, device in platform_devices():
        if index >= start:
            ident = _identity(platform_, device)
            print(json.dumps({"index": index, "device": ident}), flush=True)
            try:
                problem = _run_kernels(device, ident)
            except Exception as e:  # noqa: BLE001 - any failure is the runtime's verdict
                said = (str(e).strip().splitlines() or [""])[0]
                problem = f"{'OpenCL error' if isinstance(e, cl.Error) else type(e).__name__}" \
                    f": {said}"
            print(json.dumps({"index": index, "device": ident, "problem": problem}),
                  flush=True)
        index += 1
    print(json.dumps({"done": index}), flush=True)
    return 0


# parent -----------------------------------------------------------------------------
HUNG = "the probe hung"
@dataclass(frozen=True)
class Verdict:
    """One device's verdict: `problem` None when the probe passed."""

    device: tuple[str, str, str]  # platform name, platform version, device name
    problem: str | None

    def describe(self) -> str:
        return "safe" if self.problem is None else f"unsafe: {self.problem}"


def _death(returncode: int, stderr: str) -> str:
    """Why a child died, in one line: its signal, and the runtime's own last words."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = next((ln for ln in reversed(lines) if "ERROR" in ln or "error" in ln),
                lines[-1] if lines else "")
    if len(said) > 160:
        said = said[:157] + "..."
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        how = f"the runtime killed its process ({name})"
    else:
        how = f"the probe exited with status {returncode}"
    return f"{how}: {said}" if said else how


def probe(library: str | None, timeout: float = TIMEOUT_S) -> list[Verdict]:
    """
    The verdict on each device of the runtime in `library` (an `.icd` file's library, loaded
    alone), or of every runtime the ICD loader sees (None), from child processes.
    """
    env = dict(os.environ)
    if library is not None:
        env["OCL_ICD_VENDORS"] = library  # not a folder: the ICD loader loads this one library
    verdicts: list[Verdict] = []
    start = 0
    while True:
        command = [sys.executable, "-c",
                   "import runpy, sys; runpy.run_path(sys.argv.pop(1), run_name='__main__')",
                   __file__, str(start)]
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True,
                                  timeout=timeout, check=False)
            stdout, death = done.stdout, None
            if done.returncode != 0:
                death = _death(done.returncode, done.stderr)
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
            death = f"{HUNG} (no answer in {timeout:g} s)"
        started, finished = None, False
        for line in stdout.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            if "done" in record:
                finished = True
            elif "problem" in record:
                verdicts.append(Verdict(tuple(record["device"]), record["problem"]))
                started = None
            elif "device" in record:
                started = record
        if started is not None:  # it died on this device: go on with the next ones
            verdicts.append(Verdict(tuple(started["device"]),
                                    death or "the probe stopped on it"))
            start = started["index"] + 1
            continue
        if not finished and death:
            # it died before naming a device: nothing of this runtime is safe to use
            verdicts.append(Verdict(("", "", library or ""), death))
        return verdicts


def cpu_identity() -> str:
    """Vendor, family, model and stepping of this host's CPU (platform's words elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        text = ""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor is enough
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    wanted = [fields.get(k, "") for k in ("vendor_id", "cpu family", "model", "stepping")]
    if any(wanted):
        return " ".join(wanted)
    return f"{platform.machine()} {platform.processor()}".strip()


def library_fingerprint(library: str) -> str:
    """A library as the ICD loader finds it: its path, size and modification time."""
    path = Path(library)
    candidates = [path] if path.is_absolute() else [
        Path(folder) / library
        for folder in [*os.environ.get("LD_LIBRARY_PATH", "").split(":"), "/usr/local/lib",
                       f"/usr/lib/{sysconfig.get_config_var('MULTIARCH') or ''}",
                       "/usr/lib64", "/usr/lib", "/lib64", "/lib"]
        if folder
    ]
    for candidate in candidates:
        try:
            found = candidate.resolve()
            stat = found.stat()
        except OSError:
            continue
        return f"{found}:{stat.st_size}:{stat.st_mtime_ns}"
    return library


def _probe_version() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


class ProbeCache:
    """
    Verdicts kept in a small JSON file, per runtime and CPU. A file that is not ours to
    trust (corrupt, of another layout) is ignored and written anew; writes are atomic.
    """

    def __init__(self, path: Path | None):
        self.path = path

    def key(self, library: str | None) -> str:
        runtime = library_fingerprint(library) if library else "every runtime: " + \
            os.environ.get("OCL_ICD_VENDORS", "")
        parts = [runtime, cpu_identity(), _probe_version(), os.environ.get(FAULT_VARIABLE, "")]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]

    def _read(self) -> dict:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> list[Verdict] | None:
        entry = self._read().get(key)
        try:
            return [Verdict(tuple(d["device"]), d["problem"]) for d in entry["devices"]]
        except (TypeError, KeyError, ValueError):
            return None

    def put(self, key: str, library: str | None, verdicts: list[Verdict]) -> None:
        if self.path is None:
            return
        data = self._read()
        # entries of libraries gone (a removed virtual environment's) go too
        data = {k: v for k, v in data.items()
                if isinstance(v, dict) and not (str(v.get("library", "")).startswith("/")
                                                and not os.path.exists(v["library"]))}
        data[key] = {
            "library": library or "",
            "cpu": cpu_identity(),
            "devices": [{"device": list(v.device), "problem": v.problem} for v in verdicts],
        }
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1)
            os.replace(tmp, self.path)
        except OSError:
            pass  # an unwritable cache costs a probe next time, nothing more

    def verdicts(self, library: str | None, timeout: float = TIMEOUT_S) -> list[Verdict]:
        """The cached verdicts on `library`'s devices, probed first if there are none."""
        key = self.key(library)
        found = self.get(key)
        if found is None:
            found = probe(library, timeout)
            # a hang may be a loaded machine, not the runtime: asked again next time
            if not any(v.problem and v.problem.startswith(HUNG) for v in found):
                self.put(key, library, found)
        return found


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
