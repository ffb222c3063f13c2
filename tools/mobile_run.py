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
`--trace-png FILE.png` draws it (`tools/trace_report.py`). Under `--memory-budget` they
record the last streamed run.
An `.mlir` module that is lowered already runs as it is, after the passes `-p` names.
With `-p` and `--reference`, the passes run first, so any stage of the pipeline
whose graph is still `onnx` ops can be checked.
"""

from __future__ import annotations

import argparse
import io
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from mobile_opt.models.solvers import SOLVERS
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.reference.interpreter import find_function, run_reference
from mobile_opt.checking import (
    FAIL,
    NO_SIGNAL,
    ONNX_TEST_DATA,
    PASS,
    CheckError,
    compare,
    compare_lsb,
    comparison_cells,
    criterion,
    format_table,
    make_inputs,
    output_lsbs,
    random_weights,
    run_onnxruntime,
)
from mobile_opt.dialects.dominance import verify_dominance
from mobile_opt.dialects.limits import LimitError, LimitedParser
from mobile_opt.dialects.onnx.graph import graph_io_names, printable
from mobile_opt.frontend.errors import OnnxImportError, check_input_file
from mobile_opt.frontend.onnx_import import import_onnx, read_model
from mobile_opt import pipelines
from mobile_opt.tools.cli import (
    DIM_HELP,
    ToolParser,
    UsageError,
    UserError,
    check_save_dir,
    add_limit_option,
    apply_limit_option,
    one_line,
    output_folder,
    parse_dims,
    run_tool,
    scratch_folder,
    seed,
    write_atomically,
    write_save_dir,
)
from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, ModuleOp
from xdsl.utils.exceptions import DiagnosticException

KERNEL_TABLE_ROWS = 15


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
        "global choice; local: each op by itself, the baseline; see README)",
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


def resolve_model(spec: str) -> Path:
    """
    The file a MODEL argument names: a path, or `onnx:NAME` for the onnx package's
    `light/NAME.onnx` (the `light_` prefix may be left out) or `simple/NAME/model.onnx`.
    """
    if not spec.startswith("onnx:"):
        return Path(spec)
    name = spec.removeprefix("onnx:")
    light, simple = ONNX_TEST_DATA / "light", ONNX_TEST_DATA / "simple"
    for candidate in (
        light / f"{name}.onnx",
        light / f"light_{name}.onnx",
        simple / name / "model.onnx",
    ):
        if name and "/" not in name and candidate.is_file():
            return candidate
    shipped = ", ".join(sorted(p.stem for p in light.glob("*.onnx")))
    raise UserError(f"{spec}: the onnx package ships no such model (light models: {shipped})")


def load_module(path: Path, dims: dict[str, int], ctx: Context) -> ModuleOp:
    """An `.onnx` model imported, or an `.mlir` file parsed."""
    if path.suffix == ".onnx":
        return import_onnx(path, dims=dims)
    if path.suffix != ".mlir":
        raise UserError(f"{path}: expected an .onnx or .mlir file")
    if dims:
        raise UserError("--dim applies to .onnx models only")
    try:
        text = check_input_file(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror}") from None
    try:
        module = LimitedParser(ctx, text, str(path)).parse_module()
        verify_dominance(module)  # first: the verifier's shape rules walk operands
        module.verify()
    except RecursionError:
        raise UserError(f"{path}: nesting too deep") from None
    except DiagnosticException as e:
        raise UserError(f"{path}: {one_line(e)}") from None
    return module


def run_passes(module: ModuleOp, spec: str, ctx: Context) -> None:
    try:
        pipelines.apply(module, pipelines.parse_passes(spec), ctx)
    except pipelines.PipelineError as e:
        raise UserError(str(e)) from None


def parse_input_specs(items: Sequence[str] | None, names: Sequence[str]) -> dict[str, np.ndarray]:
    """`--input NAME=FILE.npy` options, loaded."""
    values: dict[str, np.ndarray] = {}
    for item in items or []:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            raise UsageError(f"--input expects NAME=FILE.npy, got '{item}'")
        if name not in names:
            raise UserError(
                f"--input {name}: the model has no input '{name}' (inputs: {', '.join(names)})"
            )
        try:
            values[name] = np.load(check_input_file(file), allow_pickle=False)
        except OnnxImportError as e:  # no file, or one that is not a regular file
            raise UserError(f"--input {name}: {e}") from None
        except (OSError, ValueError, EOFError) as e:
            raise UserError(f"--input {name}: {file}: not a .npy array ({e})") from None
    return values


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
        from mobile_opt.tools.memory_budget import run_memory_budget_mode

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


def load_with_inputs(args: argparse.Namespace, passes: str | None = None):
    """
    The model file, context, imported module (through `passes`, if any), the
    inputs to feed it and the LSB of each quantized output.
    """
    path = resolve_model(args.model)
    if args.random_weights:
        path = with_random_weights(path, args.seed)
    ctx = pipelines.context()
    module = load_module(path, parse_dims(args.dim), ctx)
    lsbs = output_lsbs(find_function(module, args.function))
    if passes:
        run_passes(module, passes, ctx)
    function = find_function(module, args.function)
    names, _ = graph_io_names(function)
    try:
        feeds = make_inputs(function, parse_input_specs(args.input, names), args.seed)
    except CheckError as e:
        raise UserError(str(e)) from None
    except LimitError as e:
        raise UserError(f"{path}: {e}") from None
    return path, ctx, module, feeds, lsbs


def with_random_weights(path: Path, seed: int) -> Path:
    """A copy of the model at `path` with random weights, in a scratch folder (`scratch_folder`)."""
    if path.suffix != ".onnx":
        raise UserError(f"--random-weights applies to an .onnx model, not {path}")
    try:
        model = random_weights(read_model(path), seed)
    except (CheckError, LimitError) as e:
        raise UserError(f"{path}: --random-weights: {e}") from None
    # a file, not bytes: weights are read from the model by path (`dialects/weights.py`)
    copy = scratch_folder() / f"{path.stem}-random{seed}.onnx"
    onnx.save(model, copy)
    return copy


def run_reference_mode(args: argparse.Namespace) -> int:
    path, _, module, feeds, lsbs = load_with_inputs(args, args.passes)
    try:
        outputs = run_reference(module, feeds, args.function)
    except ReferenceRunError as e:  # names the node, if any: add the file
        raise UserError(f"{path}: {one_line(e)}") from None
    except LimitError as e:
        raise UserError(f"{path}: {e}") from None
    status = report_outputs(path, feeds, outputs, args, lsbs=lsbs)
    if args.save_dir:
        save_outputs(Path(args.save_dir), outputs)
    return status


def report_outputs(
    path: Path,
    feeds: dict[str, np.ndarray],
    outputs: dict[str, np.ndarray],
    args: argparse.Namespace,
    fp16: bool = False,
    lsbs: dict[str, float] | None = None,
) -> int:
    """
    The error table against onnxruntime (or shapes alone for `.mlir`), each output held
    to its criterion (`checking.criterion`); a warning for each output the comparison
    cannot tell from a constant; 1 if any failed.
    """
    if path.suffix != ".onnx":
        rows = [["output", "shape", "dtype"]]
        rows += [[printable(n), str(list(v.shape)), str(v.dtype)] for n, v in outputs.items()]
        print(format_table(rows))
        return 0
    try:
        expected = run_onnxruntime(path, feeds)
    except CheckError as e:
        raise UserError(str(e)) from None
    rows = [["output", "shape", "max abs err", "relative", "status"]]
    notes, failed = [], False
    for name, got in outputs.items():
        if name not in expected:
            rows.append([printable(name), str(list(got.shape)), "-", "-",
                         "FAIL (onnxruntime has no such output)"])
            failed = True
            continue
        want = expected[name]
        rule = criterion(want, (lsbs or {}).get(name), args.rtol, args.atol,
                         fp16 and want.dtype.kind == "f")
        result = compare(got, want, rule)
        failed |= result.status == FAIL
        rows.append([printable(name), str(list(got.shape)), *comparison_cells(result),
                     result.status])
        if result.status == NO_SIGNAL:
            print(f"warning: output '{printable(name)}' says nothing: {result.note}; feed other "
                  "inputs (--input) or use a model with real weights", file=sys.stderr)
        elif result.note:
            notes.append(f"note: output '{printable(name)}': {result.note}")
    print(format_table(rows))
    for note in notes:
        print(note)
    return 1 if failed else 0


# OpenCL ------------------------------------------------------------------------------
def compile_for_device(
    module: ModuleOp, args: argparse.Namespace, device, ctx: Context, stream=None
) -> bool:
    """
    Lower `module` in place for `device`; whether it stores tensors as half. `stream`, a
    `flashmem-plan` pass, plans weight streaming last, realised by `flashmem-stream`
    (`--memory-budget`).
    """
    from mobile_opt.backends.opencl.plan import is_lowered
    from mobile_opt.transforms.flashmem_stream import FlashMemStreamPass

    if is_lowered(module):  # lowered IR: only the passes -p names (and the plan)
        if args.fp16:
            raise UserError("--fp16 applies to a model that is not lowered yet")
        if args.passes:
            run_passes(module, args.passes, ctx)
        if stream is not None:
            pipelines.apply(module, [stream, FlashMemStreamPass()], ctx)
        return any(
            isinstance(getattr(op.result.type, "element_type", None), Float16Type)
            for op in module.walk()
            if op.name in ("texture.alloc", "texture.pack")
        )
    spec = pipelines.GRAPH_PASSES if args.passes is None else args.passes
    try:
        passes, lowering = pipelines.gpu_pipeline(spec, device, args.fp16,
                                                  solver=args.solver, stream=stream)
    except pipelines.PipelineError as e:
        raise UserError(str(e)) from None
    pipelines.apply(module, passes, ctx)
    return lowering.storage == "f16"


def kernel_time_rows(records, times: list[float], limit: int = KERNEL_TABLE_ROWS) -> list[str]:
    """The kernel table: slowest first, `limit` rows, then the rest summed, then the total."""
    total = sum(times)
    order = sorted(range(len(times)), key=lambda i: -times[i])
    rows = [["kernel", "onnx node(s)", "ms", "%"]]
    for i in order[:limit]:
        node = re.sub(r"node '([^']*)' ", r"\1 ", records[i].node)
        if len(node) > 60:
            node = node[:57] + "..."
        share = 100 * times[i] / total if total else 0.0
        rows.append([records[i].kernel, node, f"{times[i] * 1e3:.3f}", f"{share:.1f}"])
    rest = order[limit:]
    if rest:
        rest_time = sum(times[i] for i in rest)
        share = 100 * rest_time / total if total else 0.0
        rows.append([f"({len(rest)} more)", "", f"{rest_time * 1e3:.3f}", f"{share:.1f}"])
    rows.append([f"total ({len(times)} launches)", "", f"{total * 1e3:.3f}", "100.0"])
    return format_table(rows).splitlines()


def run_opencl_mode(args: argparse.Namespace) -> int:
    # the device first: it points the ICD loader at pip-installed runtimes before pyopencl loads
    from mobile_opt.backends.opencl.devices import DeviceError, choose_device, default_device

    try:
        if args.device:
            device = choose_device(args.device)
        else:
            device, remark = default_device()
            if remark:
                print(f"remark: {remark}", file=sys.stderr)
    except DeviceError as e:
        raise UserError(str(e)) from None

    from mobile_opt.backends.opencl.executor import CompiledModel, OpenCLRunError
    from mobile_opt.backends.opencl.plan import PlanError, build_plan, memory_line, plan_comment
    from mobile_opt.backends.opencl.printer import OpenCLPrintError

    from xdsl.utils.exceptions import DiagnosticException

    path, ctx, module, feeds, lsbs = load_with_inputs(args)
    started = time.perf_counter()
    try:
        fp16 = compile_for_device(module, args, device, ctx)
    except DiagnosticException as e:  # a pass diagnostic names the node: add the file
        raise UserError(f"{path}: {one_line(e)}") from None
    compiled = time.perf_counter()
    try:
        plan = build_plan(module, args.function)
        for remark in plan.remarks:
            print(f"remark: {remark}", file=sys.stderr)
        model = CompiledModel(module, device, args.function, plan)
        built = time.perf_counter()
        traced = bool(args.trace or args.trace_png)
        results = [model.run(feeds, trace=traced and i == args.repeat - 1)
                   for i in range(args.repeat)]
    except (OpenCLRunError, OpenCLPrintError, PlanError, ReferenceRunError) as e:
        raise UserError(f"{path}: {one_line(e)}") from None  # the node, if any, is named
    outputs = results[-1].outputs
    print(f"device: {device.describe()}" + (" [fp16 storage]" if fp16 else ""))
    status = report_outputs(path, feeds, outputs, args, fp16, lsbs)
    timed = results[1:] if len(results) > 1 else results
    times = [
        statistics.median(r.kernel_times[i].seconds for r in timed)
        for i in range(len(model.plan.launches))
    ]
    print(f"\ncompile {compiled - started:.1f} s (passes), {built - compiled:.1f} s more to "
          "build the program and upload the weights")
    how = f"median of runs 2..{len(results)}" if len(results) > 1 else "run 1"
    print(f"\nkernel time ({how}, profiling events):")
    print("\n".join(kernel_time_rows(model.plan.launches, times)))
    walls = [r.wall_seconds * 1e3 for r in results]
    if len(walls) <= 10:
        print("wall time per run (ms): " + ", ".join(f"{w:.3f}" for w in walls))
    else:
        print(
            f"wall time per run (ms): first {walls[0]:.3f}, median "
            f"{statistics.median(walls[1:]):.3f}, min {min(walls[1:]):.3f} over {len(walls)} runs"
        )
    print(memory_line(model.plan))
    if args.profile_kernels or args.roofline:
        report_roofline(model.plan, times, device, args, how)
    write_traces(args, results[-1], model.plan, path, device)
    if args.save_dir:  # last: onnxruntime ran and every file above was written
        save_outputs(Path(args.save_dir), outputs, {
            "model.cl": model.source + "\n" + plan_comment(model.plan),
            "plan.json": model.plan.dumps() + "\n"})
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


def write_traces(args: argparse.Namespace, result, plan, path: Path, device,
                 other: dict | None = None) -> None:
    """`--trace`: the run's trace as JSON; `--trace-png`: its picture."""
    if not (args.trace or args.trace_png):
        return
    from mobile_opt.tools import trace_report

    name, model = getattr(device, "name", str(device)), Path(path).name
    if args.trace:
        trace = trace_report.write_trace(args.trace, result, plan, model, name, other)
        print(f"trace: {args.trace}")
    else:
        trace = trace_report.trace_of(result, plan, model, name, other)
    if args.trace_png:
        write_atomically(args.trace_png, trace_report.plot_png(trace))
        print(f"trace plot: {args.trace_png}")


# Hexagon ------------------------------------------------------------------------------
def run_hexagon_mode(args: argparse.Namespace) -> int:
    """
    Lower the quantized model to HVX and run it under qemu-hexagon. Its outputs must
    equal the exact integer reference (QLinear semantics, `reference/qlinear.py`)
    to within `--atol` LSBs (default 0); onnxruntime's distance is shown beside it,
    with a note where onnxruntime is the side that leaves the reference.
    """
    from mobile_opt.backends.hexagon.harness import missing_tools
    from mobile_opt.backends.hexagon.printer import PRINTER_PACKINGS
    from mobile_opt.backends.hexagon.runner import assembly, ports, run_module
    from mobile_opt.reference.qlinear import run_qlinear
    from xdsl.utils.exceptions import DiagnosticException

    path, ctx, module, feeds, _ = load_with_inputs(args)
    source = module.clone()  # the integer reference runs the model as imported
    started = time.perf_counter()
    try:
        passes = pipelines.dsp_pipeline(args.passes or "", args.layout, args.function,
                                        args.packing, solver=args.solver)
        pipelines.apply(module, passes, ctx)
    except pipelines.PipelineError as e:
        raise UserError(str(e)) from None
    except DiagnosticException as e:  # a lowering diagnostic names the node: add the file
        raise UserError(f"{path}: {one_line(e)}") from None
    compiled = time.perf_counter()
    missing = missing_tools()
    if missing:
        raise UserError(
            f"{missing[0]} not found: install the Hexagon toolchain with "
            "`apt-get install qemu-user clang-19 lld-19 llvm-19`"
        )
    expected = run_qlinear(source, feeds, args.function)
    printed = args.packing if args.packing in PRINTER_PACKINGS else "greedy"  # keeps packets
    running = time.perf_counter()
    outputs, execution = run_module(module, feeds, counting=args.packets, packing=printed)
    finished = time.perf_counter()
    print(f"target: hexagonv66 HVX-128 under qemu-hexagon (layout {args.layout}, "
          f"packing {args.packing})")
    onnxruntime = None
    if path.suffix == ".onnx":
        try:
            onnxruntime = run_onnxruntime(path, feeds)
        except CheckError as e:
            raise UserError(str(e)) from None
    tolerance = int(args.atol or 0)
    rows = [["output", "shape", "ours vs reference", "status", "onnxruntime vs reference"]]
    notes, failed = [], False
    for port in ports(module):
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
    print(f"compile {compiled - started:.1f} s, assemble and run under QEMU "
          f"{finished - running:.1f} s")
    if execution is not None:
        rows = [["kernel", "packets", "%"]]
        total = execution.total_packets
        for name, count in execution.packets.most_common(KERNEL_TABLE_ROWS):
            rows.append([name, str(count), f"{100 * count / total:.1f}"])
        rows.append(["total", str(total), "100.0"])
        print("\npackets executed (qemu-hexagon -singlestep):")
        print(format_table(rows))
    if args.save_dir:  # last: onnxruntime ran
        save_outputs(Path(args.save_dir), outputs, {"program.s": assembly(module, printed)})
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> None:
    run_tool("mobile-run", lambda: run(build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
