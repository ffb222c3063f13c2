"""
What every tool does with its outputs and its usage: an output path that is a
directory, FIFO, socket or symbolic link is refused in one line and left as it was
(never opened); an unknown flag is one line with exit status 2; `--save-dir` gets a
run's files only once every check passed, and one run's files replace the last's
as one set.
"""

from __future__ import annotations

import os
import socket
import stat
import threading
import fcntl
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, save

from mobile_opt.checking import CheckError
from mobile_opt.tools import cli, mobile_run, model_checks
from mobile_opt.tools.cli import MANIFEST, UserError, write_atomically, write_save_dir


def relu_model(path: Path, outputs: tuple[str, ...] = ("y",)) -> Path:
    """`name = Relu(x)` for each of `outputs`: a model every tool can take."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], [name], name=f"relu_{name}") for name in outputs],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4]) for name in outputs],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "in"
    folder.mkdir()
    mlir = folder / "m.mlir"
    mlir.write_text("builtin.module {\n}\n")
    dataset = folder / "d.npz"
    np.savez(dataset, x=np.zeros(1))
    return {"onnx": relu_model(folder / "m.onnx"), "mlir": mlir, "dataset": dataset}


def _main(tool: str) -> Callable:
    if tool == "mobile-probe":
        from mobile_opt.tools.mobile_probe import main
    elif tool == "mobile-tune":
        from mobile_opt.tools.mobile_tune import main
    elif tool == "mobile-learn":
        from mobile_opt.tools.mobile_learn import main
    elif tool == "mobile-opt":
        from mobile_opt.tools.mobile_opt import main
    elif tool == "mobile-translate":
        from mobile_opt.tools.mobile_translate import main
    else:
        main = mobile_run.main
    return main


def call(tool: str, argv: list[str], capsys) -> tuple[int, str]:
    """The tool in-process: (exit status, stderr)."""
    try:
        status = _main(tool)(argv)
    except SystemExit as e:
        status = e.code
    return status or 0, capsys.readouterr().err


OUTPUT_ARGS: dict[str, Callable[[dict[str, Path], str], list[str]]] = {
    "mobile-opt": lambda i, out: [str(i["mlir"]), "-o", out],
    "mobile-translate": lambda i, out: ["--import-onnx", str(i["onnx"]), "-o", out],
    "mobile-run": lambda i, out: [str(i["onnx"]), "--roofline", out],
    "mobile-probe": lambda i, out: ["--quick", "-o", out],
    "mobile-tune": lambda i, out: [str(i["onnx"]), "-o", out],
    "mobile-learn": lambda i, out: ["train", str(i["dataset"]), "-o", out],
}
"""Each tool's command line writing the file `out` (its `-o`, mobile-run's `--roofline`)."""

TOOLS = sorted(OUTPUT_ARGS)


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))


def make_directory(path: Path) -> None:
    path.mkdir()


def make_symlink(path: Path) -> None:
    (path.parent / "target.txt").write_text("kept\n")
    path.symlink_to("target.txt")


SPECIAL = [
    (make_fifo, stat.S_ISFIFO, "is a FIFO"),
    (make_socket, stat.S_ISSOCK, "is a socket"),
    (make_directory, stat.S_ISDIR, "is a directory"),
    (make_symlink, stat.S_ISLNK, "is a symbolic link"),
]


def assert_one_line(tool: str, status: int, err: str, code: int, says: str) -> None:
    lines = err.splitlines()
    assert status == code, err
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: error: "), err
    assert says in lines[0] and "Traceback" not in err, err


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("make, is_kind, says", SPECIAL, ids=[s[2] for s in SPECIAL])
def test_a_special_output_is_refused_and_left_alone(tool, make, is_kind, says, inputs,
                                                    tmp_path, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "o.npz"  # mobile-learn's weights keep a .npz name as it is
    make(out)
    before = sorted(os.listdir(folder))
    status, err = call(tool, OUTPUT_ARGS[tool](inputs, str(out)), capsys)
    assert_one_line(tool, status, err, 1, f"{out}: {says}; not replaced")
    assert is_kind(os.lstat(out).st_mode)
    assert sorted(os.listdir(folder)) == before  # no temporary file left
    if is_kind is stat.S_ISLNK:
        assert (folder / "target.txt").read_text() == "kept\n"


UNKNOWN_FLAG = {
    "mobile-opt": lambda i, out: [str(i["mlir"]), "--no-such-flag"],
    "mobile-translate": lambda i, out: ["--import-onnx", str(i["onnx"]), "--no-such-flag"],
    "mobile-run": lambda i, out: [str(i["onnx"]), "--no-such-flag"],
    "mobile-probe": lambda i, out: ["-o", out, "--no-such-flag"],
    "mobile-tune": lambda i, out: [str(i["onnx"]), "-o", out, "--no-such-flag"],
    "mobile-learn": lambda i, out: ["train", str(i["dataset"]), "-o", out, "--no-such-flag"],
}


@pytest.mark.parametrize("tool", TOOLS)
def test_an_unknown_flag_is_one_line_with_status_2(tool, inputs, tmp_path, capsys):
    out = tmp_path / "o.npz"
    status, err = call(tool, UNKNOWN_FLAG[tool](inputs, str(out)), capsys)
    assert_one_line(tool, status, err, 2, "unrecognized arguments: --no-such-flag")
    assert not out.exists()


@pytest.mark.parametrize("tool, argv", [
    ("mobile-run", lambda i: [str(i["onnx"]), "--reference", "--seed", "-1"]),
    ("mobile-tune", lambda i: [str(i["onnx"]), "-o", "t.json", "--seed", "-1"]),
    ("mobile-learn", lambda i: ["train", str(i["dataset"]), "-o", "o.npz", "--seed", "-1"]),
    ("mobile-run", lambda i: [str(i["onnx"]), "--solver", "nope"]),
    ("mobile-learn", lambda i: ["nope"]),
    ("mobile-opt", lambda i: [str(i["mlir"]), "-t", "nope"]),
])
def test_a_bad_option_value_is_a_usage_error(tool, argv, inputs, capsys):
    status, err = call(tool, argv(inputs), capsys)
    assert_one_line(tool, status, err, 2, "")


@pytest.mark.parametrize("tool", ["mobile-opt", "mobile-translate"])
def test_a_regular_output_is_replaced(tool, inputs, tmp_path, capsys):
    out = tmp_path / "o.mlir"
    out.write_text("old\n")
    status, err = call(tool, OUTPUT_ARGS[tool](inputs, str(out)), capsys)
    assert status == 0, err
    assert "builtin.module" in out.read_text() or "func.func" in out.read_text()
    assert sorted(os.listdir(tmp_path)) == ["in", "o.mlir"]


@pytest.mark.parametrize("given, says", [
    ("folder/", "is a directory"), ("none/o.txt", "folder none does not exist"),
])
def test_write_atomically_refuses_before_writing(given, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    with pytest.raises(UserError, match=says):
        write_atomically(given, "text")
    assert sorted(os.listdir(tmp_path)) == ["folder"]
    assert not os.listdir(tmp_path / "folder")


@pytest.mark.parametrize("contents, says", [
    (b"\xff\xfe\x00 binary", "not UTF-8 text"),
    ("builtin.module {\n" * 300 + "}\n" * 300, "nesting too deep"),
])
@pytest.mark.parametrize("tool", ["mobile-opt", "mobile-run"])
def test_unreadable_mlir_is_one_line(tool, contents, says, tmp_path, capsys):
    path = tmp_path / "m.mlir"
    if isinstance(contents, bytes):
        path.write_bytes(contents)
    else:
        path.write_text(contents)
    argv = [str(path), "-o", str(tmp_path / "o.mlir")] if tool == "mobile-opt" \
        else ["--reference", str(path)]
    status, err = call(tool, argv, capsys)
    assert_one_line(tool, status, err, 1, f"{path}: {says}")
    assert sorted(os.listdir(tmp_path)) == ["m.mlir"]


# --save-dir ------------------------------------------------------------------------------
def test_failing_onnxruntime_writes_no_save_dir(tmp_path, capsys, monkeypatch):
    def rejects(path, feeds):
        raise CheckError(f"onnxruntime cannot run {path}: rejected")

    monkeypatch.setattr(model_checks, "run_onnxruntime", rejects)
    model = relu_model(tmp_path / "m.onnx")
    fresh = tmp_path / "fresh"
    status, err = call("mobile-run", ["--reference", str(model), "--save-dir", str(fresh)],
                       capsys)
    assert_one_line("mobile-run", status, err, 1, "rejected")
    assert not (tmp_path / "fresh").exists()
    # a folder an earlier run filled is left as it was
    earlier = tmp_path / "earlier"
    write_save_dir(earlier, {"old.npy": b"old"})
    before = {p.name: p.read_bytes() for p in earlier.iterdir()}
    status, err = call("mobile-run", ["--reference", str(model), "--save-dir", str(earlier)],
                       capsys)
    assert status == 1
    assert {p.name: p.read_bytes() for p in earlier.iterdir()} == before


def test_a_second_run_replaces_the_first_runs_files(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")  # no run wrote it: it stays
    first = relu_model(tmp_path / "two.onnx", ("a", "b"))
    second = relu_model(tmp_path / "one.onnx", ("c",))
    for model, names in ((first, {"a.npy", "b.npy"}), (second, {"c.npy"})):
        status, err = call("mobile-run", ["--reference", str(model), "--save-dir", str(folder)],
                           capsys)
        assert status == 0, err
        assert {p.name for p in folder.iterdir()} == names | {"notes.txt", MANIFEST}
        assert set((folder / MANIFEST).read_text().split()) == names


def test_a_killed_runs_staging_folder_goes_at_the_next_run(tmp_path, capsys):
    """A run killed while staging leaves its hidden folder; the next run into the folder
    removes it (its process is gone), and keeps a live run's."""
    from mobile_opt.api.files import _process_start

    folder = tmp_path / "run"
    folder.mkdir()
    dead = folder / ".mobile-run-4194305.77-abc"  # above Linux's largest process id
    live = folder / f".mobile-run-{os.getpid()}.{_process_start(os.getpid())}-xyz"
    for stale in (dead, live):
        stale.mkdir()
        (stale / "y.npy").write_bytes(b"half")
    status, err = call("mobile-run", ["--reference", str(relu_model(tmp_path / "m.onnx")),
                                      "--save-dir", str(folder)], capsys)
    assert status == 0, err
    assert not dead.exists() and live.is_dir()


def test_a_save_dir_that_is_a_file_is_refused_before_the_run(tmp_path, capsys):
    model = relu_model(tmp_path / "m.onnx")
    taken = tmp_path / "taken"
    taken.write_text("a file\n")
    status, err = call("mobile-run", ["--reference", str(model), "--save-dir", str(taken)],
                       capsys)
    assert_one_line("mobile-run", status, err, 1, f"--save-dir {taken}: not a folder")
    assert taken.read_text() == "a file\n"


@pytest.mark.parametrize("entry", ["y.npy", MANIFEST])
@pytest.mark.parametrize("make, says", [(make_fifo, "is a FIFO"),
                                        (make_symlink, "is a symbolic link")])
def test_a_special_entry_in_the_save_dir_is_not_replaced(make, says, entry, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    make(folder / entry)
    before = sorted(os.listdir(folder))
    with pytest.raises(UserError, match=f"{entry}: {says}; not replaced"):
        write_save_dir(folder, {"y.npy": b"new"})
    assert sorted(os.listdir(folder)) == before
    assert not stat.S_ISREG(os.lstat(folder / entry).st_mode)


def test_a_second_run_waits_for_the_first(tmp_path):
    folder = tmp_path / "run"
    write_save_dir(folder, {"a.npy": b"first"})
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a run in the middle of putting its files in place
    second = threading.Thread(target=write_save_dir, args=(folder, {"b.npy": b"second"}))
    try:
        second.start()
        second.join(0.5)
        assert second.is_alive() and (folder / "a.npy").exists()
        assert not (folder / "b.npy").exists()
    finally:
        os.close(fd)
    second.join(10)
    assert {p.name for p in folder.iterdir()} == {"b.npy", MANIFEST}


def test_seed_type():
    assert cli.seed("0") == 0 and cli.seed("4294967295") == 2**32 - 1
    for bad in ("-1", "4294967296", "x", "1.5"):
        with pytest.raises(Exception, match="expects a whole number"):
            cli.seed(bad)


@pytest.mark.parametrize("contents", [
    b"[]", b'{"identity": 3}', b'{"identity": {"name": "x"}, "compute": []}', b"{",
    b"\xff\xfe binary",
])
def test_probe_update_of_a_malformed_profile_is_one_line(pocl_device, contents, tmp_path,
                                                         capsys):
    out = tmp_path / "p.json"
    out.write_bytes(contents)
    status, err = call("mobile-probe", ["--only", "work-groups", "--quick", "--update",
                                        "-o", str(out)], capsys)
    assert_one_line("mobile-probe", status, err, 1, f"--update {out}: ")
    assert out.read_bytes() == contents
    assert sorted(os.listdir(tmp_path)) == ["p.json"]


def odd_models(folder: Path) -> dict[str, Path]:
    """Models whose errors must still be one line naming the file and the node."""
    from onnx import numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    table = numpy_helper.from_array(np.ones((4, 4), np.float32), "table")
    index = numpy_helper.from_array(np.array([9], np.int64), "index")
    graphs = {
        "cycle": helper.make_graph([helper.make_node("Relu", ["b"], ["y"], name="r1\nx"),
                                    helper.make_node("Relu", ["y"], ["b"], name="r2")],
                                   "g", [x], [y]),
        "gather": helper.make_graph([helper.make_node("Gather", ["table", "index"], ["g"],
                                                      name="pick\nme"),
                                     helper.make_node("Add", ["g", "x"], ["y"], name="add")],
                                    "g", [x], [y], [table, index]),
        "gather-input": helper.make_graph(
            [helper.make_node("Gather", ["table", "index"], ["g"], name="pick\nme"),
             helper.make_node("Add", ["g", "x"], ["y"], name="add")],
            "g", [x, helper.make_tensor_value_info("index", TensorProto.INT64, [1])], [y],
            [table]),
    }
    paths = {}
    for name, graph in graphs.items():
        paths[name] = folder / f"{name}.onnx"
        save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
             paths[name])
    return paths


GATHER_AT_IMPORT = ("node 'pick\\nme' (Gather): indices[0] = 9, must be in [-4, 3] for axis 0 "
                    "of size 4")


@pytest.mark.parametrize("model, says", [
    ("cycle", "invalid ONNX model: node 'r1\\nx' (Relu): input 'b' is no output of an earlier "
              "node"),
    ("gather", GATHER_AT_IMPORT),  # a constant index: the importer's check
    ("gather-input", "onnx.Gather 'pick\\nme': an index is out of range"),  # the run's
])
def test_errors_name_file_and_escaped_node(model, says, tmp_path, capsys):
    path = odd_models(tmp_path)[model]
    index = tmp_path / "index.npy"
    np.save(index, np.array([9], np.int64))
    status, err = call("mobile-run", ["--reference", str(path), "--input", f"index={index}"]
                       if model == "gather-input" else ["--reference", str(path)], capsys)
    assert_one_line("mobile-run", status, err, 1, f"{path}: {says}")


@pytest.mark.parametrize("name, shown", [("a\nb", "a\\nb"), ("tab\there", "tab\\there"),
                                         ("\x1b[2J", "\\x1b[2J"), ("ünï", "ünï")])
def test_printable_escapes_control_characters(name, shown):
    from mobile_opt.dialects.onnx.graph import printable

    assert printable(name) == shown


def test_a_bad_constant_index_names_file_and_node_on_opencl(pocl_device, tmp_path, capsys):
    path = odd_models(tmp_path)["gather"]
    save_dir = tmp_path / "run"
    status, err = call("mobile-run", [str(path), "--device", "pocl", "--save-dir",
                                      str(save_dir)], capsys)
    assert_one_line("mobile-run", status, err, 1, f"{path}: {GATHER_AT_IMPORT}")
    assert not save_dir.exists()
