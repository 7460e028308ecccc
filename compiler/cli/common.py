"""What the commands share: the one-line error, the report of an unexpected failure and the
`--input-shape` syntax."""
from __future__ import annotations

import os
import sys
import traceback
from typing import Tuple

TRACEBACK_HINT = "(set KILN_TRACEBACK=1 for the traceback)"


class CliError(Exception):
    """A user mistake the command line reports in one line (exit status 1)."""


def one_line(err: BaseException) -> str:
    """The message of `err` on one line (the compiler's messages may span several)."""
    return " ".join(str(err).split()) or type(err).__name__


class Stage:
    """What a command is doing (`args.stage.name`), named by the report of an unexpected
    failure."""

    def __init__(self, name: str):
        self.name = name


def internal_error(err: BaseException, stage: str) -> int:
    """Reports a failure that is no user mistake in one line, `error: internal error in
    <stage>: <Type>: <message> (set KILN_TRACEBACK=1 ...)`, or with the traceback above it when
    KILN_TRACEBACK=1; the exit status (1)."""
    if os.environ.get("KILN_TRACEBACK", "") not in ("", "0"):
        traceback.print_exception(type(err), err, err.__traceback__)
        hint = ""
    else:
        hint = " " + TRACEBACK_HINT
    print(f"error: internal error in {stage}: {type(err).__name__}: {one_line(err)}{hint}",
          file=sys.stderr)
    return 1


def parse_shape(text: str) -> Tuple[str, Tuple[int, ...]]:
    """`"x:1,3,224,224"` → `("x", (1, 3, 224, 224))`; a name may itself hold ':' (the last
    one separates). `"1,3,224,224"` (no name) gives the name "" (the model's only input)."""
    name, sep, dims = text.rpartition(":")
    if not sep:
        name = ""
    parts = [d.strip() for d in dims.split(",")] if dims.strip() else []
    if not parts or not all(p.isdigit() for p in parts):
        raise CliError(f"bad --input-shape {text!r}: write NAME:D1,D2,... with non-negative "
                       "integer dims, e.g. --input-shape x:1,3,224,224")
    return name, tuple(int(p) for p in parts)
