"""Kiln as an ONNX backend (`onnx.backend.base.Backend`), and compiling/running a model.

prepare(model) = from_onnx + the graph-level build; run(inputs) runs the kernels. Graph
inputs that ONNX's node tests feed to compile-time positions (a Reshape's shape, a Slice's
starts) are made initializers from the values given to `run` (the model is compiled once per
distinct value of them).

`compile_model(mod, params, target)` builds with `compiler.relay.build` and runs on
`microruntime.graph_executor` when both exist; otherwise it runs the same graph-level passes
and calls the kernels of the lowered `main` in order from Python (`run_lowered`). A model with
control flow left after importing (an If on a run-time condition) is built for the Relax VM
instead (`compiler.relax.build`), which alone runs it.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep

import microruntime as mr
from compiler import build as build_kernels
from compiler.frontend import from_onnx
from compiler.frontend.onnx import required_constants
from compiler.ir.module import IRModule
from compiler.relax import expr as X
from compiler.relax.backend.graph.codegen import codegen
from compiler.relax.functor import ExprVisitor
from compiler.relax.transform import (
    bind_params,
    eliminate_dead_code,
    fold_batch_norm,
    fold_constant,
    fuse_ops,
)
from compiler.relax.transform.legalize import legalize


def lower_model(mod, params):
    """The graph-level passes of relay.build, then legalize: (lowered module, graph plan)."""
    mod = bind_params(mod, params or {})
    mod = fold_constant(mod)
    mod = fold_batch_norm(mod)
    mod = eliminate_dead_code(mod)
    mod = legalize(fuse_ops(mod))
    return mod, codegen(mod["main"])


def run_lowered(mod, lib, inputs):
    """Runs the bindings of the lowered main in order, calling its kernels; returns the list
    of outputs."""
    main = mod["main"]
    env = {id(p): inputs[p.name_hint] for p in main.params}

    def value(e):
        if isinstance(e, X.Constant):
            return e.data
        if isinstance(e, X.Tuple):
            return [value(f) for f in e.fields]
        return env[id(e)]

    for block in main.body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, X.TupleGetItem):
                env[id(b.var)] = value(v.tuple_value)[v.index]
                continue
            if not (isinstance(v, X.Call) and getattr(v.op, "name", "") == "relax.call_tir"):
                env[id(b.var)] = value(v)
                continue
            args = [mr.nd.array(np.array(value(a), order="C")) for a in v.args[1].fields]
            s = v.sinfo_args[0]
            fields = getattr(s, "fields", None)
            outs = [mr.nd.empty(tuple(f.shape), f.dtype) for f in (fields or [s])]
            lib[v.args[0].name_hint](*args, *outs)
            got = [o.numpy() for o in outs]
            env[id(b.var)] = got if fields is not None else got[0]
    out = value(main.body.body)
    return [np.asarray(o) for o in out] if isinstance(out, list) else [np.asarray(out)]


class CompiledModel:
    """A compiled model: `run({name: array}) -> [outputs]`."""

    def __init__(self, mod, params, target="llvm"):
        self.input_names = [p.name_hint for p in mod["main"].params]
        self._vm = None
        if has_control_flow(mod["main"]):
            from compiler.relax import build as relax_build
            from microruntime.relax_vm import VirtualMachine
            self._vm = VirtualMachine(relax_build(mod, target=target, params=params), mr.cpu())
            self._num_input = mod["main"].attrs.get("num_input", len(self.input_names))
            return
        try:
            from compiler.relay.build_module import build as relay_build
            from microruntime import graph_executor
        except ImportError:
            relay_build = None
        if relay_build is not None:
            factory = relay_build(mod, target=target, params=params)
            self._gmod = graph_executor.GraphModule(factory["default"](mr.cpu()))
            self._lowered = None
        else:
            self._lowered, graph = lower_model(mod, params)
            kernels = graph.manifest["kernels"]
            self._lib = build_kernels(IRModule({k: self._lowered[k] for k in kernels}),
                                      target=target) if kernels else None
            self.num_kernels = len(kernels)

    def run(self, inputs):
        if self._vm is not None:
            out = self._vm["main"](*[inputs[n] for n in self.input_names[:self._num_input]])
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            return [o.numpy() for o in outs]
        if self._lowered is not None:
            return run_lowered(self._lowered, self._lib, inputs)
        for name, value in inputs.items():
            self._gmod.set_input(name, value)
        self._gmod.run()
        return [self._gmod.get_output(i).numpy() for i in range(self._gmod.get_num_outputs())]


def has_control_flow(func) -> bool:
    """Whether a graph-level function holds an If."""
    found = []

    class Finder(ExprVisitor):
        def visit_if_(self, e):
            found.append(e)

    Finder().visit_expr(func)
    return bool(found)


def compile_model(mod, params, target="llvm") -> CompiledModel:
    return CompiledModel(mod, params, target)


def _graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def freeze_inputs(model: onnx.ModelProto, values) -> onnx.ModelProto:
    """`model` with the graph inputs in `values` turned into initializers."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    kept = [i for i in out.graph.input if i.name not in values]
    del out.graph.input[:]
    out.graph.input.extend(kept)
    for name, v in values.items():
        out.graph.initializer.append(numpy_helper.from_array(np.asarray(v), name))
    return out


class KilnRep(BackendRep):
    def __init__(self, model, target):
        self.model, self.target = model, target
        self.names = _graph_inputs(model)
        self.frozen = required_constants(model)
        self._compiled = {}

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feed = dict(inputs)
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            feed = dict(zip(self.names, inputs))
        frozen = {n: np.asarray(feed.pop(n)) for n in self.frozen}
        key = tuple((n, v.dtype.str, v.shape, v.tobytes()) for n, v in sorted(frozen.items()))
        compiled = self._compiled.get(key)
        if compiled is None:
            model = freeze_inputs(self.model, frozen) if frozen else self.model
            mod, params = from_onnx(model)
            compiled = self._compiled[key] = compile_model(mod, params, self.target)
        return compiled.run({n: np.array(v, order="C") for n, v in feed.items()})


class KilnBackend(Backend):
    target = "llvm"

    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs):
        from compiler.frontend.onnx_support import unsupported_ops
        return not unsupported_ops(model.graph)

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return KilnRep(model, kwargs.get("target", cls.target))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"
