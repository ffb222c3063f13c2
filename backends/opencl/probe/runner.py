"""
Building and timing micro-benchmark kernels: one context and profiling queue per
device, programs built once per source, and a kernel's time taken from profiling
events as the least of a few runs after a warm-up run (the least is the run least
disturbed by the host).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl

from mobile_opt.backends.opencl.devices import DeviceInfo


class ProbeError(Exception):
    """A micro-benchmark could not be built or run on the device; the message says which."""


@dataclass
class Runner:
    info: DeviceInfo
    repeat: int = 3
    context: cl.Context = field(init=False)
    queue: cl.CommandQueue = field(init=False)
    _programs: dict[str, cl.Program] = field(default_factory=dict, init=False)
    _kernels: dict[tuple[str, str], cl.Kernel] = field(default_factory=dict, init=False)

    def __post_init__(self):
        self.context = cl.Context([self.info.device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )

    @property
    def device(self) -> cl.Device:
        return self.info.device  # type: ignore[return-value]

    def kernel(self, source: str, name: str) -> cl.Kernel:
        if (source, name) in self._kernels:
            return self._kernels[source, name]
        program = self._programs.get(source)
        if program is None:
            try:
                with warnings.catch_warnings():  # a driver's build log is not a failure
                    warnings.simplefilter("ignore", cl.CompilerWarning)
                    program = cl.Program(self.context, source).build()
            except cl.Error as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ProbeError(f"micro-benchmark '{name}' does not build: {first}") from None
            self._programs[source] = program
        kernel = self._kernels[source, name] = cl.Kernel(program, name)
        return kernel

    def group_limit(self, kernel: cl.Kernel) -> int:
        """The largest work group this kernel launches with (its registers bound it)."""
        return int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE,
                                              self.device))

    def time(self, kernel: cl.Kernel, global_size: tuple[int, ...],
             local_size: tuple[int, ...] | None, *args) -> float:
        """Seconds one launch takes (the least over `repeat` runs after a warm-up)."""
        kernel.set_args(*args)
        best = float("inf")
        for run in range(self.repeat + 1):
            event = cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)
            event.wait()
            if run:
                best = min(best, (event.profile.end - event.profile.start) * 1e-9)
        return best

    def buffer(self, array: np.ndarray | None = None, nbytes: int = 0) -> cl.Buffer:
        flags = cl.mem_flags.READ_WRITE
        if array is not None:
            return cl.Buffer(self.context, flags | cl.mem_flags.COPY_HOST_PTR, hostbuf=array)
        return cl.Buffer(self.context, flags, max(nbytes, 4))

    def image(self, pixels: np.ndarray, channel_type=cl.channel_type.SIGNED_INT32) -> cl.Image:
        """A read-only RGBA image2d from an (height, width, 4) array."""
        height, width, _ = pixels.shape
        fmt = cl.ImageFormat(cl.channel_order.RGBA, channel_type)
        return cl.create_image(self.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                               fmt, shape=(width, height), hostbuf=np.ascontiguousarray(pixels))

    def read(self, buffer: cl.Buffer, dtype, count: int) -> np.ndarray:
        out = np.empty(count, dtype)
        cl.enqueue_copy(self.queue, out, buffer).wait()
        return out
