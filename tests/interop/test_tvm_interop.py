"""Runtime half of the interop with Apache TVM 0.27: kernels TVM compiles run on microruntime,
and parameter blobs are byte-identical both ways.

TVM runs in a subprocess (tvm_build.py): libtvm_ffi and microruntime export the same C symbols,
so the two runtimes are never loaded into one process.
"""
import json
import os
import subprocess

import numpy as np
import pytest
from tvm_subprocess import TVM_PYTHON, requires_tvm

import microruntime as mr
from microruntime import nd

HERE = os.path.dirname(os.path.abspath(__file__))


pytestmark = requires_tvm


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("tvm_interop")
    proc = subprocess.run([TVM_PYTHON, os.path.join(HERE, "tvm_build.py"), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out)


@pytest.mark.parametrize("n", [1, 7, 64, 1000])
def test_elementwise_add_symbolic_length(built, n):
    add = mr.load_module(os.path.join(built, "add.so"))["add"]
    a = np.random.default_rng(n).standard_normal(n).astype("float32")
    b = np.arange(n, dtype="float32")
    c = nd.empty((n,), "float32")
    add(nd.array(a), nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b, rtol=1e-6)
    mr.load_module(os.path.join(built, "add.so"))(nd.array(b), nd.array(b), c)  # __tvm_ffi_main
    np.testing.assert_allclose(c.numpy(), 2 * b)


def test_parallel_loop(built):
    par = mr.load_module(os.path.join(built, "par.so"))["add_par"]
    for n in (1, 63, 64, 65, 10000):
        a = np.arange(n, dtype="float32")
        c = nd.empty((n,), "float32")
        par(nd.array(a), nd.array(a), c)
        np.testing.assert_array_equal(c.numpy(), 2 * a)


def test_workspace(built):
    ws = mr.load_module(os.path.join(built, "ws.so"))["ws"]
    for n in (1, 300, 5000):
        a = np.random.default_rng(n).standard_normal(n).astype("float32")
        c = nd.empty((n,), "float32")
        ws(nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), (a * 2)[::-1] + 1, rtol=1e-6)


def test_wrong_dtype_and_shape_raise_tvms_message(built):
    with open(os.path.join(built, "errors.json")) as f:
        expected = json.load(f)["errors"]
    add = mr.load_module(os.path.join(built, "add.so"))["add"]
    f32 = nd.array(np.zeros(4, "float32"))
    with pytest.raises(TypeError) as info:
        add(nd.array(np.zeros(4, "float64")), f32, nd.empty((4,), "float32"))
    assert expected["dtype"][0] == "TypeError" and str(info.value) == expected["dtype"][1]
    with pytest.raises(ValueError) as info:
        add(f32, nd.array(np.zeros(5, "float32")), nd.empty((4,), "float32"))
    assert expected["shape"][0] == "ValueError" and str(info.value) == expected["shape"][1]
    assert "Mismatched A.dtype on argument #0" in expected["dtype"][1]


def test_export_library_of_tvm_module(built, tmp_path):
    mod = mr.load_module(os.path.join(built, "add.so"))
    out = str(tmp_path / "again.so")
    mod.export_library(out)
    b = np.ones(3, "float32")
    c = nd.empty((3,), "float32")
    mr.load_module(out)["add"](nd.array(b), nd.array(b), c)
    np.testing.assert_array_equal(c.numpy(), 2 * b)


def test_params_from_tvm_and_byte_identical(built):
    with open(os.path.join(built, "params.bin"), "rb") as f:
        blob = f.read()
    expected = dict(np.load(os.path.join(built, "params.npz")))
    loaded = mr.load_param_dict(blob)
    assert list(loaded) == ["w", "b", "h", "i", "m"]
    for name, value in expected.items():
        assert loaded[name].shape == value.shape and loaded[name].dtype == str(value.dtype)
        np.testing.assert_array_equal(loaded[name].numpy(), value)
    ours = mr.save_param_dict({name: expected[name] for name in ["w", "b", "h", "i", "m"]})
    assert bytes(ours) == blob
