"""
`mobile-tune MODEL --device SEL [--search exhaustive|random] [--samples N] -o tuned.json
[--save-mlir tuned.mlir]`: the measured searches for `texture-tile`'s choices. Every
configuration of each GPU kernel texture-tile configures (pruned by `prune-configs` with
the device's profile unless `--no-prune`; `random` measures `--samples` of them) is
compiled by the GPU pipeline, built and timed on the device (`tools/tuning.py`), and the
five fastest are timed again, interleaved, before one is taken; `tuned.json` records
every time, the fastest configuration per node (with its re-timed time) and how long
tuning took. `--save-mlir` writes the model's `onnx` IR with the fastest configurations
recorded (`texture.tile`), which `texture-tile` keeps and `onnx-to-texture` obeys, ready
for `mobile-opt`/`mobile-run`: passes never measure anything themselves.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from mobile_opt.backends.opencl.devices import DeviceError, choose_device
from mobile_opt.models.device_profile import load_profile, profile_for_device
from mobile_opt.tools.tuning import fastest, node_name
from mobile_opt.models import texture_kernels
from mobile_opt.tools.cli import (
    ToolParser,
    UsageError,
    UserError,
    add_limit_option,
    apply_limit_option,
    noting,
    output_folder,
    progress_bar,
    run_tool,
    seed,
    write_atomically,
)
from mobile_opt.transforms.prune_configs import HardwareLimits, kernel_of, surviving


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = ToolParser(prog="mobile-tune", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="an .onnx file")
    parser.add_argument("--device", default="pocl")
    parser.add_argument("--profile", help="device profile (default: the device's shipped one)")
    parser.add_argument("--search", choices=("exhaustive", "random"), default="exhaustive")
    parser.add_argument("--samples", type=int, default=8, help="configurations per node (random)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--no-prune", action="store_true", help="measure the unpruned space")
    parser.add_argument("-o", "--output", required=True, help="JSON of the measurements")
    parser.add_argument("--save-mlir", help="the model's IR with the fastest configurations")
    add_limit_option(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    run_tool("mobile-tune", lambda: tune(parse_args(argv)))


def tune(args: argparse.Namespace) -> int:
    from mobile_opt.frontend.onnx_import import import_onnx

    apply_limit_option(args)
    if args.samples < 1:
        raise UsageError(f"--samples must be at least 1, not {args.samples}")
    for output in (args.output, args.save_mlir):
        if output:
            output_folder(output)
    try:
        device = choose_device(args.device)
    except DeviceError as e:
        raise UserError(str(e)) from None
    profile_name = args.profile or profile_for_device(device.name, device.platform)
    if profile_name is None:
        raise UserError(f"no profile for {device.name}: run mobile-probe and pass --profile")
    limits = HardwareLimits.of(load_profile(profile_name))
    module = import_onnx(args.model)
    # tensors in images (`tuning.build`), where products and convs may be blocked too
    nodes = [(op, kernel) for op in module.walk()
             if (kernel := kernel_of(op, limits.max_image)) is not None]
    if not nodes:
        raise UserError(f"{args.model}: no node texture-tile can configure (MatMul, Gemm, "
                        "Conv, ConvTranspose, Softmax, LayerNormalization)")
    rng = random.Random(args.seed)
    bar = progress_bar(len(nodes), f"tuning on {device.name}", "node")
    start = time.perf_counter()
    report = []
    for op, kernel in nodes:
        name = node_name(op)
        bar.set_postfix_str(name)
        space = list(texture_kernels.candidates(kernel, limits.max_group))
        pool = space if args.no_prune else surviving(limits, kernel, space)
        if args.search == "random":
            pool = rng.sample(pool, min(args.samples, len(pool)))
        results, best = fastest(module, name, pool, device, progress=noting(bar))
        best.config.apply(op)
        report.append({
            "node": name, "kernel": kernel.describe_shape(), "space": len(space),
            "measured": len(pool), "best": best.config.describe(), "best_ms": best.seconds * 1e3,
            "seconds": sum(m.cost_seconds for m in results) + best.cost_seconds,
            "configs": [{"config": m.config.describe(),
                         "ms": m.seconds * 1e3 if m.seconds != float("inf") else None}
                        for m in results],
        })
        bar.update()
    bar.close()
    total = time.perf_counter() - start
    write_atomically(args.output, json.dumps({
        "device": device.describe(), "profile": profile_name, "search": args.search,
        "tuning_seconds": total, "nodes": report}, indent=1) + "\n")
    if args.save_mlir:
        write_atomically(args.save_mlir, str(module) + "\n")
    for entry in report:
        print(f"{entry['node']}: {entry['best']} {entry['best_ms']:.3f} ms "
              f"({entry['measured']} of {entry['space']} measured)")
    print(f"tuning took {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
