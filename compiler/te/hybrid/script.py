"""`@te.hybrid.script`: a Python function that is both a program to run on numpy arrays and a
tensor operation.

Called with tensors, variables or IR constants (or Arrays of them) it parses its source into a
HybridOp and returns the op's output tensor (a list of them for several outputs); called with
numpy arrays and Python numbers it runs as Python, the hybrid names (`output_tensor`,
`allocate`, `parallel`, `bind`, `sqrt`, ...) bound for the call (runtime.py).
"""
from __future__ import annotations

import ast
import functools
import inspect
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy

from microruntime.object_generic import Array

from ...ir.errors import HybridScriptError
from ...tir import expr as E
from ..hybrid_op import HybridOp
from ..tensor import Tensor
from .parser import parse
from .runtime import hybrid_globals

_IR_TYPES = (Tensor, Array, E.Var, E.IntImm, E.FloatImm)
_NUMPY_TYPES = (numpy.ndarray, numpy.generic, int, float, bool)


def is_ir_call(args: Sequence[Any]) -> bool:
    """Whether `args` call a script to build an operation (tensors, variables, IR constants)
    rather than to run it (numpy arrays and numbers); mixing the two is an error."""
    if not args:
        raise HybridScriptError("hybrid script: called with no arguments; give it tensors (to "
                                "build an operation) or numpy arrays (to run it)")
    ir = isinstance(args[0], _IR_TYPES)
    for a in args:
        if ir and not isinstance(a, _IR_TYPES):
            raise HybridScriptError(f"hybrid script: called with tensors and with {a!r} "
                                    f"({type(a).__name__}); give tensors, variables, IR "
                                    "constants or Arrays of them")
        if not ir and not isinstance(a, _NUMPY_TYPES + (list, tuple)):
            raise HybridScriptError(f"hybrid script: {a!r} ({type(a).__name__}) is neither a "
                                    "tensor nor a numpy array or number")
    return ir


def function_source(func) -> ast.FunctionDef:
    """The FunctionDef of `func`'s source, its indentation removed, numbered by the lines of
    its file (so errors name those lines)."""
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as err:
        raise HybridScriptError(f"hybrid script: the source of {func.__name__} cannot be "
                                f"read ({err})") from None
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse("".join(line[indent:] for line in lines))
    ast.increment_lineno(tree, max(first - 1, 0))
    return tree.body[0]


def closure_values(func) -> Dict[str, Any]:
    """The names `func` reads from its closure and its module, with their values."""
    cv = inspect.getclosurevars(func)
    return {**cv.globals, **cv.nonlocals}


def source_to_op(root: ast.FunctionDef, args: Sequence[Any], closure: Dict[str, Any],
                 name: Optional[str] = None) -> Union[Tensor, List[Tensor]]:
    """The output tensor(s) of the HybridOp that `root` computes from `args`."""
    p = parse(root, args, closure)
    inputs: List[Tensor] = []

    def gather(a):
        if isinstance(a, Tensor):
            if a not in inputs:
                inputs.append(a)
        elif isinstance(a, (Array, list, tuple)):
            for x in a:
                gather(x)

    for a in args:
        gather(a)
    op = HybridOp(name or p.name, "HybridOp", None, inputs, p.outputs, p.body)
    return op.output(0) if op.num_outputs == 1 else list(op.outputs)


def script(pyfunc):
    """Decorates `pyfunc` as a hybrid script (see the module's docstring)."""

    @functools.wraps(pyfunc)
    def hybrid(*args, **kwargs):
        if is_ir_call(args):
            if kwargs:
                raise HybridScriptError(f"hybrid script {pyfunc.__name__}: called with "
                                        "tensors, it takes positional arguments only")
            return source_to_op(function_source(pyfunc), args, closure_values(pyfunc))
        with hybrid_globals(pyfunc.__globals__):
            return pyfunc(*args, **kwargs)

    hybrid.hybrid_function = pyfunc
    return hybrid
