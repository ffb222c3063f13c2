"""
Where `gcd2`'s measured difference from `local` comes from, kernel by kernel.

`bench/select_layouts.py` compares summed kernel time; on a model where the two differ by
less than a percent, that sum cannot say whether the kernels the selection changed got
faster or the unchanged ones jittered. This builds the model three times with the default
GPU pipeline (`local`, `gcd2`, and `local` again as the A/A control), runs the builds
`--repeat` times in rotating order after one warm-up each, and prints every kernel's median
time in each build, largest differences first. A kernel only one build launches is a
change the selection made (a copy made a view, a relayout added); a kernel all builds
launch is unchanged code, and its local/local' spread is the floor.

    python3 bench/select_kernels.py light_inception_v2 --device gpu --repeat 30

Results: `bench/results/select-kernels-<device>.json` (one entry per model, merged into
the file's earlier entries).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import e2e
from select_layouts import AA, run_builds


def kernel_key(kernel_time, seen: dict[str, int]) -> str:
    """A kernel's name across builds: its kind and ONNX node (the `_N` suffix numbers
    kernels in launch order, which shifts when a selection drops or adds one)."""
    key = f"{kernel_time.kernel.rsplit('_', 1)[0]} {kernel_time.node}"
    seen[key] = seen.get(key, 0) + 1
    return key if seen[key] == 1 else f"{key} #{seen[key]}"


def measure(name: str, device, repeat: int, seed: int) -> dict:
    """Every kernel's median µs in each build, and each build's summed medians."""
    with tempfile.TemporaryDirectory() as folder:
        (source,) = e2e.resolve_models([name], Path(folder))
        _, feeds = e2e.import_model(source.path, seed)
        runs = run_builds(source.path, device, feeds, repeat)
    samples: dict[str, dict[str, list[float]]] = {b: {} for b in runs}
    for build, results in runs.items():
        for result in results:
            seen: dict[str, int] = {}
            for k in result.kernel_times:
                samples[build].setdefault(kernel_key(k, seen), []).append(k.seconds * 1e6)
    builds = list(runs)
    medians = {b: {k: statistics.median(v) for k, v in s.items()} for b, s in samples.items()}
    kernels = list(dict.fromkeys(k for m in medians.values() for k in m))
    rows = [{"kernel": k, **{b: medians[b].get(k) for b in builds}} for k in kernels]
    rows.sort(key=lambda r: -abs((r["gcd2"] or 0) - (r["local"] or 0)))
    only = {b: sum(v for k, v in medians[b].items()
                   if any(k not in medians[o] for o in ("local", "gcd2"))) for b in builds}
    return {"repeat": repeat, "total_us": {b: sum(m.values()) for b, m in medians.items()},
            "changed_us": only, "kernels": rows}


def table(name: str, result: dict, top: int) -> str:
    def f(x) -> str:
        return f"{'-':>9}" if x is None else f"{x:9.2f}"

    lines = [f"{name}: median µs over {result['repeat']} rounds",
             f"{'kernel':<40} {'local':>9} {'gcd2':>9} {'local_':>9} {'gcd2-local':>11}"]
    for r in result["kernels"][:top]:
        lines.append(f"{r['kernel'][:40]:<40} {f(r['local'])} {f(r['gcd2'])} {f(r[AA])} "
                     f"{(r['gcd2'] or 0) - (r['local'] or 0):+11.2f}")
    for label, key in (("all kernels", "total_us"),
                       ("kernels only one solver launches", "changed_us")):
        t = result[key]
        lines.append(f"{label}: local {t['local']:.1f}, gcd2 {t['gcd2']:.1f}, "
                     f"{AA} {t[AA]:.1f} µs")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="benchmark model names (as bench/e2e.py)")
    parser.add_argument("--device", help="pocl, gpu, or a substring of an OpenCL name")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=12, help="kernels printed per model")
    parser.add_argument("--out", type=Path, help="JSON path (default "
                        "bench/results/select-kernels-<device>.json)")
    args = parser.parse_args()
    device = e2e.pick_device(args.device, "select_kernels")
    out = args.out or (Path(__file__).resolve().parent / "results"
                       / f"select-kernels-{e2e.slug(device.name)}.json")
    report = json.loads(out.read_text()) if out.is_file() else {"models": {}}
    report["device"] = device.describe()
    from tqdm import tqdm

    for name in tqdm(args.models, file=sys.stderr, unit="model"):
        try:
            result = measure(name, device, args.repeat, args.seed)
        except Exception as e:  # noqa: BLE001 - one line naming the model; nothing written
            print(f"select_kernels: {name}: {e2e.one_line(e)}", file=sys.stderr)
            return 1
        print(table(name, result, args.top))
        report["models"][name] = result
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
