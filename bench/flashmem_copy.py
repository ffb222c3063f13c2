"""
How fast weight bytes reach a texture on this device, by path: the bound under
a streamed inference's execution time, which must move the streamed weights every run.

- `ring S`: the streaming runtime's path (`ChunkCopier`), chunks of S bytes copied by the
  host from the store's memory map into a pinned staging ring, then written to the image;
- `pageable`: the whole image written from the memory map in one command;
- `pinned`: the whole image written from one pinned (mapped) host buffer in one command,
  which is the copy engine's rate, the ceiling of any path;
- `pinned object`: the same buffer, unmapped, copied from as a memory object;
- `registered`: page-aligned host memory of our own, handed to a CL_MEM_USE_HOST_PTR
  buffer that no command uses (`PinnedStore`), written from in one command; `registered
  object`: that buffer copied from as a memory object.

With the host's time in each enqueue, and the device memory the process holds as each
source is made and used (`device_mib`, from nvidia-smi): a driver may back a host buffer
with device memory of its size, which a memory budget must not miss.

    python3 bench/flashmem_copy.py [--device gpu] [--mib 128]

Results: `bench/results/flashmem-copy-<device>.json`.
"""

from __future__ import annotations

import argparse
import json
import mmap
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import e2e
from e2e import BENCH_DIR, device_mib, pick_device, slug

from mobile_opt import checking


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device")
    parser.add_argument("--mib", type=int, default=128, help="bytes moved per measurement")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    device = pick_device(args.device, "flashmem_copy")
    import pyopencl as cl

    from mobile_opt.backends.opencl.memory import ChunkCopier, DeviceMemory
    from mobile_opt.backends.opencl.plan import PackRecord
    from mobile_opt.backends.opencl.weight_store import WeightStore, write_pixels

    context = cl.Context([device.device])
    queue = cl.CommandQueue(context)
    memory = DeviceMemory(context)
    width = 4096
    height = args.mib * (1 << 20) // (width * 16)
    nbytes = width * height * 16
    record = PackRecord(0, "w", "rows4", [height, width * 4], "float32", 0, "image", width,
                        height, "f32")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        # a one-weight store of random pixels
        path = Path(folder) / "w.weights"
        write_pixels(path, "main_graph", [record],
                     [np.random.default_rng(0).standard_normal((height, width, 4), np.float32)])
        store = WeightStore(path)
        image = memory.image(width, height, "f32")

        def timed(move) -> float:
            move()  # warm-up
            samples = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                move()
                samples.append(time.perf_counter() - started)
            return statistics.median(samples)

        for chunk in (1 << 18, 1 << 20, 1 << 22):
            copier = ChunkCopier(context, memory, chunk, 8)
            chunks = -(-nbytes // chunk)

            def ring(copier=copier, chunks=chunks):
                copier.move(store, record, image, 0, chunks).wait()

            rows.append({"path": f"ring {chunk >> 10} KiB", "seconds": timed(ring)})
            copier.close()
        pixels = store.pixels("w")

        def pageable():
            cl.enqueue_copy(queue, image, pixels, origin=(0, 0), region=(width, height),
                            is_blocking=True)

        rows.append({"path": "pageable", "seconds": timed(pageable)})
        # the device memory the process holds as each pinned source is made and used: a
        # driver may back a host buffer with device memory too
        mib = {"context, image": device_mib()}
        staging = memory.buffer(nbytes, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR)
        mib["+ ALLOC_HOST_PTR buffer"] = device_mib()
        host, event = cl.enqueue_map_buffer(queue, staging, cl.map_flags.WRITE, 0,
                                            (height, width, 4), np.float32)
        event.wait()
        host[...] = pixels
        mib["+ mapped, filled"] = device_mib()

        enqueued: list[float] = []  # the host's time in the enqueue alone

        def pinned(source, **where):
            started = time.perf_counter()
            event = cl.enqueue_copy(queue, image, source, origin=(0, 0),
                                    region=(width, height), **where)
            enqueued.append(time.perf_counter() - started)
            event.wait()

        def row(path: str, source, after: str, **where) -> None:
            """One pinned path timed, then the device memory held after its copies."""
            enqueued.clear()
            rows.append({"path": path, "seconds": timed(lambda: pinned(source, **where)),
                         "enqueue_ms": statistics.median(enqueued) * 1e3})
            mib[after] = device_mib()

        row("pinned", host, "+ copies from its memory", is_blocking=False)
        host.base.release(queue)
        queue.finish()
        mib["+ unmapped"] = device_mib()
        # the same bytes from the buffer object, unmapped
        row("pinned object", staging, "+ copies from the object", offset=0)
        memory.free(staging)
        queue.finish()
        mib["released"] = device_mib()
        # host memory of our own (page-aligned, from an anonymous map) handed to a
        # USE_HOST_PTR buffer that no command uses: the driver registers (pins) it
        own = np.frombuffer(mmap.mmap(-1, nbytes), np.float32).reshape(height, width, 4)
        own[...] = pixels
        wrapped = cl.Buffer(context, cl.mem_flags.READ_ONLY | cl.mem_flags.USE_HOST_PTR,
                            hostbuf=own)
        mib["+ USE_HOST_PTR buffer"] = device_mib()
        row("registered", own, "+ copies from the registered memory", is_blocking=False)
        row("registered object", wrapped, "+ copies from its buffer object", offset=0)
        wrapped.release()
        memory.free(image)
    for row in rows:
        row["gb_per_s"] = nbytes / row["seconds"] / 1e9
    print(f"device: {device.describe()}; {nbytes / (1 << 20):.0f} MiB per move, median of "
          f"{args.repeat}")
    print(checking.format_table([["path", "ms", "GB/s", "enqueue ms"]] + [
        [r["path"], f"{r['seconds'] * 1e3:.1f}", f"{r['gb_per_s']:.2f}",
         f"{r['enqueue_ms']:.3f}" if "enqueue_ms" in r else ""] for r in rows]))
    out = (Path(args.out) if args.out
           else BENCH_DIR / "results" / f"flashmem-copy-{slug(device.name)}.json")
    if mib["context, image"] is not None:
        print("device MiB held: " + ", ".join(f"{k} {v}" for k, v in mib.items()))
    out.write_text(json.dumps({"device": device.describe(), "host": e2e.host_cpu(),
                               "bytes": nbytes, "rows": rows, "device_mib": mib}, indent=1)
                   + "\n")
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
