"""
Where a streamed inference's time goes: for each model, the streaming runtime
in one process, counting what it does on the host per run (waits for kernels to free
memory, image allocations and releases), beside preload-all, beside kept objects chosen by
churn alone, and beside streaming without memory pressure (the same plan under a budget of
100x). Also whether releasing or making an image waits for kernels in flight, timed with
the model's kernels running; with `--timeline`, one run of each laid out on the device's
clock (`timeline`: kernels, copies, and the compute queue's idle time by cause).

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


def timeline(model, feeds) -> dict:
    """
    One streamed run laid out on the device's clock (both queues are profiled): the
    kernels' busy time, the copies', and the compute queue's idle time between kernels,
    split into waits for a streamed weight's chunks (the kernel started within 20 us of its
    weight's last copy ending) and the rest (the host enqueued it late, or a launch gap).
    """
    import pyopencl as cl

    kernels, copies, waits = [], [], {}
    enqueue, copy = model._enqueue, cl.enqueue_copy
    copier = getattr(model, "copier", None)  # none: preload-all

    def kernel(record, k, global_size, local_size, wait_for=None):
        event = enqueue(record, k, global_size, local_size, wait_for)
        kernels.append(event)
        waits[len(kernels) - 1] = list(wait_for or ())
        return event

    def copied(queue, *a, **kw):
        event = copy(queue, *a, **kw)
        if copier is not None and queue is copier.queue:
            copies.append(event)
        return event

    model._enqueue, cl.enqueue_copy = kernel, copied
    try:
        model.run(feeds)
    finally:
        del model._enqueue
        cl.enqueue_copy = copy
    info = cl.profiling_info

    def span(e):
        return e.get_profiling_info(info.START) * 1e-6, e.get_profiling_info(info.END) * 1e-6

    ks = [span(e) for e in kernels]
    cs = sorted(span(e) for e in copies)
    copy_busy, reach = 0.0, -1e30
    for a, b in cs:  # the union of the copies' intervals
        copy_busy += max(0.0, b - max(a, reach))
        reach = max(reach, b)
    on_copy = other = 0.0
    for i in range(1, len(ks)):
        gap = ks[i][0] - ks[i - 1][1]
        if gap <= 0:
            continue
        if any(abs(span(e)[1] - ks[i][0]) < 0.02 or span(e)[1] > ks[i - 1][1]
               for e in waits[i]):
            on_copy += gap
        else:
            other += gap
    return {"span_ms": ks[-1][1] - ks[0][0], "kernels_ms": sum(b - a for a, b in ks),
            "copies_ms": copy_busy, "copy_commands": len(cs), "idle_on_copy_ms": on_copy,
            "idle_other_ms": other}


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
    budget = planned.attributes["stream.plan"].budget.data
    pre_timeline = timeline(pre, feeds) if args.timeline else None
    pre.unload()
    # the plan's budget as the runtime runs it; kept objects chosen by churn alone; and a
    # budget 100x (no memory pressure)
    for label, scale, keep in (("streamed", 1, True), ("churn", 1, None),
                               ("unpressed", 100, True)):
        started = time.perf_counter()
        model = StreamingModel(planned, device, WeightStore(stores["streamed"]),
                               budget=budget * scale, keep=keep)
        made = {"load_ms": (time.perf_counter() - started - model.build_seconds) * 1e3}
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
        row[label]["settle_ms"] = model.settle_seconds * 1e3
        cl.Event.wait = original
        if args.timeline:
            row[label]["timeline"] = timeline(model, feeds)
        model.unload()
    row["budget"] = budget
    if pre_timeline is not None:
        row["preload"]["timeline"] = pre_timeline
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
    parser.add_argument("--timeline", action="store_true",
                        help="also lay one run of each out on the device's clock")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    device = pick_device(args.device, "flashmem_waits")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models:
            rows.append(bench_model(name, device, args, Path(folder)))
            r = rows[-1]
            print(name, *(f"{k} {r[k]['median_ms']:.2f}" for k in
                          ("preload", "streamed", "churn", "unpressed")),
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
