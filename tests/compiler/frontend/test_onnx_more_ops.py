"""Operators torch exports use, checked against onnxruntime on one-node models (the imported
model run by the graph-level reference interpreter): Mod, GatherElements, GatherND,
ScatterElements, ScatterND, Pad edge / reflect / wrap, CumSum, Trilu, Einsum, TopK, OneHot,
GroupNormalization, ConvTranspose with groups and dilations; and a few of them compiled and
run through the kernels."""
import numpy as np
import pytest
from kiln_onnx_backend import compile_model
from onnx_cases import check, node_model, ort_run, rand

from compiler.frontend import UnsupportedOpError, from_onnx

X4 = rand(2, 3, 4, 5)


def _ints(*shape, lo, hi, seed=0):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype("int64")


def _compiled(model, feed):
    """The model compiled to kernels and run: the list of outputs."""
    mod, params = from_onnx(model)
    return compile_model(mod, params).run(feed)


@pytest.mark.parametrize("fmod,dtype", [(0, "int64"), (1, "int64"), (1, "float32"),
                                        (0, "int32")])
def test_mod(fmod, dtype):
    a = np.array([[5, -5, 7, -7, 9], [3, -3, 0, 8, -8]]).astype(dtype)
    b = np.array([3, 3, -2, -2, 4]).astype(dtype)
    if dtype == "float32":
        a, b = a * 1.5, b * 0.75
    check(node_model("Mod", {"a": a, "b": b}, {"fmod": fmod}), {"a": a, "b": b})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements(axis):
    x = rand(3, 4, 5)
    shape = [3, 4, 5]
    shape[axis] = 2
    idx = _ints(*shape, lo=-[3, 4, 5][axis], hi=[3, 4, 5][axis], seed=1)
    check(node_model("GatherElements", {"x": x, "i": idx}, {"axis": axis}), {"x": x, "i": idx})
    check(node_model("GatherElements", {"x": x, "i": idx}, {"axis": axis},
                     initializers={"i": idx}), {"x": x})


@pytest.mark.parametrize("batch_dims,ishape", [(0, (2, 2)), (0, (3, 1)), (1, (3, 2, 1)),
                                               (0, (2, 3))])
def test_gather_nd(batch_dims, ishape):
    x = rand(3, 4, 5)
    dims = [3, 4, 5][batch_dims:batch_dims + ishape[-1]]
    idx = np.stack([_ints(*ishape[:-1], lo=-d, hi=d, seed=i) for i, d in enumerate(dims)], -1)
    if batch_dims:
        idx = idx.reshape(3, 2, 1)
    check(node_model("GatherND", {"x": x, "i": idx}, {"batch_dims": batch_dims}, opset=13),
          {"x": x, "i": idx})


@pytest.mark.parametrize("op,good,bad", [
    ("GatherElements", [[0, -1, 2, 1], [3, 1, -4, 0], [2, 2, 2, 2]],
     [[0, 4, 0, 0]] + [[0] * 4] * 2),
    ("GatherND", [[0, -1], [2, 3]], [[3, 0], [0, 0]]),
    ("GatherND", [[0, -1], [2, 3]], [[0, -5], [0, 0]])])
def test_gathers_check_run_time_indices(op, good, bad):
    """Run-time indices in range (negative ones too) gather as ONNX Runtime does; one out of
    range raises IndexError instead of reading another element (ONNX Runtime refuses too)."""
    x = rand(3, 4)
    good, bad = np.array(good, "int64"), np.array(bad, "int64")
    model = node_model(op, {"x": x, "i": good}, {"axis": 1} if op == "GatherElements" else {})
    compiled = _compiled(model, {"x": x, "i": good})
    np.testing.assert_array_equal(compiled[0], ort_run(model, {"x": x, "i": good})[0])
    mod, params = from_onnx(model)
    with pytest.raises(IndexError, match="out of range"):
        compile_model(mod, params).run({"x": x, "i": bad})


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements(reduction):
    x = rand(3, 4)
    idx = np.array([[1, 0, -1, 0], [2, 2, 1, 1]], "int64")
    if reduction == "none":
        idx = np.array([[1, 0, -1, 2], [2, 1, 0, 1]], "int64")
    u = rand(2, 4, seed=1)
    check(node_model("ScatterElements", {"x": x, "i": idx, "u": u},
                     {"axis": 0, "reduction": reduction}, opset=18, initializers={"i": idx}),
          {"x": x, "u": u})


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_nd(reduction):
    x = rand(4, 3, 2)
    idx = np.array([[[0, 1], [3, 2]], [[0, 1] if reduction != "none" else [1, 1], [2, 0]]],
                   "int64")
    u = rand(2, 2, 2, seed=1)
    check(node_model("ScatterND", {"x": x, "i": idx, "u": u}, {"reduction": reduction},
                     opset=18, initializers={"i": idx}), {"x": x, "u": u})
    rows = np.array([[2], [0]], "int64")
    ur = rand(2, 3, 2, seed=2)
    check(node_model("ScatterND", {"x": x, "i": rows, "u": ur}, opset=13,
                     initializers={"i": rows}), {"x": x, "u": ur})


def test_scatter_with_run_time_indices_is_refused_clearly():
    x, idx, u = rand(3, 4), np.zeros((1, 4), "int64"), rand(1, 4)
    with pytest.raises(UnsupportedOpError, match="ScatterElements node 'n0': indices computed "
                                                 "at run time"):
        from_onnx(node_model("ScatterElements", {"x": x, "i": idx, "u": u}))


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap"])
def test_pad_modes(mode):
    for pads in ([0, 0, 1, 2, 0, 0, 3, 1], [0, 1, 3, 0, 0, 0, 0, 2], [0, 0, -1, 1, 0, 0, 2, -2]):
        p = np.array(pads, "int64")
        check(node_model("Pad", {"x": X4, "pads": p}, {"mode": mode}, opset=13,
                         initializers={"pads": p}), {"x": X4})


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum(exclusive, reverse):
    x = rand(3, 7)
    for axis in (0, 1, -1):
        a = np.array(axis, "int64")
        check(node_model("CumSum", {"x": x, "a": a}, {"exclusive": exclusive,
                                                       "reverse": reverse},
                         initializers={"a": a}), {"x": x}, rtol=1e-5, atol=1e-5)
    xi = _ints(2, 9, lo=-5, hi=5)
    a = np.array(1, "int64")
    check(node_model("CumSum", {"x": xi, "a": a}, {"exclusive": exclusive, "reverse": reverse},
                     initializers={"a": a}), {"x": xi})


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu(upper):
    x = rand(2, 4, 5)
    for k in (-1, 0, 2):
        kk = np.array(k, "int64")
        check(node_model("Trilu", {"x": x, "k": kk}, {"upper": upper}, opset=14,
                         initializers={"k": kk}), {"x": x})
    check(node_model("Trilu", {"x": x}, {"upper": upper}, opset=14), {"x": x})


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i", [(5,), (5,)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
])
def test_einsum(equation, shapes):
    feed = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shapes)}
    check(node_model("Einsum", feed, {"equation": equation}, opset=12), feed,
          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("equation,shapes", [("ii->i", [(3, 3)]), ("ii", [(4, 4)]),
                                             ("bii->bi", [(2, 3, 3)]),
                                             ("iji,jk->ik", [(3, 4, 3), (4, 2)])])
def test_einsum_diagonals(equation, shapes):
    feed = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shapes)}
    check(node_model("Einsum", feed, {"equation": equation}, opset=12), feed,
          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis,largest", [(-1, 1), (0, 1), (1, 0)])
def test_topk(axis, largest):
    x = rand(3, 6, 4)
    x[0, :2, 0] = 0.5       # ties: the lower index first
    k = np.array([2], "int64")
    check(node_model("TopK", {"x": x, "k": k}, {"axis": axis, "largest": largest}, opset=11,
                     n_out=2, initializers={"k": k}), {"x": x})


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    idx = np.array([[0, 3, -1], [2, -4, 1]], "int64")
    depth = np.array(4, "int64")
    values = np.array([-1.0, 2.0], "float32")
    check(node_model("OneHot", {"i": idx, "d": depth, "v": values}, {"axis": axis}, opset=11,
                     initializers={"d": depth, "v": values}), {"i": idx})
    check(node_model("OneHot", {"i": idx, "d": depth, "v": values}, {"axis": axis}, opset=11,
                     initializers={"d": depth}), {"i": idx, "v": values})


@pytest.mark.parametrize("opset,per", [(18, "group"), (21, "channel")])
def test_group_normalization(opset, per):
    x = rand(2, 6, 3, 4)
    n = 3 if per == "group" else 6
    check(node_model("GroupNormalization", {"x": x, "s": rand(n, seed=1), "b": rand(n, seed=2)},
                     {"num_groups": 3, "epsilon": 1e-3}, opset=opset, weights="sb"), {"x": x},
          rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs", [{"group": 2}, {"dilations": [2, 3]},
                                   {"group": 3, "dilations": [2, 1], "strides": [2, 1],
                                    "pads": [1, 0, 0, 1]}])
def test_conv_transpose_groups_and_dilations(attrs):
    x = rand(1, 6, 5, 4)
    g = attrs.get("group", 1)
    check(node_model("ConvTranspose", {"x": x, "w": rand(6, 2, 3, 2, seed=1),
                                       "b": rand(2 * g, seed=2)}, attrs, weights="wb"),
          {"x": x}, rtol=1e-5, atol=1e-5)
    x1 = rand(1, 4, 7)
    check(node_model("ConvTranspose", {"x": x1, "w": rand(4, 3, 3, seed=1)},
                     {"group": 2, "dilations": [2]}, weights="w"), {"x": x1}, rtol=1e-5,
          atol=1e-5)


def test_kernels_of_the_new_operators_compile_and_run():
    x = rand(3, 7)
    a = np.array(1, "int64")
    model = node_model("CumSum", {"x": x, "a": a}, {"reverse": 1}, initializers={"a": a})
    np.testing.assert_allclose(_compiled(model, {"x": x})[0], ort_run(model, {"x": x})[0],
                               rtol=1e-5, atol=1e-5)
    y = rand(3, 6, 4)
    k = np.array([3], "int64")
    model = node_model("TopK", {"x": y, "k": k}, {"axis": 1}, opset=11, n_out=2,
                       initializers={"k": k})
    got, want = _compiled(model, {"x": y}), ort_run(model, {"x": y})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
    idx = np.array([[1, 0, 2, 2], [0, 2, 1, 0]], "int64")
    model = node_model("GatherElements", {"x": x, "i": idx}, {"axis": 0})
    feed = {"x": x, "i": idx}
    np.testing.assert_array_equal(_compiled(model, feed)[0], ort_run(model, feed)[0])
    u = rand(2, 4, seed=1)
    model = node_model("ScatterElements", {"x": rand(3, 4), "i": idx[:, :4], "u": u},
                       {"axis": 0}, initializers={"i": np.array([[1, 0, 2, 2], [0, 2, 1, 0]])})
    feed = {"x": rand(3, 4), "u": u}
    np.testing.assert_array_equal(_compiled(model, feed)[0], ort_run(model, feed)[0])
    p = np.array([0, 2, 0, 1], "int64")
    model = node_model("Pad", {"x": x, "p": p}, {"mode": "reflect"}, initializers={"p": p})
    np.testing.assert_array_equal(_compiled(model, {"x": x})[0], ort_run(model, {"x": x})[0])
