"""The Jinja environment over codegen_templates/ (one folder per language). Templates lay out
files, kernel frames and signatures; expressions are printed by the codegens, never here.
Every template sees `abi` (microruntime/abi.py) for type indices and layout constants."""
from __future__ import annotations

import functools
import os

from microruntime import abi

from ..ir.errors import BuildError

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "codegen_templates")


@functools.lru_cache(maxsize=1)
def environment():
    try:
        import jinja2
    except ImportError as err:
        raise BuildError("generating C code needs jinja2, which is not installed: "
                         "pip install 'kiln[compiler]' (or pip install jinja2)") from err

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, autoescape=False)
    env.globals["abi"] = abi
    return env


def render(template: str, **context) -> str:
    """Renders `template` (e.g. "c/module.c.j2") with `context`."""
    return environment().get_template(template).render(**context)
