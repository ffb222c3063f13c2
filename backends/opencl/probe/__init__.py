"""
Device probing: ArchProbe's (Romou §3.1) and TMModel's (§3) micro-benchmarks, run
through pyopencl on any OpenCL device, and the device profile they fill in.
"""
