"""The build cache (compiler/build_cache.py): entries keyed by what determines them, written
whole, pruned by last use, off on request; a model built a second time takes its kernels
(legalize's lowering, the LLVM objects) from the cache and is the model built the first time."""
import importlib
import os

import numpy as np
import pytest

import microruntime as mr
from compiler import build_cache, host_cache, relay
from compiler.codegen.llvm import codegen as llvm_codegen
from compiler.ir import IRModule
from compiler.relax.testing import models
from compiler.relax.transform import legalize
from compiler.transform import PassContext
from microruntime import graph_executor

build_module = importlib.import_module("compiler.build")    # the module, not the function


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_cache_dir_from_the_environment(monkeypatch, tmp_path):
    for off in ("off", "0", "None", ""):
        monkeypatch.setenv("KILN_CACHE_DIR", off)
        assert build_cache.cache_dir() is None
        assert build_cache.load("kind", "k") is None
        build_cache.store("kind", "k", b"data")           # a no-op, no error
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))
    assert build_cache.cache_dir() == tmp_path
    monkeypatch.delenv("KILN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert build_cache.cache_dir() == tmp_path / "xdg" / "kiln"


def test_keys_tell_their_parts_apart():
    assert build_cache.key("a", "b") == build_cache.key("a", b"b")
    assert build_cache.key("a", "b") != build_cache.key("ab")     # parts are delimited
    assert build_cache.key("a", "b") != build_cache.key("b", "a")
    assert len(build_cache.key("x")) == 64


def test_store_and_load(cache):
    k = build_cache.key("part")
    assert build_cache.load("objects", k) is None
    build_cache.store("objects", k, b"\x00bytes")
    assert build_cache.load("objects", k) == b"\x00bytes"
    assert os.listdir(cache / "objects") == [k]          # no temporary file left behind


def test_unwritable_cache_is_skipped(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    monkeypatch.setenv("KILN_CACHE_DIR", str(blocker / "below"))  # below a file: mkdir fails
    build_cache.store("objects", "k", b"data")
    assert build_cache.load("objects", "k") is None


def test_prune_keeps_the_recently_used(cache, monkeypatch):
    monkeypatch.setattr(build_cache, "MAX_ENTRIES", 8)
    for i in range(8):
        build_cache.store("objects", f"k{i}", b"x")
        os.utime(cache / "objects" / f"k{i}", (1000 + i, 1000 + i))
    assert build_cache.load("objects", "k0") == b"x"    # used now: newest
    build_cache.store("objects", "k8", b"x")            # 9 > 8: down to 6
    left = sorted(os.listdir(cache / "objects"))
    assert left == ["k0", "k4", "k5", "k6", "k7", "k8"]


def _build_and_run(m, inputs):
    lib = relay.build(m.mod, target="llvm", params=m.params)
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    gm.run(**inputs)
    return lib, gm.get_output(0).numpy()


def test_second_build_takes_its_kernels_from_the_cache(cache, monkeypatch):
    m = models.conv_bn_relu_pool_dense()
    inputs = m.inputs(seed=3)
    lib, first = _build_and_run(m, inputs)
    np.testing.assert_allclose(first, m.reference(inputs), rtol=1e-4, atol=1e-5)
    kernels = os.listdir(cache / legalize.legalize_cache.KIND)
    objects = os.listdir(cache / llvm_codegen.OBJECT_CACHE)
    assert len(kernels) >= 4 and len(objects) >= 4

    def fail(*args, **kwargs):
        raise AssertionError("built again: the cache was not read")
    real_object_of_made = llvm_codegen._object_of_made

    def library_only(make, *args):   # the library's own symbols are made every time
        if getattr(make, "__name__", "") != "library_module":
            fail()
        return real_object_of_made(make, *args)
    packed = os.listdir(cache / host_cache.KIND)
    assert len(packed) == len(kernels)
    monkeypatch.setattr(legalize, "lower_primitive", fail)
    monkeypatch.setattr(llvm_codegen, "_object_of_made", library_only)
    monkeypatch.setattr(build_module, "run_passes", fail)     # no host pass runs either
    lib2, second = _build_and_run(m, inputs)
    np.testing.assert_array_equal(second, first)
    assert lib2.get_graph_json() == lib.get_graph_json()
    assert sorted(os.listdir(cache / legalize.legalize_cache.KIND)) == sorted(kernels)


def test_packed_functions_from_the_cache_get_the_entry_of_their_module(cache):
    """A function cached from a module of several is its module's entry when built alone, and
    the other way round: the entry mark is the whole module's (annotate_entry)."""
    import compiler
    from compiler import te

    def func(name):
        A = te.placeholder((8,), name="A")
        B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
        return compiler.lower(te.create_schedule(B.op), [A, B], name=name)[name]
    f, g = func("f"), func("g")
    both = compiler.build(IRModule({"f": f, "g": g}), target="llvm")
    assert both["f"] is not None
    alone = compiler.build(IRModule({"f": f}), target="llvm")      # f from the cache
    a = mr.nd.array(np.arange(8, dtype="float32"))
    b = mr.nd.empty((8,), "float32")
    alone["main"](a, b)                       # the entry of a one-function module
    np.testing.assert_array_equal(b.numpy(), np.arange(8) * 2.0)
    packed = build_module.host_passes(IRModule({"f": f, "g": g}),
                                      compiler.target.Target("llvm"))
    assert not any(fn.attrs.get("tir.is_entry_func") for fn in packed.functions.values())


def test_what_the_key_leaves_out_is_not_cached(cache, monkeypatch):
    m = models.conv_bn_relu_pool_dense()
    inputs = m.inputs(seed=4)
    _, first = _build_and_run(m, inputs)
    monkeypatch.setenv("KILN_BUILD_JOBS", "1")     # lowered here, where the list is
    lowered = []
    real = legalize.lower_primitive
    monkeypatch.setattr(legalize, "lower_primitive",
                        lambda *a, **k: lowered.append(a[1]) or real(*a, **k))
    # another pass context config is another key; instruments watch the passes run: no cache
    with PassContext(opt_level=3, config={"tir.disable_vectorize": True}):
        _, second = _build_and_run(m, inputs)
    assert lowered
    count = len(lowered)

    class Watcher:
        def run_before_pass(self, mod, info):
            pass
    with PassContext(opt_level=3, instruments=[Watcher()]):
        _build_and_run(m, inputs)
    assert len(lowered) > count
    np.testing.assert_allclose(second, first, rtol=1e-5, atol=1e-6)


def test_a_tree_too_deep_to_walk_has_no_key():
    from compiler import te
    x = te.var("x")
    e = x
    for _ in range(20000):
        e = e * x + x
    assert build_cache.structural_text(e) is None
    assert build_cache.structural_text(x * x + x) is not None
