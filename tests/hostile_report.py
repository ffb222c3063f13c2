"""
`python3 tests/hostile_report.py [--rows] [--fuzz N] [-k SUBSTRING]`: run the hostile-input
table (`hostile_inputs.CASES`) outside pytest and print a markdown table per category:
inputs tried and how many were handled cleanly (the one-line error contract). `--rows`
adds each unclean row with what went wrong and its first stderr line; `--fuzz N` also
runs N fuzz examples of `test_hostile.py` and counts them as the `fuzz` category.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# this tree's package (through its `mobile_opt -> .` link) for the in-process fuzz run
sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

import hostile_inputs as H  # noqa: E402


def fuzz_outcomes(examples: int, folder: Path) -> list[list[str]]:
    """The problems of each fuzz example of `test_hostile.py` (the same examples)."""
    os.environ.setdefault("MOBILE_OPT_WEIGHT_DIR", str(folder / "weights"))
    import test_hostile as T

    return T.fuzz_run(examples, folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", action="store_true", help="list every unclean row")
    parser.add_argument("--fuzz", type=int, default=0, metavar="N", help="fuzz examples")
    parser.add_argument("-k", default="", help="only rows whose id holds this")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rows = [c for c in H.CASES if args.k in c.id]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        base = Path(tmp)

        def one(row: H.Case):
            try:
                return H.run_case(row, H.fresh_root(base, row.id))
            except H.Unavailable as e:
                return e
            except Exception as e:  # noqa: BLE001 (a broken row is reported, not fatal)
                return H.Outcome(None, "", [f"suite error: {type(e).__name__}: {e}"])

        with ThreadPoolExecutor(args.workers) as pool:
            outcomes = list(pool.map(one, rows))
        fuzz = fuzz_outcomes(args.fuzz, base) if args.fuzz else []
    tried: dict[str, int] = defaultdict(int)
    clean: dict[str, int] = defaultdict(int)
    unclean = []
    for row, outcome in zip(rows, outcomes):
        if isinstance(outcome, H.Unavailable):
            continue
        tried[row.category] += 1
        if outcome.clean:
            clean[row.category] += 1
        else:
            unclean.append((row, outcome))
    for problems in fuzz:
        tried["fuzz"] += 1
        clean["fuzz"] += not problems
    print("| category | inputs tried | clean |")
    print("|---|---:|---:|")
    for category in tried:
        print(f"| {category} | {tried[category]} | {clean[category]} |")
    print(f"| **all** | {sum(tried.values())} | {sum(clean.values())} |")
    skipped = [r.id for r, o in zip(rows, outcomes) if isinstance(o, H.Unavailable)]
    if skipped:
        print(f"\nnot tried here: {', '.join(skipped)}")
    if args.rows:
        print("\n| row | tool | problems | first stderr line |\n|---|---|---|---|")
        for row, outcome in unclean:
            line = outcome.first_line.replace("|", "\\|")[:160]
            print(f"| {row.category}:{row.id} | {row.tool} | {'; '.join(outcome.problems)} "
                  f"| `{line}` |")
        for problems in fuzz:
            for p in problems[:1]:
                print(f"| fuzz | | {p[:240].replace('|', '/')} | |")
    slow = sorted(((o.seconds, r.id) for r, o in zip(rows, outcomes)
                   if isinstance(o, H.Outcome)), reverse=True)[:5]
    print("slowest rows: " + ", ".join(f"{i} {s:.0f} s" for s, i in slow), file=sys.stderr)
    print(f"\n{len(rows)} rows and {len(fuzz)} fuzz examples in "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
