"""What exporters write for a symbolic sequence axis (BERT's TorchScript export, GPT-2's
dynamo export), in small ONNX models built once for the Relax VM and run at several lengths,
matching onnxruntime (rtol = atol = 1e-4):

- a Slice of a [1, 8] position buffer whose end is S from Shape (clamped to 8 at run time),
  GatherElements by the positions, Expand to x's shape, S used as a tensor in a Mul; a length
  beyond the buffer fails, as in onnxruntime;
- GPT-2's mask: slices of [1, S + 1] ending at S and S + 1 from Shape, CumSum along S,
  GatherND by indices built from Range;
- CumSum along a symbolic axis (each direction, inclusive and exclusive);
- strided_slice with a symbolic end: clamped to the dim, or as it is with assume_inbound.
"""
import numpy as np
import pytest
from onnx import TensorProto, helper

import microruntime
from compiler import relax
from compiler.frontend import from_onnx
from compiler.frontend.testing.dynamic_models import (
    HIDDEN,
    causal_positions,
    model,
    out,
    position_embeddings,
)
from compiler.frontend.testing.dynamic_models import const as _const
from compiler.ir.errors import CompilerError
from compiler.relax import op as R
from compiler.relax import shape_util as su
from compiler.relax.expr import Var
from compiler.relax.struct_info import TensorStructInfo
from compiler.tir import expr as E
from microruntime.relax_vm import VirtualMachine

ort = pytest.importorskip("onnxruntime")

RTOL = ATOL = 1e-4


def _vm(m):
    mod, params = from_onnx(m)
    return VirtualMachine(relax.build(mod, target="llvm", params=params), microruntime.cpu())


def _check(vm, m, x):
    """The VM's output on x equals onnxruntime's; returns the largest difference."""
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want, = sess.run(None, {"x": x})
    got = vm["main"](x).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    return float(np.abs(got - want).max())


def _x(s, seed=0):
    return np.random.default_rng(seed).standard_normal((1, s, HIDDEN)).astype("float32")


def test_positions_sliced_up_to_a_symbolic_length():
    m = position_embeddings(max_len=8)
    vm = _vm(m)
    for s in (1, 3, 8):
        _check(vm, m, _x(s, s))
    # beyond the buffer the sliced positions (8) and x (10) disagree: both runtimes refuse
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="(?i)broadcast|shape"):  # noqa: B017 - ORT's own type
        sess.run(None, {"x": _x(10)})
    with pytest.raises(ValueError, match="shape\\[1\\] is 8, expected 10"):
        vm["main"](_x(10))


def test_gpt2_style_causal_mask():
    m = causal_positions()
    vm = _vm(m)
    for s in (1, 2, 7, 16):
        _check(vm, m, _x(s, s))


@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("exclusive", [0, 1])
def test_cumsum_along_a_symbolic_axis(reverse, exclusive):
    """CumSum of x ["S", 3] on axis 0 (moved last and back) and of ["N", "S"] on axis -1."""
    for shape, axis, sizes in ((["S", 3], 0, ((1, 3), (6, 3))),
                               (["N", "S"], -1, ((2, 1), (3, 9)))):
        nodes = [_const("axis", axis),
                 helper.make_node("CumSum", ["x", "axis"], ["y"], reverse=reverse,
                                  exclusive=exclusive)]
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        m = model(nodes, [x], [out("y")])
        vm = _vm(m)
        for size in sizes:
            _check(vm, m, np.random.default_rng(size[0]).standard_normal(size)
                   .astype("float32"))


def test_strided_slice_with_a_symbolic_end():
    n = E.Var("n", "int64")
    x = Var("x", TensorStructInfo((1, 8), "float32"))
    clamped = R.strided_slice(x, [1], [0], [n]).struct_info.shape
    assert clamped[0] == 1
    eight, zero = E.const(8, "int64"), E.const(0, "int64")
    assert su.equal(clamped[1], E.binary(E.Max, E.binary(E.Min, n, eight), zero))
    inbound = R.strided_slice(x, [1], [2], [n], assume_inbound=True).struct_info.shape
    assert su.equal(inbound[1], n - 2)
    with pytest.raises(CompilerError, match="positive stride"):
        _ = R.strided_slice(x, [1], [n], [0], [-1]).struct_info
