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
