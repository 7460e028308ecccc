"""HybridModule: a hybrid script held as source text (what `build` makes from a schedule, or a
file `load` reads), callable like the decorated function: on tensors it builds a HybridOp, on
numpy arrays it runs as Python."""
from __future__ import annotations

import ast
from typing import Any, Dict, Optional, Sequence

from ...ir.errors import HybridScriptError
from ..schedule_ops import schedule_to_primfunc
from .dump import dump
from .runtime import hybrid_globals
from .script import is_ir_call, source_to_op


class HybridModule:
    """A hybrid script from source: `name`, `get_source()`, `save(path)`, `load(path)`, and
    calls as `@te.hybrid.script` functions take them."""

    def __init__(self, src: Optional[str] = None, name: Optional[str] = None):
        self.name = name
        self.src_: Optional[str] = None
        self.root_: Optional[ast.FunctionDef] = None
        self.func_ = None
        self.namespace_: Dict[str, Any] = {}
        if src is not None:
            self._set_source(src)

    def _set_source(self, src: str) -> None:
        tree = ast.parse(src)
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        if len(funcs) != 1:
            raise HybridScriptError(f"hybrid module: the source must define one function, it "
                                    f"defines {len(funcs)}")
        root = funcs[0]
        root.decorator_list = []
        namespace: Dict[str, Any] = {}
        exec(compile(ast.Module([root], []), "<hybrid script>", "exec"),  # noqa: S102
             namespace)
        self.src_, self.root_ = src, root
        self.func_, self.namespace_ = namespace[root.name], namespace
        if self.name is None:
            self.name = root.name

    def __call__(self, *args):
        if self.root_ is None:
            raise HybridScriptError("hybrid module: nothing loaded; give a source or call load")
        if is_ir_call(args):
            return source_to_op(self.root_, args, {})
        with hybrid_globals(self.namespace_):
            return self.func_(*args)

    def get_source(self) -> Optional[str]:
        return self.src_

    def save(self, path: str) -> None:
        if not path.endswith(".py"):
            path += ".py"
        with open(path, "w") as f:
            f.write(self.src_ or "")

    def load(self, path: str) -> None:
        with open(path) as f:
            self._set_source(f.read())


def build(sch, inputs: Sequence, outputs: Sequence, name: str = "hybrid_func") -> HybridModule:
    """The schedule `sch` written back as a hybrid script taking `inputs` (tensors and
    variables) and returning `outputs`."""
    inputs, outputs = list(inputs), list(outputs)
    func = schedule_to_primfunc(sch, inputs + outputs, name)
    return HybridModule(dump(func, inputs, outputs, name), name)
