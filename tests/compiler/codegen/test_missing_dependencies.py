"""Without the compiler's optional dependencies, build says which extra to install."""
import sys

import pytest

from compiler import build, te
from compiler.codegen import templates
from compiler.ir.errors import BuildError


def test_missing_jinja2_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jinja2", None)  # makes `import jinja2` fail
    templates.environment.cache_clear()
    try:
        A = te.placeholder((4,), name="A")
        B = te.compute((4,), lambda i: A[i] + 1, name="B")
        s = te.create_schedule(B.op)
        with pytest.raises(BuildError, match=r"kiln\[compiler\]"):
            build(s, [A, B], target="c")
    finally:
        templates.environment.cache_clear()
