"""
`mobile-translate --import-onnx model.onnx -o model.mlir`: write the imported IR.
`mobile-translate --import-hexagon-asm program.s`: Hexagon assembly as `-t hexagon-asm`
prints it, back into `hvx`/`vliw` IR.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from io import StringIO

from xdsl.printer import Printer

from mobile_opt.frontend.errors import check_input_file
from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.dialects.weights import INLINE_LIMIT
from mobile_opt.tools.cli import (
    DIM_HELP,
    ToolParser,
    UsageError,
    UserError,
    add_limit_option,
    apply_limit_option,
    output_folder,
    parse_dims,
    run_tool,
    write_atomically,
)


def build_parser() -> argparse.ArgumentParser:
    parser = ToolParser(prog="mobile-translate", description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--import-onnx", metavar="MODEL", help="ONNX file to import")
    source.add_argument(
        "--import-hexagon-asm", metavar="ASM", help="Hexagon assembly (.s) to import"
    )
    parser.add_argument("-o", "--output", help="output .mlir (default: standard output)")
    parser.add_argument("--dim", action="append", metavar="NAME=N|INPUT:AXIS=N", help=DIM_HELP)
    add_limit_option(parser)
    parser.add_argument(
        "--inline-limit",
        type=int,
        default=INLINE_LIMIT,
        help="tensors with at most this many elements print inline (default %(default)s)",
    )
    return parser


def import_hexagon_asm(path: str):
    from mobile_opt.backends.hexagon.asm_parser import parse_program

    try:
        with open(check_input_file(path), encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
    return parse_program(text, source=path)


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)

    def body() -> None:
        if args.output:
            output_folder(args.output)
        apply_limit_option(args)
        if args.import_hexagon_asm:
            if args.dim:
                raise UsageError("--dim applies to .onnx models only")
            module = import_hexagon_asm(args.import_hexagon_asm)
        else:
            module = import_onnx(
                args.import_onnx, dims=parse_dims(args.dim), inline_limit=args.inline_limit
            )
        text = StringIO()
        Printer(stream=text).print_op(module)
        text.write("\n")
        if args.output:
            write_atomically(args.output, text.getvalue())
        else:
            sys.stdout.write(text.getvalue())

    run_tool("mobile-translate", body)


if __name__ == "__main__":
    main()
