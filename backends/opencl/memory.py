"""
Device memory of a run: `DeviceMemory`, the one allocator every allocation goes through
(it counts resident bytes and their peak), and `ChunkCopier`, which moves weight-store
chunks into textures through a ring of pinned staging buffers on a copy queue of its own:
the streaming runtime's loads, and a preloading run's too.
"""

from __future__ import annotations

import mmap
import time
from collections.abc import Iterable

import numpy as np
import pyopencl as cl

from mobile_opt.backends.opencl.host_pack import OpenCLRunError
from mobile_opt.backends.opencl.plan import PackRecord
from mobile_opt.backends.opencl.trace import COPY, Span, Timeline
from mobile_opt.backends.opencl.weight_store import WeightStore
from mobile_opt.dialects.limits import LimitError, RunTotal, check_bytes, format_bytes
from mobile_opt.models.storage import Slot, pixel_bytes


class DeviceMemory:
    """
    The one allocator every device allocation of a run goes through (DESIGN.md): images,
    buffers and staging buffers. It counts the bytes resident, their peak, and the
    resident bytes at each mark (a layer), so that a run can report what it held.
    """

    def __init__(self, context: cl.Context):
        self.context = context
        self.resident = 0
        self.peak = 0
        self.host_pinned = 0
        """Pinned host memory outside the device's (a discrete GPU's `PinnedStore`)."""
        self.sizes: dict[int, int] = {}
        self.marks: list[tuple[str, int]] = []
        self.timeline: Timeline | None = None
        """The traced run's timeline, which gets the resident bytes at each change."""

    def admit(self, nbytes: int, what: str) -> None:
        """An OpenCLRunError, before allocating, if `nbytes` pass the tensor limit or the
        largest allocation the device makes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)."""
        try:
            check_bytes(nbytes, what)
        except LimitError as e:
            raise OpenCLRunError(str(e)) from None
        device = self.context.devices[0]
        if nbytes > device.max_mem_alloc_size:
            raise OpenCLRunError(
                f"{what} is {format_bytes(nbytes)}, over the largest allocation of the device, "
                f"{format_bytes(device.max_mem_alloc_size)}"
            )

    def _count(self, obj: cl.MemoryObject, nbytes: int, started: int) -> cl.MemoryObject:
        self.sizes[id(obj)] = nbytes
        self.resident += nbytes
        self.peak = max(self.peak, self.resident)
        if self.timeline is not None:
            self.timeline.spans.append(Span("allocate", "allocate", started,
                                            time.perf_counter_ns(), {"bytes": nbytes}))
            self.timeline.resident(self.resident)
        return obj

    def buffer(self, nbytes: int, flags=cl.mem_flags.READ_WRITE) -> cl.Buffer:
        self.admit(nbytes, "a buffer")
        started = time.perf_counter_ns() if self.timeline is not None else 0
        return self._count(cl.Buffer(self.context, flags, nbytes), nbytes, started)

    def image(self, width: int, height: int, element_type: str) -> cl.Image:
        channel = cl.channel_type.HALF_FLOAT if element_type == "f16" else cl.channel_type.FLOAT
        fmt = cl.ImageFormat(cl.channel_order.RGBA, channel)
        self.admit(width * height * pixel_bytes(element_type), f"an image of {width}x{height}")
        started = time.perf_counter_ns() if self.timeline is not None else 0
        image = cl.create_image(self.context, cl.mem_flags.READ_WRITE, fmt, shape=(width, height))
        return self._count(image, width * height * pixel_bytes(element_type), started)

    def slot(self, slot: Slot) -> cl.MemoryObject:
        """The memory object of a host-plan slot."""
        if slot.kind == "buffer":
            return self.buffer(slot.nbytes)
        return self.image(slot.width, slot.height, slot.element_type)

    def free(self, obj: cl.MemoryObject) -> None:
        """Release `obj`; the caller has waited for every command that uses it."""
        started = time.perf_counter_ns() if self.timeline is not None else 0
        nbytes = self.sizes.pop(id(obj))
        self.resident -= nbytes
        obj.release()
        if self.timeline is not None:
            self.timeline.spans.append(Span("release", "release", started,
                                            time.perf_counter_ns(), {"bytes": nbytes}))
            self.timeline.resident(self.resident)

    def mark(self, label: str) -> None:
        self.marks.append((label, self.resident))


def check_slots(slots: Iterable[Slot], device: cl.Device) -> None:
    """
    A host plan's slots against the limits (`dialects/limits.py`) and the device's, one
    by one and together, before the program is built or anything allocated.
    """
    held = RunTotal("the device storage")
    for slot in slots:
        what = f"slot {slot.index} ({', '.join(slot.values[:2]) or slot.kind})"
        max_size = (device.image2d_max_width, device.image2d_max_height)
        if slot.kind == "image" and (slot.width > max_size[0] or slot.height > max_size[1]):
            raise OpenCLRunError(
                f"{what}: an image of {slot.width}x{slot.height} pixels exceeds the device "
                f"limit {max_size[0]}x{max_size[1]}; lower with max-image-width/height of the "
                "device"
            )
        if slot.nbytes > device.max_mem_alloc_size:
            raise OpenCLRunError(
                f"{what} is {format_bytes(slot.nbytes)}, over the largest allocation of the "
                f"device, {format_bytes(device.max_mem_alloc_size)}"
            )
        try:
            held.add(check_bytes(slot.nbytes, what), what)
        except LimitError as e:
            raise OpenCLRunError(str(e)) from None


def chunk_regions(k: int, chunk: int, nbytes: int, width: int, pixel: int
                  ) -> list[tuple[int, tuple[int, int], tuple[int, int]]]:
    """Chunk k (of `chunk` bytes) of an image's `nbytes` as `byte_regions`."""
    return byte_regions(k * chunk, min((k + 1) * chunk, nbytes), width, pixel)


def byte_regions(start: int, end: int, width: int, pixel: int
                 ) -> list[tuple[int, tuple[int, int], tuple[int, int]]]:
    """
    Bytes [start, end) of an image's row-major pixels as image regions: (offset from
    `start`, origin (x, y), region (w, h)) for the partial first row, the whole rows, and
    the partial last row that they cover.
    """
    lo, hi = start // pixel, end // pixel
    regions = []
    p = lo
    while p < hi:
        y, x = divmod(p, width)
        if x or hi - p < width:
            w = min(width - x, hi - p)
            regions.append(((p - lo) * pixel, (x, y), (w, 1)))
            p += w
        else:
            rows = (hi - p) // width
            regions.append(((p - lo) * pixel, (0, y), (width, rows)))
            p += rows * width
    return regions


class ChunkCopier:
    """
    The copy side of streaming: a copy queue and a ring of `ring` staging buffers of
    `chunk` bytes in pinned host memory (CL_MEM_ALLOC_HOST_PTR, mapped once), allocated
    through `memory`. A chunk is copied from the weight store's map into the next staging
    buffer by the host, then written from there into its pixels of the weight's image (or
    bytes of its buffer) by the copy queue: from pinned memory, a GPU's copy engine moves
    it while kernels run. A staging buffer is refilled once the writes out of it are done.

    `direct`: no ring; a move is one write straight from the store's map (a discrete GPU's
    driver stages pageable memory itself). `pinned`: one write from that pinned copy of
    the weights, at the copy engine's rate.
    """

    def __init__(self, context: cl.Context, memory: DeviceMemory, chunk: int, ring: int,
                 pinned: PinnedStore | None = None, direct: bool = False):
        # profiled, as the compute queue is: a run's copies can be laid beside its kernels
        self.queue = cl.CommandQueue(context,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.chunk, self.memory, self.pinned, self.direct = chunk, memory, pinned, direct
        ring = 0 if direct else ring
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
        self.ring = [memory.buffer(chunk, flags) for _ in range(ring)]
        self.host = []
        for buffer in self.ring:
            host, event = cl.enqueue_map_buffer(self.queue, buffer, cl.map_flags.WRITE, 0,
                                                (chunk,), np.uint8)
            event.wait()
            self.host.append(host)
        self.busy: list[cl.Event | None] = [None] * ring
        self._next = 0

    def move(self, store: WeightStore, record: PackRecord, dest: cl.MemoryObject, first: int,
             count: int, after: list[cl.Event] | None = None) -> cl.Event:
        """Enqueue chunks first..first+count-1 of `record`'s weight into `dest`, once the
        events `after` are done (the readers of what `dest` held); the event of the last
        write."""
        pixel = pixel_bytes(record.element_type)
        nbytes = record.width * record.height * pixel
        event = None
        timeline = self.memory.timeline
        before = time.perf_counter_ns() if timeline is not None else 0
        wait = list(after or ())  # only the first write waits: the queue is in order
        host = (self.pinned.bytes_of(record.value)
                if self.pinned is not None and record.value in self.pinned
                else store.bytes_of(record.value) if self.direct else None)
        if host is not None:
            # host memory that the driver reads: one write. An image takes the whole rows
            # around the chunks (one region, where the chunks' own bytes take up to three: on
            # the H100 the host's enqueues bound ViT-B/16's streamed runs); bytes of the
            # weight's later chunks then come early, into the texture that is its already
            lo, hi = first * self.chunk, min((first + count) * self.chunk, len(host))
            if record.kind == "buffer":
                event = cl.enqueue_copy(self.queue, dest, host[lo:hi], dst_offset=lo,
                                        is_blocking=False, wait_for=wait)
            else:
                row = record.width * pixel
                y0, y1 = lo // row, -(-hi // row)
                event = cl.enqueue_copy(self.queue, dest, host[y0 * row: y1 * row],
                                        origin=(0, y0), region=(record.width, y1 - y0),
                                        is_blocking=False, wait_for=wait)
            if timeline is not None:
                timeline.enqueued(COPY, f"transform {record.value}", "transform", event, before,
                                  weight=record.value, chunks=[first, first + count - 1],
                                  bytes=hi - lo)
            self.queue.flush()
            return event
        for k in range(first, first + count):
            slot = self._next
            self._next = (self._next + 1) % len(self.ring)
            busy = self.busy[slot]
            if busy is not None:
                # traced: a wait only where the buffer's last write is still to finish
                if timeline is not None and (busy.command_execution_status
                                             != cl.command_execution_status.COMPLETE):
                    with timeline.span("wait for a staging buffer", "wait", staging=slot):
                        busy.wait()
                else:
                    busy.wait()
            if timeline is not None:
                before = time.perf_counter_ns()
            data = store.chunk(record.value, k, self.chunk)
            host = self.host[slot]
            host[: len(data)] = data
            if timeline is not None:
                timeline.spans.append(Span(f"load {record.value} chunk {k}", "load", before,
                                           time.perf_counter_ns(),
                                           {"weight": record.value, "chunk": k,
                                            "bytes": len(data), "staging": slot}))
            if record.kind == "buffer":
                regions = [(0, None, None)]
            else:
                regions = chunk_regions(k, self.chunk, nbytes, record.width, pixel)
            for i, (offset, origin, region) in enumerate(regions):
                before = time.perf_counter_ns() if timeline is not None else 0
                if region is None:
                    event = cl.enqueue_copy(self.queue, dest, host[: len(data)],
                                            dst_offset=k * self.chunk, is_blocking=False,
                                            wait_for=wait)
                else:
                    size = region[0] * region[1] * pixel
                    event = cl.enqueue_copy(self.queue, dest, host[offset: offset + size],
                                            origin=origin, region=region, is_blocking=False,
                                            wait_for=wait)
                if timeline is not None:
                    timeline.enqueued(COPY, f"transform {record.value}", "transform", event,
                                      before, weight=record.value, chunk=k, region=i,
                                      regions=len(regions), staging=slot)
            wait = []
            self.busy[slot] = event
        self.queue.flush()
        return event

    def drop_ring(self) -> None:
        """Free the staging ring (chunks from a `PinnedStore` do not use it)."""
        self.queue.finish()
        for host, buffer in zip(self.host, self.ring):
            host.base.release(self.queue)
            self.memory.free(buffer)
        self.queue.finish()
        self.ring, self.host, self.busy = [], [], []

    def close(self) -> None:
        self.drop_ring()


PINNED_REGISTERED = True
"""Whether a `PinnedStore` is host memory of our own that the driver registers, else a
mapped CL_MEM_ALLOC_HOST_PTR buffer (NVIDIA backs that with device memory of its size)."""

def page_aligned(nbytes: int) -> np.ndarray:
    """`nbytes` zeroed bytes of host memory of our own (an anonymous map: page-aligned),
    for `register`."""
    return np.frombuffer(mmap.mmap(-1, max(nbytes, 1)), np.uint8)


def register(context: cl.Context, host: np.ndarray) -> cl.Buffer:
    """
    A CL_MEM_USE_HOST_PTR buffer over `host` (`page_aligned`) that no command uses: NVIDIA's
    driver then pins the memory, and copies from it run at the copy engine's rate. A driver
    may read the memory when registering it, so fill it first where its contents matter.
    """
    return cl.Buffer(context, cl.mem_flags.READ_ONLY | cl.mem_flags.USE_HOST_PTR, hostbuf=host)


PINNED_ALIGN = mmap.PAGESIZE
"""Where each weight of a `PinnedStore` starts: a multiple of this many bytes, as in the
store (back to back, small weights would leave the large ones' copies starting off a
DMA-friendly boundary; `bench/flashmem.py --pinned-store packed` has them so)."""


class PinnedStore:
    """
    The streamed weights' bytes of a weight store, copied once into pinned host memory: the
    chunk source of a discrete GPU, whose copy engine writes from pinned memory at its full
    rate (54 GB/s on the H100, against 8.5 GB/s from the map and 5-9 through the staging
    ring, `bench/flashmem_copy.py`). It must be host memory alone, outside the device's
    (`DeviceMemory.host_pinned` counts it apart from the resident bytes):

    - registered (`PINNED_REGISTERED`): page-aligned memory of our own handed to a
      CL_MEM_USE_HOST_PTR buffer that no command uses. NVIDIA's driver then pins it, and
      writes from it run at 54 GB/s, with no device memory (the buffer would get its own
      copy there once a command used it);
    - mapped: a CL_MEM_ALLOC_HOST_PTR buffer, mapped. NVIDIA gives it device memory of its
      size on the map (+512 MiB for 512, `flashmem_copy.py`'s `device_mib`), which the
      budget does not see.

    A device whose memory is the host's (`host_unified_memory`, PoCL, mobile SoCs) streams
    through the ring instead, as this would hold every weight in the budgeted memory.
    """

    def __init__(self, context: cl.Context, memory: DeviceMemory, store: WeightStore,
                 names: Iterable[str], registered: bool | None = None):
        self.store, self.memory = store, memory
        self.registered = PINNED_REGISTERED if registered is None else registered
        self.queue = cl.CommandQueue(context)
        # only the weights `names` (the streamed ones): pinning costs time at load
        self.offsets: dict[str, int] = {}
        size = 0
        for name in names:
            size = -(-size // PINNED_ALIGN) * PINNED_ALIGN
            self.offsets[name] = size
            size += store.entries[name]["nbytes"]
        self.size = max(1, size)
        if self.registered:
            self.host = page_aligned(self.size)
        else:
            self.buffer = cl.Buffer(context, cl.mem_flags.READ_WRITE
                                    | cl.mem_flags.ALLOC_HOST_PTR, self.size)
            self.host, event = cl.enqueue_map_buffer(self.queue, self.buffer,
                                                     cl.map_flags.WRITE, 0, (self.size,),
                                                     np.uint8)
            event.wait()
        for name, offset in self.offsets.items():
            entry = store.entries[name]
            # from the map: faster than reads into pinned memory on the H100 (200 against
            # 337 ms for GPT-2's 455 MB, bench/flashmem_waits.py)
            self.host[offset: offset + entry["nbytes"]] = \
                store.data[entry["offset"]: entry["offset"] + entry["nbytes"]]
        if self.registered:  # filled first: a driver may read the memory when registering it
            self.buffer = register(context, self.host)
        memory.host_pinned += self.size

    def __contains__(self, name: str) -> bool:
        return name in self.offsets

    def bytes_of(self, name: str) -> np.ndarray:
        """Weight `name`'s bytes in pinned memory."""
        offset = self.offsets[name]
        return self.host[offset: offset + self.store.entries[name]["nbytes"]]

    def close(self) -> None:
        if not self.registered:
            self.host.base.release(self.queue)
        self.queue.finish()
        self.buffer.release()
        self.memory.host_pinned -= self.size


def discrete(device: cl.Device) -> bool:
    """Whether the device has memory of its own (a discrete GPU), not the host's."""
    return not device.host_unified_memory
