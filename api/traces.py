"""
The trace of an OpenCL run, the one `mobile-run --trace` and `--trace-png` write: the
run's timeline (`backends/opencl/trace.py`) as Chrome trace-event JSON (`write_trace`), for
https://ui.perfetto.dev or chrome://tracing, and as a PNG drawn with matplotlib (one lane
per track, its commands and host work as bars, the allocator's bytes as a line).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mobile_opt.backends.opencl.plan import Plan
from mobile_opt.backends.opencl.trace import COUNTER, chrome_trace
from mobile_opt.api.files import write_atomically
from mobile_opt.frontend.errors import UserError
from mobile_opt.transforms.flashmem_plan import kernel_parts

if TYPE_CHECKING:
    from mobile_opt.backends.opencl.executor import RunResult


def write_trace(path: str | Path | None, result: RunResult | None, plan: Plan, model: str,
                device: str, other: dict[str, Any] | None = None) -> dict[str, Any]:
    """
    The Chrome trace-event JSON of one traced run, for https://ui.perfetto.dev or
    chrome://tracing; `Compiled.trace` calls it for the last run.

    Args:
        path: Where to write it as JSON, whole or not at all (a directory, symbolic
            link or special file there is refused); None writes nothing.
        result: The run's result, of a run with `trace=True`.
        plan: The host plan the run followed.
        model: The model's name, for the trace's process name (`MODEL on DEVICE`).
        device: The device's name, likewise.
        other: More entries for the trace's `otherData`.

    Returns:
        The trace, as the JSON it writes.

    Raises:
        UserError: The run was not traced, or `path` cannot be written.
    """
    if result is None or result.timeline is None:
        raise UserError("the run was not traced: run it with trace=True")
    data = {"model": model, "device": device, "launches": len(plan.launches),
            "streamed_weights": len(plan.streams), "plan_memory": plan.memory(),
            **(other or {})}
    trace = chrome_trace(result.timeline, f"{model} on {device}", data)
    if path is not None:
        write_atomically(path, json.dumps(trace, separators=(",", ":")) + "\n")
    return trace


COLOURS = {"pack": "tab:blue", "upload": "tab:cyan", "gather": "tab:cyan",
           "download": "tab:olive", "unpack": "tab:olive", "load": "tab:orange",
           "transform": "tab:orange", "wait": "0.55", "settle": "tab:pink",
           "allocate": "black", "release": "0.3", "enqueue": "0.85"}
"""Each category's colour; kernels take one per op type (`KERNEL_COLOURS`)."""
KERNEL_COLOURS = ("tab:green", "tab:purple", "tab:red", "tab:brown", "navy",
                  "darkgreen", "indigo", "firebrick", "teal", "goldenrod")


def _op_type(event: dict) -> str:
    parts = kernel_parts(event.get("args", {}).get("onnx_nodes", ""))
    return parts[0][1] if parts else "kernel"


def plot_png(trace: dict[str, Any]) -> bytes:
    """
    A trace drawn as a PNG image: a lane per track (host, compute queue, copy queue),
    each event a bar (the host's nested work a thinner bar inside its parent; the whole
    run is left out), kernels coloured by the op type of their first node, the rest by
    category; below, the allocator's resident bytes over time.

    Args:
        trace: A trace as `write_trace` or `Compiled.trace` returns it.

    Returns:
        The PNG file's bytes.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    title = next((e["args"]["name"] for e in events if e["name"] == "process_name"), "")
    tids = sorted(names)
    lane = {tid: len(tids) - 1 - i for i, tid in enumerate(tids)}  # the host on top
    figure = Figure(figsize=(10.0, 4.2), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    bars, memory = figure.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    ops = sorted({_op_type(e) for e in events if e.get("cat") == "kernel"})
    kernel_colour = {op: KERNEL_COLOURS[i % len(KERNEL_COLOURS)] for i, op in enumerate(ops)}
    used: dict[str, str] = {}
    end = max((e["ts"] + e.get("dur", 0) for e in events), default=0.0)
    thinnest = end / 1e3 / 1500  # ms: about a pixel, so that short copies still show
    for tid in tids:
        spans = sorted((e for e in events if e["ph"] == "X" and e["tid"] == tid
                        and e.get("cat") != "run"), key=lambda e: (e["ts"], -e["dur"]))
        open_ends: list[float] = []
        for e in spans:
            while open_ends and open_ends[-1] <= e["ts"]:
                open_ends.pop()
            depth = len(open_ends)  # how deep it nests in the host's work
            open_ends.append(e["ts"] + e["dur"])
            if e["cat"] == "kernel":
                label = _op_type(e)
                colour = kernel_colour[label]
            else:
                label, colour = e["cat"], COLOURS.get(e["cat"], "0.5")
            used.setdefault(label, colour)
            height = 0.7 * 0.6 ** depth
            bars.broken_barh([(e["ts"] / 1e3, max(e["dur"] / 1e3, thinnest))],
                             (lane[tid] - height / 2, height), facecolors=colour,
                             edgecolor="none")
    bars.set_yticks([lane[t] for t in tids], [names[t] for t in tids])
    bars.set_ylim(-0.6, len(tids) - 0.4)
    bars.set_title(title, fontsize="medium")
    bars.grid(True, axis="x", color="0.92")
    bars.legend(handles=[Patch(color=c, label=l) for l, c in used.items()], loc="upper left",
                bbox_to_anchor=(1.01, 1), fontsize="x-small")
    counter = sorted((e["ts"], e["args"]["bytes"]) for e in events
                     if e["ph"] == "C" and e["name"] == COUNTER)
    if counter:
        memory.step([t / 1e3 for t, _ in counter], [b / 2**20 for _, b in counter],
                    where="post", color="tab:red", linewidth=1)
    memory.set_ylabel("MiB held", fontsize="small")
    memory.set_xlabel("ms from the run's start")
    memory.grid(True, color="0.92")
    data = io.BytesIO()
    figure.savefig(data, format="png")
    return data.getvalue()

