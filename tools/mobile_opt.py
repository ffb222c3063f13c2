"""
`mobile-opt`: xDSL's optimizer driver over this project's universe.

It reads `.mlir` or `.onnx` (by extension), takes passes as `-p a,b{opt=v}` or
MLIR-style `--pass-pipeline='builtin.module(a,b)'`, and writes its output whole
or not at all. The named pipelines (`gpu-pipeline`, `dsp-pipeline`;
`--list-pipelines`) run as the passes they stand for, so that `--explain`,
`--time-passes` and `--print-between-passes` see each of them.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from collections.abc import Sequence
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from mobile_opt.dialects.dominance import verify_dominance
from mobile_opt.dialects.limits import LimitedParser
from mobile_opt.frontend.errors import check_input_file
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.reference.errors import ReferenceRunError
from mobile_opt.tools.cli import (
    DIM_HELP,
    ToolParser,
    UsageError,
    UserError,
    add_limit_option,
    apply_limit_option,
    one_line,
    output_folder,
    parse_dims,
    run_tool,
    write_atomically,
)


def normalize_pipeline_args(argv: Sequence[str]) -> list[str]:
    """Turn `--pass-pipeline=P` (and `--pass-pipeline P`) into xDSL's `-p P`."""
    result: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--pass-pipeline":
            arg = "--pass-pipeline=" + next(args, "")
        if arg.startswith("--pass-pipeline="):
            result += ["-p", strip_module_anchor(arg.split("=", 1)[1])]
        else:
            result.append(arg)
    return result


def strip_module_anchor(pipeline: str) -> str:
    """`builtin.module(a,b)` → `a,b`: xDSL pipelines are anchored on the module already."""
    pipeline = pipeline.strip()
    for anchor in ("builtin.module(", "module("):
        if pipeline.startswith(anchor) and pipeline.endswith(")"):
            return pipeline[len(anchor) : -1]
    return pipeline


def _explains(p: ModulePass) -> bool:
    """The pass has an `explain` option, which `--explain` turns on (select-layouts,
    flashmem-fuse)."""
    return any(f.name == "explain" for f in dataclasses.fields(p))


class MobileOptMain(xDSLOptMain):
    version_format = "mobile-opt 0.1.0 (xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        self._output = StringIO()
        super().__init__(description="mobile-opt: ONNX to mobile GPU/DSP compiler driver", args=args)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        # xDSL makes a plain ArgumentParser; ours reports usage errors in one line
        arg_parser.__class__ = ToolParser
        arg_parser.prog = "mobile-opt"
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--dim",
            action="append",
            metavar="NAME=N|INPUT:AXIS=N",
            help=DIM_HELP,
        )
        add_limit_option(arg_parser)
        arg_parser.add_argument(
            "--explain",
            action="store_true",
            help="every select-layouts pass prints each op's choice, its cost and the "
            "runner-up, the transforms kept, and the total under every solver; every "
            "flashmem-fuse pass its plans, and each kernel it splits and why (stderr)",
        )

        arg_parser.add_argument(
            "--list-pipelines",
            action="store_true",
            help="list the named pipelines (gpu-pipeline, dsp-pipeline): their options, "
            "defaults, and the passes each stands for with its defaults, then exit",
        )

        arg_parser.add_argument(
            "--weight-store",
            metavar="FILE",
            help="also write the lowered module's weights, packed in their device layouts and "
            "cut in the chunks of its stream.plan, to FILE (memory-mapped by mobile-run's "
            "streaming runtime)",
        )

    def apply_passes(self, prog: ModuleOp):
        super().apply_passes(prog)
        self._module = prog

    def register_all_frontends(self):
        super().register_all_frontends()
        self.available_frontends["onnx"] = self._import_onnx
        self.available_frontends["mlir"] = self._parse_mlir

    def _parse_mlir(self, stream: IO[bytes]) -> ModuleOp:
        # xDSL's parser, refusing dense literals past the size limit before expanding them
        parser = LimitedParser(self.ctx, stream.read(), self.get_input_name())
        return parser.parse_module(not self.args.no_implicit_module)

    def _import_onnx(self, stream: IO[bytes]) -> ModuleOp:
        if self.args.input_file is None:
            raise UserError("an .onnx input must be a file, not standard input")
        return import_onnx(self.args.input_file, dims=parse_dims(self.args.dim))

    def parse_chunk(self, chunk, file_extension, start_offset=0):
        module = super().parse_chunk(chunk, file_extension, start_offset)
        # before the verifier, whose shape rules walk operands and would loop on a cycle
        if module is not None and not self.args.disable_verify:
            verify_dominance(module)
        return module

    def get_input_stream(self):
        if self.args.input_file is not None:
            check_input_file(self.args.input_file)
            try:
                return super().get_input_stream()
            except OSError as e:
                raise UserError(f"{self.args.input_file}: {e.strerror}") from None
        return super().get_input_stream()

    def setup_pipeline(self):
        try:
            super().setup_pipeline()
        except (ValueError, ArgSpecParseError) as e:
            # unknown pass, unknown or ill-typed option, malformed spec: the
            # reason is the last line xDSL gives (after a caret diagram, if any)
            reason = [line.strip() for line in str(e).strip().splitlines() if line.strip()][-1]
            raise UserError(f"pass pipeline '{self.args.passes}': {reason}") from None
        if self.pipeline.passes:
            self._expand_named_pipelines()
        if self.args.explain:
            passes = tuple(
                dataclasses.replace(p, explain=True) if _explains(p) else p
                for p in self.pipeline.passes
            )
            if passes == self.pipeline.passes:
                raise UsageError(
                    "--explain needs a select-layouts or flashmem-fuse pass in the pipeline"
                )
            self.pipeline = dataclasses.replace(self.pipeline, passes=passes)

    def _expand_named_pipelines(self) -> None:
        """Each named pipeline in its passes' place; its device is resolved here, before
        any input is read."""
        from mobile_opt.pass_lists import NamedPipeline, PipelineError

        try:
            passes = tuple(q for p in self.pipeline.passes
                           for q in (p.passes() if isinstance(p, NamedPipeline) else (p,)))
        except PipelineError as e:
            raise UserError(f"pass pipeline '{self.args.passes}': {one_line(e)}") from None
        self.pipeline = dataclasses.replace(self.pipeline, passes=passes)

    def prepare_input(self):
        try:
            chunks, file_extension = super().prepare_input()
        except ValueError as e:
            raise UserError(f"{self.get_input_name()}: {e}") from None
        if self.args.dim and file_extension != "onnx":
            raise UserError("--dim applies to .onnx models only")
        return chunks, file_extension

    def prepare_output(self) -> IO[str]:
        # buffered, so a failure leaves no partial output file behind
        return self._output if self.args.output_file is not None else sys.stdout

    def run(self):
        if self.args.list_pipelines:
            print(list_pipelines(), end="")
            return
        for output in (self.args.output_file, self.args.weight_store):
            if output is not None:
                output_folder(output)  # before the long work
        apply_limit_option(self.args)
        try:
            super().run()
        except ParseError:
            raise  # already says file:line:col
        except UnicodeDecodeError:
            raise UserError(f"{self.get_input_name()}: not UTF-8 text") from None
        except RecursionError:
            raise UserError(f"{self.get_input_name()}: nesting too deep") from None
        except (DiagnosticException, ReferenceRunError) as e:
            raise UserError(f"{self.get_input_name()}: {one_line(e)}") from None
        if self.args.weight_store is not None:
            self._write_weight_store(Path(self.args.weight_store))
        if self.args.output_file is not None:
            write_atomically(self.args.output_file, self._output.getvalue())

    def _write_weight_store(self, path: Path) -> None:
        from mobile_opt.backends.opencl.host_pack import OpenCLRunError
        from mobile_opt.backends.opencl.plan import PlanError, build_plan, is_lowered
        from mobile_opt.backends.opencl.printer import LOWER_FIRST
        from mobile_opt.backends.opencl.weight_store import DEFAULT_CHUNK, write_store
        from mobile_opt.dialects.stream.attributes import PLAN, PlanAttr

        module = getattr(self, "_module", None)
        if module is None or not is_lowered(module):
            raise UserError(f"--weight-store needs a lowered module: {LOWER_FIRST}")
        head = module.attributes.get(PLAN)
        chunk = head.chunk.data if isinstance(head, PlanAttr) else DEFAULT_CHUNK
        output_folder(path)
        try:
            write_store(path, build_plan(module), chunk)
        except (PlanError, OpenCLRunError, ReferenceRunError, OSError) as e:
            raise UserError(f"--weight-store {path}: {one_line(e)}") from None


def _spec(p: ModulePass, include_default: bool = False) -> str:
    """A pass as `-p` writes it, its options in kebab case."""
    spec = p.spec(include_default=include_default)
    return str(dataclasses.replace(
        spec, parameters={k.replace("_", "-"): v for k, v in spec.parameters.items()}))


def list_pipelines() -> str:
    """`--list-pipelines`: each named pipeline, its options with their defaults and help,
    and the passes it stands for with its defaults (the GPU's for the default device)."""
    from mobile_opt.pass_lists import NAMED_PIPELINES, PipelineError

    lines = []
    for kind in NAMED_PIPELINES:
        lines += [f"{kind.name}: {kind.summary}", "  options:"]
        for f in dataclasses.fields(kind):
            default = f.metadata.get("shown") or str(getattr(kind, f.name)).lower()
            lines.append(f"    {f.name.replace('_', '-')} (default {default}): "
                         f"{f.metadata['help']}")
        try:
            built_for, passes = kind().expansion()
            lines += [f"  passes with the defaults{f' (on {built_for})' if built_for else ''}:",
                      f"    {','.join(_spec(p) for p in passes)}"]
        except PipelineError as e:  # no OpenCL device here
            lines += ["  passes with the defaults:", f"    (none here: {one_line(e)})"]
    return "\n".join(lines) + "\n"


class _KeepOpen(StringIO):
    def close(self) -> None:  # xDSL closes the output stream; keep the text
        pass


def main(argv: Sequence[str] | None = None) -> None:
    argv = normalize_pipeline_args(sys.argv[1:] if argv is None else argv)

    def body() -> None:
        tool = MobileOptMain(args=argv)
        tool._output = _KeepOpen()
        tool.run()

    run_tool("mobile-opt", body)


if __name__ == "__main__":
    main()
