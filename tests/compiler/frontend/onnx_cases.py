"""Helpers of the ONNX frontend tests: one-node models, and checking an imported model (with
the graph-level reference interpreter) against onnxruntime."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from compiler.frontend import from_onnx
from compiler.relax import interpreter

_ELEM = {"float32": TensorProto.FLOAT, "int64": TensorProto.INT64, "int32": TensorProto.INT32,
         "bool": TensorProto.BOOL, "float64": TensorProto.DOUBLE}


def node_model(op, inputs, attrs=None, opset=13, initializers=None, n_out=1, name="n0",
               weights=()):
    """A model of one node: `inputs` {name: array} in order are graph inputs, except those
    in `initializers` ({name: array}) or named in `weights` (initializers of their array);
    an input named "" is absent."""
    initializers = dict(initializers or {})
    initializers.update({k: inputs[k] for k in weights})
    names = list(inputs)
    ins = [helper.make_tensor_value_info(n, _ELEM[str(v.dtype)], v.shape)
           for n, v in inputs.items() if n and n not in initializers]
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name=name, **(attrs or {}))
    graph = helper.make_graph(
        [node], "g", ins, [helper.make_empty_tensor_value_info(o)
                           for o in outs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def ort_run(model, feed):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


def interpret(model, feed, **kwargs):
    """The imported model run by the reference interpreter: a list of outputs."""
    mod, params = from_onnx(model, **kwargs)
    values = {**params, **feed}
    out = interpreter.run(mod, *[values[p.name_hint] for p in mod["main"].params])
    return list(out) if isinstance(out, tuple) else [out]


def check(model, feed, rtol=1e-5, atol=1e-6, **kwargs):
    """The imported model (interpreted) matches onnxruntime."""
    want = ort_run(model, feed)
    got = interpret(model, feed, **kwargs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def rand(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)

