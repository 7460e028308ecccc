"""compiler.testing, Kiln's `tvm.testing`: comparisons, target checks and the `testing.*`
global functions that exercise the FFI."""
import numpy as np
import pytest

import microruntime
from compiler import te, testing
from compiler.ir.errors import TVMError


def test_assert_allclose_checks_shape_and_values():
    testing.assert_allclose(np.ones(3), np.ones(3))
    testing.assert_allclose(microruntime.nd.array(np.ones(3, "float32")), np.ones(3))
    with pytest.raises(AssertionError):
        testing.assert_allclose(np.ones(3), np.ones(4))
    with pytest.raises(AssertionError):
        testing.assert_allclose(np.ones(3), np.zeros(3))


def test_assert_prim_expr_equal_uses_the_simplifier():
    x = te.var("x")
    testing.assert_prim_expr_equal(x * 2 + x, x * 3)
    with pytest.raises(ValueError, match="not equal"):
        testing.assert_prim_expr_equal(x + 1, x)


def test_device_enabled_by_target_kind():
    assert testing.device_enabled("c")
    assert testing.device_enabled("c -mcpu=generic")
    assert not testing.device_enabled("hexagon")
    assert ("c", microruntime.cpu(0)) in [(t, d) for t, d in testing.enabled_targets()]


def test_testing_globals_go_through_the_ffi():
    assert microruntime.get_global_func("testing.echo") is not None
    assert testing.echo(7, 8) == 7
    dev = testing.device_test(microruntime.cpu(0), 1, 0)
    assert dev.device_type == 1 and dev.device_id == 0
    with pytest.raises(ValueError):
        testing.device_test(microruntime.cpu(0), 2, 0)
    calls = []
    testing.test_wrap_callback(lambda: calls.append(1))()
    assert calls == [1]
    with pytest.raises(RuntimeError, match="boom"):
        testing.test_raise_error_callback("boom")()


def test_tvm_error_is_runtime_error():
    assert TVMError is RuntimeError


def test_error_kind_prefix_picks_the_error_class():
    from compiler.ir import errors
    with pytest.raises(errors.OpNotImplemented, match="myop") as info:
        testing.test_raise_error_callback("OpNotImplemented: myop")()
    assert isinstance(info.value, NotImplementedError)
    assert isinstance(info.value, errors.OpError) and isinstance(info.value, RuntimeError)
    with pytest.raises(errors.InternalError, match="myop: 0 != 1"):
        testing.test_check_eq_callback("InternalError: myop")(0, 1)
    with pytest.raises(errors.InternalError, match="plain: 2 != 3"):
        testing.test_check_eq_callback("plain")(2, 3)
    testing.test_check_eq_callback("plain")(4, 4)
    with pytest.raises(RuntimeError, match="NoSuchKind: x") as info:
        testing.test_raise_error_callback("NoSuchKind: x")()
    assert type(info.value) is RuntimeError


def test_classic_error_classes_and_c_error_kinds():
    from compiler.ir import errors
    assert issubclass(errors.OpAttributeRequired, AttributeError)
    assert issubclass(errors.OpAttributeInvalid, AttributeError)
    assert issubclass(errors.OpAttributeUnImplemented, NotImplementedError)
    assert issubclass(errors.DiagnosticError, errors.CompilerError)
    assert issubclass(errors.RPCError, RuntimeError)
    # a C error whose kind names a class raises that class
    assert microruntime.base.error_class("OpAttributeInvalid") is errors.OpAttributeInvalid
    assert microruntime.base.error_class("InternalError") is errors.InternalError
