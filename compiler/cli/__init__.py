"""Kiln's command line (`python -m compiler ...`), in the spirit of TVM's `tvmc`:

    python -m compiler compile model.onnx --target llvm -o model.so
    python -m compiler compile model.onnx --system-lib -o model.a --input-shape x:1,3,224,224
    python -m compiler tune model.onnx --trials 64 --log tune.jsonl [--dask ADDR | --ray ADDR]
    python -m compiler compile model.onnx --tuning-log tune.jsonl -o model.so

Each subcommand is a module with `add_parser(subparsers)` and `run(args) -> exit status`.
Mistakes (a missing file, a bad shape string, a model the compiler cannot take as given) print
one line, `error: ...`, on stderr and exit with status 1; wrong usage exits with status 2. Any
other failure is reported in one line as well, `error: internal error in <stage>: ...` (exit
status 1), with its traceback above it when KILN_TRACEBACK=1.
"""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import compile as compile_cmd
from . import tune as tune_cmd
from .common import CliError, Stage, internal_error, one_line, parse_shape


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m compiler",
        description="Kiln, a deep-learning compiler: compiles a model into one file that the "
                    "microruntime runs (python -m microruntime run model.so, or a C program).",
        epilog="Run `python -m compiler COMMAND --help` for a command's options.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    compile_cmd.add_parser(sub)
    tune_cmd.add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = make_parser().parse_args(argv)
    args.stage = Stage(f"the {args.command} command")
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - anything else: one line, not a traceback
        return internal_error(err, args.stage.name)


__all__ = ["CliError", "main", "make_parser", "one_line", "parse_shape"]
