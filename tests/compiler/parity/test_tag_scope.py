"""te.tag_scope as a context manager and as a decorator: the tag of computes made inside it."""
import json
import pickle
import warnings

import numpy as np
import pytest

import microruntime as runtime
from compiler import build, te, tir
from compiler.ir import load_json, save_json
from compiler.ir.errors import IRError


def test_context_manager_tags_compute():
    n, m, l = te.var("n"), te.var("m"), te.var("l")
    A = te.placeholder((n, l), name="A")
    B = te.placeholder((m, l), name="B")
    k = te.reduce_axis((0, l), name="k")
    with te.tag_scope(tag="matmul"):
        C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k))
    assert C.op.tag == "matmul"
    D = te.compute((n, m), lambda i, j: C[i, j] + 1.0)
    assert D.op.tag == ""
    assert A.op.tag == ""


def test_decorator_tags_every_call():
    @te.tag_scope(tag="conv")
    def compute_relu(data):
        return te.compute(data.shape,
                          lambda *i: tir.Select(data(*i) < 0, 0.0, data(*i)))

    assert compute_relu.__name__ == "compute_relu"
    A = te.placeholder((4, 5), name="A")
    B = compute_relu(A)
    C = compute_relu(B)
    assert B.op.tag == "conv" and C.op.tag == "conv"
    assert te.compute((2,), lambda i: i).op.tag == ""


def test_tagged_compute_runs(target):
    A = te.placeholder((6,), name="A")
    with te.tag_scope("elemwise"):
        B = te.compute((6,), lambda i: A[i] * 3.0, name="B")
    assert B.op.tag == "elemwise"
    s = te.create_schedule(B.op)
    f = build(s, [A, B], target=target, name="f")
    a = np.arange(6, dtype="float32")
    b = runtime.nd.empty((6,), "float32")
    f["f"](runtime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 3)


def test_extern_takes_the_scope_tag():
    A = te.placeholder((4,), name="A")
    with te.tag_scope("ext"):
        B = te.extern((4,), [A], lambda ins, outs: tir.call_packed("f", ins[0], outs[0]))
    assert B.op.tag == "ext"


def test_tag_given_inside_a_scope_and_nested_scopes_fail():
    with te.tag_scope("outer"):
        with pytest.raises(IRError, match="tag_scope"):
            te.compute((2,), lambda i: i, tag="inner")
        with pytest.raises(IRError, match="do not nest"):
            with te.tag_scope("inner"):
                pass
    assert te.compute((2,), lambda i: i, tag="after").op.tag == "after"


def test_unused_scope_warns():
    with pytest.warns(UserWarning, match="'unused'"):
        with te.tag_scope("unused"):
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with te.tag_scope("used"):
            te.compute((2,), lambda i: i)


def test_compute_attrs_are_ir_values_and_survive_json():
    n, l = te.size_var("n"), te.size_var("l")
    A = te.placeholder((n, l), name="A")
    k = te.reduce_axis((0, l), name="k")
    with te.tag_scope(tag="rowsum"):
        C = te.compute((n,), lambda i: te.sum(A[i, k], axis=k),
                       attrs={"hello": 1, "arr": [10, 12]})
    assert isinstance(C.op.attrs["hello"], tir.IntImm) and C.op.attrs["hello"].value == 1
    assert "hello" in C.op.attrs and "xx" not in C.op.attrs
    assert A.op.attrs is not None and len(A.op.attrs) == 0
    CC = load_json(save_json(C))
    assert CC.op.tag == "rowsum"
    assert CC.op.attrs["hello"].value == 1
    assert [x.value for x in CC.op.attrs["arr"]] == [10, 12]
    # printed as TVM prints a map: JSON text
    assert json.loads(str(CC.op.attrs)) == {"hello": 1, "arr": [10, 12]}
    # a schedule holding the operation pickles
    s = pickle.loads(pickle.dumps(te.create_schedule(C.op)))
    assert s.outputs[0].attrs["arr"][1].value == 12
