"""
The roofline report of an OpenCL run, the one that `mobile-run --profile-kernels` and
`--roofline` and `bench/e2e.py --roofline` give: per kernel launch, in program order, its
time, the GFLOP/s and GB/s it achieved, their share of the peaks of the device's profile
and the roof that bounds it (`models/roofline.py`), as a table, as JSON rows and as a
log-log roofline plot.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from mobile_opt.backends.opencl.plan import Plan
from mobile_opt.checking import format_table
from mobile_opt.models.device_profile import load_profile, profile_for_device
from mobile_opt.models.roofline import LaunchWork, Peaks, total
from mobile_opt.transforms.flashmem_plan import kernel_parts

NODE_WIDTH = 40
"""The most characters of a kernel's node label the table shows."""
LABELLED = 5
"""The slowest kernels the plot names."""


def device_peaks(device) -> tuple[Peaks | None, str | None]:
    """The peaks of the shipped profile that the GPU pipeline uses for `device` (a
    `DeviceInfo`), and its name; (None, None) where no profile ships for it."""
    name = profile_for_device(getattr(device, "name", ""), getattr(device, "platform", ""))
    if name is None:
        return None, None
    return Peaks.of_profile(load_profile(name)), name


def launch_works(plan: Plan, seconds: Sequence[float]) -> list[LaunchWork]:
    """Each launch of `plan` with its time (`seconds`, in launch order) and its work."""
    works = []
    for record, time in zip(plan.launches, seconds, strict=True):
        kinds = tuple(sorted({plan.slots[a["slot"]].kind for a in record.args}))
        works.append(LaunchWork(record.kernel, record.node, time, record.flops,
                                record.nbytes, kinds))
    return works


def op_type(work: LaunchWork) -> str:
    """The op type of the kernel's first node (a fused kernel's head): the plot's colour."""
    parts = kernel_parts(work.node)
    return parts[0][1] if parts else "other"


def _node(label: str) -> str:
    node = re.sub(r"node '([^']*)' ", r"\1 ", label)
    return node if len(node) <= NODE_WIDTH else node[: NODE_WIDTH - 3] + "..."


def _g(x: float | None) -> str:
    """Three significant digits, and every digit of the integer part past them."""
    return "-" if x is None else f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _share(x: float | None, peak: float | None) -> str:
    return "-" if x is None or not peak else f"{100 * x / peak:.1f}"


def row(work: LaunchWork, peaks: Peaks | None) -> dict:
    """One launch's figures as JSON: time, work, rates and, with peaks, their shares."""
    data = {"kernel": work.kernel, "node": work.node, "seconds": work.seconds,
            "flops": work.flops, "bytes": work.nbytes, "storage": list(work.kinds),
            "gflops": work.gflops, "gbs": work.gbs, "intensity": work.intensity}
    if peaks is not None:
        gflops, gbs = peaks.gflops, peaks.gbs(work.kinds)
        data.update(peak_gflops=gflops, peak_gbs=gbs,
                    gflops_share=work.gflops / gflops if work.gflops is not None and gflops
                    else None,
                    gbs_share=work.gbs / gbs if work.gbs is not None and gbs else None,
                    bound=work.bound(peaks))
    return data


def rows(works: Sequence[LaunchWork], peaks: Peaks | None) -> list[dict]:
    """The launches as JSON rows, in program order (the bench's results)."""
    return [row(w, peaks) for w in works]


def table(works: Sequence[LaunchWork], peaks: Peaks | None, profile: str | None) -> str:
    """
    The table: one row per launch in program order and a total row, then a line on the
    peaks behind the shares. Without a profile, or without its peak FLOP/s, the
    columns that need it are left out and a line says so.
    """
    flops_peak = peaks is not None and peaks.gflops is not None
    header = ["kernel", "onnx node(s)", "us", "GFLOP/s", "GB/s", "FLOP/B"]
    if flops_peak:
        header.append("% peak FLOP/s")
    if peaks is not None:
        header.append("% peak B/s")
    if flops_peak:
        header.append("bound")
    lines = [header]
    for work in [*works, total(works)] if works else []:
        cells = [work.kernel, _node(work.node), f"{work.seconds * 1e6:.1f}", _g(work.gflops),
                 _g(work.gbs), _g(work.intensity)]
        if flops_peak:
            cells.append(_share(work.gflops, peaks.gflops))
        if peaks is not None:
            cells.append(_share(work.gbs, peaks.gbs(work.kinds)))
        if flops_peak:
            cells.append(work.bound(peaks) or "-")
        lines.append(cells)
    notes = []
    if peaks is None:
        notes.append("no device profile ships for this device: no shares of its peaks")
    else:
        bandwidth = ", ".join(f"{k} {v:g}" for k, v in (("buffer", peaks.buffer_gbs),
                                                          ("texture", peaks.texture_gbs)) if v)
        if flops_peak:
            notes.append(f"peaks of profile '{profile}': {peaks.gflops:g} GFLOP/s fp32, "
                         f"GB/s {bandwidth or 'unmeasured'}")
        else:
            notes.append(f"profile '{profile}' has no peak FLOP/s (mobile-probe --only "
                         f"peak-flops --update): no % of peak FLOP/s or bound; GB/s "
                         f"{bandwidth or 'unmeasured'}")
    return format_table(lines) + "\n" + "\n".join(notes)


def plot_png(works: Sequence[LaunchWork], peaks: Peaks | None, title: str) -> bytes:
    """
    The roofline plot as a PNG: FLOP/byte against GFLOP/s on log axes, the compute roof
    and a memory roof per storage kind the profile measured, and a point per launch
    coloured by its op type, its area by its share of the time; the slowest are named.
    Launches without FLOPs have no place on a log axis: a corner note counts them, and
    says where the profile has no compute roof.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8.0, 5.2), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    shown = [w for w in works if w.intensity and w.gflops]
    spent = sum(w.seconds for w in works) or 1.0
    for kind in sorted({op_type(w) for w in shown}):
        group = [w for w in shown if op_type(w) == kind]
        axes.scatter([w.intensity for w in group], [w.gflops for w in group], label=kind,
                     s=[12 + 400 * w.seconds / spent for w in group], alpha=0.7)
    for w in sorted(shown, key=lambda w: -w.seconds)[:LABELLED]:
        axes.annotate(w.kernel, (w.intensity, w.gflops), xytext=(4, 4),
                      textcoords="offset points", fontsize="x-small")
    roofs = [] if peaks is None else [(name, gbs, style) for name, gbs, style in (
        ("buffer", peaks.buffer_gbs, "-"), ("texture", peaks.texture_gbs, "--")) if gbs]
    ridges = [peaks.gflops / gbs for _, gbs, _ in roofs if peaks.gflops]
    xs = [w.intensity for w in shown] + ridges or [1.0]
    low, high = min(xs) / 4, max(xs) * 4
    for name, gbs, style in roofs:  # each memory roof up to where it meets the compute roof
        end = min(peaks.gflops / gbs, high) if peaks.gflops else high
        axes.plot([low, end], [low * gbs, end * gbs], style, color="0.3", linewidth=1,
                  label=f"{name} {gbs:g} GB/s")
    if peaks is not None and peaks.gflops:
        axes.axhline(peaks.gflops, color="tab:red", linewidth=1,
                     label=f"fp32 peak {peaks.gflops:g} GFLOP/s")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high)
    axes.set_title(title, fontsize="medium")
    notes = []
    if peaks is None or not peaks.gflops:
        notes.append("no compute roof: the profile has no peak FLOP/s")
    if len(works) > len(shown):
        notes.append(f"not shown: {len(works) - len(shown)} launch(es) without FLOPs")
    if notes:
        axes.text(0.99, 0.01, "\n".join(notes), ha="right", va="bottom",
                  transform=axes.transAxes, fontsize="x-small", color="0.4")
    axes.set_xlabel("arithmetic intensity (FLOP/byte)")
    axes.set_ylabel("GFLOP/s")
    axes.grid(True, which="both", color="0.92")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    data = io.BytesIO()
    figure.savefig(data, format="png")
    return data.getvalue()
