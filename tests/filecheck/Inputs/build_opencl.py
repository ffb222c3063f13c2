"""
Builds an OpenCL C program (what `mobile-opt -t opencl` prints) with pyopencl on
the PoCL CPU device and prints `built N kernels`, N the kernels in the built
program. A failed build prints the build log to stderr and exits 1.

Without a PoCL platform it prints `skipped N kernels: <why>` (N counted in the
source) and exits 0, so that the rest of a test still runs; under CI=true it exits
1 instead: CI must never pass by not building. Checks accept either line with
`{{(built|skipped)}} N kernels`.

    python build_opencl.py [FILE]        (standard input when FILE is absent or -)
"""

from __future__ import annotations

import os
import re
import sys

POCL = "Portable Computing Language"


def pocl_device():
    """The PoCL device, or the reason there is none."""
    try:
        import pyopencl as cl

        for platform in cl.get_platforms():
            if POCL in platform.name:
                return platform.get_devices()[0], None
        return None, "no PoCL OpenCL platform (pip install pocl-binary-distribution)"
    except Exception as e:  # no pyopencl, or an ICD loader with no platforms
        return None, f"OpenCL unavailable: {e}"


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        sys.stderr.write(__doc__)
        return 2
    if len(argv) == 2 and argv[1] != "-":
        with open(argv[1], encoding="utf-8") as f:
            source = f.read()
    else:
        source = sys.stdin.read()

    device, problem = pocl_device()
    if device is None:
        if os.environ.get("CI") == "true":
            print(f"build_opencl: {problem} (CI=true: OpenCL builds must run)", file=sys.stderr)
            return 1
        count = len(re.findall(r"^\s*__kernel\b", source, re.MULTILINE))
        print(f"skipped {count} kernels: {problem}")
        return 0

    import pyopencl as cl

    context = cl.Context([device])
    program = cl.Program(context, source)
    try:
        program.build(devices=[device])
    except cl.RuntimeError as e:
        print(f"build_opencl: the build failed on {device.name}", file=sys.stderr)
        print(str(e), file=sys.stderr)
        return 1
    print(f"built {len(program.all_kernels())} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
