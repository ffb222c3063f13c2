"""
`mobile-run --reference MODEL`: run a model on the numpy reference interpreter
and check every output against ONNX Runtime.

MODEL is an `.onnx` file (imported as `mobile-translate` does), `.mlir` IR, or
`onnx:NAME` for a model the onnx package ships as backend test data
(`onnx:light_resnet50`, `onnx:test_shrink`, ...); `-p`
runs passes on it first, so any stage of the pipeline whose graph is still `onnx`
ops can be checked. Inputs come from `--input NAME=FILE.npy` or are drawn at
random (`--seed`) with the types the function declares: floats uniform in
[-1, 1), integers in 0..2, booleans either way. For an `.onnx` model ONNX Runtime
runs the original file on the same inputs; one line per output says how far the
reference is from it, and the exit status is 1 if any output is out of tolerance
(by default rtol 1e-3 / atol 1e-4 for float32 and float64, 1e-2 / 1e-3 for
float16, within 1 for int8/uint8, exact for other integers and booleans).
"""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.universe import Universe

from mobile_opt.backends.reference.interpreter import find_function, input_dtype, run_reference
from mobile_opt.frontend.onnx_import import graph_io_names, import_onnx
from mobile_opt.tools.cli import UserError, parse_dims, run_tool, write_atomically

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "f": (1e-3, 1e-4),  # float32 and float64
    "float16": (1e-2, 1e-3),
    "int8": (0.0, 1.0),  # quantised results may round the other way
    "uint8": (0.0, 1.0),
}
"""(rtol, atol) per output dtype name or kind; other types must match exactly."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit status 1, like every other user error
        raise UserError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mobile-run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", help=".onnx model, .mlir IR, or onnx:NAME of a shipped model")
    parser.add_argument(
        "--reference",
        action="store_true",
        help="run on the numpy reference interpreter (the only backend so far)",
    )
    parser.add_argument(
        "--input", action="append", metavar="NAME=FILE.npy", help="value of one input"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default %(default)s)"
    )
    parser.add_argument(
        "--dim", action="append", metavar="NAME=N", help="static size for a symbolic dim"
    )
    parser.add_argument("--rtol", type=float, help="relative tolerance (default 1e-3 for float32)")
    parser.add_argument("--atol", type=float, help="absolute tolerance (default 1e-4 for float32)")
    parser.add_argument("--save-dir", metavar="DIR", help="write each output there as NAME.npy")
    parser.add_argument(
        "-p", "--passes", metavar="PIPELINE", help="passes to run first, e.g. onnx-fuse"
    )
    parser.add_argument(
        "--function", default="main_graph", help="function to run (default %(default)s)"
    )
    return parser


ONNX_TEST_DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
"""The models the onnx package ships for its backend tests."""


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
        text = path.read_text()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read: {e}") from None
    module = Parser(ctx, text, str(path)).parse_module()
    module.verify()
    return module


def universe_context(universe: Universe) -> Context:
    ctx = Context()
    for name, factory in universe.all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def run_passes(module: ModuleOp, spec: str, universe: Universe, ctx: Context) -> None:
    try:
        pipeline = PassPipeline.parse_spec(universe.all_passes, spec)
    except (ValueError, ImportError) as e:  # an unknown pass, or one whose module cannot load
        raise UserError(f"-p {spec}: {e}") from None
    pipeline.apply(ctx, module)
    module.verify()


def parse_input_specs(items: Sequence[str] | None, names: Sequence[str]) -> dict[str, np.ndarray]:
    """`--input NAME=FILE.npy` options, loaded."""
    values: dict[str, np.ndarray] = {}
    for item in items or []:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            raise UserError(f"--input expects NAME=FILE.npy, got '{item}'")
        if name not in names:
            raise UserError(
                f"--input {name}: the model has no input '{name}' (inputs: {', '.join(names)})"
            )
        try:
            values[name] = np.load(file, allow_pickle=False)
        except FileNotFoundError:
            raise UserError(f"--input {name}: {file}: no such file") from None
        except (OSError, ValueError, EOFError) as e:
            raise UserError(f"--input {name}: {file}: not a .npy array ({e})") from None
    return values


def random_input(name: str, t: object, rng: np.random.Generator) -> np.ndarray:
    """A random value of tensor type `t`: floats in [-1, 1), integers in 0..2, any booleans."""
    if not isinstance(t, TensorType):
        raise UserError(f"input '{name}' has non-tensor type {t}; give it with --input")
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        raise UserError(f"input '{name}' has a dynamic shape; give it with --input (or --dim)")
    dtype = input_dtype(name, t)
    if dtype.kind == "f":
        return rng.uniform(-1, 1, shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, 3, shape).astype(dtype)


def make_inputs(
    function: func.FuncOp, given: dict[str, np.ndarray], seed: int
) -> dict[str, np.ndarray]:
    names, _ = graph_io_names(function)
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, t in zip(names, function.function_type.inputs.data):
        feeds[name] = given[name] if name in given else random_input(name, t, rng)
    return feeds


def run_onnxruntime(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    try:
        import onnxruntime
    except ImportError:
        raise UserError("onnxruntime is not installed; install mobile-opt[dev]") from None
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # no warnings about unused initializers
    try:
        session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
        wanted = {i.name for i in session.get_inputs()}
        results = session.run(None, {k: v for k, v in feeds.items() if k in wanted})
    except Exception as e:  # onnxruntime raises its own exception types
        lines = str(e).strip().splitlines()
        raise UserError(f"onnxruntime: {lines[0] if lines else type(e).__name__}") from None
    return {o.name: np.asarray(r) for o, r in zip(session.get_outputs(), results)}


@dataclass(frozen=True)
class Comparison:
    """How far an output is from its expected value."""

    max_abs: float
    max_rel: float
    passed: bool
    note: str = ""


def tolerances(dtype: np.dtype, rtol: float | None, atol: float | None) -> tuple[float, float]:
    default = DEFAULT_TOLERANCES.get(dtype.name, DEFAULT_TOLERANCES.get(dtype.kind, (0.0, 0.0)))
    return (default[0] if rtol is None else rtol, default[1] if atol is None else atol)


def compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> Comparison:
    """Elementwise `|got - want| <= atol + rtol |want|`; NaNs must coincide."""
    if got.shape != want.shape:
        return Comparison(np.inf, np.inf, False, f"shape {list(want.shape)} expected")
    if got.dtype != want.dtype:
        return Comparison(np.inf, np.inf, False, f"dtype {want.dtype} expected")
    g, w = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        same = (g == w) | (np.isnan(g) & np.isnan(w))  # equal infinities and coinciding NaNs
        error = np.nan_to_num(np.where(same, 0.0, np.abs(g - w)), nan=np.inf, posinf=np.inf)
        scale = np.abs(w)
        relative = np.where(error == 0, 0.0, np.inf)
        np.divide(
            error, scale, out=relative, where=(scale != 0) & np.isfinite(scale) & (error != 0)
        )
        passed = bool(np.all(error <= atol + rtol * np.where(np.isfinite(scale), scale, 0)))
    return Comparison(float(error.max(initial=0)), float(relative.max(initial=0)), passed)


def format_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _number(x: float) -> str:
    return "inf" if np.isinf(x) else f"{x:.3g}"


def save_outputs(folder: Path, outputs: dict[str, np.ndarray]) -> None:
    """Each output as `folder/NAME.npy`, written atomically (odd characters of NAME become `_`)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"--save-dir {folder}: {e.strerror}") from None
    used: set[str] = set()
    for name, value in outputs.items():
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "output"
        while stem in used:
            stem += "_"
        used.add(stem)
        data = io.BytesIO()
        np.save(data, value, allow_pickle=False)
        write_atomically(folder / f"{stem}.npy", data.getvalue())


def run(args: argparse.Namespace) -> int:
    if not args.reference:
        raise UserError("choose a backend: --reference (the only one so far)")
    path = resolve_model(args.model)
    universe = Universe.get_multiverse()
    ctx = universe_context(universe)
    module = load_module(path, parse_dims(args.dim), ctx)
    if args.passes:
        run_passes(module, args.passes, universe, ctx)
    function = find_function(module, args.function)
    names, _ = graph_io_names(function)
    feeds = make_inputs(function, parse_input_specs(args.input, names), args.seed)
    outputs = run_reference(module, feeds, args.function)
    if args.save_dir:
        save_outputs(Path(args.save_dir), outputs)
    if path.suffix != ".onnx":
        rows = [["output", "shape", "dtype"]]
        rows += [[n, str(list(v.shape)), str(v.dtype)] for n, v in outputs.items()]
        print(format_table(rows))
        return 0
    expected = run_onnxruntime(path, feeds)
    rows = [["output", "shape", "max abs err", "max rel err", "status"]]
    failed = False
    for name, got in outputs.items():
        if name not in expected:
            rows.append(
                [name, str(list(got.shape)), "-", "-", "FAIL (onnxruntime has no such output)"]
            )
            failed = True
            continue
        rtol, atol = tolerances(expected[name].dtype, args.rtol, args.atol)
        result = compare(got, expected[name], rtol, atol)
        failed |= not result.passed
        status = "PASS" if result.passed else "FAIL" + (f" ({result.note})" if result.note else "")
        rows.append(
            [name, str(list(got.shape)), _number(result.max_abs), _number(result.max_rel), status]
        )
    print(format_table(rows))
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> None:
    run_tool("mobile-run", lambda: run(build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
