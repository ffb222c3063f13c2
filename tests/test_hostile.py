"""
The hostile-input suite: every row of `hostile_inputs.CASES` run as a subprocess of
its tool from an unrelated folder, held to the one-line error contract (see
`hostile_inputs`' docstring), a `--save-dir` shared by two runs, and a bounded fuzz
run (hypothesis, derandomized) over mutated small ONNX models through import and
compile in-process. `python3 tests/hostile_report.py` prints the table per category.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import onnx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import hostile_inputs as H

WORKERS = int(os.environ.get("HOSTILE_WORKERS", "2"))


@pytest.fixture(scope="session")
def outcomes(request, tmp_path_factory):
    """The outcome of every selected row, run `WORKERS` at a time (each a subprocess)."""
    selected = {item.callspec.params["row"].id: item.callspec.params["row"]
                for item in request.session.items
                if item.originalname == "test_hostile_row" and hasattr(item, "callspec")}
    base = tmp_path_factory.mktemp("hostile")

    def one(row: H.Case):
        try:
            return H.run_case(row, H.fresh_root(base, row.id))
        except H.Unavailable as e:
            return e

    with ThreadPoolExecutor(WORKERS) as pool:
        return dict(zip(selected, pool.map(one, selected.values())))


@pytest.mark.parametrize("row", H.CASES, ids=[f"{c.category}:{c.id}" for c in H.CASES])
def test_hostile_row(row: H.Case, outcomes):
    outcome = outcomes[row.id]
    if isinstance(outcome, H.Unavailable):
        pytest.skip(str(outcome))
    assert outcome.clean, (
        f"{row.tool} {row.id}: {'; '.join(outcome.problems)}\n"
        f"first stderr line: {outcome.first_line[:300]}\nstderr tail: {outcome.stderr[-1500:]}")


JUDGED = H.Case("judged", "judge", "mobile-opt", lambda c: [], (1,), ("m.onnx",))


@pytest.mark.parametrize("status, stderr, clean", [
    (1, "mobile-opt: error: m.onnx: node 'n' (Relu): bad\n", True),
    (1, "remark: note\nmobile-opt: error: m.onnx: bad\n", True),
    (2, "mobile-opt: error: m.onnx: bad\n", False),  # the wrong status
    (1, "mobile-opt: error: other.onnx: bad\n", False),  # names no file
    (1, "mobile-run: error: m.onnx: bad\n", False),  # another tool's name
    (1, "usage: mobile-opt\nmobile-opt: error: m.onnx: bad\n", False),  # two lines
    (1, "mobile-opt: error: m.onnx: node 'a\x1b[31m' (X): bad\n", False),  # an escape
    (1, "Traceback (most recent call last):\nmobile-opt: error: m.onnx\n", False),
    (1, "", False),
    (-9, "mobile-opt: error: m.onnx: bad\n", False),  # killed
])
def test_judge(status, stderr, clean):
    """The contract check itself: it passes a right line and catches each kind of wrong one."""
    assert (not H.judge(JUDGED, status, stderr)) == clean


def test_hang_guard_interrupts():
    with pytest.raises(Hang), _bounded(1, 1 << 30):
        while True:
            pass


def _two_models(tmp_path: Path):
    """The folders, environment and --save-dir of two runs, and their two models, whose
    outputs are named apart (`first_out`, `y`)."""
    paths = H.folders(tmp_path)
    first = H.save(H.one_node("Relu", ["x"], [H.vi("x", [2])], [2]), paths["in"] / "a.onnx")
    first.write_bytes(_renamed_output(first, "first_out"))
    second = H.save(H.matmul_add(), paths["in"] / "b.onnx")
    return paths, H.environment(tmp_path, {}), paths["out"] / "saved", first, second


def test_save_dir_shared_by_two_models(tmp_path):
    """
    Two models run one after the other with one --save-dir: the folder then holds the
    second model's outputs and none of the first's, or the second run is refused in one
    line and the folder is as the first run left it. Never a mix.
    """
    paths, env, save_dir, first, second = _two_models(tmp_path)
    run = lambda model: subprocess.run(  # noqa: E731
        H.tool_command("mobile-run", ["--reference", str(model), "--save-dir", str(save_dir)]),
        cwd=paths["cwd"], env=env, capture_output=True, timeout=H.TIMEOUT)
    done = run(first)
    assert done.returncode == 0, done.stderr.decode()
    assert _saved(save_dir) == ["first_out.npy"]
    done = run(second)
    names = _saved(save_dir)
    if done.returncode == 0:
        assert names == ["y.npy"], f"outputs of two models mixed in --save-dir: {names}"
    else:
        problems = H.judge(H.Case("save-dir-shared", "outputs", "mobile-run", lambda c: [],
                                  (1,), ("saved",)), done.returncode, done.stderr.decode())
        assert not problems, problems
        assert names == ["first_out.npy"]


def test_save_dir_two_runs_at_once(tmp_path):
    """Two runs of different models into one --save-dir at the same time: no mix either."""
    paths, env, save_dir, first, second = _two_models(tmp_path)
    runs = [subprocess.Popen(
        H.tool_command("mobile-run", ["--reference", str(m), "--save-dir", str(save_dir)]),
        cwd=paths["cwd"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for m in (first, second)]
    results = [(p.wait(timeout=H.TIMEOUT), p.communicate()[1].decode()) for p in runs]
    names = _saved(save_dir)
    assert names in ([], ["first_out.npy"], ["y.npy"]), \
        f"outputs of two models mixed in --save-dir: {names}"
    row = H.Case("save-dir-at-once", "outputs", "mobile-run", lambda c: [], (0, 1), ("saved",))
    for status, stderr in results:
        assert not H.judge(row, status, stderr), (status, stderr[-1000:])


def _saved(folder: Path) -> list[str]:
    """The outputs in a --save-dir (not the tool's own hidden bookkeeping, e.g. a lock)."""
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def _renamed_output(path: Path, name: str) -> bytes:
    model = onnx.load(path)
    model.graph.node[-1].output[0] = name
    model.graph.output[0].name = name
    return model.SerializeToString()


# ---------------------------------------------------------------- bounded fuzz run

FUZZ_EXAMPLES = int(os.environ.get("HOSTILE_FUZZ_EXAMPLES", "300"))
FUZZ_SECONDS = 20
"""An in-process example that runs longer hangs."""
EXTREMES = (0, -1, 1, 2, 7, 1 << 31, -(1 << 31), 1 << 62, -(1 << 62))
OP_TYPES = ("Relu", "Conv", "MatMul", "Gather", "Slice", "Reshape", "Tile", "Expand",
            "Range", "MaxPool", "Transpose", "Softmax", "Concat", "Add", "Identity", "FooBar")
HOW = ("bytes", "structure", "structure")
"""Byte mutations mostly stop at the protobuf parser: structure gets twice the share."""
GRAPH_PIPELINE = ("onnx-fold-constants,onnx-fold-batchnorm,onnx-canonicalize,onnx-fuse,"
                  "select-layouts{target=gpu},onnx-to-texture,texture-to-ocl,cse")


class Hang(BaseException):
    """Raised by the alarm; not an Exception, so that no tool's handler turns it into a line."""


def _mutate_structure(model: onnx.ModelProto, data) -> None:
    """
    One structural change, mostly to what the checker lets through: an attribute's or an
    int64 initializer's value, a float initializer's value, an input dim; more rarely a
    new attribute, an op swap or a dropped input.
    """
    graph = model.graph
    kind = data.draw(st.sampled_from(["attribute", "attribute", "int-initializer",
                                      "int-initializer", "float-initializer", "input-dim",
                                      "input-dim", "new-attribute", "op", "drop-input"]))
    with_attributes = [n for n in graph.node if n.attribute]
    if kind == "attribute" and with_attributes:
        node = data.draw(st.sampled_from(with_attributes))
    else:
        node = data.draw(st.sampled_from(list(graph.node)))
    value = data.draw(st.sampled_from(EXTREMES))
    ints = [t for t in graph.initializer if t.data_type == onnx.TensorProto.INT64]
    floats = [t for t in graph.initializer if t.data_type == onnx.TensorProto.FLOAT]
    if kind == "attribute" and node.attribute:
        a = data.draw(st.sampled_from(list(node.attribute)))
        if a.ints:
            a.ints[data.draw(st.integers(0, len(a.ints) - 1))] = value
        else:
            a.i = value
    elif kind == "int-initializer" and ints:
        t = data.draw(st.sampled_from(ints))
        array = onnx.numpy_helper.to_array(t).copy()
        if array.size:
            array.flat[data.draw(st.integers(0, array.size - 1))] = value
        t.CopyFrom(onnx.numpy_helper.from_array(array, t.name))
    elif kind == "float-initializer" and floats:
        t = data.draw(st.sampled_from(floats))
        array = onnx.numpy_helper.to_array(t).copy()
        array.flat[data.draw(st.integers(0, array.size - 1))] = data.draw(
            st.sampled_from([float("nan"), float("inf"), -float("inf"), 3e38, 0.0]))
        t.CopyFrom(onnx.numpy_helper.from_array(array, t.name))
    elif kind == "input-dim":
        dims = graph.input[0].type.tensor_type.shape.dim
        dims[data.draw(st.integers(0, len(dims) - 1))].dim_value = value
    elif kind == "op":
        node.op_type = data.draw(st.sampled_from(OP_TYPES))
    elif kind == "drop-input" and node.input:
        del node.input[data.draw(st.integers(0, len(node.input) - 1))]
    else:
        name = data.draw(st.sampled_from(["kernel_shape", "strides", "dilations", "pads",
                                          "axis", "perm", "group"]))
        for a in list(node.attribute):
            if a.name == name:
                node.attribute.remove(a)
        rank = data.draw(st.integers(1, 4))
        node.attribute.append(onnx.helper.make_attribute(
            name, value if name in ("axis", "group") else [value] * rank))


def _mutate_bytes(blob: bytes, data) -> bytes:
    out = bytearray(blob)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(out) - 1))
        out[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        out = out[: data.draw(st.integers(0, len(out)))]
    return bytes(out)


def _in_process(module, tool: str, argv: list[str]) -> tuple[int, str]:
    """Run a tool's `main(argv)` here: (exit status, stderr); any other exception escapes."""
    err = io.StringIO()
    status = 0
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            module.main(argv)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
    return status, err.getvalue()


@contextlib.contextmanager
def _bounded(seconds: int, memory: int):
    """Raise Hang after `seconds`; MemoryError past `memory` more bytes of address space."""
    def alarm(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    limit = used + memory if hard == resource.RLIM_INFINITY else min(hard, used + memory)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def fuzz_one(model_bytes: bytes, folder: Path) -> list[str]:
    """Import and compile one (mutated) model in-process; what broke the contract."""
    from mobile_opt.tools import mobile_opt, mobile_translate

    path = folder / "fuzz.onnx"
    path.write_bytes(model_bytes)
    out = folder / "out"
    out.mkdir(exist_ok=True)
    problems = []
    for module, tool, argv in (
        (mobile_translate, "mobile-translate", ["--import-onnx", str(path),
                                                "-o", str(out / "a.mlir")]),
        (mobile_opt, "mobile-opt", [str(path), "-p", GRAPH_PIPELINE, "-o", str(out / "b.mlir")]),
    ):
        before = set(os.listdir(out))
        try:
            with _bounded(FUZZ_SECONDS, 3 << 30):
                status, stderr = _in_process(module, tool, argv)
        except (Exception, Hang) as e:  # noqa: BLE001 (any escape is the finding)
            problems.append(f"{tool}: {type(e).__name__}: {str(e)[:200]}")
            continue
        if status != 0:
            row = H.Case("fuzz", "fuzz", tool, lambda c: [], (1, 2), ())
            problems += [f"{tool}: {p} ({stderr.strip()[:200]!r})"
                         for p in H.judge(row, status, stderr)]
            if set(os.listdir(out)) - before:
                problems.append(f"{tool}: left {sorted(set(os.listdir(out)) - before)}")
    return problems


def mutated(seed: str, how: str, data) -> bytes:
    """Seed model `seed` serialized, with its bytes or its structure mutated."""
    model = H.SEED_MODELS[seed]()
    for output in model.graph.output:  # their sizes are the importer's to find
        for i, dim in enumerate(output.type.tensor_type.shape.dim):
            dim.dim_param = f"d{i}"
    if how == "bytes":
        return _mutate_bytes(model.SerializeToString(), data)
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate_structure(model, data)
    return model.SerializeToString()


def fuzz_run(examples: int, folder: Path) -> list[list[str]]:
    """
    The problems of each of `examples` mutated models (derandomized, so the same ones on
    every run); every example runs, none is shrunk, and none stops the others.
    """
    results: list[list[str]] = []

    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(seed=st.sampled_from(sorted(H.SEED_MODELS)), how=st.sampled_from(HOW),
           data=st.data())
    def each(seed, how, data):
        blob = mutated(seed, how, data)
        problems = fuzz_one(blob, Path(tempfile.mkdtemp(dir=folder)))
        results.append([f"{seed} mutated by {how}: {p}" for p in problems])

    each()
    return results


def test_fuzz_mutated_models(tmp_path):
    results = fuzz_run(FUZZ_EXAMPLES, tmp_path)
    failing = [problems for problems in results if problems]
    assert len(results) >= FUZZ_EXAMPLES // 2, f"only {len(results)} examples ran"
    assert not failing, (f"{len(failing)} of {len(results)} mutated models broke the contract:\n"
                         + "\n".join(p[0] for p in failing[:10]))
