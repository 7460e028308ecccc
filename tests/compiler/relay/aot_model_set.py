"""The model set the AOT executor is checked on: the whole models of
compiler/relax/testing/models.py and the ONNX models of compiler/frontend/testing/onnx_models.py
(the builders bench/models.py times, at test sizes), each with its inputs, and the graph
executor's outputs as the reference (one build per model and target, cached)."""
import functools

import numpy as np

import microruntime
from compiler import relay
from compiler.frontend import from_onnx
from compiler.frontend.testing import onnx_models
from compiler.relax.testing import models
from microruntime import graph_executor

NAMES = [f"relax:{m.__name__}" for m in models.ALL] + \
    [f"onnx:{m.__name__}" for m in onnx_models.ALL]


@functools.lru_cache(maxsize=None)
def model(name):
    """(module, params, inputs) of the model `name` (one of NAMES)."""
    kind, builder = name.split(":")
    if kind == "relax":
        m = getattr(models, builder)()
        return m.mod, m.params, m.inputs(seed=0)
    m = getattr(onnx_models, builder)()
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    return mod, params, m.inputs(seed=0)


@functools.lru_cache(maxsize=None)
def graph_outputs(name, target):
    """The graph executor's outputs (numpy arrays) of model `name` built for `target`."""
    mod, params, inputs = model(name)
    gmod = graph_executor.GraphModule(relay.build(mod, target, params=params)["default"](
        microruntime.cpu()))
    gmod.set_input(**inputs)
    gmod.run()
    return [gmod.get_output(i).numpy() for i in range(gmod.get_num_outputs())]


def same(got, want):
    """Outputs equal to the bit (the same kernels run on the same memory plan)."""
    return len(got) == len(want) and all(g.dtype == w.dtype and g.shape == w.shape and
                                         np.array_equal(g, w) for g, w in zip(got, want))
