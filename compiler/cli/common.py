"""What the commands share: the one-line error and the `--input-shape` syntax."""
from __future__ import annotations

from typing import Tuple


class CliError(Exception):
    """A user mistake the command line reports in one line (exit status 1)."""


def one_line(err: BaseException) -> str:
    """The message of `err` on one line (the compiler's messages may span several)."""
    return " ".join(str(err).split()) or type(err).__name__


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
