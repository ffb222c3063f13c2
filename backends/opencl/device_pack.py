"""
Graph inputs packed on the device: a discrete GPU's run uploads each input image's
tensor as it comes (contiguous, from pinned host memory) and one gather kernel writes
its pixels. Packing on the host is a strided numpy copy: on the H100's host it took
0.33-0.62 ms of a 224x224 image's run, against 0.02 ms for the contiguous copy
(`bench/host_phases.py`).

The gather is layout-blind: at load, `texture.pack` of the element indices (+1; 0 is
padding) gives each pixel lane the element it holds, so the one kernel serves every
layout `texture.pack` knows, and the layouts stay in one place.
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from mobile_opt.backends.opencl.host_pack import OpenCLRunError, check_exact
from mobile_opt.backends.opencl.memory import DeviceMemory, page_aligned, register
from mobile_opt.backends.opencl.plan import PackRecord
from mobile_opt.dialects import texture

GATHER_SOURCE = """
__kernel void gather_pixels(__global const float *raw, __global const int4 *where,
                            __write_only image2d_t out, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  int4 i = where[y * width + x];
  float4 v = (float4)(i.x ? raw[i.x - 1] : 0.0f, i.y ? raw[i.y - 1] : 0.0f,
                      i.z ? raw[i.z - 1] : 0.0f, i.w ? raw[i.w - 1] : 0.0f);
  write_imagef(out, (int2)(x, y), v);
}
"""
GATHER_GROUP = (16, 16)


def takes_device_pack(record: PackRecord) -> bool:
    """Inputs stored in images (f32 or f16 pixels): a buffer's keep the host's pack."""
    return record.kind == "image"


class DevicePacker:
    """One graph input's raw upload and gather into its image (`record`'s slot)."""

    def __init__(self, queue: cl.CommandQueue, memory: DeviceMemory, program: cl.Program,
                 record: PackRecord, image: cl.Image):
        self.record, self.memory = record, memory
        size = int(np.prod(record.shape, dtype=np.int64))
        if size >= 2**31:
            raise OpenCLRunError(f"input '{record.name}': too many elements to gather")
        # pinned: the copy engine moves it at its full rate (`PinnedStore`)
        self.host = page_aligned(4 * size)[:4 * size].view(np.float32).reshape(record.shape)
        self.pinned = register(queue.context, self.host)
        memory.host_pinned += self.host.nbytes
        self.raw = memory.buffer(max(4 * size, 4))
        indices = np.arange(1, size + 1, dtype=np.int32).reshape(record.shape)
        where = texture.pack(texture.Layout(record.layout), indices).astype(np.int32)
        assert where.shape == (record.height, record.width, 4)
        self.where = memory.buffer(where.nbytes, cl.mem_flags.READ_ONLY)
        cl.enqueue_copy(queue, self.where, np.ascontiguousarray(where), is_blocking=True)
        self.kernel = cl.Kernel(program, "gather_pixels")
        self.kernel.set_args(self.raw, self.where, image, np.int32(record.width),
                             np.int32(record.height))
        self.size = tuple(-(-n // g) * g for n, g in zip((record.width, record.height),
                                                         GATHER_GROUP))

    def upload(self, queue: cl.CommandQueue, array: np.ndarray) -> tuple[cl.Event, cl.Event]:
        """Enqueue `array`'s copy and gather (their events); the host memory is reused once
        `queue` is done."""
        check_exact(self.record, array)
        np.copyto(self.host, array, casting="unsafe")
        copied = cl.enqueue_copy(queue, self.raw, self.host, is_blocking=False)
        return copied, cl.enqueue_nd_range_kernel(queue, self.kernel, self.size, GATHER_GROUP)

    def close(self) -> None:
        for obj in (self.raw, self.where):
            self.memory.free(obj)
        self.pinned.release()
        self.memory.host_pinned -= self.host.nbytes


def gather_program(context: cl.Context, device: cl.Device) -> cl.Program:
    return cl.Program(context, GATHER_SOURCE).build(devices=[device])
