"""Kiln's VM executables run on the microruntime's VirtualMachine and match numpy
(rtol = atol = 1e-4): one MLP build with a symbolic batch run at 1, 7 and 64; If on a value
computed at run time, both ways; a nested tuple result; closures and calls between functions;
bad inputs rejected with the parameter's name."""
import numpy as np
import pytest

import microruntime
from compiler import relax
from compiler.relax.testing import vm_models
from microruntime.relax_vm import VirtualMachine


def _vm_of(prog, target="llvm"):
    ex = relax.build(prog.mod, target, params=prog.params)
    return VirtualMachine(ex, microruntime.cpu())


def _run(vm, args):
    return vm["main"](*[microruntime.nd.array(a) for a in args])


def _check(got, want):
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w)
        return
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_mlp_symbolic_batch(target):
    prog = vm_models.mlp(hidden=32)
    vm = _vm_of(prog, target)
    for n in (1, 7, 64):
        args = prog.args(n=n)
        _check(_run(vm, args), prog.reference(*args))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_on_runtime_value(sign):
    prog = vm_models.branch()
    vm = _vm_of(prog)
    args = prog.args(n=5, sign=sign)
    _check(_run(vm, args), prog.reference(*args))


def test_nested_tuple_result():
    prog = vm_models.nested_tuple()
    args = prog.args(n=3)
    _check(_run(_vm_of(prog), args), prog.reference(*args))


def test_closures_and_calls():
    prog = vm_models.closures()
    args = prog.args(n=4)
    _check(_run(_vm_of(prog), args), prog.reference(*args))


@pytest.mark.parametrize("bad,phrase", [
    ([np.zeros((3, 5), "float32")], "param=x"),
    ([np.zeros((3, 784), "float64")], "param=x"),
    ([np.zeros((784,), "float32")], "param=x"),
])
def test_bad_inputs_are_named(bad, phrase):
    vm = _vm_of(vm_models.mlp(hidden=8))
    with pytest.raises(Exception, match=phrase):
        _run(vm, bad)


def test_shared_symbolic_dim_mismatch_names_the_parameter():
    prog = vm_models.nested_tuple()
    x, _ = prog.args(n=3)
    with pytest.raises(Exception, match="param=y"):
        _run(_vm_of(prog), [x, np.zeros((4, 3), "float32")])
