"""
Where a run's host-to-host time goes, phase by phase, for models compiled by the default
pipeline (`bench/e2e.py`'s `compile_model`): what `CompiledModel.run` spends around its
kernels.

Per model, medians over `--repeat` runs of each phase timed alone (the queue drained
between phases):

- `run`: `CompiledModel.run`, as `bench/e2e.py` times it (a discrete GPU's inputs packed
  on the device, `device_pack.py`), and `run_host_pack` with them packed on the host;
- `in_inputs`, `in_launches`, `in_wait`, `in_result`: where `run`'s own time goes, from
  its start to its inputs enqueued, to its launches and downloads enqueued, to the queue
  drained, to its outputs unpacked;
- `check`: checking the inputs against the graph's types;
- `pack`: packing the inputs into their pixels (numpy);
- `upload`: writing the packed pixels into their images or buffers, blocking, from the
  pixels as packed (pageable memory) and, beside it, `upload_pinned` from page-locked
  host memory (a registered `CL_MEM_USE_HOST_PTR` buffer, as `PinnedStore` makes);
- `enqueue`: the host's time to enqueue every launch, and `drain` the wait after it;
  `busy`: the device's span from the first kernel's start to the last one's end, and
  `kernels` their summed times (`busy - kernels`: the gaps between kernels);
  `launch_plain`: enqueueing and draining them on a queue without profiling;
- `download` and `unpack`: reading the outputs back and unpacking them.

    python3 bench/host_phases.py --device gpu --models light_squeezenet,light_vgg19

Results: a table, and `bench/results/host-phases-<device>.json`.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e
import pyopencl as cl

from mobile_opt.backends.opencl.executor import host_tensor
from mobile_opt.backends.opencl.host_pack import host_value, pack_pixels
from mobile_opt.backends.opencl.memory import page_aligned, register
from mobile_opt.dialects import texture

PHASES = ("run", "run_host_pack", "in_inputs", "in_launches", "in_wait", "in_result", "check", "pack", "upload", "upload_pinned", "enqueue", "drain", "busy",
          "kernels", "launch_plain", "download", "unpack")


def median_ms(step, repeat: int) -> float:
    step()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def pinned_like(context: cl.Context, array: np.ndarray):
    """A page-locked copy of `array`'s shape and dtype (the buffer keeps it registered)."""
    host = page_aligned(array.nbytes)[:array.nbytes].view(array.dtype).reshape(array.shape)
    host[...] = array
    buffer = register(context, host)
    return host, buffer


def run_parts(compiled, feeds: dict, repeat: int) -> dict[str, float]:
    """`in_*`: `run` timed at the ends of the steps it calls (instance wrappers)."""
    marks: dict[str, float] = {}

    def timed(name: str):
        method = getattr(compiled, name)

        def call(*args):
            if name == "_result":
                marks["_result<"] = time.perf_counter()
            out = method(*args)
            marks[name] = time.perf_counter()
            return out
        return call

    variant = copy.copy(compiled)
    for name in ("_put_input", "_enqueue", "_download", "_result"):
        setattr(variant, name, timed(name))
    parts: dict[str, list[float]] = {p: [] for p in ("in_inputs", "in_launches", "in_wait",
                                                     "in_result")}
    variant.run(feeds)
    for _ in range(repeat):
        marks.clear()
        start = time.perf_counter()
        variant.run(feeds)
        inputs = marks.get("_put_input", start)
        enqueued = max(marks.get("_enqueue", inputs), marks.get("_download", inputs))
        parts["in_inputs"].append(inputs - start)
        parts["in_launches"].append(enqueued - inputs)
        parts["in_wait"].append(marks["_result<"] - enqueued)
        parts["in_result"].append(marks["_result"] - marks["_result<"])
    return {p: statistics.median(t) * 1e3 for p, t in parts.items()}


def phases(compiled, feeds: dict, repeat: int) -> dict[str, float]:
    """Median milliseconds of each of `PHASES` for one compiled model."""
    queue = compiled.queue
    ms = {"run": median_ms(lambda: compiled.run(feeds), repeat)}
    host_pack = copy.copy(compiled)
    host_pack._packers = {}
    ms["run_host_pack"] = median_ms(lambda: host_pack.run(feeds), repeat)
    ms.update(run_parts(compiled, feeds, repeat))
    values = compiled._inputs(feeds)
    ms["check"] = median_ms(lambda: compiled._inputs(feeds), repeat)
    records = [r for kind, r in compiled._steps if kind == "input"]
    for r in records:
        host_value(r.source_value, values)
    ms["pack"] = median_ms(lambda: [pack_pixels(r, values[r.source_value]) for r in records],
                           repeat)
    packed = [pack_pixels(r, values[r.source_value]) for r in records]

    def upload(sources):
        for r, pixels in zip(records, sources):
            compiled._copy(r, compiled.slots[r.slot], pixels, blocking=False)
        queue.finish()

    ms["upload"] = median_ms(lambda: upload(packed), repeat)
    pinned = [pinned_like(compiled.context, p) for p in packed]
    ms["upload_pinned"] = median_ms(lambda: upload([h for h, _ in pinned]), repeat)
    enqueue, drain, busy, kernels = [], [], [], []
    compiled.launch()
    queue.finish()
    for _ in range(repeat):
        start = time.perf_counter()
        events = compiled.launch()
        queued = time.perf_counter()
        queue.finish()
        enqueue.append(queued - start)
        drain.append(time.perf_counter() - queued)
        busy.append((events[-1].profile.end - events[0].profile.start) * 1e-9)
        kernels.append(sum((e.profile.end - e.profile.start) for e in events) * 1e-9)
    plain = cl.CommandQueue(compiled.context)  # no profiling: what that costs per launch

    def launch_plain():
        for _, kernel, global_size, local_size in compiled._launches:
            cl.enqueue_nd_range_kernel(plain, kernel, global_size, local_size)
        plain.finish()

    ms["launch_plain"] = median_ms(launch_plain, repeat)
    for name, times in (("enqueue", enqueue), ("drain", drain), ("busy", busy),
                        ("kernels", kernels)):
        ms[name] = statistics.median(times) * 1e3
    outputs = [r for r in compiled.plan.outputs if r.slot is not None]

    def download():
        got = [compiled._download(r) for r in outputs]
        queue.finish()
        return got

    ms["download"] = median_ms(download, repeat)
    got = download()
    ms["unpack"] = median_ms(lambda: [
        host_tensor(texture.unpack(texture.Layout(r.layout), p.astype(np.float32),
                                   tuple(r.shape)), np.dtype(r.dtype))
        for r, p in zip(outputs, got)], repeat)
    ms["input_bytes"] = sum(p.nbytes for p in packed)
    ms["device_packs"] = len(compiled._packers)
    ms["launches"] = len(compiled._launches)
    return ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", help="pocl, gpu, or a substring of a device name")
    parser.add_argument("--models", default="light_squeezenet,light_bvlc_alexnet,"
                        "light_zfnet512,light_vgg19,gpt2_small")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out")
    parser.add_argument("--passes", help="the graph passes (default: bench/e2e.py's); "
                        "`...,onnx-to-texture{buffers=false}` puts a CPU device's tensors "
                        "in images")
    args = parser.parse_args(argv)
    device = e2e.pick_device(args.device, "host_phases")
    defaults = e2e.build_parser().parse_args([])
    rows = []
    with tempfile.TemporaryDirectory(prefix="mobile-opt-phases-") as scratch:
        sources = e2e.resolve_models(args.models.split(","), Path(scratch))
        for source in e2e.progress(sources, lambda s: s.name):
            path = e2e.prepare_model(source, Path(scratch), "random", 0)
            module, feeds = e2e.import_model(path, 0)
            compiled = e2e.compile_model(module, device, args.passes or defaults.passes,
                                         "f32")
            rows.append({"model": source.name, **phases(compiled, feeds, args.repeat)})
    header = f"{'model':<22}" + "".join(f"{p:>14}" for p in PHASES)
    print(header)
    for row in rows:
        print(f"{row['model']:<22}" + "".join(f"{row[p]:>14.3f}" for p in PHASES))
    out = Path(args.out) if args.out else (e2e.BENCH_DIR / "results"
                                           / f"host-phases-{e2e.slug(device.name)}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"device": device.name, "commit": e2e.git_commit(),
                               "repeat": args.repeat, "unit": "ms", "rows": rows},
                              indent=1) + "\n")
    print(f"results: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
