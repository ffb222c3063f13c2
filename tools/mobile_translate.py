"""`mobile-translate --import-onnx model.onnx -o model.mlir`: write the imported IR."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from io import StringIO

from xdsl.printer import Printer

from mobile_opt.frontend.onnx_import import import_onnx
from mobile_opt.frontend.weights import INLINE_LIMIT
from mobile_opt.tools.cli import parse_dims, run_tool, write_atomically


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mobile-translate", description=__doc__)
    parser.add_argument("--import-onnx", metavar="MODEL", required=True, help="ONNX file to import")
    parser.add_argument("-o", "--output", help="output .mlir (default: standard output)")
    parser.add_argument("--dim", action="append", metavar="NAME=N", help="static size for a symbolic dim")
    parser.add_argument(
        "--inline-limit",
        type=int,
        default=INLINE_LIMIT,
        help="tensors with at most this many elements print inline (default %(default)s)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)

    def body() -> None:
        module = import_onnx(args.import_onnx, dims=parse_dims(args.dim), inline_limit=args.inline_limit)
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
