"""Whole models built with the BlockBuilder (compiler.relax.testing.models) run through the
interpreter and match their hand-written numpy references (float32 vs float64 references:
rtol 1e-4, atol 1e-5)."""
import numpy as np
import pytest

from compiler.relax import interpreter
from compiler.relax.struct_info import TensorStructInfo
from compiler.relax.testing import models


@pytest.mark.parametrize("make", models.ALL, ids=lambda f: f.__name__)
def test_model_matches_numpy(make):
    m = make()
    f = m.mod["main"]
    assert f.attrs["num_input"] == len(m.input_names)
    assert isinstance(f.ret_struct_info, TensorStructInfo) and f.ret_struct_info.is_static
    for seed in (0, 1):
        inputs = m.inputs(seed)
        out = interpreter.run(m.mod, *m.args(inputs))
        ref = m.reference(inputs)
        assert out.shape == ref.shape and out.dtype == np.float32
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


def test_models_print_and_differ():
    texts = {make.__name__: str(make().mod) for make in models.ALL}
    assert "R.nn.batch_norm" in texts["conv_bn_relu_pool_dense"]
    assert "groups=8" in texts["depthwise_separable_block"]
    assert "R.nn.layer_norm" in texts["attention_block"]
    assert "R.permute_dims" in texts["attention_block"]
