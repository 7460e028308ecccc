"""Classic TVM API that tests and tutorials lean on: `>>`/`<<` on expressions, Buffer.vload /
vstore with vector lanes, Buffer.access_ptr, build() of an IRModule/PrimFunc running the
PassContext's lowering options, prim_func_pass in tir.transform, and pass instruments."""
import numpy as np
import pytest

import compiler
import microruntime as runtime
from compiler import build, lower, te, tir
from compiler.instrument import PassInstrument, PassInstrumentError, pass_instrument
from compiler.ir.errors import IRError
from compiler.tir import expr as E
from compiler.tir.functor import post_order_visit
from compiler.transform import PassContext


def _nodes(mod, cls):
    found = []
    for _, func in mod.items():
        post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


# ---- shifts ---------------------------------------------------------------------------------
def test_shift_operators_build_intrinsic_calls():
    x = te.var("x")
    assert isinstance(x >> 2, tir.Call) and (x >> 2).op == "tir.shift_right"
    assert (x << 3).op == "tir.shift_left" and (1 << x).args[0].value == 1
    assert (tir.const(-8) >> 1).value == -4 and (tir.const(3) << 2).value == 12
    with pytest.raises(IRError, match="needs integer operands"):
        te.var("f", "float32") >> 1


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint16", "int64"])
def test_shifts_compiled(target, dtype):
    n = 16
    A = te.placeholder((n,), dtype=dtype, name="A")
    B = te.compute((n,), lambda i: (A[i] >> 2) + (A[i] << 1), name="B")
    s = te.create_schedule(B.op)
    _, inner = s[B].split(B.op.axis[0], factor=4)
    s[B].vectorize(inner)
    f = build(s, [A, B], target=target)
    info = np.iinfo(dtype)
    a = np.random.default_rng(0).integers(max(info.min, -1000), min(info.max, 1000), n)
    a = a.astype(dtype)
    b = runtime.nd.empty((n,), dtype)
    f(runtime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), ((a >> 2) + (a << 1)).astype(dtype))


# ---- vload / vstore / access_ptr ------------------------------------------------------------
def test_vload_and_vstore_with_lanes(target):
    n = 8
    A = tir.decl_buffer((2, n), "float32", "A")
    B = tir.decl_buffer((2, n), "float32", "B")
    ib = tir.ir_builder.create()
    with ib.for_range(0, 2, name="i") as i:
        with ib.for_range(0, n // 4, name="j") as j:
            vec = A.vload([i, j * 4], "float32x4")
            assert vec.dtype == "float32x4" and isinstance(vec.indices[1], tir.Ramp)
            ib.emit(B.vstore([i, j * 4], vec + tir.Broadcast(tir.const(1.0), 4)))
    func = tir.PrimFunc([A, B], ib.get())
    f = build(func, target=target)
    a = np.random.rand(2, n).astype("float32")
    b = runtime.nd.empty((2, n), "float32")
    f(runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a + 1)


def test_vload_checks_its_dtype():
    A = tir.decl_buffer((8,), "float32", "A")
    assert A.vload([0]).dtype == "float32"
    with pytest.raises(IRError, match="must be float32"):
        A.vload([0], "int32x4")
    with pytest.raises(IRError, match="1 indices for its 2"):
        tir.decl_buffer((2, 2), "float32", "B").vload([0])


def test_access_ptr_is_the_address_of_an_element(target):
    """An extern C function (memcpy) given pointers from access_ptr, offsets included."""
    n = 12
    A = te.placeholder((n,), name="A")

    def body(ins, outs):
        ib = tir.ir_builder.create()
        ib.emit(tir.call_extern("handle", "memcpy", outs[0].access_ptr("w", offset=2),
                                ins[0].access_ptr("r"), tir.const(4 * (n - 2), "uint64")))
        ptr = outs[0].access_ptr("rw")
        assert ptr.op == "tir.tvm_access_ptr" and ptr.args[3].value == n
        return ib.get()

    C = te.extern((n,), [A], body, name="C")
    s = te.create_schedule(C.op)
    assert "tir.address_of(" in str(lower(s, [A, C]))
    f = build(s, [A, C], target=target)
    a = np.arange(n, dtype="float32")
    c = runtime.nd.array(np.full(n, -1, "float32"))
    f(runtime.nd.array(a), c)
    np.testing.assert_array_equal(c.numpy(), np.concatenate([[-1, -1], a[:-2]]))


def test_access_ptr_mask():
    A = tir.decl_buffer((4,), "float32", "A")
    assert A.access_ptr("rw").args[4].value == 3 and A.access_ptr(2).args[4].value == 2
    with pytest.raises(IRError, match="access mask"):
        A.access_ptr("x")


# ---- build(IRModule / PrimFunc) and PassContext ---------------------------------------------
def _scaled_module(vectorize=True):
    A = te.placeholder((8, 16), name="A")
    C = te.compute((8, 16), lambda i, j: A[i, j] * 2.0, name="C")
    s = te.create_schedule(C.op)
    _, inner = s[C].split(C.op.axis[1], factor=4)
    if vectorize:
        s[C].vectorize(inner)
    return s, [A, C]


def _primfunc():
    """A PrimFunc as a user writes it: a VECTORIZED loop, not yet lowered."""
    A, C = tir.decl_buffer((16,), "float32", "A"), tir.decl_buffer((16,), "float32", "C")
    ib = tir.ir_builder.create()
    with ib.for_range(0, 4, name="o") as o:
        with ib.for_range(0, 4, name="v", kind="vectorize") as v:
            ib.emit(C.vstore([o * 4 + v], A[o * 4 + v] * 2.0))
    return tir.PrimFunc([A, C], ib.get())


def _run16(f):
    a = np.random.rand(16).astype("float32")
    c = runtime.nd.empty((16,), "float32")
    f(runtime.nd.array(a), c)
    return a, c.numpy()


@pytest.mark.parametrize("as_module", [False, True])
def test_build_of_a_primfunc_runs_the_lower_passes(target, as_module):
    seen = []

    def probe(mod):
        seen.append(bool(_nodes(mod, E.Ramp)))
        return mod

    func = _primfunc()
    inp = func
    if as_module:
        inp = compiler.ir.module.IRModule({"main": func})
    with PassContext(config={"tir.add_lower_pass": [(3, probe)]}):
        a, c = _run16(build(inp, target=target))
    np.testing.assert_allclose(c, a * 2)
    assert seen == [True]
    seen.clear()
    with PassContext(config={"tir.add_lower_pass": [(3, probe)],
                             "tir.disable_vectorize": True}):
        a, c = _run16(build(inp, target=target))
    np.testing.assert_allclose(c, a * 2)
    assert seen == [False]


def test_build_of_a_lowered_module_lowers_it_again_unchanged(target):
    s, args = _scaled_module()
    mod = lower(s, args)
    f = build(mod, target=target)
    a = np.random.rand(8, 16).astype("float32")
    c = runtime.nd.empty((8, 16), "float32")
    f(runtime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 2)
    assert str(lower(mod)) == str(mod)


def test_prim_func_pass_from_tir_transform():
    from compiler.tir.transform import prim_func_pass

    @prim_func_pass(opt_level=0)
    def tag(f, mod, ctx):
        return f.with_attr("tagged", True)

    s, args = _scaled_module()
    with PassContext(config={"tir.add_lower_pass": [(1, tag)]}):
        assert lower(s, args)["main"].attrs["tagged"] is True


# ---- instruments ----------------------------------------------------------------------------
def test_pass_instrument_hooks_run_around_every_pass():
    @pass_instrument
    class Recorder:
        def __init__(self):
            self.events = []

        def enter_pass_ctx(self):
            self.events.append("enter")

        def exit_pass_ctx(self):
            self.events.append("exit")

        def run_before_pass(self, mod, info):
            self.events.append(("before", info.name))

        def run_after_pass(self, mod, info):
            self.events.append(("after", info.name))

    rec = Recorder()
    assert isinstance(rec, PassInstrument)
    s, args = _scaled_module()
    with PassContext(instruments=[rec]):
        lower(s, args)
    names = [e[1] for e in rec.events if isinstance(e, tuple) and e[0] == "before"]
    assert rec.events[0] == "enter" and rec.events[-1] == "exit"
    assert names[:7] == ["lower_init_block", "convert_blocks_to_opaque", "lower_opaque_block",
                         "storage_flatten", "simplify", "loop_partition", "vectorize"]
    assert rec.events[1:3] == [("before", "lower_init_block"), ("after", "lower_init_block")]
    rec.events.clear()
    lower(s, args)  # outside the context: no hooks
    assert rec.events == []


def test_should_run_false_skips_a_pass():
    class SkipVectorize(PassInstrument):
        def should_run(self, mod, info):
            return info.name != "vectorize"

    s, args = _scaled_module()
    with PassContext(instruments=[SkipVectorize()]):
        mod = lower(s, args)
    assert not _nodes(mod, E.Ramp)
    assert any(f.kind == tir.ForKind.VECTORIZED for f in _nodes(mod, tir.For))


def test_timing_instrument_and_user_pass_info():
    timing = compiler.instrument.PassTimingInstrument()
    user = compiler.transform.module_pass(lambda m, c: m, opt_level=0, name="MyPass")
    s, args = _scaled_module()
    with PassContext(instruments=[timing], config={"tir.add_lower_pass": [(1, user)]}):
        lower(s, args)
        text = timing.render()
    assert "MyPass" in text and "storage_flatten" in text and timing.profile["simplify"][1] == 2


def test_instruments_must_be_instrument_objects():
    class Hooks:
        def run_before_pass(self, mod, info):
            pass

    with pytest.raises(PassInstrumentError, match="pass an instance"):
        PassContext(instruments=[Hooks])
    with pytest.raises(PassInstrumentError, match="must be pass instrument objects"):
        PassContext(instruments=[object()])
    with pytest.raises(PassInstrumentError, match="has none of the instrument hooks"):
        pass_instrument(type("Empty", (), {}))
    PassContext(instruments=[Hooks()])  # an object with a hook is fine
