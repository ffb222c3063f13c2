"""
What `mobile-run`'s modes share (one model on OpenCL, the reference or the DSP; several
under a memory budget): the MODEL argument, the inputs to feed it (`--input`, or seeded
random ones) and the error table of its outputs against onnxruntime.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
from xdsl.dialects import func

from mobile_opt.checking import (
    FAIL,
    NO_SIGNAL,
    ONNX_TEST_DATA,
    CheckError,
    compare,
    comparison_cells,
    criterion,
    format_table,
    make_inputs,
    random_weights,
    run_onnxruntime,
)
from mobile_opt.dialects.limits import LimitError
from mobile_opt.dialects.onnx.graph import graph_io_names, printable
from mobile_opt.frontend.errors import OnnxImportError, check_input_file
from mobile_opt.frontend.onnx_import import read_model
from mobile_opt.tools.cli import UsageError, UserError, scratch_folder, write_atomically


def model_path(args: argparse.Namespace) -> Path:
    """The file MODEL names (`resolve_model`), with random weights if `--random-weights`."""
    path = resolve_model(args.model)
    return with_random_weights(path, args.seed) if args.random_weights else path


def model_inputs(function: func.FuncOp, args: argparse.Namespace, path: Path
                 ) -> dict[str, np.ndarray]:
    """A value for each input of `function`: `--input`'s, or seeded random ones."""
    names, _ = graph_io_names(function)
    try:
        return make_inputs(function, parse_input_specs(args.input, names), args.seed)
    except CheckError as e:
        raise UserError(str(e)) from None
    except LimitError as e:
        raise UserError(f"{path}: {e}") from None


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


def write_traces(args: argparse.Namespace, make_trace: Callable[[str | None], dict]) -> None:
    """`--trace`: the last run's trace as JSON; `--trace-png`: its picture. `make_trace`
    gives the trace, written to the path it is given (none: not written)."""
    if not (args.trace or args.trace_png):
        return
    from mobile_opt.api import traces

    trace = make_trace(args.trace)
    if args.trace:
        print(f"trace: {args.trace}")
    if args.trace_png:
        write_atomically(args.trace_png, traces.plot_png(trace))
        print(f"trace plot: {args.trace_png}")
