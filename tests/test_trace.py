"""
Traces of OpenCL runs (`backends/opencl/trace.py`, `mobile-run --trace`): the JSON read
back and held to the trace-event format (fields per phase, metadata, properly nested and
ordered tracks, a non-negative counter), and to the run (a kernel event per launch, the
streamed weights' chunks on the copy queue, the counter ending where the allocator does);
the clock alignment; bad `--trace` targets.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
from mobile_opt import pipelines
from mobile_opt.backends.opencl.trace import clock_offset
from mobile_opt.checking import make_inputs
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.interpreter import find_function
from mobile_opt.tools import mobile_run

from tests.harness import assert_one_line_error, run_mobile_run

MODELS = Path(__file__).parent / "models"
MODEL = MODELS / "vit_tiny.onnx"
BUDGET = ["--memory-budget", "1.3MB", "--chunk-kb", "16", "--time-limit", "5"]
EPS = 2e-3
"""Microseconds: the rounding of times written with three decimals."""
REQUIRED = {"X": {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"},
            "C": {"name", "ph", "ts", "pid", "tid", "args"},
            "M": {"name", "ph", "pid", "tid", "args"}}


def check_format(trace: dict) -> dict[int, str]:
    """Everything the trace-event format asks of `trace`; its tracks' names by tid."""
    assert set(trace) >= {"traceEvents", "displayTimeUnit"}
    assert trace["displayTimeUnit"] == "ms"
    events = trace["traceEvents"]
    for e in events:
        assert e["ph"] in REQUIRED, e
        assert REQUIRED[e["ph"]] <= set(e), e
        assert isinstance(e["name"], str) and e["name"], e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int), e
        if e["ph"] != "M":
            assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0, e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            assert isinstance(e["args"], dict), e
        if e["ph"] == "C":
            assert e["args"] and all(isinstance(v, int) and v >= 0
                                     for v in e["args"].values()), e
    assert len({e["pid"] for e in events}) == 1
    meta = [e for e in events if e["ph"] == "M"]
    process = [e["args"]["name"] for e in meta if e["name"] == "process_name"]
    assert len(process) == 1 and " on " in process[0]
    names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert len(set(names.values())) == len(names)
    assert {e["tid"] for e in events if e["ph"] == "X"} == set(names)
    for tid in names:
        check_track([e for e in events if e["tid"] == tid and e["ph"] != "M"])
    return names


def check_track(events: list[dict]) -> None:
    """Times in order as written, and slices properly nested: each starts after the
    enclosing one ends or ends inside it."""
    times = [e["ts"] for e in events]
    assert times == sorted(times)
    open_ends: list[float] = []
    for e in (e for e in events if e["ph"] == "X"):
        while open_ends and open_ends[-1] <= e["ts"] + EPS:
            open_ends.pop()
        if open_ends:
            assert e["ts"] + e["dur"] <= open_ends[-1] + EPS, f"partial overlap: {e}"
        open_ends.append(e["ts"] + e["dur"])


def by_track(trace: dict, names: dict[int, str], track: str, ph: str = "X") -> list[dict]:
    tid = {n: t for t, n in names.items()}.get(track)
    return [e for e in trace["traceEvents"] if e["tid"] == tid and e["ph"] == ph]


def check_run(trace: dict, names: dict[int, str], launches: list) -> None:
    """The trace against the run: the launches in order, everything inside the run."""
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert [e["name"] for e in kernels] == [r.kernel for r in launches]
    assert [e["args"]["onnx_nodes"] for e in kernels] == [r.node for r in launches]
    assert all(e["args"]["global_size"] == r.global_size for e, r in zip(kernels, launches))
    assert {e["tid"] for e in kernels} == {t for t, n in names.items() if n == "compute queue"}
    (run,) = [e for e in trace["traceEvents"] if e.get("cat") == "run"]
    assert names[run["tid"]] == "host" and run["ts"] == 0
    error = trace["otherData"]["host_clock_error_us"] + 1
    for e in trace["traceEvents"]:
        if e["ph"] == "X":  # the device's commands end before the run's last wait does
            assert e["ts"] + e["dur"] <= run["ts"] + run["dur"] + error, e
        if "queued_us" in e.get("args", {}):  # queued while the host ran
            assert -error <= e["args"]["queued_us"] <= e["ts"] + EPS, e
    counter = [e["args"]["bytes"] for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counter and min(counter) >= 0


def mobile_run_trace(tmp_path: Path, *extra: str) -> tuple[dict, str]:
    """`mobile-run vit_tiny --trace` with `extra` options: the trace and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        mobile_run.main([str(MODEL), "--trace", str(tmp_path / "t.json"), *extra])
    assert done.value.code == 0, out.getvalue()
    return json.loads((tmp_path / "t.json").read_text()), out.getvalue()


@pytest.fixture(scope="module")
def vit_plan(pocl_device):
    from mobile_opt.backends.opencl.plan import build_plan

    module = import_onnx(MODEL)
    passes, _ = pipelines.gpu_pipeline(pipelines.GRAPH_PASSES, _device())
    pipelines.apply(module, passes)
    return module, build_plan(module)


def _device():
    from mobile_opt.backends.opencl.devices import choose_device

    return choose_device("pocl")


def test_mobile_run_traces_the_last_run(pocl_device, vit_plan, tmp_path):
    trace, out = mobile_run_trace(tmp_path, "--repeat", "2", "--trace-png",
                                  str(tmp_path / "t.png"))
    assert f"trace: {tmp_path / 't.json'}" in out
    names = check_format(trace)
    assert sorted(names.values()) == ["compute queue", "host"]  # no copy queue
    check_run(trace, names, vit_plan[1].launches)  # one run's launches, not two
    cats = {e.get("cat") for e in by_track(trace, names, "host")}
    assert {"run", "pack", "unpack", "wait"} <= cats
    assert {"upload", "download"} <= {e.get("cat") for e in by_track(trace, names,
                                                                     "compute queue")}
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mobile_run_traces_a_streamed_run(pocl_device, tmp_path):
    trace, _ = mobile_run_trace(tmp_path, *BUDGET, "--iterations", "2")
    names = check_format(trace)
    assert sorted(names.values()) == ["compute queue", "copy queue", "host"]
    copies = by_track(trace, names, "copy queue")
    assert copies and all(e["cat"] == "transform" and "chunk" in e["args"] for e in copies)
    loads = [e for e in by_track(trace, names, "host") if e["cat"] == "load"]
    # each chunk's load into a staging buffer, then its writes out of it
    assert {(e["args"]["weight"], e["args"]["chunk"]) for e in loads} == \
        {(e["args"]["weight"], e["args"]["chunk"]) for e in copies}
    assert trace["otherData"]["mode"] == "streamed"
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) == trace["otherData"]["launches"]
    assert any(e["args"]["waits_for"] for e in kernels)


@pytest.mark.parametrize(("pinned", "direct"), [(False, False), (True, True)])
def test_a_streamed_trace_moves_every_chunk_and_ends_where_the_allocator_does(
        vit_plan, pocl_device, tmp_path, pinned: bool, direct: bool):
    """Through the staging ring, and from the map then the pinned store (a discrete GPU's
    way): two runs, the second after the pinned store and kept objects are made."""
    from mobile_opt.backends.opencl.plan import build_plan
    from mobile_opt.backends.opencl.streaming import StreamingModel
    from mobile_opt.backends.opencl.trace import chrome_trace
    from mobile_opt.backends.opencl.weight_store import WeightStore, write_store
    from mobile_opt.transforms.flashmem_plan import FlashMemPlanPass
    from mobile_opt.transforms.flashmem_stream import FlashMemStreamPass

    module = vit_plan[0].clone()
    pipelines.apply(module, [FlashMemPlanPass(budget_mb=1.3, chunk_kb=16, time_limit_s=5),
                             FlashMemStreamPass()])
    plan = build_plan(module)
    assert plan.streams
    write_store(tmp_path / "w.bin", plan, 16 * 1024)
    model = StreamingModel(module, pocl_device, WeightStore(tmp_path / "w.bin"), plan=plan,
                           pinned=pinned, direct=direct)
    feeds = make_inputs(find_function(module, "main_graph"), {}, 0)
    for run in range(2):
        result = model.run(feeds, trace=True)
        trace = chrome_trace(result.timeline, "vit_tiny on pocl")
        names = check_format(trace)
        check_run(trace, names, plan.launches)
        moved: dict[str, set[int]] = {}
        for e in by_track(trace, names, "copy queue"):
            first, last = e["args"].get("chunks", [e["args"].get("chunk")] * 2)
            moved.setdefault(e["args"]["weight"], set()).update(range(first, last + 1))
        assert moved == {s.value: set(range(sum(n for _, n in s.moves)))
                         for s in plan.streams}
        counter = [e["args"]["bytes"] for e in trace["traceEvents"] if e["ph"] == "C"]
        assert counter[-1] == model.memory.resident and max(counter) <= model.budget
        assert (run == 1) == any(e["cat"] == "settle"
                                 for e in by_track(trace, names, "host"))
    assert model.run(feeds).timeline is None  # not traced unless asked
    model.unload()


@pytest.mark.parametrize(("bounds", "offset", "error"), [
    ([(0, 10, 105), (50, 52, 151)], 100, 1),  # 95..105 and 99..101
    ([(0, 10, 1005)], 1000, 5),
    ([], 0, 0),
])
def test_the_clock_offset_is_the_middle_of_what_the_commands_leave(bounds, offset, error):
    assert clock_offset(bounds) == (offset, error)


def test_a_noisy_clock_takes_the_median_offset():
    # no offset fits all (100..110, 120..130, 140..150): the median of the middles
    assert clock_offset([(0, 10, 110), (0, 10, 130), (0, 10, 150)])[0] == 125


@pytest.mark.parametrize("target", ["dir", "link"])
def test_a_bad_trace_target_is_one_line_and_writes_nothing(pocl_device, capsys, tmp_path,
                                                           target: str):
    (tmp_path / "dir").mkdir()
    (tmp_path / "real.json").write_text("keep")
    os.symlink(tmp_path / "real.json", tmp_path / "link")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    status, _, err = run_mobile_run([str(MODEL), "--trace", str(tmp_path / target)], capsys)
    assert_one_line_error(status, err, f"{tmp_path / target}: ")
    assert "not replaced" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "real.json").read_text() == "keep"


@pytest.mark.parametrize(("models", "extra", "message"), [
    (1, ["--reference"], "--trace applies to the OpenCL run"),
    (1, ["--target", "hexagon"], "--trace applies to the OpenCL run"),
    (2, BUDGET, "--trace applies to one model"),
])
def test_trace_where_it_does_not_apply_is_a_usage_error(capsys, tmp_path, models: int,
                                                        extra: list[str], message: str):
    status, _, err = run_mobile_run([str(MODEL)] * models + ["--trace", str(tmp_path / "t.json"),
                                                             *extra], capsys)
    assert_one_line_error(status, err, message, code=2)
    assert not (tmp_path / "t.json").exists()


def test_an_untraced_run_gives_no_trace(pocl_device, vit_plan):
    from mobile_opt.backends.opencl.executor import CompiledModel
    from mobile_opt.tools.cli import UserError
    from mobile_opt.api.traces import write_trace

    module, plan = vit_plan
    model = CompiledModel(module, pocl_device, plan=plan)
    result = model.run(make_inputs(find_function(module, "main_graph"), {}, 0))
    with pytest.raises(UserError, match="not traced"):
        write_trace(None, result, plan, "vit_tiny.onnx", "pocl")
