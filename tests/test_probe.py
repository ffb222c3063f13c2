"""
`mobile-probe`: the readings of its curves and fits on synthetic data whose answer is
known, its micro-benchmark kernels on PoCL (the pointer chase really follows the walk
it was given), the profile and plots it writes, and its one-line errors.
"""

from __future__ import annotations

import datetime
import io
import json
from pathlib import Path

import matplotlib.image

import numpy as np
import pytest

from mobile_opt.backends.opencl.devices import choose_device
from mobile_opt.backends.opencl.probe import tmprobe
from mobile_opt.backends.opencl.probe.archprobe import IMAGE_CHASE, Effort
from mobile_opt.models.device_profile import (
    PROFILE_DIR,
    SCHEMA,
    ProfileError,
    load_profile,
    texture_constants,
)
from mobile_opt.backends.opencl.probe.runner import Runner
from mobile_opt.backends.opencl.probe.sweep import Sweep, plateau_end, steps
from mobile_opt.tools import kernel_groups
from mobile_opt.tools.tuning import node_name
from mobile_opt.dialects.texture.tiling import TileConfig
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.frontend.single_node import NODE_NAME, save_single_node
from mobile_opt.models.texture_kernels import FAMILIES
from mobile_opt.models.tmmodel import FEATURES, cross_block_features
from mobile_opt.tools import mobile_probe
from mobile_opt.transforms.prune_configs import kernel_of

# ---------------------------------------------------------------- readings


def test_plateau_and_steps():
    curve = [(1, 1.0), (2, 1.1), (3, 1.0), (4, 2.0), (5, 2.1), (6, 1.9), (7, 4.5), (8, 4.4)]
    assert plateau_end(curve) == 3
    assert steps(curve) == [3, 6]
    assert plateau_end([(1, 1.0), (2, 1.1)]) is None
    assert steps([(1, 1.0), (2, 5.0), (3, 1.0), (4, 1.0)]) == []  # one noisy point


@pytest.mark.parametrize("thrash, lines", [(1.6, 64), (2.5, 16), (1.2, 256)])
def test_thrashing_fit_recovers_eq2(thrash, lines):
    rng = np.random.default_rng(0)
    samples = []
    for reuse in (1, 2, 4, 8):
        for n in (1, 2, 4, 8, 16, 32, 64, 128):
            exponent = max(0, -(-(n * reuse - lines) // lines))
            samples.append((n, reuse, thrash**exponent * float(np.exp(rng.normal(0, 0.01)))))
    d, c, residual = tmprobe.fit_thrashing(samples)
    assert c == lines and d == pytest.approx(thrash, rel=0.02) and residual < 1e-3


def test_beta_fit_recovers_eq1():
    rng = np.random.default_rng(1)
    truth = rng.uniform(1, 20, len(FEATURES))
    traces = [tmprobe.random_walk(rng, 256, 256, 400) for _ in range(40)]
    features = np.array([cross_block_features(t) for t in traces])
    latency = features @ truth * (1 + rng.normal(0, 0.005, len(traces)))
    beta, error, held_out = tmprobe.fit_beta(features, latency)
    assert error < 0.01 and held_out < 0.05
    assert np.allclose(features @ beta, features @ truth, rtol=0.02)


def test_cross_block_features_of_known_walks():
    row = np.array([(x, 0) for x in range(64)])
    features = dict(zip(FEATURES, cross_block_features(row)))
    assert features["constant"] == 1
    for w in (2, 4, 8, 16):
        assert features[f"x{w}x{w}"] == pytest.approx((64 // w - 1) / 63)
        assert features[f"y{w}x{w}"] == 0
    diagonal = np.array([(k, k) for k in range(33)])
    values = dict(zip(FEATURES, cross_block_features(diagonal)))
    assert values["x4x4"] == values["y4x4"] == pytest.approx(8 / 32)


def test_random_walk_is_one_chain():
    rng = np.random.default_rng(3)
    trace = tmprobe.random_walk(rng, 64, 48, 2000)
    assert len({tuple(p) for p in trace}) == len(trace)
    pixels = tmprobe.chase_image(trace, 64, 48)
    at = tuple(trace[0])
    for k in range(1, len(trace)):
        at = tuple(pixels[at[1], at[0], :2])
        assert at == tuple(trace[k])


def _representative_kernels(nodes: dict, folder: Path) -> dict:
    """The kernel each family's representative node lowers to."""
    kernels = {}
    for family, node in nodes.items():
        path = save_single_node(folder / f"{family}.onnx", node.op, node.shapes, node.attrs)
        kernels[family] = kernel_of(next(o for o in import_onnx(str(path)).walk()
                                         if node_name(o) == NODE_NAME))
    return kernels


def test_representatives_are_of_their_family(tmp_path):
    kernels = _representative_kernels(kernel_groups.representatives(8, 16, 64), tmp_path)
    assert tuple(kernels) == FAMILIES
    assert all(k is not None and k.family == f for f, k in kernels.items())


# ---------------------------------------------------------------- on PoCL


def test_pointer_chase_kernel_follows_the_walk(pocl_device):
    runner = Runner(choose_device("pocl"))
    rng = np.random.default_rng(4)
    trace = tmprobe.random_walk(rng, 128, 64, 3000)
    image = runner.image(tmprobe.chase_image(trace, 128, 64))
    kernel = runner.kernel(IMAGE_CHASE, "chase")
    out = runner.buffer(nbytes=4)
    for count in (1, 7, 2999, 3000):
        runner.time(kernel, (1,), (1,), image, out, np.int32(count))
        x, y = trace[count % len(trace)]
        assert runner.read(out, np.int32, 1)[0] == x + y


def test_kernel_groups_probe_times_every_family(pocl_device, tmp_path, monkeypatch):
    scales = []
    real = kernel_groups.representatives
    monkeypatch.setattr(kernel_groups, "representatives",
                        lambda *scale: scales.append(scale) or real(*scale))
    runner = Runner(choose_device("pocl"))
    sweeps, tables = kernel_groups.probe_kernel_groups(runner, Effort(quick=True))
    assert tuple(tables) == FAMILIES and len(scales) == 1
    kernels = _representative_kernels(real(*scales[0]), tmp_path)
    limit = runner.device.max_work_group_size
    assert [s.name for s in sweeps] == [f"kernel_groups_{f}" for f in FAMILIES]
    for (family, table), sweep in zip(tables.items(), sweeps):
        kernel, times = kernels[family], table["relative_time"]
        assert table["kernel"] == kernel.describe_shape() and table["best_ms"] > 0
        assert len(times) > 1 and min(times.values()) == 1.0
        assert all(t >= 1.0 for t in times.values())
        gx_total, gy_total = kernel.global_size(TileConfig(tuple(table["tile"])))
        for shape in times:
            gx, gy = map(int, shape.split("x"))
            assert gx_total % gx == 0 and gy_total % gy == 0 and gx * gy <= limit, shape
        # the sweep plots the same times, in ms
        plotted = {f"{gx}x{series[3:]}": ms for series, points in sweep.series.items()
                   for gx, ms in points}
        assert plotted.keys() == times.keys()
        assert all(plotted[s] == pytest.approx(t * table["best_ms"]) for s, t in times.items())
    # MatMul's B in each layout, in the family's best group (one of the times above)
    matmul = tables["matmul"]
    patterns = matmul["pattern_relative_time"]
    assert set(patterns) == {"rows4", "block2", "block4", "block8", "cols4"}
    assert min(patterns.values()) == 1.0 and all(t >= 1.0 for t in patterns.values())
    assert matmul["relative_time"]["{}x{}".format(*matmul["pattern_group"])] == 1.0
    assert all("pattern_relative_time" not in t for f, t in tables.items() if f != "matmul")
    # each family at several thread tiles, its own among them; B's patterns at every tile
    for family, table in tables.items():
        tiles = table["tiles"]
        want = [t for t in kernels[family].thread_tiles()
                if max(t) in kernel_groups.PROBED_TILE_SIDES]
        assert list(tiles) == [f"{x}x{y}" for x, y in want] and len(tiles) > 1, family
        own = tiles["{}x{}".format(*table["tile"])]
        assert own["relative_time"] == table["relative_time"]
        for entry in tiles.values():
            assert min(entry["relative_time"].values()) == 1.0 and entry["best_ms"] > 0
            assert ("pattern_relative_time" in entry) == (family == "matmul")


def _png_size(data: bytes) -> tuple[int, int]:
    """The size of a PNG that decodes, with something drawn on its white."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(io.BytesIO(data), format="png")
    assert (pixels[..., :3] < 0.5).any()
    return pixels.shape[1], pixels.shape[0]


def test_sweep_plot_is_a_png():
    sweep = Sweep("t", "x", "y", {"a": [(1, 1), (2, 4), (4, 3)], "b": [(0, 1), (2, 2)]},
                  log_x=True, marks=[(2, "knee")], name="t")
    assert _png_size(mobile_probe.plot(sweep)) == (720, 440)


def test_quick_probe_writes_profile_and_plots(pocl_device, tmp_path, capsys):
    out, plots = tmp_path / "pocl.json", tmp_path / "plots"
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--device", "pocl", "--quick", "-o", str(out), "--plots", str(plots)])
    assert exit.value.code == 0
    profile = load_profile(str(out))
    assert profile["schema"] == SCHEMA and profile["identity"]["source"] == "measured"
    compute = profile["compute"]
    assert compute["warp_size"] >= 1 and compute["cores"] >= 1
    assert compute["registers_per_core"] > 0
    assert set(profile["bandwidth_gbs"]) == {"buffer", "texture", "local", "constant"}
    assert all(v > 0 for v in profile["bandwidth_gbs"].values())
    tm = profile["tmmodel"]
    assert tm["features"] == list(FEATURES) and len(tm["beta"]) == len(FEATURES)
    assert tm["cache_lines"] >= 1 and tm["thrash_factor"] >= 1
    assert texture_constants(profile).warp_size == compute["warp_size"]
    sweep = tm["work_groups"]
    assert min(sweep["relative_time"].values()) == 1.0 and sweep["round_spread"] >= 0
    assert tuple(tm["kernel_groups"]) == FAMILIES
    assert all(min(t["relative_time"].values()) == 1.0 for t in tm["kernel_groups"].values())
    assert dict(texture_constants(profile).family_group_factors).keys() == set(FAMILIES)
    assert {f"kernel_groups_{f}" for f in FAMILIES} <= set(profile["sweeps"])
    pngs = sorted(p.stem for p in plots.glob("*.png"))
    assert pngs == sorted(profile["sweeps"])
    for png in plots.glob("*.png"):
        _png_size(png.read_bytes())
    assert "TMModel" in capsys.readouterr().out


@pytest.mark.parametrize("args, message, code", [
    (["--device", "no-such-device"], "no OpenCL device matches 'no-such-device'", 1),
    (["--only", "warp,bogus"], "--only: no probe bogus", 2),
    (["--only", ","], "--only: no probe named", 2),
])
def test_bad_options_are_one_line(pocl_device, tmp_path, capsys, args, message, code):
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main([*args, "-o", str(out), "--quick"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == code and len(err) == 1
    assert message in err[-1] and err[-1].startswith("mobile-probe: error")
    assert not out.exists()


def test_update_replaces_only_the_probes_run(pocl_device, tmp_path, capsys):
    shipped = PROFILE_DIR / "pocl.json"
    out = tmp_path / "pocl.json"
    earlier = json.loads(shipped.read_text())
    earlier["tmmodel"]["work_groups"] = {"relative_time": {"1x1": 9.0}}  # to be replaced
    out.write_text(json.dumps(earlier))
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "work-groups", "--quick", "--update", "-o", str(out)])
    assert exit.value.code == 0
    profile = json.loads(out.read_text())
    assert profile["tmmodel"]["work_groups"]["relative_time"] != {"1x1": 9.0}
    assert "round_spread" in profile["tmmodel"]["work_groups"]
    for kept in ("compute", "caches", "bandwidth_gbs"):
        assert profile[kept] == earlier[kept]
    assert profile["tmmodel"]["beta"] == earlier["tmmodel"]["beta"]
    assert set(profile["sweeps"]) == set(earlier["sweeps"])  # its sweep replaced in place
    assert "work-groups" in profile["identity"]["reprobed"]
    assert profile["identity"]["date"] == earlier["identity"]["date"]


def test_update_keeps_the_profiles_driver_facts(pocl_device, tmp_path, capsys):
    """A profile measured on another host keeps its driver facts, and says which differ."""
    out = tmp_path / "pocl.json"
    earlier = json.loads((PROFILE_DIR / "pocl.json").read_text())
    earlier["compute"]["local_memory_bytes"] = 12345  # no PoCL reports this
    earlier["image"]["max_width"] = 321
    out.write_text(json.dumps(earlier))
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "work-groups", "--quick", "--update", "-o", str(out)])
    assert exit.value.code == 0
    profile = json.loads(out.read_text())
    assert profile["compute"] == earlier["compute"] and profile["image"] == earlier["image"]
    remark = capsys.readouterr().err
    assert "compute.local_memory_bytes 12345 (here " in remark
    assert "image.max_width 321 (here " in remark


def test_update_of_the_kernel_groups_keeps_the_rest(pocl_device, tmp_path, capsys):
    out = tmp_path / "pocl.json"
    earlier = json.loads((PROFILE_DIR / "pocl.json").read_text())
    out.write_text(json.dumps(earlier))
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "kernel-groups", "--quick", "--update", "-o", str(out)])
    assert exit.value.code == 0
    profile = json.loads(out.read_text())
    tables = profile["tmmodel"]["kernel_groups"]
    assert tuple(tables) == FAMILIES
    for family, table in tables.items():
        # the quick readings replace the full ones whole: no shape of the earlier
        # (larger) kernel is left behind in the table or in its sweep
        assert table["kernel"] != earlier["tmmodel"]["kernel_groups"][family]["kernel"]
        assert table == profile["details"]["kernel-groups"][family]
        assert min(table["relative_time"].values()) == 1.0
        swept = {f"{int(gx)}x{int(gy[3:])}" for gy, points in
                 profile["sweeps"][f"kernel_groups_{family}"]["series"].items()
                 for gx, _ in points}
        assert swept == set(table["relative_time"])
    for kept in ("compute", "caches", "bandwidth_gbs"):
        assert profile[kept] == earlier[kept]
    for kept in ("beta", "thrash_factor", "work_groups"):
        assert profile["tmmodel"][kept] == earlier["tmmodel"][kept]
    assert set(profile["sweeps"]) == set(earlier["sweeps"])
    reprobed = profile["identity"]["reprobed"]
    assert reprobed["kernel-groups"] == datetime.date.today().isoformat()
    assert reprobed["work-groups"] == earlier["identity"]["reprobed"]["work-groups"]
    assert profile["identity"]["date"] == earlier["identity"]["date"]


def test_kernel_groups_failure_is_one_line(pocl_device, tmp_path, capsys, monkeypatch):
    from mobile_opt.backends.opencl.executor import OpenCLRunError

    def fails(*args, **kwargs):
        raise OpenCLRunError("kernel does not build")

    monkeypatch.setattr(kernel_groups, "retime", fails)
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "kernel-groups", "--quick", "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 1 and "Traceback" not in "\n".join(err)
    assert "kernel-groups: MatMul" in err[-1] and "kernel does not build" in err[-1]
    assert not out.exists()


@pytest.mark.parametrize("profile, message", [
    (None, "no such file"), ("nvidia-h100", "a profile of NVIDIA H100 80GB HBM3, not of"),
])
def test_update_needs_a_profile_of_the_device(pocl_device, tmp_path, capsys, profile, message):
    out = tmp_path / "p.json"
    if profile:
        out.write_text((PROFILE_DIR / f"{profile}.json").read_text())
    before = out.read_text() if profile else None
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["--only", "work-groups", "--quick", "--update", "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 1 and message in err[-1] and len(err) == 1
    assert (out.read_text() if profile else None) == before  # left as it was


def test_missing_output_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        mobile_probe.main(["-o", str(tmp_path / "none" / "p.json"), "--quick"])
    assert exit.value.code == 1 and "does not exist" in capsys.readouterr().err


# ---------------------------------------------------------------- profiles


def test_shipped_profiles_load():
    for name in ("adreno640", "adreno740", "mali-g76"):
        profile = load_profile(name)
        assert profile["identity"]["source"] == "published"
        assert profile["identity"]["citation"]


def test_profile_errors_are_one_line(tmp_path):
    with pytest.raises(ProfileError, match="no such device profile"):
        load_profile("nonesuch")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ProfileError, match="not a device profile"):
        load_profile(str(bad))
    bad.write_text(json.dumps({"schema": SCHEMA, "identity": {"name": "x"}}))
    with pytest.raises(ProfileError, match="no tmmodel.beta"):
        texture_constants(load_profile(str(bad)))
