"""
Where a streamed inference's time goes (issue 21): for each model, the streaming runtime
in one process, counting what it does on the host per run (waits for kernels to free
memory, image allocations and releases, spare images reused), beside preload-all and beside
streaming without memory pressure (the same plan under a budget of 100x). Also whether
releasing or making an image waits for kernels in flight, timed with the model's kernels
running.

    python3 bench/flashmem_waits.py [--models resnet50 gpt2_base] [--device gpu]

Results: a table, and `bench/results/flashmem-waits-<device>.json`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import flashmem as bench
from e2e import BENCH_DIR, pick_device, slug


class Counter:
    """Counts and times the calls of one method, patched on an instance or class."""

    def __init__(self, owner, name: str):
        self.calls, self.seconds = 0, 0.0
        inner = self.inner = getattr(owner, name)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.calls += 1
                self.seconds += time.perf_counter() - started

        setattr(owner, name, timed)

    def take(self) -> dict:
        out = {"calls": self.calls, "ms": round(self.seconds * 1e3, 3)}
        self.calls, self.seconds = 0, 0.0
        return out


def compiled(name: str, device, args, scratch: Path):
    """The preload-all and the planned module of `name` (`flashmem.plan_model`: the bench's
    budget), their stores, and the inputs."""
    from mobile_opt.backends.opencl.plan import build_plan
    from mobile_opt.backends.opencl.weight_store import write_store

    p = bench.plan_model(name, device, args, scratch)
    stores = {}
    for mode, m in (("preload", p.preload), ("streamed", p.planned)):
        stores[mode] = scratch / f"{p.stem}.{mode}.weights"
        write_store(stores[mode], build_plan(m), args.chunk_kb * 1024)
    return p.preload, p.planned, stores, p.feeds


def runs(model, feeds, n: int, counters: dict[str, Counter]) -> dict:
    times, counts = [], []
    for _ in range(n):
        for c in counters.values():
            c.take()
        times.append(model.run(feeds).wall_seconds)
        counts.append({k: c.take() for k, c in counters.items()})
    later = times[1:] or times
    return {"first_ms": times[0] * 1e3, "median_ms": statistics.median(later) * 1e3,
            "runs_ms": [round(t * 1e3, 3) for t in times], "first": counts[0],
            "later": counts[-1]}


def release_blocks(model, device) -> dict:
    """Make and release a 16 MiB image while the model's kernels run; and with none."""
    import pyopencl as cl

    out = {}
    for busy in (False, True):
        launched = model.launch() if busy else []
        model.queue.flush()
        started = time.perf_counter()
        image = model.memory.image(1024, 1024, "f32")
        made = time.perf_counter()
        model.memory.free(image)
        freed = time.perf_counter()
        cl.wait_for_events(launched) if launched else None
        model.queue.finish()
        ended = time.perf_counter()
        out["busy" if busy else "idle"] = {"make_ms": (made - started) * 1e3,
                                           "release_ms": (freed - made) * 1e3,
                                           "kernels_ms": (ended - started) * 1e3}
    return out


def bench_model(name: str, device, args, scratch: Path) -> dict:
    import pyopencl as cl
    from mobile_opt.backends.opencl.executor import CompiledModel
    from mobile_opt.backends.opencl.streaming import StreamingModel
    from mobile_opt.backends.opencl.weight_store import WeightStore

    module, planned, stores, feeds = compiled(name, device, args, scratch)
    row: dict = {"model": name}
    started = time.perf_counter()
    pre = CompiledModel(module, device, store=WeightStore(stores["preload"]))
    row["preload_load_ms"] = (time.perf_counter() - started - pre.build_seconds) * 1e3
    row["preload"] = runs(pre, feeds, args.iterations, {})
    row["release"] = release_blocks(pre, device)
    pre.unload()
    budget = planned.attributes["stream.plan"].budget.data
    # the plan's budget; a budget 100x (no memory pressure) with kept textures and with
    # spares; and the plan's budget with each layer's loads enqueued before its kernel
    for label, scale, keep, loads_first in (("streamed", 1, None, False),
                                            ("unpressed", 100, True, False),
                                            ("spares", 100, False, False),
                                            ("loads-first", 1, None, True)):
        from mobile_opt.backends.opencl import memory

        pinning = Counter(memory.PinnedStore, "__init__")
        started = time.perf_counter()
        model = StreamingModel(planned, device, WeightStore(stores["streamed"]),
                               budget=budget * scale, keep=keep)
        model.loads_first = loads_first
        made = {"load_ms": (time.perf_counter() - started - model.build_seconds) * 1e3,
                "pin": pinning.take()}
        memory.PinnedStore.__init__ = pinning.inner
        counters = {"image": Counter(model.memory, "image"),
                    "free": Counter(model.memory, "free"),
                    "make_room": Counter(model, "_make_room"),
                    "move": Counter(model.copier, "move"),
                    "enqueue": Counter(model, "_enqueue")}
        original = cl.Event.wait
        counters["wait"] = Counter(cl.Event, "wait")
        row[label] = runs(model, feeds, args.iterations, counters)
        row[label]["peak"] = model.memory.peak
        row[label]["made"] = made
        row[label]["kept"] = len(model.pool)
        cl.Event.wait = original
        model.unload()
    row["budget"] = budget
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["resnet50", "gpt2_base"])
    parser.add_argument("--device")
    parser.add_argument("--chunk-kb", type=int, default=256)
    parser.add_argument("--share", type=float, default=0.25,
                        help="budget: the arena plus this share of the weight bytes")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--models-dir", default=str(Path(tempfile.gettempdir()) / "zoo-large"))
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    device = pick_device(args.device, "flashmem_waits")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            rows.append(bench_model(name, device, args, Path(folder)))
            r = rows[-1]
            print(name, *(f"{k} {r[k]['median_ms']:.2f}" for k in
                          ("preload", "streamed", "unpressed", "spares", "loads-first")),
                  f"kept {r['streamed']['kept']}", file=sys.stderr)
    caps = {"extensions": device.device.extensions if hasattr(device, "device") else ""}
    out = Path(args.out) if args.out else \
        BENCH_DIR / "results" / f"flashmem-waits-{slug(device.name)}.json"
    out.write_text(json.dumps({"device": device.describe(), "caps": caps, "rows": rows},
                              indent=1) + "\n")
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
