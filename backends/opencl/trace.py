"""
The timeline of one OpenCL run, recorded while it runs when tracing is asked for
(`CompiledModel.run(inputs, trace=True)`), and written as Chrome's trace-event JSON (the
JSON Object Format: `{"traceEvents": [...], "displayTimeUnit": "ms"}`), which
https://ui.perfetto.dev and chrome://tracing open.

One process, named after the model and device, holds three tracks (threads):

- `host`: the run, packing each input, loading each weight chunk into a staging buffer,
  waiting for the device (a staging buffer, memory, the end), unpacking each output;
  `time.perf_counter_ns` around each, only while tracing;
- `compute queue`: kernels (with their ONNX node(s), global and local sizes, FLOPs and
  bytes), input uploads and gathers, output downloads;
- `copy queue`: the streamed weights' writes (FlashMem's transforms), with their chunks;

and a counter, the bytes the counting allocator (`DeviceMemory`) holds, at each
allocation and release. Device commands take their start and end from OpenCL profiling;
both queues are on the device's clock. The host clock is put on it through each
command's QUEUED time, which the device stamps while the host is inside the enqueue
call: every command bounds the offset between the clocks, and the trace takes the
middle of what all commands leave (`clock_offset`). Times are microseconds from the
run's start.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

HOST, COMPUTE, COPY = 1, 2, 3
"""The tracks' thread ids, in the order they are shown."""
TRACKS = {HOST: "host", COMPUTE: "compute queue", COPY: "copy queue"}
PID = 1
COUNTER = "device memory"
"""The counter track of the allocator's resident bytes (its series: `bytes`)."""


@dataclass
class Span:
    """Host work: a name, a category, perf_counter_ns at its ends, arguments."""

    name: str
    cat: str
    start: int
    end: int
    args: dict[str, Any]


@dataclass
class Command:
    """A command enqueued on a device queue: its event (profiled) and the host's
    perf_counter_ns just before and after the enqueue call."""

    track: int
    name: str
    cat: str
    event: Any
    before: int
    after: int
    args: dict[str, Any]
    shown: bool = True
    """Whether the enqueue call shows on the host track (not where other host work holds it)."""


@dataclass
class Timeline:
    """What one run did, as it ran."""

    start: int = field(default_factory=time.perf_counter_ns)
    end: int = 0
    spans: list[Span] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    memory: list[tuple[int, int]] = field(default_factory=list)
    """(perf_counter_ns, resident bytes) at each allocation and release."""

    @contextlib.contextmanager
    def span(self, name: str, cat: str, **args: Any) -> Iterator[None]:
        start = time.perf_counter_ns()
        try:
            yield
        finally:
            self.spans.append(Span(name, cat, start, time.perf_counter_ns(), args))

    def enqueued(self, track: int, name: str, cat: str, event: Any, before: int,
                 after: int | None = None, shown: bool = True, **args: Any) -> None:
        """Record `event`, enqueued from `before` to `after` (perf_counter_ns; default now);
        `shown`: the enqueue call as host work of its own."""
        after = time.perf_counter_ns() if after is None else after
        self.commands.append(Command(track, name, cat, event, before, after, args, shown))

    def resident(self, nbytes: int) -> None:
        self.memory.append((time.perf_counter_ns(), nbytes))


def launch_args(record: Any, global_size, local_size, layer: int) -> dict[str, Any]:
    """A kernel launch's arguments in the trace (`record`: its `LaunchRecord`)."""
    args = {"onnx_nodes": record.node, "kernel": record.kernel, "layer": layer,
            "global_size": list(global_size),
            "local_size": "driver's choice" if local_size is None else list(local_size),
            "bytes": record.nbytes}
    if record.flops is not None:
        args["flops"] = record.flops
    return args


def _times(event: Any) -> tuple[int, int, int]:
    """An event's (queued, start, end) in device nanoseconds; queued is its start where the
    driver does not stamp it."""
    profile = event.profile
    start, end = profile.start, profile.end
    try:
        queued = profile.queued or start
    except Exception:  # a driver without CL_PROFILING_COMMAND_QUEUED
        queued = start
    return queued, start, end


def clock_offset(pairs: list[tuple[int, int, int]]) -> tuple[int, int]:
    """
    Device time minus host time, from (host before, host after, device queued) of each
    command: the device stamped QUEUED between the two host readings, so each bounds the
    offset from below and above. The middle of the bounds all commands leave, and its
    half width (the error); where clock noise leaves none, the median of the middles.
    """
    if not pairs:
        return 0, 0
    low = max(queued - after for _, after, queued in pairs)
    high = min(queued - before for before, _, queued in pairs)
    if low <= high:
        return (low + high) // 2, (high - low) // 2
    middles = [queued - (before + after) // 2 for before, after, queued in pairs]
    return int(statistics.median(middles)), (low - high) // 2


def _us(ns: float) -> float:
    return round(ns / 1000, 3)


def chrome_trace(timeline: Timeline, title: str, other: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """The run's timeline as a Chrome trace (JSON Object Format) under process `title`;
    `other` goes to its `otherData`."""
    device = [(c, *_times(c.event)) for c in timeline.commands]
    offset, error = clock_offset([(c.before, c.after, q) for c, q, _, _ in device])
    # the origin: the run's start, or a command's start if noise puts one before it
    origin = min([timeline.start + offset] + [s for _, _, s, _ in device])

    def host(ns: int) -> int:
        return ns + offset - origin

    events: list[dict[str, Any]] = []

    def complete(tid: int, name: str, cat: str, start: int, end: int, args: dict) -> None:
        events.append({"name": name, "cat": cat, "ph": "X", "ts": _us(start),
                       "dur": round(_us(end) - _us(start), 3), "pid": PID, "tid": tid,
                       "args": args})

    for s in timeline.spans:
        complete(HOST, s.name, s.cat, host(s.start), host(s.end), s.args)
    calls = {(c.before, c.after): c for c in timeline.commands if c.shown}  # one per call
    for (before, after), c in calls.items():
        complete(HOST, f"enqueue {c.name}", "enqueue", host(before), host(after), {})
    tracks = sorted({c.track for c, *_ in device})
    for track in tracks:
        last = 0
        for c, queued, start, end in sorted((d for d in device if d[0].track == track),
                                            key=lambda d: d[2]):
            # an in-order queue runs one command at a time; a driver's rounding may not say so
            start = max(start - origin, last)
            last = max(end - origin, start)
            complete(track, c.name, c.cat, start, last,
                     {**c.args, "queued_us": _us(queued - origin)})
    for ns, nbytes in sorted(timeline.memory):
        events.append({"name": COUNTER, "ph": "C", "ts": _us(max(host(ns), 0)), "pid": PID,
                       "tid": HOST, "args": {"bytes": nbytes}})
    meta = [{"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": HOST,
             "args": {"name": title}}]
    for tid in (HOST, *tracks):
        meta.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": tid,
                     "args": {"name": TRACKS[tid]}})
        meta.append({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": PID, "tid": tid,
                     "args": {"sort_index": tid}})
    data = {"clock": "microseconds from the run's start, on the device's profiling clock",
            "host_clock_error_us": _us(error), **(other or {})}
    # in time order, each slice before those it holds
    events.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    return {"traceEvents": meta + events, "displayTimeUnit": "ms", "otherData": data}
