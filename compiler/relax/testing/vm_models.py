"""Small programs for the VM (symbolic shapes, control flow, tuples, closures, calls), each with
a numpy reference, for tests and benchmarks of `relax.build`.

    prog = vm_models.mlp()
    ex = relax.build(prog.mod, "llvm", params=prog.params)
    out = vm["main"](*prog.args(n=7))        # compare with prog.reference(*prog.args(n=7))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List

import numpy as np

from ...ir.module import IRModule
from ...tir import expr as E
from .. import op
from ..block_builder import BlockBuilder
from ..expr import Call, If, Tuple, Var, const
from ..script import Tensor


@dataclass
class Program:
    name: str
    mod: IRModule
    make_args: Callable[..., List[np.ndarray]]
    reference: Callable[..., object]
    params: Dict[str, np.ndarray] = field(default_factory=dict)

    def args(self, **kw) -> List[np.ndarray]:
        return self.make_args(**kw)


def _sym(name: str) -> E.Var:
    return E.Var(name, "int64")


def mlp(hidden: int = 128, seed: int = 0) -> Program:
    """x: (n, 784) -> dense+bias+relu -> dense (10); the batch n is symbolic."""
    n = _sym("n")
    x = Var("x", Tensor((n, 784), "float32"))
    w1 = Var("w1", Tensor((hidden, 784), "float32"))
    b1 = Var("b1", Tensor((hidden,), "float32"))
    w2 = Var("w2", Tensor((10, hidden), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, w1, b1, w2]):
        with bb.dataflow():
            h = bb.emit(op.nn.relu(op.add(op.nn.dense(x, w1), b1)))
            o = bb.emit_output(op.nn.dense(h, w2))
        bb.emit_func_output(o)
    rng = np.random.default_rng(seed)
    params = {"w1": (rng.standard_normal((hidden, 784)) * 0.05).astype("float32"),
              "b1": rng.standard_normal(hidden).astype("float32"),
              "w2": (rng.standard_normal((10, hidden)) * 0.1).astype("float32")}

    def make_args(n=1, seed=1):
        return [np.random.default_rng(seed).standard_normal((n, 784)).astype("float32")]

    def reference(x):
        h = np.maximum(x @ params["w1"].T + params["b1"], 0)
        return h @ params["w2"].T

    return Program("mlp", bb.get(), make_args, reference, params)


def branch() -> Program:
    """If on a value computed at run time: sum(x) > 0 ? relu(x) * 2 : x - 1."""
    n = _sym("n")
    x = Var("x", Tensor((n, 4), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        s = bb.emit(op.sum(x))
        c = bb.emit(op.greater(s, const(0.0, "float32")))
        y = bb.emit(If(c, op.multiply(op.nn.relu(x), const(2.0, "float32")),
                       op.subtract(x, const(1.0, "float32"))))
        bb.emit_func_output(y)

    def make_args(n=3, sign=1.0, seed=2):
        a = np.abs(np.random.default_rng(seed).standard_normal((n, 4))).astype("float32")
        return [a * np.float32(sign)]

    def reference(x):
        return np.maximum(x, 0) * 2 if x.sum() > 0 else x - 1

    return Program("branch", bb.get(), make_args, reference)


def nested_tuple() -> Program:
    """(x, y) with a shared symbolic n -> ((x + y, x * y), x - y)."""
    n = _sym("n")
    x = Var("x", Tensor((n, 3), "float32"))
    y = Var("y", Tensor((n, 3), "float32"))
    bb = BlockBuilder()
    with bb.function("main", [x, y]):
        a = bb.emit(op.add(x, y))
        m = bb.emit(op.multiply(x, y))
        d = bb.emit(op.subtract(x, y))
        bb.emit_func_output(Tuple((Tuple((a, m)), d)))

    def make_args(n=2, seed=3):
        rng = np.random.default_rng(seed)
        return [rng.standard_normal((n, 3)).astype("float32"),
                rng.standard_normal((n, 3)).astype("float32")]

    def reference(x, y):
        return [[x + y, x * y], x - y]

    return Program("nested_tuple", bb.get(), make_args, reference)


def closures() -> Program:
    """A local function capturing y, called twice; a call of another module function."""
    n = _sym("n")
    x = Var("x", Tensor((n, 5), "float32"))
    y = Var("y", Tensor((n, 5), "float32"))
    a = Var("a", Tensor((n, 5), "float32"))
    bb = BlockBuilder()
    with bb.function("scale", [a]):
        bb.emit_func_output(bb.emit(op.multiply(a, const(3.0, "float32"))))
    scale = bb.get_global_var("scale")
    with bb.function("main", [x, y]):
        z = Var("z", Tensor((n, 5), "float32"))
        bb.begin_function(None, [z])
        inner = bb.emit_func_output(bb.emit(op.add(z, y)))
        f = bb.emit(inner, "add_y")
        r1 = bb.emit(Call(f, (x,)))
        r2 = bb.emit(Call(f, (r1,)))
        out = bb.emit(Call(scale, (r2,)))
        bb.emit_func_output(out)

    def make_args(n=4, seed=4):
        rng = np.random.default_rng(seed)
        return [rng.standard_normal((n, 5)).astype("float32"),
                rng.standard_normal((n, 5)).astype("float32")]

    def reference(x, y):
        return (x + y + y) * 3

    return Program("closures", bb.get(), make_args, reference)


ALL = {"mlp": mlp, "branch": branch, "nested_tuple": nested_tuple, "closures": closures}
