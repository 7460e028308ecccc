"""Test helpers with the names of `tvm.testing`: numeric comparison, feature marks that skip a
test where its feature cannot run here (`requires_llvm`, `requires_gpu`, ...), target choice
(`device_enabled`, `enabled_targets`, `parametrize_targets`), and the `testing.*` global
functions (`echo`, `device_test`, callbacks) that exercise the FFI."""
import inspect
import os
import platform
import sys

import numpy as np
import pytest

import microruntime
from microruntime.base import error_class
from microruntime.packed_func import get_global_func, register_func

from .arith.analyzer import Analyzer
from .codegen import host_codegen_available
from .ir.errors import InternalError

# Targets and the device each one runs on; a target runs here when its code generator imports
# (host targets) or its device exists (GPU targets).
_HOST_TARGETS = ("llvm", "c")
_DEVICE_TARGETS = {"cuda": "cuda", "nvptx": "cuda", "opencl": "opencl", "vulkan": "vulkan",
                   "metal": "metal", "rocm": "rocm"}


def assert_allclose(actual, desired, rtol=1e-7, atol=1e-7):
    """numpy's assert_allclose with both tolerances 1e-7 by default; shapes must match too.
    NDArrays compare by their contents."""
    actual = np.asanyarray(actual.numpy() if hasattr(actual, "numpy") else actual)
    desired = np.asanyarray(desired.numpy() if hasattr(desired, "numpy") else desired)
    np.testing.assert_allclose(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)


def assert_prim_expr_equal(lhs, rhs):
    """Raises ValueError unless the simplifier proves `lhs == rhs`."""
    if not Analyzer().can_prove_equal(lhs, rhs):
        raise ValueError(f"{lhs} and {rhs} are not equal")


def _device_exists(name):
    try:
        return bool(microruntime.device(name, 0).exist)
    except (RuntimeError, ValueError):
        return False


def device_enabled(target):
    """Whether code for `target` (a target string; only its kind counts) can run here."""
    if not isinstance(target, str):
        raise TypeError(f"device_enabled takes a target string, not {type(target).__name__}")
    kind = target.split(" ")[0]
    if kind in _HOST_TARGETS:
        return host_codegen_available(kind)
    return kind in _DEVICE_TARGETS and _device_exists(_DEVICE_TARGETS[kind])


def enabled_targets():
    """(target, device) pairs for every target that runs here."""
    kinds = [k for k in (*_HOST_TARGETS, *_DEVICE_TARGETS) if device_enabled(k)]
    return [(k, microruntime.device(_DEVICE_TARGETS.get(k, "cpu"), 0)) for k in kinds]


def _requires(name, available):
    return pytest.mark.skipif(not available, reason=f"{name} is not available here")


def _any_gpu():
    return any(_device_exists(d) for d in ("cuda", "rocm", "opencl", "metal", "vulkan"))


requires_llvm = _requires("llvm", host_codegen_available("llvm"))
requires_gpu = _requires("gpu", _any_gpu())
requires_cuda = _requires("cuda", device_enabled("cuda"))
requires_tensorcore = requires_cuda
requires_cudagraph = _requires("CUDA graph", False)
requires_opencl = _requires("opencl", device_enabled("opencl"))
requires_vulkan = _requires("vulkan", device_enabled("vulkan"))
requires_metal = _requires("metal", device_enabled("metal"))
requires_rocm = _requires("rocm", device_enabled("rocm"))
requires_x86 = _requires("x86", platform.machine() in ("x86_64", "AMD64", "i386", "i686"))
requires_rpc = _requires("RPC", False)
requires_micro = _requires("microTVM", False)
requires_hexagon = _requires("hexagon", False)
skip_if_wheel_test = pytest.mark.skipif(
    os.getenv("WHEEL_TEST", "").lower() in {"true", "1", "yes"}, reason="not for a wheel test")


def uses_gpu(func):
    """Marks a test that uses a GPU where one exists and runs on the CPU otherwise."""
    return func


def skip_if_32bit(reason):
    """A decorator skipping a test on 32-bit Python."""
    return pytest.mark.skipif("32bit" in platform.architecture()[0], reason=reason)


def _importable(package):
    try:
        __import__(package)
    except ImportError:
        return False
    return True


def requires_package(*packages):
    """A decorator skipping a test unless every package imports."""
    def wrap(func):
        for package in packages:
            func = pytest.mark.skipif(not _importable(package),
                                      reason=f"cannot import {package!r}")(func)
        return func
    return wrap


def parametrize_targets(*targets):
    """Runs a test once per target named (`target` argument); bare, it leaves the test as is."""
    if len(targets) == 1 and callable(targets[0]):
        return targets[0]
    return pytest.mark.parametrize("target", list(targets))


def main():
    """Runs the calling test file under pytest (`if __name__ == "__main__": testing.main()`)."""
    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(pytest.main([test_file] + sys.argv[1:]))


def _device_test(dev, device_type, device_id):
    if dev.device_type != device_type or dev.device_id != device_id:
        raise ValueError(f"device {dev} is not ({device_type}, {device_id})")
    return dev


def _check_eq_callback(message):
    def check(x, y):  # a failed check is an InternalError unless `message` names a kind
        if x != y:
            text = f"{message}: {x} != {y}"
            raise _error_of(text) if ":" in message else InternalError(text)
    return check


def _error_of(message):
    """The error for `message`, of the class its "Kind: ..." prefix names (as TVM's testing
    functions raise them), else a RuntimeError."""
    kind, sep, _ = message.partition(":")
    cls = error_class(kind.strip()) if sep else RuntimeError
    return cls(message)


def _raise_error_callback(message):
    def fail():
        raise _error_of(message)
    return fail


def _error_test(x, y):
    if x != y:
        raise ValueError("expect x and y to be equal.")
    if x == 1:
        raise RuntimeError("InternalError: cannot reach here")


_GLOBALS = {
    "testing.nop": lambda *args: None,
    "testing.echo": lambda first, *rest: first,
    "testing.device_test": _device_test,
    "testing.test_wrap_callback": lambda f: (lambda: f()),
    "testing.test_raise_error_callback": _raise_error_callback,
    "testing.test_check_eq_callback": _check_eq_callback,
    "testing.ErrorTest": _error_test,
}
for _name, _func in _GLOBALS.items():
    register_func(_name, _func, override=True)

nop = get_global_func("testing.nop")
echo = get_global_func("testing.echo")
device_test = get_global_func("testing.device_test")
test_wrap_callback = get_global_func("testing.test_wrap_callback")
test_raise_error_callback = get_global_func("testing.test_raise_error_callback")
test_check_eq_callback = get_global_func("testing.test_check_eq_callback")
ErrorTest = get_global_func("testing.ErrorTest")


def check_numerical_grads(function, input_values, grad_values, function_value=None,
                          delta=1e-3, atol=1e-2, rtol=0.1):
    """Checks gradients `grad_values` of the scalar `function` at `input_values` (lists, or
    dicts by argument name) against finite differences, as TVM's check_numerical_grads: each
    partial derivative is a forward difference of step `delta`, refined (central difference,
    then Richardson extrapolation) where it disagrees with the given one; the check fails when
    the distance between the numerical and the given gradient of an input exceeds
    `atol * sqrt(size) + rtol * |numerical gradient|`, or is not finite."""
    if isinstance(input_values, dict):
        names = list(input_values)
        values = [np.asarray(input_values[n]) for n in names]
        grads = [np.asarray(grad_values[n]) for n in names]

        def call(vals):
            return function(**dict(zip(names, vals)))
    else:
        names = [str(i) for i in range(len(input_values))]
        values = [np.asarray(v) for v in input_values]
        grads = [np.asarray(g) for g in grad_values]

        def call(vals):
            return function(*vals)

    base = call(values) if function_value is None else function_value

    def partial(k, j, step):
        moved = [v.copy() for v in values]
        moved[k].reshape(-1)[j] += step
        return (call(moved) - base) / step

    for k, (name, value, grad) in enumerate(zip(names, values, grads)):
        if grad.shape != value.shape:
            raise AssertionError(f"gradient with respect to '{name}' has shape {grad.shape}, "
                                 f"expected {value.shape}")
        numeric = np.zeros(grad.shape, dtype="float64")
        flat = grad.reshape(-1)

        def close(j, d, flat=flat):
            return abs(d - flat[j]) < atol + rtol * abs(d)

        for j in range(grad.size):
            d = partial(k, j, delta)
            if not close(j, d):
                d = (partial(k, j, -delta) + d) / 2
                if not close(j, d):
                    half = (partial(k, j, delta / 2) + partial(k, j, -delta / 2)) / 2
                    d = (4 * half - d) / 3
            numeric.reshape(-1)[j] = d
        dist = float(np.sqrt(np.sum((numeric - grad) ** 2)))
        norm = float(np.sqrt(np.sum(numeric ** 2)))
        if not (np.isfinite(dist) and np.isfinite(norm)):
            raise ValueError(f"gradient check with respect to '{name}': NaN or infinity "
                             f"(given {grad}, numerical {numeric})")
        bound = atol * np.sqrt(float(grad.size)) + rtol * norm
        if dist > bound:
            raise AssertionError(f"gradient with respect to '{name}' differs from the "
                                 f"numerical one: distance {dist} > {bound}\n"
                                 f"given {grad}\nnumerical {numeric}")
