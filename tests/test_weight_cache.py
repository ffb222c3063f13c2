"""
The derived-weight cache checks itself: a damaged file is rebuilt when a pass derives
the weight again, refused (and removed) by a reader, never packed into a weight store;
an unusable cache folder is one line. External tensor data resolves beside the model,
whatever the current directory holds.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from harness import assert_one_line_error, run_mobile_run
from onnx import TensorProto, helper, numpy_helper

from mobile_opt.dialects import weights
from mobile_opt.dialects.weights import WeightStoreError, load_weight, save_derived_weight
from mobile_opt.frontend.onnx_import import OnnxImportError, import_onnx, read_model
from mobile_opt.tools import mobile_opt

LOWER = "onnx-fold-batchnorm,select-layouts,onnx-to-texture,texture-to-ocl"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    """A derived-weight folder of this test alone."""
    folder = tmp_path / "weights"
    monkeypatch.setenv("MOBILE_OPT_WEIGHT_DIR", str(folder))
    return folder


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """Conv then BatchNorm: `onnx-fold-batchnorm` derives one folded weight file."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "W")]
    inits += [numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), n)
              for n in ("scale", "bias", "mean")]
    inits.append(numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "var"))
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"],
                          name="bn")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
        inits,
    )
    path = tmp_path / "convbn.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def _flip_data_bit(data: bytes) -> bytes:
    out = bytearray(data)
    out[-7] ^= 0x10  # in the array's bytes, after the header
    return bytes(out)


def _swap_dtype(data: bytes) -> bytes:
    assert b"'<f4'" in data
    return data.replace(b"'<f4'", b"'<i4'", 1)  # a valid header of the same length


CORRUPTIONS = {
    "truncated": lambda data: data[:-100],
    "extended": lambda data: data + b"\0" * 64,
    "empty": lambda data: b"",
    "bit flip": _flip_data_bit,
    "garbage": lambda data: np.random.default_rng(1).bytes(len(data)),
    "wrong header": _swap_dtype,
}
REASONS = {
    "truncated": "bad header or size",
    "extended": "bad header or size: 64 bytes after the array",
    "empty": "not an .npy file",
    "bit flip": "hash mismatch",
    "garbage": "not an .npy file",
    "wrong header": "hash mismatch",
}


def corrupt(path: Path, how: str) -> None:
    """Damage `path` as `how` says; its modification time moves as it would across runs."""
    stat = path.stat()
    path.write_bytes(CORRUPTIONS[how](path.read_bytes()))
    # a coarse clock could leave a same-size rewrite with the old time, which is part of
    # the in-process cache key; a later process would hash the file anew anyway
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def only_file(folder: Path) -> Path:
    (path,) = [p for p in folder.iterdir()]
    return path


def run_tool(main, argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    return done.value.code, out, err


def compile_and_check(model: Path, capsys) -> str:
    status, out, err = run_mobile_run(["--reference", "-p", "onnx-fold-batchnorm", str(model)],
                                      capsys)
    assert status == 0, err
    assert out.splitlines()[1].split()[0] == "y" and out.rstrip().endswith("PASS"), out
    return err


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_compile_rebuilds_a_corrupt_derived_weight(how, model, cache, capsys):
    assert compile_and_check(model, capsys) == ""
    path = only_file(cache)
    good = path.read_bytes()
    corrupt(path, how)
    err = compile_and_check(model, capsys)
    assert err.count("\n") == 1 and err.startswith(f"remark: {path}: derived weight corrupt ("), err
    assert f"({REASONS[how]}" in err and err.endswith("); rebuilt\n"), err
    assert path.read_bytes() == good
    assert only_file(cache) == path  # no temporary file left beside it
    assert compile_and_check(model, capsys) == ""  # whole again: no remark


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_reader_refuses_and_removes_a_corrupt_derived_weight(how, model, cache, tmp_path,
                                                                capsys):
    ir = tmp_path / "folded.mlir"
    status, _, err = run_tool(mobile_opt.main, [str(model), "-p", "onnx-fold-batchnorm",
                                                "-o", str(ir)], capsys)
    assert status == 0, err
    path = only_file(cache)
    assert str(path) in ir.read_text()
    corrupt(path, how)
    status, out, err = run_mobile_run(["--reference", str(ir)], capsys)
    assert_one_line_error(status, err, f"{path}: derived weight corrupt ({REASONS[how]}")
    assert "removed it: compile the model again to rebuild it" in err and out == ""
    assert not path.exists()
    status, _, err = run_mobile_run(["--reference", str(ir)], capsys)
    assert_one_line_error(status, err, f"{path}: derived weight file is missing: compile the "
                                       "model again")
    # compiling again rebuilds it, and the IR runs
    status, _, err = run_tool(mobile_opt.main, [str(model), "-p", "onnx-fold-batchnorm",
                                                "-o", str(ir)], capsys)
    assert status == 0 and err == "", err
    status, _, err = run_mobile_run(["--reference", str(ir)], capsys)
    assert status == 0, err


def test_the_weight_store_never_packs_a_corrupt_derived_weight(model, cache, tmp_path, capsys):
    lowered, store = tmp_path / "low.mlir", tmp_path / "low.weights"
    status, _, err = run_tool(mobile_opt.main, [str(model), "-p", LOWER, "-o", str(lowered),
                                                "--weight-store", str(store)], capsys)
    assert status == 0, err
    path = only_file(cache)
    corrupt(path, "bit flip")
    damaged = path.read_bytes()
    # packing the lowered IR alone: refused, naming the file, and no output at all
    out_ir, out_store = tmp_path / "again.mlir", tmp_path / "again.weights"
    status, _, err = run_tool(mobile_opt.main, [str(lowered), "-o", str(out_ir),
                                                "--weight-store", str(out_store)], capsys)
    assert status == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"mobile-opt: error: {path}: derived weight corrupt (hash "
                          "mismatch); removed it"), err
    assert not out_ir.exists() and not out_store.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # compiling from the model derives the weight again: rebuilt, and the store is as before
    path.write_bytes(damaged)
    os.utime(path, ns=(0, 10**18))
    status, _, err = run_tool(mobile_opt.main, [str(model), "-p", LOWER, "-o", str(out_ir),
                                                "--weight-store", str(out_store)], capsys)
    assert status == 0, err
    assert err == f"remark: {path}: derived weight corrupt (hash mismatch); rebuilt\n"
    assert out_store.read_bytes() == store.read_bytes()


def test_hexagon_assembly_never_includes_a_corrupt_derived_weight(cache, tmp_path, capsys):
    from mobile_opt.checking import quant_models

    model, ir = tmp_path / "qconv.onnx", tmp_path / "hvx.mlir"
    onnx.save(quant_models.conv_model(4, 8, 8, 8, seed=2), model)
    status, _, err = run_tool(mobile_opt.main, [
        str(model), "-p", "select-layouts{target=dsp},onnx-to-hvx,hvx-unroll,hvx-regalloc",
        "-o", str(ir)], capsys)
    assert status == 0, err
    path = only_file(cache)
    status, out, err = run_tool(mobile_opt.main, [str(ir), "-t", "hexagon-asm"], capsys)
    assert status == 0 and f'.incbin "{path}"' in out, err
    corrupt(path, "bit flip")
    status, out, err = run_tool(mobile_opt.main, [str(ir), "-t", "hexagon-asm"], capsys)
    assert status == 1 and err.count("\n") == 1 and out == "", err
    assert err.startswith(f"mobile-opt: error: {ir}: hexagon-asm: {path}: derived weight "
                          "corrupt (hash mismatch)"), err


def test_a_file_is_hashed_once_per_version(cache, monkeypatch):
    calls = []
    digest = weights.weight_digest
    monkeypatch.setattr(weights, "weight_digest", lambda a: calls.append(a.shape) or digest(a))
    array = np.arange(40, dtype=np.float32).reshape(5, 8)
    store, key = save_derived_weight(array)
    assert calls == [(5, 8)]  # the array's own digest, which names the file it writes
    for _ in range(3):
        np.testing.assert_array_equal(load_weight(store, key), array)
    assert calls == [(5, 8)]  # the file just written needs no hashing
    os.utime(store, ns=(0, 10**18))  # another version of the file: hashed, once
    for _ in range(3):
        np.testing.assert_array_equal(load_weight(store, key), array)
    assert calls == [(5, 8), (5, 8)]
    # the digest is that of dtype, shape and bytes, as files written before are named
    assert Path(store).name == f"{key}.npy" and key == weights.weight_digest(array)


def test_writes_are_atomic(cache, monkeypatch):
    array = np.arange(64, dtype=np.float32)
    save_derived_weight(np.zeros(32, np.float32))  # the folder exists, with one good file
    before = sorted(cache.iterdir())

    def fail(file, *args, **kwargs):
        file.write(b"\x93NUMPY partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(weights.np, "save", fail)
    with pytest.raises(WeightStoreError, match=r"\.npy: cannot write derived weight: No space"):
        save_derived_weight(array)
    assert sorted(cache.iterdir()) == before  # neither the file nor its temporary one

    def interrupted(file, *args, **kwargs):
        file.write(b"\x93NUMPY partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(weights.np, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_derived_weight(array)
    assert sorted(cache.iterdir()) == before
    monkeypatch.undo()
    monkeypatch.setenv("MOBILE_OPT_WEIGHT_DIR", str(cache))
    umask = os.umask(0o022)
    try:
        store, _ = save_derived_weight(array)
    finally:
        os.umask(umask)
    assert Path(store).stat().st_mode & 0o777 == 0o644  # readable by others, as a cache is


def _unwritable(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:
        # root writes anywhere; refuse as the kernel refuses everyone else
        real = tempfile.mkstemp

        def mkstemp(*args, dir=None, **kwargs):
            if Path(dir) == folder:
                raise PermissionError(errno.EACCES, "Permission denied", str(folder))
            return real(*args, dir=dir, **kwargs)

        monkeypatch.setattr(weights.tempfile, "mkstemp", mkstemp)
    return folder


UNUSABLE = {
    "a regular file": (lambda tmp, mp: tmp / "file", "it is not a folder"),
    "a path under a file": (lambda tmp, mp: tmp / "file" / "weights",
                            "{tmp}/file is not a folder"),
    "/proc": (lambda tmp, mp: Path("/proc/mobile-opt-weights"), "No such file or directory"),
    "an unwritable folder": (_unwritable, "cannot create a file in it: Permission denied"),
}


@pytest.mark.parametrize("case", UNUSABLE)
def test_an_unusable_folder_is_one_line_naming_it(case, model, tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("not a folder")
    make, reason = UNUSABLE[case]
    folder = make(tmp_path, monkeypatch)
    monkeypatch.setenv("MOBILE_OPT_WEIGHT_DIR", str(folder))
    status, out, err = run_mobile_run(["--reference", "-p", "onnx-fold-batchnorm", str(model)],
                                      capsys)
    assert_one_line_error(status, err, f"{folder}: cannot use as the derived-weight folder: "
                                       f"{reason.format(tmp=tmp_path)}")
    assert out == "" and (tmp_path / "file").read_text() == "not a folder"


# --- external data --------------------------------------------------------------------

W = (np.arange(64 * 8, dtype=np.float32).reshape(64, 8) - 200) / 100


def external_model(folder: Path, location: str = "w.bin", **entries) -> Path:
    """
    `y = x @ W` whose W (2 KiB) is external data at `location` (`entries` add or replace
    offset and length); the data is written to `w.bin` beside the model.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "w.bin").write_bytes(W.tobytes())
    weight = onnx.TensorProto(name="W", data_type=TensorProto.FLOAT, dims=W.shape)
    weight.data_location = TensorProto.EXTERNAL
    info = {"location": location, "offset": "0", "length": str(W.nbytes)}
    info.update((key, str(value)) for key, value in entries.items())
    for key, value in info.items():
        if value == "None":  # an entry left out
            continue
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [weight])
    path = folder / "model.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                       ir_version=8).SerializeToString())
    return path


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch) -> Path:
    """An unrelated current directory holding a decoy `w.bin`: other bytes, same size."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "w.bin").write_bytes(np.full(W.shape, 7.0, np.float32).tobytes())
    monkeypatch.chdir(folder)
    return folder


def test_external_data_resolves_beside_the_model(tmp_path, elsewhere, cache, capsys):
    path = external_model(tmp_path / "m" / "ext")
    weight = next(op for op in import_onnx(path).walk() if op.name == "onnx.Weight")
    np.testing.assert_array_equal(weight.array(), W)  # not the decoy's sevens
    status, out, err = run_mobile_run(["--reference", str(path)], capsys)
    assert status == 0 and out.rstrip().endswith("PASS"), err
    # a relative model path, and a current directory without any data file
    (elsewhere / "w.bin").unlink()
    os.chdir(tmp_path / "m")
    status, out, err = run_mobile_run(["--reference", "ext/model.onnx"], capsys)
    assert status == 0 and out.rstrip().endswith("PASS"), err


def test_missing_data_is_one_line_even_with_a_file_of_that_name_in_the_cwd(
        tmp_path, elsewhere, cache, capsys):
    path = external_model(tmp_path / "m")
    (tmp_path / "m" / "w.bin").unlink()
    status, out, err = run_mobile_run(["--reference", str(path)], capsys)
    assert_one_line_error(status, err, f"{path}: initializer 'W': external data file "
                                       f"{tmp_path / 'm' / 'w.bin'} does not exist")
    assert out == ""


REFUSED = {
    "climbs out": ("../../etc/passwd", "external data location '../../etc/passwd' points "
                   "outside the model's folder"),
    "climbs to a sibling": ("../outside/w.bin", "points outside the model's folder"),
    "absolute": ("/etc/passwd", "external data location '/etc/passwd' is an absolute path"),
    "a NUL byte": ("w.bin\0../../x", "external data location 'w.bin\\x00../../x' is not a path"),
    "symlink out": ("w.bin", "is a symbolic link"),
    "folder symlink out": ("sub/w.bin", "points outside the model's folder {m} through a "
                           "symbolic link"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_data_outside_the_models_folder_is_refused(case, tmp_path, elsewhere, cache, capsys):
    location, message = REFUSED[case]
    m = tmp_path / "m"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "w.bin").write_bytes(W.tobytes())  # what a refused location could reach
    path = external_model(m, location=location)
    if case == "symlink out":
        (m / "w.bin").unlink()
        (m / "w.bin").symlink_to(outside / "w.bin")
    if case == "folder symlink out":
        (m / "sub").symlink_to(outside)
    status, out, err = run_mobile_run(["--reference", str(path)], capsys)
    assert_one_line_error(status, err, f"{path}: initializer 'W': ")
    assert message.format(m=m) in err and out == "", err


SHORT = {
    "file cut": ({"length": None}, 1000,
                 "holds 1000 bytes, fewer than offset 0 + 2048 bytes of data"),
    "length past the end": ({"offset": 0, "length": 2048}, 2000,
                            "holds 2000 bytes, fewer than offset 0 + 2048"),
    "offset past the end": ({"offset": 4096}, 2048, "fewer than offset 4096 + 2048"),
    "length not the tensor's": ({"length": 1024}, 2048,
                                "external data length 1024 does not match the tensor's 2048"),
}


@pytest.mark.parametrize("case", SHORT)
def test_short_data_is_one_line(case, tmp_path, elsewhere, cache, capsys):
    entries, size, message = SHORT[case]
    path = external_model(tmp_path / "m", **entries)
    data = tmp_path / "m" / "w.bin"
    data.write_bytes(data.read_bytes().ljust(size, b"\0")[:size])
    status, out, err = run_mobile_run(["--reference", str(path)], capsys)
    assert_one_line_error(status, err, f"{path}: initializer 'W': ")
    assert message in err and out == "", err
    with pytest.raises(OnnxImportError, match="initializer 'W'"):
        read_model(path)


def test_data_cut_after_the_import_is_one_line(tmp_path, elsewhere, cache):
    path = external_model(tmp_path / "m2")
    weight = next(op for op in import_onnx(path).walk() if op.name == "onnx.Weight")
    data = tmp_path / "m2" / "w.bin"
    data.write_bytes(data.read_bytes()[:1000])
    os.utime(path, ns=(0, 10**18))  # the model file's version keys the parsed store
    with pytest.raises(WeightStoreError, match=f"^{path}: cannot read weight store: .*'W'"):
        weight.array()
