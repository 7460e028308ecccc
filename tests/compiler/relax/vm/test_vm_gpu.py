"""relax.build for a GPU target: the VM runs its kernels on OpenCL (PoCL here) and on Vulkan
(lavapipe here) and matches the llvm VM (rtol 1e-4, atol 1e-5): the symbolic-batch MLP at n = 1
and 7, a CNN, If on a value computed at run time (its 0-d kernels on the host); storage on
device 0, weights on the device, host inputs moved there, outputs device arrays. The exported
library (the MLP, the CNN) runs in a fresh process importing only microruntime. A CUDA build
compiles (PTX); running it needs a GPU. The placement checks (device indices, copies, host
kernels) need no device."""
import os
import subprocess
import sys

import numpy as np
import pytest

import microruntime
from compiler import relax
from compiler.ir.errors import TargetError
from compiler.relax import expr as X
from compiler.relax.backend.kernel_library import HOST_FUNC
from compiler.relax.functor import ExprVisitor
from compiler.relax.testing import models, vm_models
from compiler.relax.transform.legalize import HOST_FALLBACK
from compiler.relax.vm_build import lower_for_vm
from compiler.target import Target
from compiler.tir.function import PrimFunc
from microruntime.relax_vm import VirtualMachine

RTOL, ATOL = 1e-4, 1e-5
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))



def _gpu(prog_mod, params=None, target="opencl"):
    try:
        return relax.build(prog_mod, target=target, params=params)
    except TargetError as err:
        if "not implemented" in str(err):
            pytest.skip(f"{target} code generation is not available: {err}")
        raise


def _cpu_run(mod, params, args):
    ex = relax.build(mod, target="llvm", params=params)
    return VirtualMachine(ex, microruntime.cpu())["main"](*args).numpy()


_BUILDS = {}


def _mlp(api):
    """The symbolic-batch MLP and its build for `api`, built once per module."""
    if api not in _BUILDS:
        prog = vm_models.mlp()
        _BUILDS[api] = prog, _gpu(prog.mod, prog.params, target=api)
    return _BUILDS[api]


@pytest.mark.parametrize("n", [1, 7])
def test_mlp_symbolic_batch_on_gpu(gpu_api, n):
    prog, ex = _mlp(gpu_api.name)
    vm = VirtualMachine(ex, gpu_api.device())
    args = prog.args(n=n)
    out = vm["main"](*args)                       # a host array: moved to the device
    assert out.device.device_type == gpu_api.device_type
    assert out.shape == (n, 10)
    np.testing.assert_allclose(out.numpy(), _cpu_run(prog.mod, prog.params, args),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(out.numpy(), prog.reference(*args), rtol=1e-3, atol=1e-4)
    # an input already on the device is used where it is
    dev_x = microruntime.nd.array(args[0], gpu_api.device())
    np.testing.assert_allclose(vm["main"](dev_x).numpy(), out.numpy(), rtol=0, atol=0)


def test_kernels_read_weights_and_storage_on_the_device(gpu_api):
    """Every tensor a kernel gets (input, weights from the constant pool, planned storage) is
    on the GPU; the shape function gets the host heap."""
    prog, ex = _mlp(gpu_api.name)
    vm = VirtualMachine(ex, gpu_api.device())
    seen = {}

    def instrument(func, name, before, ret, *args):
        if before:
            seen[name] = {a.device.device_type for a in args if hasattr(a, "device")}
        return 0
    vm.set_instrument(instrument)
    vm["main"](*prog.args(n=3))
    gpu, cpu = gpu_api.device_type, microruntime.cpu().device_type
    kernels = {k: v for k, v in seen.items() if k.startswith("fused_")}
    assert len(kernels) == 2 and all(v == {gpu} for v in kernels.values())
    assert seen["shape_func_main"] == {cpu}


def _cnn():
    return models.conv_bn_relu_pool_dense(batch=1, channels=3, size=16, filters=8)


def test_cnn_on_gpu(gpu_api):
    cnn = _cnn()
    ex = _gpu(cnn.mod, cnn.params, target=gpu_api.name)
    inputs = cnn.inputs()
    vm = VirtualMachine(ex, gpu_api.device())
    got = vm["main"](inputs["x"]).numpy()
    np.testing.assert_allclose(got, _cpu_run(cnn.mod, cnn.params, [inputs["x"]]),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got, cnn.reference(inputs), rtol=1e-3, atol=1e-4)


def test_if_on_runtime_value_on_gpu(gpu_api):
    prog = vm_models.branch()
    vm = VirtualMachine(_gpu(prog.mod, target=gpu_api.name), gpu_api.device())
    cpu = VirtualMachine(relax.build(prog.mod, target="llvm"), microruntime.cpu())
    for sign in (1.0, -1.0):
        args = prog.args(sign=sign)
        out = vm["main"](*args)
        assert out.device.device_type == gpu_api.device_type
        np.testing.assert_allclose(out.numpy(), cpu["main"](*args).numpy(), rtol=RTOL,
                                   atol=ATOL)
        np.testing.assert_allclose(out.numpy(), prog.reference(*args), rtol=1e-5, atol=1e-6)


def _calls(func):
    """(alloc_storage device indices, names of the builtins called) of a lowered function."""
    devices, builtins = [], set()

    class V(ExprVisitor):
        def visit_call_(self, e):
            if (isinstance(e.op, X.Op) and e.op.name == "relax.call_builtin_with_ctx"
                    and e.args[0].global_symbol == "vm.builtin.alloc_storage"):
                devices.append(e.args[1].fields[1].value)
            if isinstance(e.op, X.ExternFunc):
                builtins.add(e.op.global_symbol)
            super().visit_call_(e)
    V().visit_expr(func)
    return devices, builtins


def test_placement_of_a_gpu_build():
    """Without a device: device kernels' storage on device 0, the 0-d kernels on the host (with
    their storage, index -1) reading a copy of x, the shape function on the host."""
    prog = vm_models.branch()
    low = lower_for_vm(prog.mod, target="opencl")
    kernels = {k: f for k, f in low.items() if isinstance(f, PrimFunc)}
    host = {k for k, f in kernels.items() if f.attrs.get(HOST_FALLBACK)}
    assert host == {"fused_sum", "fused_greater"}
    assert all(f.attrs.get(HOST_FUNC) for k, f in kernels.items() if k.startswith("shape_func"))
    devs, builtins = _calls(low["main"])
    assert devs.count(-1) == 2 and devs.count(0) == 2
    assert "vm.builtin.to_device" in builtins
    # a CPU build has neither copies nor host storage
    devs, builtins = _calls(lower_for_vm(prog.mod)["main"])
    assert set(devs) == {0} and "vm.builtin.to_device" not in builtins


@pytest.mark.parametrize("form", ["target_host", "dict"])
def test_target_forms(form):
    prog = vm_models.mlp(hidden=16)
    tgt = Target("opencl", host="llvm") if form == "target_host" else \
        {"opencl": "opencl", "llvm": "llvm"}
    ex = _gpu(prog.mod, prog.params, target=tgt)
    sources = [m.get_source() for m in ex.lib.imported_modules]
    assert any("__kernel" in s for s in sources)
    if microruntime.enabled("opencl"):
        args = prog.args(n=3)
        out = VirtualMachine(ex, microruntime.opencl())["main"](*args).numpy()
        np.testing.assert_allclose(out, prog.reference(*args), rtol=1e-3, atol=1e-4)


_LOADER = """
import sys, numpy as np
import microruntime
from microruntime.relax_vm import VirtualMachine
ex = microruntime.load_module(sys.argv[1])
vm = VirtualMachine(ex, getattr(microruntime, sys.argv[2])())
for k, path in enumerate(sys.argv[3:-1]):
    np.save(sys.argv[-1] + f"{k}.npy", vm["main"](np.load(path)).numpy())
assert not any(m == "compiler" or m.startswith("compiler.") for m in sys.modules)
"""


def _run_exported(ex, api, xs, tmp_path, name):
    """Outputs of `ex` exported as one .so and run on `api` in a fresh process, one per x."""
    so = str(tmp_path / f"{name}_{api}.so")
    ex.export_library(so)
    paths = []
    for k, x in enumerate(xs):
        paths.append(str(tmp_path / f"{name}_x{k}.npy"))
        np.save(paths[-1], x)
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = str(tmp_path / f"{name}_y")
    subprocess.run([sys.executable, "-c", _LOADER, so, api, *paths, out],
                   check=True, env=env, cwd=str(tmp_path), timeout=120)
    return [np.load(f"{out}{k}.npy") for k in range(len(xs))]


def test_exported_library_runs_in_fresh_process(gpu_api, tmp_path):
    prog, ex = _mlp(gpu_api.name)
    xs = [prog.args(n=n)[0] for n in (2, 5)]
    for x, y in zip(xs, _run_exported(ex, gpu_api.name, xs, tmp_path, "mlp")):
        np.testing.assert_allclose(y, prog.reference(x), rtol=1e-3, atol=1e-4)
    cnn = _cnn()
    inputs = cnn.inputs(3)
    (y,) = _run_exported(_gpu(cnn.mod, cnn.params, target=gpu_api.name), gpu_api.name,
                         [inputs["x"]], tmp_path, "cnn")
    np.testing.assert_allclose(y, cnn.reference(inputs), rtol=1e-3, atol=1e-4)


def test_cuda_build_compiles_to_ptx():
    prog = vm_models.mlp(hidden=16)
    ex = _gpu(prog.mod, prog.params, target="cuda")
    (dev_mod,) = ex.lib.imported_modules
    assert dev_mod.type_key == "cuda" and dev_mod.fmt == "ptx"
    assert ".entry fused_" in dev_mod.get_source("ptx")
    if not microruntime.enabled("cuda"):
        pytest.skip("no CUDA GPU here: the PTX compiled, running it needs one")
    args = prog.args(n=7)
    out = VirtualMachine(ex, microruntime.cuda())["main"](*args).numpy()
    np.testing.assert_allclose(out, prog.reference(*args), rtol=1e-3, atol=1e-4)
