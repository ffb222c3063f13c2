"""
`bench/e2e.py --report`: saved whole-model results as a Markdown table of ours beside PyTorch
eager and torch.compile's three modes, and the kernels behind each loss, built from stub rows
(no torch, no device).
"""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def launch(kernel: str, ms: float, gflop: float, mb: float) -> dict:
    seconds = ms / 1e3
    return {"kernel": kernel, "node": "n", "seconds": seconds, "flops": gflop * 1e9,
            "bytes": mb * 1e6, "peak_gflops": 1000.0, "peak_gbs": 100.0}


def row(model: str, ours: float, kernels: float, **torch_ms) -> dict:
    data = {"model": model, "status": "ok", "ours_ms": ours, "ours_kernel_ms": kernels,
            "torch_compile_error": {}, "roofline": None}
    for stem, (wall, gpu) in torch_ms.items():
        data[f"{stem}_ms"], data[f"{stem}_gpu_ms"] = wall, gpu
    return data


def report(tmp_path: Path, rows: list[dict]) -> list[str]:
    saved = tmp_path / "e2e.json"
    saved.write_text(json.dumps({"device": "Stub GPU", "commit": "abc1234",
                                 "versions": {"torch": "9.9"}, "rows": rows}))
    done = subprocess.run([sys.executable, str(REPO / "bench" / "e2e.py"), "--report",
                           str(saved)], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_each_column_and_the_fastest(tmp_path: Path):
    winner = row("fast", 1.0, 0.5, torch_cuda=(2.0, 1.9), torch_compile=(1.5, 1.4),
                 torch_autotune=(1.2, 1.1), torch_cudagraphs=(1.25, 1.0))
    failed = row("odd", 3.0, 2.0, torch_cuda=(2.0, 1.5))
    failed["torch_compile_error"] = {"autotune": "BackendCompilerFailed: no"}
    lines = report(tmp_path, [winner, failed])
    assert lines[0].startswith("On Stub GPU at abc1234, torch 9.9")
    fast = next(l for l in lines if l.startswith("| fast "))
    assert fast.split(" | ")[1:] == ["1.000 (0.500)", "2.000 (1.900)", "1.500 (1.400)",
                                      "1.200 (1.100)", "1.250 (1.000)", "0.83 (autotune) |"]
    odd = next(l for l in lines if l.startswith("| odd "))
    assert "failed: BackendCompilerFailed: no" in odd and odd.endswith("1.50 (eager) |")
    assert not any(l.startswith("**fast**") for l in lines)  # no loss, no breakdown


def test_a_loss_names_the_kernels_that_carry_it(tmp_path: Path):
    losing = row("slow", 2.3, 2.0, torch_cuda=(3.0, 2.9), torch_cudagraphs=(2.0, 1.0))
    losing["roofline"] = [launch("conv_3", 1.0, 0.5, 10.0),    # 500 GFLOP/s, 10 GB/s
                          launch("conv_7", 0.5, 0.1, 5.0),     # one kind with conv_3
                          launch("softmax_4", 0.4, 0.0, 20.0),  # 50 GB/s: 50% of 100
                          launch("add_1", 0.1, 0.0, 1.0)]
    lines = report(tmp_path, [losing, row("tie", 1.05, 1.0, torch_cuda=(1.0, 0.9))])
    text = "\n".join(lines)
    assert ("**slow**: 1.15x cudagraphs's wall time (2.300 against 2.000 ms). Kernels: ours "
            "2.000 ms, its GPU time 1.000 ms (2.00x); the rest, host and launches: ours "
            "0.300 ms, its 1.000 ms.") in text
    breakdown = [l for l in lines if l.startswith("- ")]
    assert breakdown[0] == ("- `conv` x2: 75% of our kernel time (1.500 ms), 40% of "
                            "peak FLOP/s, 10% of peak bandwidth")
    assert breakdown[1].startswith("- `softmax` x1: 20% of our kernel time (0.400 ms), 0% of")
    assert breakdown[1].endswith("50% of peak bandwidth")
    assert len(breakdown) == 3  # the three largest; 1.05x is within 1.1x: no breakdown
    assert "**tie**" not in text


def test_the_committed_reports_are_current():
    """Each report beside a saved result (`bench/results/e2e-*.md`, shown on the results
    page) is what `--report` makes of its JSON today."""
    reports = sorted((REPO / "bench" / "results").glob("e2e-*.md"))
    assert reports
    for md in reports:
        done = subprocess.run([sys.executable, str(REPO / "bench" / "e2e.py"), "--report",
                               str(md.with_suffix(".json"))], capture_output=True, text=True,
                              check=True)
        assert done.stdout == md.read_text(), f"{md.name} is stale: rerun bench/e2e.py --report"
