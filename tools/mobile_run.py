"""
`mobile-run MODEL`: compile a model for OpenCL, run it on a device and check every
output against ONNX Runtime; `mobile-run --reference MODEL` runs the numpy
reference interpreter instead.

MODEL is an `.onnx` file (imported as `mobile-translate` does), `.mlir` IR, or
`onnx:NAME` for a model the onnx package ships as backend test data
(`onnx:light_resnet50`, `onnx:test_shrink`, ...). Inputs come from
`--input NAME=FILE.npy` or are drawn at random (`--seed`) with the types the
function declares: floats uniform in [-1, 1), integers in 0..2, booleans either
way. For an `.onnx` model ONNX Runtime runs the original file on the same inputs;
one line per output says how far the result is from it, and the exit status is 1
if any output is out of tolerance (`checking.py`). Errors are judged against the
output's scale, its largest expected magnitude: by default a float output passes
within 1e-3 of it, a quantized output (int8/uint8, or the float a DequantizeLinear
returns) within one LSB, other integers and booleans exactly; `--rtol` (of the
scale) and `--atol` (absolute) replace the defaults. An output the comparison
cannot tell from a constant (its expected values spread less than the tolerance,
e.g. the uniform softmax of a model whose weights are all equal) is NO SIGNAL, with
a warning on stderr.

The OpenCL run (the default) takes the device from `--device`: `pocl` (default),
`gpu`, `cpu`, or a substring of a platform or device name (`intel` for the pip
Intel CPU runtime). It compiles with the GPU pipeline (`pipelines.py`): the graph
passes (`-p`, default below), then `texture-tile` (TMModel, with the device's shipped
profile, if it has one), `onnx-to-texture` with the device's image2d limits (a `-p`
pipeline may name `onnx-to-texture{...}` itself to set its options, e.g.
`fuse=false`), `texture-to-ocl`, `ace` and `cse`. `--fp16` stores every tensor as half
(kernels still compute in float); each stored tensor keeps 11 significant bits, so the error
grows with depth and with the output's range, and the default tolerance becomes
2e-2 of the expected output's scale. Besides
the error table it prints the kernels' time from profiling events (the median
over runs 2..N with `--repeat N`), the wall time of each run and the storage the
host plan needs with and without memory reuse, and how long compiling took (the passes,
then building the program and uploading the weights). `--save-dir` also receives
`model.cl` (the program with its host plan as a trailing comment) and `plan.json`.
`--profile-kernels` adds the roofline table: per launch, in program order, its time, the
GFLOP/s and GB/s it achieved (FLOPs of its ONNX nodes, bytes of its arguments' storage) and
their shares of the peaks in the device's profile, the one the pipeline uses, with the roof
that bounds it; `--roofline FILE.png` draws them on a log-log roofline plot
(`tools/roofline_report.py`).
`--trace FILE.json` writes the last run's timeline as Chrome trace-event JSON, which
https://ui.perfetto.dev and chrome://tracing open: a track for the host (packing inputs,
loading weight chunks, waiting, unpacking outputs), one per device queue (kernels with their
ONNX nodes and sizes, uploads and downloads; under `--memory-budget` the copy queue's
writes of the streamed weights' chunks) and the allocator's resident bytes as a counter;
`--trace-png FILE.png` draws it (`api/traces.py`). Under `--memory-budget` they
record the last streamed run.
An `.mlir` module that is lowered already runs as it is, after the passes `-p` names.
With `-p` and `--reference`, the passes run first, so any stage of the pipeline
whose graph is still `onnx` ops can be checked.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from mobile_opt import api, pipelines
from mobile_opt.api.errors import user_error
from mobile_opt.checking import (
    FAIL,
    NO_SIGNAL,
    PASS,
    CheckError,
    compare_lsb,
    format_table,
    output_lsbs,
    run_onnxruntime,
)
from mobile_opt.dialects.limits import LimitError
from mobile_opt.models.solvers import SOLVERS
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.reference.interpreter import find_function, run_reference
from mobile_opt.tools.cli import (
    DIM_HELP,
    ToolParser,
    UsageError,
    UserError,
    add_limit_option,
    apply_limit_option,
    check_save_dir,
    output_folder,
    parse_dims,
    run_tool,
    seed,
    write_atomically,
    write_save_dir,
)
from mobile_opt.tools.memory_budget import run_memory_budget_mode
from mobile_opt.tools.model_checks import (
    model_inputs,
    model_path,
    report_outputs,
    write_traces,
)


def build_parser() -> argparse.ArgumentParser:
    parser = ToolParser(
        prog="mobile-run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", nargs="+",
                        help=".onnx model, .mlir IR, or onnx:NAME of a shipped model (several "
                        "with --memory-budget: run one after another)")
    parser.add_argument(
        "--reference",
        action="store_true",
        help="run on the numpy reference interpreter instead of OpenCL",
    )
    parser.add_argument(
        "--device",
        metavar="pocl|gpu|cpu|NAME",
        help="OpenCL device: pocl (default), gpu, cpu, or a platform/device name substring",
    )
    parser.add_argument("--fp16", action="store_true", help="store tensors as half on the device")
    parser.add_argument(
        "--target",
        choices=("opencl", "hexagon"),
        default="opencl",
        help="opencl (default) or hexagon: a quantized model on the HVX DSP path under QEMU",
    )
    parser.add_argument(
        "--layout",
        choices=("auto", "col1", "col2", "col4"),
        default="auto",
        help="hexagon: SIMD layout of every operator, or auto (the cheapest per operator)",
    )
    parser.add_argument(
        "--solver",
        choices=SOLVERS,
        default="gcd2",
        help="how select-layouts chooses every layout (default gcd2: GCD²'s partitioned "
        "global choice; local: each op by itself, the baseline; all of them: "
        "docs/guide/gpu.md)",
    )
    parser.add_argument(
        "--packets",
        action="store_true",
        help="hexagon: run one packet at a time and count the packets each kernel executes",
    )
    parser.add_argument(
        "--packing",
        choices=("sda", "soft-to-hard", "soft-to-none", "list", "greedy", "single"),
        default="sda",
        help="hexagon: VLIW packing of the kernels: a vliw-pack algorithm (default sda, GCD²'s "
        "soft-dependency-aware packer, tuned per block), the printer's greedy packer, or one "
        "instruction a packet",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="run N times (default %(default)s)"
    )
    parser.add_argument(
        "--input", action="append", metavar="NAME=FILE.npy", help="value of one input"
    )
    parser.add_argument(
        "--seed", type=seed, default=0,
        help="seed of the random inputs and weights (default %(default)s)",
    )
    parser.add_argument(
        "--random-weights", action="store_true",
        help="replace an .onnx model's weights with seeded random ones (He-normal, "
        "BatchNorm statistics estimated on a random input) so that its outputs carry "
        "signal, e.g. for the onnx package's light_* models, whose weights are all 0.02",
    )
    parser.add_argument(
        "--dim", action="append", metavar="NAME=N|INPUT:AXIS=N", help=DIM_HELP
    )
    add_limit_option(parser)
    parser.add_argument(
        "--rtol", type=float,
        help="tolerance relative to the expected output's largest magnitude (default 1e-3)",
    )
    parser.add_argument(
        "--atol", type=float, help="absolute tolerance (default 0; one LSB if quantized)"
    )
    parser.add_argument(
        "--save-dir",
        metavar="DIR",
        help="write each output there as NAME.npy (and, for OpenCL, model.cl and plan.json)",
    )
    parser.add_argument(
        "--profile-kernels", action="store_true",
        help="OpenCL: print each launch's time, GFLOP/s and GB/s against the device "
        "profile's peak FLOP/s and bandwidth, and the roof that bounds it",
    )
    parser.add_argument(
        "--roofline", metavar="FILE.png",
        help="OpenCL: write a roofline plot of the kernel launches after the run",
    )
    parser.add_argument(
        "--trace", metavar="FILE.json",
        help="OpenCL: write the last run's timeline as Chrome trace-event JSON (host, "
        "compute and copy queues, device memory) for ui.perfetto.dev or chrome://tracing",
    )
    parser.add_argument(
        "--trace-png", metavar="FILE.png",
        help="OpenCL: draw the last run's timeline (as --trace records it) as a PNG",
    )
    parser.add_argument(
        "-p",
        "--passes",
        metavar="PIPELINE",
        help="passes to run first, e.g. onnx-fuse (OpenCL default: " + pipelines.GRAPH_PASSES + ")",
    )
    parser.add_argument(
        "--function", default="main_graph", help="function to run (default %(default)s)"
    )
    parser.add_argument(
        "--memory-budget", metavar="SIZE",
        help="stream weights within SIZE of device memory (e.g. 200MB; MB = 2^20 bytes), "
        "planned by flashmem-plan, and report peak memory and latencies beside preload-all",
    )
    parser.add_argument(
        "--iterations", type=int, default=3, metavar="N",
        help="--memory-budget: rounds over the models (default %(default)s)",
    )
    parser.add_argument(
        "--chunk-kb", type=int, default=256, help="--memory-budget: chunk size in KiB "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--time-limit", type=float, default=60.0, metavar="S",
        help="--memory-budget: the planner's time limit per model (default %(default)s)",
    )
    return parser


def run_passes(module: ModuleOp, spec: str, ctx: Context) -> None:
    try:
        pipelines.apply(module, pipelines.parse_passes(spec), ctx)
    except pipelines.PipelineError as e:
        raise UserError(str(e)) from None


def output_stem(name: str, used: set[str]) -> str:
    """The file stem of output `name` (odd characters become `_`), unique among `used`."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "output"
    while stem in used:
        stem += "_"
    used.add(stem)
    return stem


def save_outputs(folder: Path, outputs: dict[str, np.ndarray],
                 files: dict[str, str | bytes] | None = None) -> None:
    """
    Each output as `folder/NAME.npy` (odd characters of NAME become `_`) and `files`
    (name to contents) beside them, replacing the previous run's files as one set
    (`cli.staged_save_dir`). Called once every check has passed.
    """
    used: set[str] = set()
    arrays: dict[str, str | bytes] = {}
    for name, value in outputs.items():
        data = io.BytesIO()
        np.save(data, value, allow_pickle=False)
        arrays[f"{output_stem(name, used)}.npy"] = data.getvalue()
    write_save_dir(folder, {**arrays, **(files or {})})


def run(args: argparse.Namespace) -> int:
    apply_limit_option(args)
    roofline = "--profile-kernels" if args.profile_kernels else "--roofline" if args.roofline \
        else None
    if roofline and (args.reference or args.target != "opencl" or args.memory_budget):
        raise UsageError(f"{roofline} applies to the OpenCL run of one model")
    traced = "--trace" if args.trace else "--trace-png" if args.trace_png else None
    if traced and (args.reference or args.target != "opencl"):
        raise UsageError(f"{traced} applies to the OpenCL run")
    if traced and len(args.model) > 1:
        raise UsageError(f"{traced} applies to one model")
    for output in (args.roofline, args.trace, args.trace_png):
        if output:
            output_folder(output)  # before the long work
    if args.save_dir:
        check_save_dir(args.save_dir)
    if args.memory_budget is not None:
        if args.target != "opencl":
            raise UsageError("--memory-budget applies to the OpenCL run")
        return run_memory_budget_mode(args)
    if len(args.model) > 1:
        raise UsageError("several models run only with --memory-budget")
    args.model = args.model[0]
    if args.repeat < 1:
        raise UsageError(f"--repeat expects N >= 1, got {args.repeat}")
    if args.target == "hexagon":
        for option, given in (("--device", args.device), ("--fp16", args.fp16),
                              ("--reference", args.reference)):
            if given:
                raise UsageError(f"{option} does not apply to --target hexagon")
        return run_hexagon_mode(args)
    if args.layout != "auto" or args.packets:
        raise UsageError("--layout and --packets apply to --target hexagon")
    if args.reference:
        given = [
            o
            for o, v in (
                ("--device", args.device),
                ("--fp16", args.fp16),
                ("--repeat", args.repeat != 1),
            )
            if v
        ]
        if given:
            raise UsageError(f"{given[0]} applies to the OpenCL run, not to --reference")
        return run_reference_mode(args)
    return run_opencl_mode(args)


def run_reference_mode(args: argparse.Namespace) -> int:
    path = model_path(args)
    ctx = pipelines.context()
    _, module = api.read_model(path, parse_dims(args.dim), ctx)
    lsbs = output_lsbs(find_function(module, args.function))
    if args.passes:
        run_passes(module, args.passes, ctx)
    feeds = model_inputs(find_function(module, args.function), args, path)
    try:
        outputs = run_reference(module, feeds, args.function)
    except ReferenceRunError as e:  # names the node, if any: add the file
        raise user_error(e, path) from None
    except LimitError as e:
        raise UserError(f"{path}: {e}") from None
    status = report_outputs(path, feeds, outputs, args, lsbs=lsbs)
    if args.save_dir:
        save_outputs(Path(args.save_dir), outputs)
    return status


def run_opencl_mode(args: argparse.Namespace) -> int:
    path = model_path(args)
    model = api.compile(path, "gpu", device=args.device, dims=parse_dims(args.dim),
                        fp16=args.fp16, solver=args.solver, passes=args.passes,
                        function=args.function)
    for remark in model.remarks:
        print(f"remark: {remark}", file=sys.stderr)
    function = find_function(model.imported, args.function)
    lsbs = output_lsbs(function)
    feeds = model_inputs(function, args, path)
    outputs = {}
    traced = bool(args.trace or args.trace_png)
    for i in range(args.repeat):
        outputs = model.run(feeds, trace=traced and i == args.repeat - 1)
    report = model.report()
    print(report.header())
    status = report_outputs(path, feeds, outputs, args, model.fp16, lsbs)
    print()
    print(report.body())
    if args.profile_kernels or args.roofline:
        how = f"median of runs 2..{report.runs}" if report.runs > 1 else "run 1"
        report_roofline(model.plan, [k.seconds for k in report.kernels], model.device, args,
                        how)
    write_traces(args, model.trace)
    if args.save_dir:  # last: onnxruntime ran and every file above was written
        save_outputs(Path(args.save_dir), outputs, model.files())
    return status


def report_roofline(plan, times: list[float], device, args: argparse.Namespace,
                    how: str) -> None:
    """`--profile-kernels`: the roofline table of the launches; `--roofline`: its plot."""
    from mobile_opt.tools import roofline_report

    peaks, profile = roofline_report.device_peaks(device)
    works = roofline_report.launch_works(plan, times)
    if args.profile_kernels:
        print(f"\nroofline per launch ({how}):")
        print(roofline_report.table(works, peaks, profile))
    if args.roofline:
        title = f"{args.model} on {device.name}"
        write_atomically(args.roofline, roofline_report.plot_png(works, peaks, title))
        print(f"roofline plot: {args.roofline}")


# Hexagon ------------------------------------------------------------------------------
def run_hexagon_mode(args: argparse.Namespace) -> int:
    """
    Lower the quantized model to HVX and run it under qemu-hexagon. Its outputs must
    equal the exact integer reference (QLinear semantics, `reference/qlinear.py`)
    to within `--atol` LSBs (default 0); onnxruntime's distance is shown beside it,
    with a note where onnxruntime is the side that leaves the reference.
    """
    from mobile_opt.reference.qlinear import run_qlinear

    path = model_path(args)
    model = api.compile(path, "dsp", dims=parse_dims(args.dim), solver=args.solver,
                        passes=args.passes, function=args.function, layout=args.layout,
                        packing=args.packing, count_packets=args.packets)
    feeds = model_inputs(find_function(model.imported, args.function), args, path)
    expected = run_qlinear(model.imported, feeds, args.function)
    outputs = model.run(feeds)
    report = model.report()
    print(report.header())
    onnxruntime = None
    if path.suffix == ".onnx":
        try:
            onnxruntime = run_onnxruntime(path, feeds)
        except CheckError as e:
            raise UserError(str(e)) from None
    tolerance = int(args.atol or 0)
    rows = [["output", "shape", "ours vs reference", "status", "onnxruntime vs reference"]]
    notes, failed = [], False
    for port in model.plan:
        if port.role != "output":
            continue
        name, got = port.name, outputs[port.name]
        lsb = float(port.scale) if port.host_conversion else 1.0
        result = compare_lsb(got, expected[name], lsb)
        passed = not result.note and result.worst <= tolerance
        failed |= not passed
        theirs = "-"
        if onnxruntime is not None and name in onnxruntime:
            ort = compare_lsb(onnxruntime[name], expected[name], lsb)
            theirs = ort.describe()
            if not ort.exact and passed:
                notes.append(
                    f"note: onnxruntime leaves the exact integer reference on '{name}' by "
                    f"{ort.describe()}, where this run matches it: onnxruntime is the inexact "
                    "side (it runs some quantized nodes in float32, e.g. int8 ones whose "
                    "input is shared, and on x86 without VNNI sums uint8 x int8 pairs in 16 "
                    "bits with saturation)")
        status = PASS if passed else FAIL
        if passed and expected[name].size > 1 and np.unique(expected[name]).size < 2:
            status = NO_SIGNAL
            print(f"warning: output '{name}' says nothing: every reference value is "
                  f"{expected[name].flat[0]}; feed other inputs (--input)", file=sys.stderr)
        rows.append([name, str(list(got.shape)), result.describe(), status, theirs])
    print(format_table(rows))
    for note in notes:
        print(note)
    print(report.body())
    if args.save_dir:  # last: onnxruntime ran
        save_outputs(Path(args.save_dir), outputs, {"program.s": model.kernels})
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> None:
    run_tool("mobile-run", lambda: run(build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
