"""
The device probe (`backends/opencl/runtime_probe.py`): a child process runs the compiler's
kind of kernels on each runtime, and a runtime that aborts, hangs or computes wrong numbers
is passed over without taking the tool down; its cache; the environment's ICD folder and
the folders it refuses; scratch folders that no run, killed or failing, leaves behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from harness import REPO
from mobile_opt.backends.opencl import devices, runtime_probe
from onnx import TensorProto, helper, numpy_helper, save

FAULT = runtime_probe.FAULT_VARIABLE


@pytest.fixture
def fresh_verdicts(tmp_path, monkeypatch):
    """No verdict of this process or of the user's cache: the next choice probes anew."""
    monkeypatch.setattr(devices, "_verdicts", {})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "mobile-opt" / "device-probe.json"


def library_of(device) -> str:
    library = devices.probe_verdict(device)[0]
    assert library is not None, f"no runtime library found for {device.describe()}"
    return library


def _intel():
    try:
        return devices.choose_device("intel")
    except devices.DeviceError as e:
        if os.environ.get("CI") == "true":  # a pip dependency: CI must have it
            pytest.fail(str(e))
        pytest.skip(str(e))


# verdicts -----------------------------------------------------------------------------
def test_the_devices_that_run_kernels_pass(pocl_device, fresh_verdicts):
    for device in [devices.choose_device("pocl"), _intel()]:
        library, problem = devices.probe_verdict(device)
        assert library is not None and problem is None
        cached = json.loads(fresh_verdicts.read_text())  # the verdict the choice wrote
        mine = [d for entry in cached.values() for d in entry["devices"]
                if tuple(d["device"]) == device.identity]
        assert mine and all(d["problem"] is None for d in mine), cached


@pytest.mark.parametrize(
    "fault, timeout, says",
    [
        ("abort", runtime_probe.TIMEOUT_S, "the runtime killed its process (SIGABRT)"),
        ("hang", 5.0, "the probe hung (no answer in 5 s)"),
        ("wrong", runtime_probe.TIMEOUT_S, "wrong results: kernel 'wide' is off numpy"),
    ],
)
def test_a_runtime_that_aborts_hangs_or_computes_wrong_is_unsafe(
        pocl_device, fresh_verdicts, monkeypatch, fault, timeout, says):
    library = library_of(devices.choose_device("pocl"))
    monkeypatch.setenv(FAULT, fault)
    verdicts = runtime_probe.probe(library, timeout=timeout)
    assert verdicts and all(v.device[2] for v in verdicts)  # each names its device
    for verdict in verdicts:
        assert verdict.problem is not None and verdict.problem.startswith(says), verdict
        assert verdict.describe() == f"unsafe: {verdict.problem}"
        assert "\n" not in verdict.problem


def test_an_aborting_pocl_falls_back_with_one_remark(pocl_device, fresh_verdicts, monkeypatch):
    intel = _intel()
    monkeypatch.setenv(FAULT, f"abort:{devices.POCL_PLATFORM}")
    device, remark = devices.default_device()
    assert device.identity == intel.identity
    assert remark is not None and "\n" not in remark
    assert "cannot run on this CPU (the runtime killed its process (SIGABRT)" in remark
    assert remark.endswith(f"running on {intel.name} [{intel.platform}] instead")
    with pytest.raises(devices.DeviceError) as named:
        devices.choose_device("pocl")
    assert "SIGABRT" in str(named.value) and "use --device intel" in str(named.value)


def tiny_model(folder: Path) -> Path:
    """y = x @ w + b, with weights to randomize."""
    w = np.full((4, 3), 0.02, np.float32)
    b = np.zeros(3, np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
         helper.make_node("Add", ["m", "b"], ["y"], name="add")],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    path = folder / "tiny.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9),
         path)
    return path


def mobile_run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mobile_opt.tools.mobile_run", *args],
                          cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_tool_survives_aborting_runtimes(pocl_device, tmp_path):
    """Every runtime aborting: one error line, exit 1; one of them: a remark, and PASS."""
    intel = _intel()
    model = str(tiny_model(tmp_path))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), FAULT: "abort"}
    done = mobile_run([model, "--device", "pocl"], env)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mobile-run: error: "), done.stderr
    assert "cannot run the compiler's kernels on this host: the runtime killed its process " \
        "(SIGABRT)" in lines[0]
    env[FAULT] = f"abort:{devices.POCL_PLATFORM}"
    done = mobile_run([model], env)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("remark: ") and "SIGABRT" in lines[0], \
        done.stderr
    assert f"device: {intel.name} [{intel.platform}]" in done.stdout
    assert " PASS" in done.stdout


# cache ------------------------------------------------------------------------------
def counting_probe(monkeypatch) -> list[str | None]:
    """`runtime_probe.probe` replaced by one that records its calls and passes all."""
    calls: list[str | None] = []

    def probe(library, timeout=runtime_probe.TIMEOUT_S):
        calls.append(library)
        return [runtime_probe.Verdict(("P", "1.0", f"device of {library}"), None)]

    monkeypatch.setattr(runtime_probe, "probe", probe)
    return calls


def test_the_cache_is_reused_per_runtime(tmp_path, monkeypatch):
    calls = counting_probe(monkeypatch)
    cache = runtime_probe.ProbeCache(tmp_path / "probe.json")
    first = cache.verdicts("libone.so")
    again = runtime_probe.ProbeCache(tmp_path / "probe.json").verdicts("libone.so")
    assert first == again and calls == ["libone.so"]
    cache.verdicts("libtwo.so")
    assert calls == ["libone.so", "libtwo.so"]
    monkeypatch.setenv(FAULT, "wrong")  # another probe: another verdict
    cache.verdicts("libone.so")
    assert calls == ["libone.so", "libtwo.so", "libone.so"]


def test_a_hang_is_not_kept(tmp_path, monkeypatch):
    """A probe that hung may have met a loaded machine: the next run asks again."""
    calls: list[str | None] = []

    def probe(library, timeout=runtime_probe.TIMEOUT_S):
        calls.append(library)
        return [runtime_probe.Verdict(("P", "1.0", "d"), f"{runtime_probe.HUNG} (no answer)")]

    monkeypatch.setattr(runtime_probe, "probe", probe)
    cache = runtime_probe.ProbeCache(tmp_path / "probe.json")
    assert cache.verdicts("libone.so")[0].problem.startswith(runtime_probe.HUNG)
    cache.verdicts("libone.so")
    assert calls == ["libone.so", "libone.so"] and not (tmp_path / "probe.json").exists()


def test_the_cache_follows_the_library_file(tmp_path, monkeypatch):
    calls = counting_probe(monkeypatch)
    library = tmp_path / "libfake.so"
    library.write_bytes(b"one")
    cache = runtime_probe.ProbeCache(tmp_path / "probe.json")
    cache.verdicts(str(library))
    cache.verdicts(str(library))
    library.write_bytes(b"other")  # an upgraded runtime is probed again
    cache.verdicts(str(library))
    assert calls == [str(library)] * 2


@pytest.mark.parametrize("text", ["", "{", "[]", "null", '{"k": 1}', "\x00\xff"])
def test_a_corrupt_cache_is_rebuilt(tmp_path, monkeypatch, text):
    calls = counting_probe(monkeypatch)
    path = tmp_path / "probe.json"
    cache = runtime_probe.ProbeCache(path)
    path.write_text(text)
    assert cache.verdicts("libone.so")[0].problem is None
    data = json.loads(path.read_text())
    assert data[cache.key("libone.so")]["devices"][0]["device"][2] == "device of libone.so"
    key = cache.key("libone.so")
    path.write_text(json.dumps({key: {"devices": [{"device": "x"}]}}))  # a bad entry
    cache.verdicts("libone.so")
    assert calls == ["libone.so", "libone.so"]


def test_the_cpu_is_part_of_the_key(tmp_path, monkeypatch):
    cache = runtime_probe.ProbeCache(tmp_path / "probe.json")
    here = cache.key("libone.so")
    monkeypatch.setattr(runtime_probe, "cpu_identity", lambda: "AuthenticAMD 25 1 1")
    assert cache.key("libone.so") != here


# folders ----------------------------------------------------------------------------
def test_each_environment_has_its_own_vendor_folder(monkeypatch):
    monkeypatch.setattr(sys, "prefix", "/opt/venv-one")
    one = devices.vendor_folders()
    monkeypatch.setattr(sys, "prefix", "/opt/venv-two")
    two = devices.vendor_folders()
    assert len(one) == len(two) == 2
    assert one[0] != two[0] and one[1] != two[1]


def test_the_vendor_folders_of_removed_environments_go(tmp_path, monkeypatch):
    if devices.intel_cpu_runtime() is None and devices.pocl_runtime() is None:
        pytest.skip("no pip-installed OpenCL runtime to register")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    cache = tmp_path / "mobile-opt"
    for name, prefix in (("gone", tmp_path / "removed-venv"), ("kept", tmp_path)):
        folder = cache / f"opencl-vendors-{name}"
        folder.mkdir(parents=True)
        (folder / "pocl.icd").write_text("libpocl.so.2\n")
        (folder / devices.PREFIX_FILE).write_text(str(prefix))
    used = devices.register_pip_vendors()
    assert used is not None and used.parent == cache
    assert (used / devices.PREFIX_FILE).read_text() == sys.prefix
    assert not (cache / "opencl-vendors-gone").exists()
    assert (cache / "opencl-vendors-kept" / "pocl.icd").is_file()


def plant(folder: Path, how: str) -> None:
    if how == "another user's":
        folder.mkdir(mode=0o700)
        os.chown(folder, 12345, 12345)
    elif how == "writable by all":
        folder.mkdir()
        os.chmod(folder, 0o777)
    elif how == "writable by another group":
        folder.mkdir()
        os.chown(folder, os.getuid(), os.getgid() + 12345)
        os.chmod(folder, 0o775)
    elif how == "a link":
        target = folder.parent / "elsewhere"
        target.mkdir(mode=0o700)
        folder.symlink_to(target)


@pytest.mark.parametrize("how", ["another user's", "writable by all", "a link"])
def test_a_planted_fallback_folder_is_refused(tmp_path, monkeypatch, how):
    if os.getuid() != 0 and how == "another user's":
        pytest.skip("planting another user's folder takes root")
    if devices.intel_cpu_runtime() is None and devices.pocl_runtime() is None:
        pytest.skip("no pip-installed OpenCL runtime to register")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(devices, "cache_folder", lambda: None)
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    planted = devices.vendor_folders()[-1]
    assert planted.parent == tmp_path
    plant(planted, how)
    used = devices.register_pip_vendors()
    assert used is not None and used != planted
    assert os.environ["OCL_ICD_VENDORS"] == str(used)
    assert not list(planted.glob("*.icd")) and not list(planted.resolve().glob("*.icd"))
    info = os.lstat(used)
    assert info.st_uid == os.getuid() and not info.st_mode & 0o077
    assert list(used.glob("*.icd"))


def test_the_fallback_folder_of_ours_is_used(tmp_path, monkeypatch):
    if devices.intel_cpu_runtime() is None and devices.pocl_runtime() is None:
        pytest.skip("no pip-installed OpenCL runtime to register")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(devices, "cache_folder", lambda: None)
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    assert devices.register_pip_vendors() == devices.vendor_folders()[-1]
    assert devices.runtime_libraries()  # read back from the folder


@pytest.mark.parametrize("how", ["another user's", "writable by all",
                                 "writable by another group", "a link"])
def test_a_planted_cache_folder_is_refused(tmp_path, monkeypatch, how):
    if os.getuid() != 0 and how in ("another user's", "writable by another group"):
        pytest.skip("planting another user's folder takes root")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert devices.cache_folder() == tmp_path / "mobile-opt"
    (tmp_path / "mobile-opt").rmdir()
    plant(tmp_path / "mobile-opt", how)
    assert devices.cache_folder() is None


def test_a_cache_folder_its_own_group_may_write_is_used(tmp_path, monkeypatch):
    """umask 002 (a group of the user's own) leaves folders group-writable."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "mobile-opt").mkdir()
    os.chmod(tmp_path / "mobile-opt", 0o775)
    assert devices.cache_folder() == tmp_path / "mobile-opt"


# scratch ----------------------------------------------------------------------------
def ours(folder: Path) -> list[Path]:
    """What runs left in a temporary folder (others' tools may write there too)."""
    return [p for p in folder.iterdir() if p.name.startswith("mobile-run-")]


def test_no_scratch_folder_outlives_a_failing_or_killed_run(tmp_path):
    model = tiny_model(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch), "MOBILE_OPT_WEIGHT_DIR": str(tmp_path / "weights")}
    # a run that fails after making its random copy
    done = mobile_run([str(model), "--reference", "--random-weights", "--input",
                       f"nosuch={tmp_path / 'x.npy'}"], env)
    assert done.returncode == 1 and "mobile-run: error: " in done.stderr, done.stderr
    assert not ours(scratch)
    # a run killed with its copy on disk, then the next run
    killed = subprocess.run(
        [sys.executable, "-c",
         "import os, sys; from pathlib import Path\n"
         "from mobile_opt.tools.model_checks import with_random_weights\n"
         "print(with_random_weights(Path(sys.argv[1]), 0), flush=True)\n"
         "os.kill(os.getpid(), 9)", str(model)],
        cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True, timeout=120,
        check=False)
    assert killed.returncode == -9, killed.stderr
    left = Path(killed.stdout.strip())
    assert left.is_file() and left.parent.parent == scratch and ours(scratch)
    done = mobile_run([str(model), "--reference", "--random-weights"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not ours(scratch)


def test_a_live_run_keeps_its_scratch_folder(tmp_path, monkeypatch):
    from mobile_opt.tools import cli

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = cli.scratch_folder()
    other = tmp_path / "mobile-run-4194303.5-abcd"  # no such process: gone
    other.mkdir()
    stranger = tmp_path / "mobile-run-not-ours"
    stranger.mkdir()
    cli.sweep_scratch(tmp_path)
    assert mine.is_dir() and stranger.is_dir() and not other.exists()
