"""compiler.transform.PassContext, as tvm.transform.PassContext: entered with `with`, read by
compiler.lower and compiler.build (config options, user passes at TVM's lower phases, passes
disabled by their TVM names, opt_level gating user passes)."""
import threading

import numpy as np
import pytest

import compiler
import microruntime
from compiler import te, tir
from compiler.tir import expr as E
from compiler.tir import pipeline
from compiler.tir.functor import IRMutator, post_order_visit
from compiler.tir.transform import prim_func_pass
from compiler.transform import PassContext, PassContextError, module_pass


def _nodes(mod, cls):
    found = []
    for _, func in mod.items():
        post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


def _loops(mod, kind):
    return [f for f in _nodes(mod, tir.For) if f.kind == kind]


def _scale(factor=4, vectorize=True, unroll=False):
    """C = A * 2 + 1 over (8, 16), its inner axis split by `factor` and vectorized/unrolled."""
    A = te.placeholder((8, 16), name="A")
    C = te.compute((8, 16), lambda i, j: A[i, j] * 2.0 + 1.0, name="C")
    s = te.create_schedule(C.op)
    _, inner = s[C].split(C.op.axis[1], factor=factor)
    if vectorize:
        s[C].vectorize(inner)
    if unroll:
        s[C].unroll(inner)
    return s, [A, C]


def _check_run(target, s, args, expected_fn=lambda a: a * 2 + 1):
    f = compiler.build(s, args, target=target, name="f")
    a = np.random.rand(8, 16).astype("float32")
    c = microruntime.nd.array(np.zeros((8, 16), "float32"))
    f(microruntime.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), expected_fn(a), rtol=1e-6)


# ---- the context itself ---------------------------------------------------------------------
def test_current_is_the_innermost_entered_context_else_a_default():
    default = PassContext.current()
    assert default.opt_level == 2 and default.config == {} and default.disabled_pass == ()
    with PassContext(opt_level=3) as outer:
        assert PassContext.current() is outer
        with PassContext(opt_level=0, config={"tir.disable_vectorize": True}) as inner:
            assert PassContext.current() is inner
            assert inner.config == {"tir.disable_vectorize": True}
        assert PassContext.current() is outer
    assert PassContext.current() is default


def test_context_is_left_when_the_block_raises():
    with pytest.raises(KeyError):
        with PassContext(opt_level=1):
            raise KeyError("boom")
    assert PassContext.current().opt_level == 2


def test_context_is_per_thread():
    seen = []
    with PassContext(opt_level=3):
        t = threading.Thread(target=lambda: seen.append(PassContext.current().opt_level))
        t.start()
        t.join()
    assert seen == [2]


def test_exported_as_compiler_transform():
    assert compiler.transform.PassContext is PassContext
    assert set(PassContext.list_configs()) == {"tir.disable_vectorize", "tir.add_lower_pass",
                                               "tir.disable_storage_rewrite", "tir.noalias",
                                               "tir.instrument_bound_checkers",
                                               "tir.disable_assert", "te.keep_schedule_record"}


def test_unknown_config_key_names_the_valid_ones():
    with pytest.raises(PassContextError, match=r"unknown PassContext config option "
                       r"'tir.disable_vectorise'; the valid ones are: te.keep_schedule_record, "
                       r"tir.add_lower_pass, "
                       r"tir.disable_assert, tir.disable_storage_rewrite, tir.disable_vectorize, "
                       r"tir.instrument_bound_checkers, tir.noalias"):
        PassContext(config={"tir.disable_vectorise": True})


@pytest.mark.parametrize("kwargs, phrase", [
    ({"config": {"tir.disable_vectorize": "yes"}}, "'tir.disable_vectorize' takes a bool"),
    ({"config": {"tir.add_lower_pass": lambda m: m}}, "takes a list of \\(phase, pass\\) pairs"),
    ({"config": {"tir.add_lower_pass": [(-1, lambda m: m)]}}, "must be an int >= 0"),
    ({"config": {"tir.add_lower_pass": [(1, "tir.Simplify")]}}, "is not callable"),
    ({"config": {"tir.add_lower_pass": [(1,)]}}, "each entry is a \\(phase, pass\\) pair"),
    ({"opt_level": -1}, "opt_level must be an int >= 0"),
    ({"opt_level": "3"}, "opt_level must be an int >= 0"),
    ({"disabled_pass": "tir.Simplify"}, "disabled_pass is a list of pass names"),
])
def test_invalid_options_are_errors(kwargs, phrase):
    with pytest.raises(PassContextError, match=phrase):
        PassContext(**kwargs)


# ---- config ---------------------------------------------------------------------------------
def test_vectorized_loops_by_default():
    s, args = _scale()
    mod = compiler.lower(s, args)
    assert _nodes(mod, E.Ramp) and not _loops(mod, tir.ForKind.VECTORIZED)


@pytest.mark.parametrize("ctx", [
    {"config": {"tir.disable_vectorize": True}},
    {"disabled_pass": ["tir.VectorizeLoop"]},
], ids=["config", "disabled_pass"])
def test_disable_vectorize_lowers_vectorized_loops_as_serial_loops(target, ctx):
    s, args = _scale()
    with PassContext(opt_level=3, **ctx):
        mod = compiler.lower(s, args)
        assert not _nodes(mod, E.Ramp) and not _loops(mod, tir.ForKind.VECTORIZED)
        inner = [f for f in _loops(mod, tir.ForKind.SERIAL) if f.loop_var.name == "j.inner"]
        assert len(inner) == 1 and inner[0].extent.value == 4
        _check_run(target, s, args)


def test_serialize_vectorized_returns_the_module_when_nothing_is_vectorized():
    s, args = _scale(vectorize=False)
    mod = compiler.lower(s, args)
    assert pipeline.serialize_vectorized(mod) is mod


def test_disable_storage_rewrite_leaves_out_the_pass():
    assert pipeline.storage_rewrite in pipeline.lower_passes()
    for ctx in (PassContext(config={"tir.disable_storage_rewrite": True}),
                PassContext(disabled_pass=["tir.StorageRewrite"])):
        with ctx:
            assert pipeline.storage_rewrite not in pipeline.lower_passes()


@pytest.mark.parametrize("name, kiln_pass", [
    ("tir.Simplify", pipeline.simplify),
    ("tir.RemoveNoOp", pipeline.remove_no_op),
    ("tir.UnrollLoop", pipeline.unroll_loop),
])
def test_disabled_pass_by_tvm_name_still_builds_and_runs(target, name, kiln_pass):
    s, args = _scale(vectorize=False, unroll=True)
    with PassContext(disabled_pass=[name]):
        assert kiln_pass not in pipeline.lower_passes()
        mod = compiler.lower(s, args)
        if name == "tir.UnrollLoop":
            assert len(_loops(mod, tir.ForKind.UNROLLED)) == 1
        _check_run(target, s, args)


def test_unknown_disabled_pass_names_change_nothing():
    default = pipeline.lower_passes() + pipeline.host_passes()
    with PassContext(opt_level=3, disabled_pass=["AlterOpLayout", "FoldScaleAxis"]):
        assert pipeline.lower_passes() + pipeline.host_passes() == default


@pytest.mark.parametrize("name", ["tir.StorageFlatten", "tir.MakePackedAPI", "tir.LowerIntrin"])
def test_disabling_a_pass_kiln_needs_is_an_error(name):
    s, args = _scale()
    with PassContext(disabled_pass=[name]):
        with pytest.raises(PassContextError, match=f"disables '{name}', but Kiln cannot compile "
                                                   "without its pass"):
            compiler.build(s, args, target="c")


# ---- user passes ----------------------------------------------------------------------------
class _ScaleConstant(IRMutator):
    """2.0 -> 3.0 in every expression (a visible change of what the kernel computes)."""

    def visit_FloatImm(self, e):
        return E.make_const(e.dtype, 3.0) if e.value == 2.0 else e


def _replace_two(mod):
    return mod.with_functions({g: _ScaleConstant().visit_func(f) for g, f in mod.items()})


def test_add_lower_pass_phases_see_the_ir_of_their_point_in_the_pipeline():
    seen = []

    def probe(phase):
        def fn(mod):
            func = mod["main"]
            loads = _nodes(mod, E.BufferLoad)
            seen.append((phase, max(len(ld.indices) for ld in loads), bool(_nodes(mod, E.Ramp)),
                         bool(_loops(mod, tir.ForKind.VECTORIZED))))
            assert func.attrs["global_symbol"] == "main"
            return mod
        fn.__name__ = f"probe{phase}"
        return fn

    s, args = _scale()
    passes = [(3, probe(3)), (0, probe(0)), (2, probe(2)), (1, probe(1)), (7, probe(7))]
    with PassContext(config={"tir.add_lower_pass": passes}):
        compiler.lower(s, args)
    # phase 0: N-d accesses and the VECTORIZED loop; 1: flat accesses, not yet vectorized;
    # 2 and 3 (phases above 3 run with 3, in the order given): vector code
    assert seen == [(0, 2, False, True), (1, 1, False, True), (2, 1, True, False),
                    (3, 1, True, False), (7, 1, True, False)]


def test_user_pass_changes_what_build_compiles(target):
    s, args = _scale(vectorize=False)
    with PassContext(config={"tir.add_lower_pass": [(1, _replace_two)]}):
        _check_run(target, s, args, lambda a: a * 3 + 1)
    _check_run(target, s, args)  # outside the context: the schedule as written


def test_user_pass_can_be_an_object_with_call(target):
    class Pass:
        def __init__(self):
            self.calls = 0

        def __call__(self, mod):
            self.calls += 1
            return _replace_two(mod)

    p = Pass()
    s, args = _scale()
    with PassContext(config={"tir.add_lower_pass": [(2, p)]}):
        _check_run(target, s, args, lambda a: a * 3 + 1)
    assert p.calls == 1


@prim_func_pass(opt_level=0)
def vectorize4(f, mod, ctx):
    """TVM's custom-pass tutorial: vectorize the serial loops of extent 4."""

    class Mark(IRMutator):
        def visit_For(self, s):
            s = self.generic_visit(s)
            if s.kind == tir.ForKind.SERIAL and isinstance(s.extent, E.IntImm) \
                    and s.extent.value == 4:
                return tir.For(s.loop_var, s.min, s.extent, tir.ForKind.VECTORIZED, s.body)
            return s

    assert isinstance(ctx, PassContext)
    return Mark().visit_func(f)


def test_prim_func_pass_in_phase_1_feeds_vectorize(target):
    s, args = _scale(vectorize=False)
    assert not _nodes(compiler.lower(s, args), E.Ramp)
    with PassContext(config={"tir.add_lower_pass": [(1, vectorize4)]}):
        assert _nodes(compiler.lower(s, args), E.Ramp)
        _check_run(target, s, args)
    assert vectorize4.info.name == "vectorize4" and vectorize4.info.opt_level == 0


def test_opt_level_required_and_disabled_gate_user_passes():
    @module_pass(opt_level=3, name="ScaleTwo")
    def scale_two(mod, ctx):
        return _replace_two(mod)

    s, args = _scale(vectorize=False)

    def consts(**kwargs):
        with PassContext(config={"tir.add_lower_pass": [(1, scale_two)]}, **kwargs):
            return sorted({c.value for c in _nodes(compiler.lower(s, args), E.FloatImm)})

    assert consts() == [1.0, 2.0]  # opt_level 2 < the pass's 3
    assert consts(opt_level=3) == [1.0, 3.0]
    assert consts(required_pass=["ScaleTwo"]) == [1.0, 3.0]
    assert consts(opt_level=3, disabled_pass=["ScaleTwo"]) == [1.0, 2.0]


def test_prim_func_pass_on_a_class_and_with_a_name():
    @prim_func_pass(opt_level=1, name="Renamed")
    class Keep:
        def __init__(self, tag):
            self.tag = tag

        def transform_function(self, func, mod, ctx):
            return func.with_attr("tag", self.tag)

    p = Keep("x")
    assert p.info.name == "Renamed" and p.info.opt_level == 1
    s, args = _scale()
    mod = compiler.lower(s, args)
    assert p(mod)["main"].attrs["tag"] == "x"
    with pytest.raises(PassContextError, match="needs opt_level as an int"):
        prim_func_pass(lambda f, m, c: f)


def test_user_pass_returning_something_else_is_an_error():
    bad = module_pass(lambda mod, ctx: None, opt_level=0, name="Bad")
    s, args = _scale()
    with PassContext(config={"tir.add_lower_pass": [(3, bad)]}):
        with pytest.raises(PassContextError, match="pass 'Bad' returned NoneType"):
            compiler.lower(s, args)
