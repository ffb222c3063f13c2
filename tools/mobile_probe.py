"""
`mobile-probe --device SEL -o profile.json [--plots DIR] [--quick]`: measure an OpenCL
device with ArchProbe's (Romou §3.1) and TMModel's (§3) micro-benchmarks, its peak fp32
FLOP/s (the roofline's compute roof) and the load capacity of its kernels (FlashMem
§4.2), and write its device profile
(`models/device_profile.py`), the file `texture-tile`, the other GPU passes and the
FlashMem planner read. `--plots DIR` also writes a PNG of every sweep. `--quick` runs
short sweeps (a first look, and the tests); `--only` runs some probes (the others are
left out of the profile); with `--update`, the probes run replace their readings in the
existing profile `-o` names, whose other readings stay.

The device is chosen as `mobile-run --device` chooses it: `pocl` (default), `gpu`,
`cpu` or a substring of a platform or device name.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import platform
import sys
import time
from pathlib import Path

import pyopencl as cl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from tqdm import tqdm

from mobile_opt.backends.opencl.devices import DeviceError, choose_device
from mobile_opt.backends.opencl.probe import archprobe, loadprobe, tmprobe
from mobile_opt.backends.opencl.probe.archprobe import Effort
from mobile_opt.models.device_profile import SCHEMA, describes
from mobile_opt.backends.opencl.probe.runner import ProbeError, Runner
from mobile_opt.backends.opencl.probe.sweep import Sweep
from mobile_opt.frontend.errors import check_input_file
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.tools import kernel_groups, tuning
from mobile_opt.tools.cli import (
    UsageError,
    UserError,
    noting,
    ToolParser,
    output_folder,
    progress_bar,
    run_tool,
    write_atomically,
)

PROBES = ("warp", "alus", "registers", "buffer-cache", "image-cache", "bandwidth",
          "peak-flops", "stride-chase", "scalability", "occupancy", "work-groups", "kernel-groups",
          "load-capacity")


def measure(runner: Runner, effort: Effort, only: set[str], bar: tqdm):
    """Run the probes; returns the results by probe and every sweep."""
    results: dict[str, dict] = {}
    sweeps: list[Sweep] = []
    warp = 1

    def run(name: str, probe) -> None:
        nonlocal warp
        if name not in only:
            return
        bar.set_postfix_str(name)
        found, result = probe()
        bar.update()
        sweeps.extend(found if isinstance(found, list) else [found])
        results[name] = result
        if name == "warp":
            warp = result["warp_size"]

    tick = noting(bar)
    run("warp", lambda: archprobe.probe_warp(runner, effort, tick))
    run("alus", lambda: archprobe.probe_alus(runner, effort, warp, tick))
    run("registers", lambda: archprobe.probe_registers(runner, effort, tick))
    run("buffer-cache", lambda: archprobe.probe_buffer_cache(runner, effort, tick))
    run("image-cache", lambda: archprobe.probe_image_cache(runner, effort, tick))
    run("bandwidth", lambda: archprobe.probe_bandwidths(runner, effort, tick))
    run("peak-flops", lambda: archprobe.probe_peak_flops(runner, effort, tick))
    run("stride-chase", lambda: tmprobe.probe_stride_chase(runner, effort, tick))
    run("scalability", lambda: tmprobe.probe_scalability(runner, effort, warp, tick))
    run("occupancy", lambda: tmprobe.probe_occupancy(runner, effort, warp, tick))
    run("work-groups", lambda: tmprobe.probe_work_groups(runner, effort, tick))
    run("kernel-groups", lambda: kernel_groups.probe_kernel_groups(runner, effort, tick))
    run("load-capacity", lambda: loadprobe.probe_load_capacity(
        runner, effort, lambda path: tuning.build(import_onnx(path), runner.info), tick))
    return results, sweeps


def assemble(runner: Runner, results: dict[str, dict], sweeps: list[Sweep], seconds: float,
             quick: bool) -> dict:
    """The profile JSON from the probes' results."""
    device = runner.device
    info = runner.info
    registers = results.get("registers", {})
    alus = results.get("alus", {})
    warp = results.get("warp", {})
    per_item = registers.get("registers_per_item")
    register_file = registers.get("register_file")
    # None where the register probe did not run (an update keeps the earlier reading)
    estimated = (register_file is None) if registers else None
    if estimated:  # no step within the sweep: at least what was swept, for every lane
        register_file = (per_item or registers["registers_swept_to"]) * alus.get(
            "alus_per_core", device.max_work_group_size)
    chase = results.get("stride-chase", {})
    scaling = results.get("scalability", {})
    return {
        "schema": SCHEMA,
        "identity": {
            "name": info.name, "platform": info.platform, "kind": info.kind,
            "driver": device.driver_version, "opencl": device.version,
            "source": "measured", "effort": "quick" if quick else "full",
            "date": datetime.date.today().isoformat(), "host": platform.node(),
            "probe_seconds": round(seconds, 1),
        },
        "image": {"max_width": info.max_image_width, "max_height": info.max_image_height,
                  "fp16": info.fp16},
        "compute": {
            "cores": device.max_compute_units,
            "warp_size": warp.get("warp_size"),
            "alus_per_core": alus.get("alus_per_core"),
            "registers_per_item": per_item,
            "registers_per_core": register_file,
            "registers_per_core_estimated": estimated,
            "max_work_group_size": device.max_work_group_size,
            "local_memory_bytes": device.local_mem_size,
            "peak_gflops": results.get("peak-flops", {}).get("peak_gflops"),
        },
        "caches": {"texture": results.get("image-cache"), "buffer": results.get("buffer-cache")},
        "bandwidth_gbs": results.get("bandwidth"),
        "tmmodel": {
            "features": chase.get("features"), "beta": chase.get("beta"),
            "fit_error": chase.get("fit_error"), "held_out_error": chase.get("held_out_error"),
            "thrash_factor": scaling.get("thrash_factor"),
            "cache_lines": scaling.get("cache_lines"),
            "thrash_fit_residual": scaling.get("fit_residual"),
            "single_thread_ns": scaling.get("single_thread_ns"),
            "occupancy": results.get("occupancy"),
            "work_groups": results.get("work-groups"),
            "kernel_groups": results.get("kernel-groups"),
            "chase_samples": chase.get("samples"),
        },
        "load_capacity": results.get("load-capacity"),
        "details": {k: v for k, v in results.items()
                    if k not in ("stride-chase", "load-capacity")},
        "sweeps": {s.name: s.to_json() for s in sweeps},
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = ToolParser(prog="mobile-probe", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="pocl", help="OpenCL device (default: pocl)")
    parser.add_argument("-o", "--output", required=True, help="profile JSON to write")
    parser.add_argument("--plots", help="folder for a PNG of every sweep")
    parser.add_argument("--quick", action="store_true", help="short sweeps")
    parser.add_argument("--only", help=f"comma-separated probes of: {', '.join(PROBES)}")
    parser.add_argument("--update", action="store_true",
                        help="put the probes' readings into the existing profile -o names")
    return parser.parse_args(argv)


def overlay(earlier: dict, fresh: dict) -> dict:
    """
    `earlier` with, section by section, every reading `fresh` has (not None) in its
    place. A reading is replaced whole: a sweep measured again over other shapes leaves
    none of the earlier shapes behind.
    """
    merged = dict(earlier)
    for key, value in fresh.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **{k: v for k, v in value.items() if v is not None}}
        elif value is not None:
            merged[key] = value
    return merged


def profile_to_update(path: str, info) -> dict:
    """The existing profile `--update` puts readings into: of this device, readable."""
    try:
        earlier = json.loads(check_input_file(path).read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"--update {path}: {e}") from None
    if not (isinstance(earlier, dict) and isinstance(earlier.get("identity"), dict)
            and all(isinstance(earlier.get(s, {}), dict) for s in QUERIED)
            and isinstance(earlier["identity"].get("reprobed", {}), dict)):
        raise UserError(f"--update {path}: not a device profile (an object with an "
                        "identity, as mobile-probe writes)")
    identity = earlier["identity"]
    if not describes(identity, info.name, info.platform):
        raise UserError(f"--update {path}: a profile of {identity.get('name')}, "
                        f"not of {info.name}")
    return earlier


QUERIED = {"image": ("max_width", "max_height", "fp16"),
           "compute": ("cores", "max_work_group_size", "local_memory_bytes")}
"""Facts read from the driver rather than measured: no probe's reading."""


def updated(earlier: dict, fresh: dict, probes: list[str]) -> tuple[dict, list[str]]:
    """
    `earlier` with the readings of `probes` from `fresh` in their place, and the
    facts the driver reports that differ on the device at hand (the profile keeps the
    earlier ones: an update re-measures probes, it does not move a profile to a host).
    """
    differ = []
    for section, keys in QUERIED.items():
        for key in keys:
            was, now = earlier.get(section, {}).get(key), fresh[section].pop(key, None)
            if was != now:
                differ.append(f"{section}.{key} {was} (here {now})")
    merged = overlay(earlier, {k: v for k, v in fresh.items() if k not in ("identity", "image")})
    identity = earlier["identity"]
    date = fresh["identity"]["date"]
    merged["identity"] = dict(identity, reprobed={**identity.get("reprobed", {}),
                                                  **{name: date for name in probes}})
    return merged, differ


def main(argv: list[str] | None = None) -> None:
    run_tool("mobile-probe", lambda: probe(parse_args(argv)))


def probe(args: argparse.Namespace) -> int:
    only = set(PROBES)
    if args.only:
        only = {name.strip() for name in args.only.split(",") if name.strip()}
        unknown = sorted(only - set(PROBES))
        if unknown or not only:
            raise UsageError(f"--only: no probe {', '.join(unknown) or 'named'} "
                            f"(probes: {', '.join(PROBES)})")
    output_folder(args.output)
    plots = Path(args.plots) if args.plots else None
    if plots is not None and plots.exists() and not plots.is_dir():
        raise UserError(f"--plots {plots}: not a folder")
    try:
        info = choose_device(args.device)
    except DeviceError as e:
        raise UserError(str(e)) from None
    earlier = profile_to_update(args.output, info) if args.update else None
    start = time.time()
    bar = progress_bar(len([p for p in PROBES if p in only]), f"probing {info.name}", "probe")
    try:
        runner = Runner(info)
        results, sweeps = measure(runner, Effort(quick=args.quick), only, bar)
    except (ProbeError, cl.Error) as e:
        raise UserError(f"{info.name}: {e}") from None
    finally:
        bar.close()
    profile = assemble(runner, results, sweeps, time.time() - start, args.quick)
    if earlier is not None:
        profile, differ = updated(earlier, profile, [p for p in PROBES if p in only])
        if differ:
            print(f"remark: kept the profile's driver facts where this {info.name} differs: "
                  + ", ".join(differ), file=sys.stderr)
    if plots is not None:
        plots.mkdir(parents=True, exist_ok=True)
        for sweep in sweeps:
            write_atomically(plots / f"{sweep.name}.png", plot(sweep))
    write_atomically(args.output, json.dumps(profile, indent=1) + "\n")
    print(summary(profile))
    return 0


def plot(sweep: Sweep) -> bytes:
    """The sweep as a PNG: a line with markers per series, a dashed line per mark."""
    figure = Figure(figsize=(7.2, 4.4), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for name, points in sweep.series.items():
        # a log axis has no place for zero or negative values
        kept = [(x, y) for x, y in points if (x > 0 or not sweep.log_x)
                and (y > 0 or not sweep.log_y)]
        axes.plot([x for x, _ in kept], [y for _, y in kept], marker=".", label=name)
    if sweep.log_x:
        axes.set_xscale("log", base=2)
    if sweep.log_y:
        axes.set_yscale("log")
    for x, label in sweep.marks:
        axes.axvline(x, color="tab:red", linestyle="--", linewidth=1)
        axes.annotate(label, (x, 1), xycoords=("data", "axes fraction"), xytext=(3, -12),
                      textcoords="offset points", color="tab:red", fontsize="small")
    axes.set_title(sweep.title)
    axes.set_xlabel(sweep.x_label)
    axes.set_ylabel(sweep.y_label)
    axes.grid(True, color="0.9")
    if sweep.series:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    data = io.BytesIO()
    figure.savefig(data, format="png")
    return data.getvalue()


def summary(profile: dict) -> str:
    c, t = profile["compute"], profile["tmmodel"]
    lines = [f"{profile['identity']['name']}: {profile['identity']['probe_seconds']} s of probing",
             f"  warp {c['warp_size']}, {c['alus_per_core']} lanes per core x {c['cores']} cores, "
             f"registers per item {c['registers_per_item']}, per core {c['registers_per_core']}"]
    for kind in ("texture", "buffer"):
        cache = profile["caches"].get(kind)
        if cache:
            lines.append(f"  {kind} caches {cache['sizes']} B, line {cache['line']} B")
    if c.get("peak_gflops"):
        lines.append(f"  peak fp32 {c['peak_gflops']} GFLOP/s (fma chains)")
    if profile["bandwidth_gbs"]:
        lines.append("  bandwidth GB/s " + ", ".join(
            f"{k} {v}" for k, v in profile["bandwidth_gbs"].items()))
    if t.get("beta"):
        lines.append(f"  TMModel beta fit error {t['fit_error']:.1%} "
                     f"(held out {t['held_out_error']:.1%})")
    if t.get("thrash_factor") is not None:
        lines.append(f"  TMModel D {t['thrash_factor']:.3f}, C {t['cache_lines']} lines")
    load = profile.get("load_capacity")
    if load:
        lines.append(f"  load capacity (at most {load['threshold']:.0%} slower), extra bytes per "
                     "input byte: " + ", ".join(f"{c} {r:.3g}" for c, r in load["ratios"].items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
