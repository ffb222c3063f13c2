"""
`bench/select_layouts.py --target gpu` run as a program (tests import no bench script): every
solver's row on one model, local and gcd2 compiled, run on PoCL and checked against
onnxruntime.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_gpu_rows_measured_on_pocl(pocl_device, tmp_path: Path):
    out = tmp_path / "select.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "select_layouts.py"), "--target", "gpu", "--device",
         "pocl", "--only", "gpt2_small", "--measure", "gpt2_small", "--repeat", "2",
         "--zoo-cache", str(tmp_path / "cache"), "--out", str(out)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    rows = {r["solver"]: r for r in report["rows"]}
    assert set(rows) == {"local", "chain", "pbqp", "gcd2", "exact"}
    assert all(r["model"] == "gpt2_small" and r["onnx_nodes"] == 92 for r in rows.values())
    exact = rows["exact"]["cost"]
    for name in ("local", "pbqp", "gcd2"):
        assert rows[name]["cost"] >= exact - 1e-6 * exact
    for name in ("local", "gcd2"):
        row = rows[name]
        assert row["measured"] > 0 and row["measured_unit"] == "kernel ns"
        assert row["correct"] and row["rel_err"] <= 1e-3
        assert 0 <= row["transforms"] <= row["kernels"]
        assert row["noise"] >= 0
        assert 0 <= row["transform_share"] <= 1
        assert (row["transform_share"] > 0) == (row["transforms"] > 0)
    assert abs(rows["local"]["aa"]) < 1 and rows["gcd2"]["aa"] is None
    assert rows["pbqp"]["measured"] is None
    assert rows["local"]["measured_vs_local"] == 1.0
    assert (tmp_path / "select.png").is_file()
    assert "gpt2_small" in done.stdout


def test_merge_of_a_file_that_is_no_result_is_one_line(tmp_path: Path):
    (tmp_path / "other.json").write_text('{"rows": []}')
    for part in ("missing.json", "other.json"):
        done = subprocess.run(
            [sys.executable, str(REPO / "bench" / "select_layouts.py"), "--merge",
             str(tmp_path / part), "--out", str(tmp_path / "merged.json")],
            capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 1
        assert done.stderr.startswith("select_layouts: --merge: not a result of this script")
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not (tmp_path / "merged.json").exists()
