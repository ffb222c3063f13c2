"""
Load capacity (FlashMem §4.2): its reading from slowdown curves whose answer is known,
the profile section `models/flashmem.load_ratios` reads (and its fallback to the
paper's ratios), the chunk moves the probe times on PoCL, and a quick probe through
`mobile-probe`.
"""

from __future__ import annotations

import json

import numpy as np
import pyopencl as cl
import pytest

from mobile_opt.backends.opencl.devices import choose_device
from mobile_opt.backends.opencl.probe import loadprobe
from mobile_opt.backends.opencl.probe.loadprobe import (
    THRESHOLD,
    ChunkMover,
    capacity_ratio,
    chunk_counts,
    class_ratios,
)
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.frontend.single_node import save_single_node
from mobile_opt.models.device_profile import (
    SCHEMA,
    ProfileError,
    load_profile,
)
from mobile_opt.models.flashmem import LOAD_RATIO, OpClass, load_capacity, load_ratios
from mobile_opt.tools import mobile_probe, tuning

# ---------------------------------------------------------------- reading the curves


def test_capacity_of_a_linear_curve():
    # slowdown 1 + r / 20 reaches 1.1 at r = 2, between the points at 1 and 3
    points = [(r, 1 + r / 20) for r in (0.5, 1, 3, 5, 9)]
    ratio, reached = capacity_ratio(points, 0.1)
    assert reached and ratio == pytest.approx(2.0)
    # the threshold moves it: 1.25 is reached at r = 5, a measured point
    assert capacity_ratio(points, 0.25)[0] == pytest.approx(5.0)


@pytest.mark.parametrize("kernel_ms, bandwidth, contention", [
    (1.0, 2.0, 0.01), (0.2, 8.0, 0.0), (5.0, 0.5, 0.03)])
def test_capacity_of_an_overlap_curve(kernel_ms, bandwidth, contention):
    """The span of a kernel slowed by `contention` per extra input's worth of bytes, beside
    copies of `bandwidth` input's worth per ms: the capacity solves span = 1.1 × alone."""
    def slowdown(r):
        return max(kernel_ms * (1 + contention * r), r / bandwidth) / kernel_ms

    ladder = [2.0**k for k in range(-8, 12)]
    # the crossing: contention alone, or the copies outlasting the kernel
    truth = min(THRESHOLD / contention if contention else np.inf,
                (1 + THRESHOLD) * kernel_ms * bandwidth)
    ratio, reached = capacity_ratio([(r, slowdown(r)) for r in ladder])
    assert reached
    # between ladder points the curve is not a line: within the ladder's step
    assert truth / 2 <= ratio <= truth * 1.0001


def test_capacity_ignores_one_noisy_point_and_says_when_never_reached():
    noisy = [(0.5, 1.02), (1, 1.3), (2, 1.04), (4, 1.05), (8, 1.5), (16, 2.0)]
    ratio, reached = capacity_ratio(noisy, 0.1)
    assert reached and ratio == pytest.approx(4 + 4 * 0.05 / 0.45)
    assert capacity_ratio([(1, 1.01), (4, 0.97), (16, 1.05)], 0.1) == (16, False)
    # the first point past already: from no load, no slowdown
    assert capacity_ratio([(1, 1.5), (2, 2.0)], 0.1) == (pytest.approx(0.2), True)
    # the last point past counts without a next one
    assert capacity_ratio([(1, 1.0), (2, 1.3)], 0.1) == (pytest.approx(1 + 1 / 3), True)


def test_class_ratio_is_the_least_of_its_kernels():
    ratios = class_ratios({"matmul": (OpClass.REUSABLE, 4.0), "conv": (OpClass.REUSABLE, 1.5),
                           "relu": (OpClass.ELEMENTAL, 0.3)})
    assert ratios == {OpClass.REUSABLE: 1.5, OpClass.ELEMENTAL: 0.3}


def test_chunk_counts_round_to_whole_chunks_once_each():
    assert chunk_counts(1 << 20, 1 << 16, [1 / 64, 1 / 32, 0.25, 1, 4, 64], 100) == [1, 4, 16, 64]


# ---------------------------------------------------------------- the profile section


def _profile(tmp_path, section):
    profile = {"schema": SCHEMA, "identity": {"name": "dev"}}
    if section is not None:
        profile["load_capacity"] = section
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(profile))
    return load_profile(str(path))


def test_load_ratios_round_trip_through_the_profile(tmp_path):
    measured = {"elemental": 0.42, "reusable": 7.5, "hierarchical": 0.125}
    ratios = load_ratios(_profile(tmp_path, {"threshold": 0.1, "ratios": measured}))
    assert ratios == {OpClass(c): r for c, r in measured.items()}
    assert load_capacity(OpClass.REUSABLE, 100 << 10, 1 << 10, ratios) == 750
    # no section, or a class it lacks: the paper's
    assert load_ratios(_profile(tmp_path, None)) == LOAD_RATIO
    assert load_ratios(None) == LOAD_RATIO
    partial = load_ratios(_profile(tmp_path, {"ratios": {"reusable": 2.0}}))
    assert partial == {**LOAD_RATIO, OpClass.REUSABLE: 2.0}


@pytest.mark.parametrize("ratios, message", [
    ({"reusable": -1}, "load_capacity.ratios.reusable is -1"),
    ({"elemental": "lots"}, "load_capacity.ratios.elemental is 'lots'"),
    ({"gather": 1.0}, "ratios of no operator class: gather"),
])
def test_bad_load_ratios_are_one_line(tmp_path, ratios, message):
    with pytest.raises(ProfileError, match=message):
        load_ratios(_profile(tmp_path, {"ratios": ratios}))


def test_shipped_pocl_ratios_are_read_from_its_points():
    """The PoCL profile's ratios are what its raw points give (and what flashmem reads)."""
    section = load_profile("pocl")["load_capacity"]
    capacities = {}
    for name, kernel in section["kernels"].items():
        points = [(p["ratio"], p["slowdown"]) for p in kernel["points"]]
        ratio, reached = capacity_ratio(points, section["threshold"])
        assert (kernel["ratio"], kernel["reached"]) == (pytest.approx(ratio), reached), name
        capacities[name] = (OpClass(kernel["class"]), ratio)
    want = {c: pytest.approx(r) for c, r in class_ratios(capacities).items()}
    assert load_ratios(load_profile("pocl")) == want and set(want) == set(OpClass)
    # the mobile presets measured none: the paper's
    assert load_ratios(load_profile("adreno740")) == LOAD_RATIO


# ---------------------------------------------------------------- on PoCL


def test_chunk_mover_moves_the_staged_bytes_into_the_image(pocl_device, tmp_path):
    info = choose_device("pocl")
    path = save_single_node(tmp_path / "relu.onnx", "Relu", ((8, 8),))
    build = tuning.build(import_onnx(path), info)
    chunk = 4096
    mover = ChunkMover(build, chunk, 3, max_width=128)  # a chunk is two rows of 128 pixels
    assert (mover.width, mover.rows) == (128, 2)
    mover.host[:] = np.random.default_rng(0).integers(0, 255, mover.host.size, np.uint8)
    gate = cl.UserEvent(build.context)
    events = mover.enqueue(2, gate)
    gate.set_status(cl.command_execution_status.COMPLETE)
    cl.wait_for_events(events)
    pixels = np.empty((4, 128, 4), np.float32)
    cl.enqueue_copy(mover.queue, pixels, mover.image, origin=(0, 0), region=(128, 4)).wait()
    assert pixels.tobytes() == mover.host[: 2 * chunk].tobytes()
    mover.close()


def test_quick_load_capacity_probe(pocl_device, tmp_path, capsys):
    out, plots = tmp_path / "pocl.json", tmp_path / "plots"
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "load-capacity", "--quick", "-o", str(out),
                           "--plots", str(plots)])
    assert exit.value.code == 0
    profile = load_profile(str(out))
    section = profile["load_capacity"]
    assert section["threshold"] == THRESHOLD
    kernels = section["kernels"]
    assert {k["class"] for k in kernels.values()} == {c.value for c in OpClass}
    for kernel in kernels.values():
        assert kernel["alone_ms"] > 0 and kernel["input_bytes"] > 0 and kernel["points"]
        for point in kernel["points"]:
            assert point["ratio"] == pytest.approx(point["extra_bytes"] / kernel["input_bytes"])
            assert point["slowdown"] > 0 and len(point["loaded_ms"]) == len(point["alone_ms"])
        ratio, _ = capacity_ratio([(p["ratio"], p["slowdown"]) for p in kernel["points"]])
        assert kernel["ratio"] == pytest.approx(ratio)
    ratios = load_ratios(profile)
    assert ratios == {OpClass(c): pytest.approx(r) for c, r in section["ratios"].items()}
    assert (plots / "load_capacity.png").is_file()
    assert "load capacity" in capsys.readouterr().out


def test_load_capacity_failure_is_one_line(pocl_device, tmp_path, capsys, monkeypatch):
    def fails(*args, **kwargs):
        raise cl.Error("clEnqueueCopyBufferToImage failed: OUT_OF_RESOURCES")

    monkeypatch.setattr(loadprobe, "ChunkMover", fails)
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "load-capacity", "--quick", "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 1 and "Traceback" not in "\n".join(err)
    assert "load-capacity: MatMul" in err[-1] and "OUT_OF_RESOURCES" in err[-1]
    assert not out.exists()

