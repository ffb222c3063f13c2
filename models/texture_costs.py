"""
The time of GPU kernels TMModel does not model (elementwise, pooling, reductions, data
movement, relayout copies), in ns, from a device profile: each pixel read streams from
the texture cache at the profile's texture bandwidth, each pixel written goes out at its
buffer bandwidth, and each kernel pays a launch. A `CostModel` of `StreamKernel`s, with
the two prices `select-layouts` weighs against each other: a consumer reading an operand
in a layout other than its own (lane gathers: four reads per pixel instead of one), and
a relayout copy kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

PIXEL_BYTES = 16
"""An RGBA pixel of float32."""
LAUNCH_NS = 3_000.0
"""A kernel launch in profiled kernel time, where the profile measured none (PoCL's CPU
device: 1.5-3 µs for the smallest copy kernels of vit_tiny)."""
GATHER_READS = 4
"""Reads of an operand pixel whose lanes lie in four pixels of another layout."""


@dataclass(frozen=True)
class StreamKernel:
    """A kernel as bytes moved: pixels read (all operands) and pixels written."""

    reads: float
    writes: float


@dataclass(frozen=True)
class BandwidthModel:
    """Launch plus bytes over the profile's bandwidths (GB/s, which is bytes per ns)."""

    texture_gbs: float
    buffer_gbs: float
    launch_ns: float = LAUNCH_NS
    name = "bandwidth"
    unit = "ns"

    @staticmethod
    def of(profile: dict) -> BandwidthModel:
        bandwidth = profile.get("bandwidth_gbs") or {}
        texture = float(bandwidth.get("texture") or bandwidth.get("buffer") or 10.0)
        buffer = float(bandwidth.get("buffer") or texture)
        launch = (profile.get("compute") or {}).get("launch_ns")
        return BandwidthModel(texture, buffer, float(launch) if launch else LAUNCH_NS)

    def cost(self, candidate: StreamKernel) -> float:
        return (self.launch_ns + candidate.reads * PIXEL_BYTES / self.texture_gbs
                + candidate.writes * PIXEL_BYTES / self.buffer_gbs)

    def copy(self, pixels: float, lanes: bool = True) -> float:
        """A copy kernel writing `pixels`, gathering each one's lanes (`lanes`) or not."""
        return self.cost(StreamKernel((GATHER_READS if lanes else 1) * pixels, pixels))

    def gathers(self, pixel_reads: float) -> float:
        """What `pixel_reads` reads of an operand cost more when each is a lane gather."""
        return (GATHER_READS - 1) * pixel_reads * PIXEL_BYTES / self.texture_gbs
