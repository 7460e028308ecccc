"""The Relax VM on the microruntime: bytecode assembled with ExecBuilder, kernels built by Kiln;
results checked against numpy (exact: float32 add and doubling are exact roundings of the same
operations numpy performs)."""
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import rand

import microruntime as mr
from microruntime.relax_vm import Executable, VirtualMachine, VMInstrumentReturnKind


@pytest.fixture(params=["naive", "pooled"])
def vm(request, executable):
    return VirtualMachine(executable, mr.cpu(), memory_cfg=request.param)


def test_arithmetic_through_kernels(vm):
    for n in (1, 7, 300):
        x, y = rand(n, 1), rand(n, 2)
        out = vm["main"](mr.nd.array(x), mr.nd.array(y))
        np.testing.assert_array_equal(out.numpy(), x + y)


def test_repeated_calls_reuse_pool(executable):
    vm = VirtualMachine(executable, [mr.cpu()], memory_cfg="pooled")
    x, y = rand(64, 3), rand(64, 4)
    outs = [vm["main"](mr.nd.array(x), mr.nd.array(y + i)) for i in range(5)]
    for i, out in enumerate(outs):  # outputs stay valid while others are computed
        np.testing.assert_array_equal(out.numpy(), x + (y + i))


def test_if_on_runtime_value(vm):
    x, y = rand(5, 5), rand(5, 6)
    for cond, expect in ((True, x + y), (False, 2 * x)):
        c = mr.nd.array(np.array(cond))
        np.testing.assert_array_equal(vm["cond_main"](c, mr.nd.array(x), mr.nd.array(y)).numpy(),
                                      expect)
    np.testing.assert_array_equal(vm["cond_main"](0, mr.nd.array(x), mr.nd.array(y)).numpy(),
                                  2 * x)


def test_nested_tuple_output(vm):
    x, y = rand(4, 7), rand(4, 8)
    out = vm["tuple_main"](mr.nd.array(x), mr.nd.array(y))
    assert isinstance(out, list) and isinstance(out[0], list)
    np.testing.assert_array_equal(out[0][0].numpy(), x + y)
    assert tuple(out[0][1]) == (4,)
    np.testing.assert_array_equal(out[1].numpy(), x)


def test_vm_to_vm_calls_and_closures(vm):
    x, y = rand(6, 9), rand(6, 10)
    np.testing.assert_array_equal(vm["call_main"](mr.nd.array(x), mr.nd.array(y)).numpy(),
                                  (x + y) + y)
    np.testing.assert_array_equal(vm["closure_main"](mr.nd.array(x), mr.nd.array(y)).numpy(),
                                  x + y)
    clo = vm["get_closure"](mr.nd.array(y))
    np.testing.assert_array_equal(vm.invoke_closure(clo, mr.nd.array(x)).numpy(), x + y)


def test_stateful_api(vm):
    x, y = rand(3, 11), rand(3, 12)
    with pytest.raises(ValueError, match="set_input"):
        vm.invoke_stateful("tuple_main")
    vm.set_input("tuple_main", x, y=y)
    vm.invoke_stateful("tuple_main")
    out = vm.get_outputs("tuple_main")
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_array_equal(out[0][0].numpy(), x + y)
    np.testing.assert_array_equal(out[1].numpy(), x)
    timer = vm.time_evaluator("invoke_stateful", mr.cpu(), number=3, repeat=2)
    assert len(timer("tuple_main").results) == 2


def test_save_function_and_time_evaluator(vm):
    x, y = rand(8, 13), rand(8, 14)
    vm.save_function("main", "main_saved", x, y)
    np.testing.assert_array_equal(vm["main_saved"]().numpy(), x + y)
    vm.save_function("main", "main_void", x, y, include_return=False)
    assert vm["main_void"]() is None
    res = vm.time_evaluator("main_saved", mr.cpu(), number=5, repeat=3)()
    assert len(res.results) == 3 and all(r > 0 for r in res.results)
    res = vm.time_evaluator("main", mr.cpu(), number=2)(mr.nd.array(x), mr.nd.array(y))
    assert len(res.results) == 1
    with pytest.raises(ValueError, match="function of the executable"):
        vm.save_function("main", "helper", x, y)


def test_instrument_observes_and_skips(vm):
    x, y = rand(4, 15), rand(4, 16)
    seen = []

    def observe(func, name, before, ret, *args):
        seen.append((name, bool(before)))
        return VMInstrumentReturnKind.NO_OP

    vm.set_instrument(observe)
    vm["call_main"](mr.nd.array(x), mr.nd.array(y))
    names = [n for n, before in seen if before]
    assert names.count("helper") == 2 and names.count("add") == 2
    assert len(seen) == 2 * len(names)  # every call seen before and after

    def skip_kernels(func, name, before, ret, *args):
        return VMInstrumentReturnKind.SKIP_RUN if name == "add" else 0

    vm.set_instrument(skip_kernels)
    out = vm["main"](mr.nd.array(x), mr.nd.array(y))
    assert not np.array_equal(out.numpy(), x + y) or np.all(x + y == 0)
    vm.set_instrument(None)
    np.testing.assert_array_equal(vm["main"](mr.nd.array(x), mr.nd.array(y)).numpy(), x + y)


def test_profile(executable):
    vm = VirtualMachine(executable, mr.cpu(), profile=True)
    x, y = rand(1000, 17), rand(1000, 18)
    report = vm.profile("call_main", mr.nd.array(x), mr.nd.array(y))
    rows = report.calls
    assert [r["Name"] for r in rows] == ["add", "add"]
    assert all(r["Duration (us)"].microseconds >= 0 for r in rows)
    assert "float32[1000]" in rows[0]["Argument Shapes"]
    assert "add" in report.table()


def test_bad_inputs_name_the_parameter(vm):
    x = mr.nd.array(rand(4))
    with pytest.raises(ValueError, match=r"param=x.*ndim 1, got ndim 2"):
        vm["main"](mr.nd.array(np.zeros((2, 2), "float32")), x)
    with pytest.raises(ValueError, match=r"param=y.*dtype float32, got dtype int32"):
        vm["main"](x, mr.nd.array(np.zeros(4, "int32")))
    with pytest.raises(TypeError, match=r"param=y.*expected a Tensor"):
        vm["main"](x, 3)
    with pytest.raises(ValueError, match="takes 2 arguments, 1 were given"):
        vm["main"](x)
    with pytest.raises(AttributeError):
        vm["nope"]


def test_unresolved_kernel_named(exe_bytes):
    ex = Executable.from_bytes(exe_bytes)  # no kernel library
    with pytest.raises(RuntimeError, match="cannot find function 'add'"):
        VirtualMachine(ex, mr.cpu())


def test_corrupt_executables(exe_bytes):
    load = mr.get_global_func("ffi.Module.load_from_bytes.relax.VMExecutable")
    with pytest.raises(ValueError, match="magic"):
        load(b"\0" * 8 + exe_bytes[8:])
    with pytest.raises(ValueError, match="version '0.13'"):
        load(exe_bytes[:16] + b"0.13" + exe_bytes[20:])
    for cut in (0, 5, 20, len(exe_bytes) // 3, len(exe_bytes) - 8, len(exe_bytes) - 1):
        with pytest.raises(ValueError, match="truncated|exceeds"):
            load(exe_bytes[:cut])
    with pytest.raises(ValueError, match="trailing"):
        load(exe_bytes + b"\0")
    # constant tag 69 (Shape) -> 71 (Shape in TVM 0.21)
    from compiler.relax.vm_format import VMExecutableBytes

    ex = VMExecutableBytes.from_bytes(exe_bytes)
    ex.constants.append((1, 2))
    raw = bytearray(ex.to_bytes())
    pos = raw.rindex(bytes([69, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]))
    raw[pos] = 71
    with pytest.raises(ValueError, match="tag 71"):
        load(bytes(raw))


def test_fresh_process_imports_only_microruntime(tmp_path, exe_bytes, kernels):
    from compiler.runtime_module import SerializedModule

    path = str(tmp_path / "vm_model.so")
    from compiler.export import export_library

    export_library(kernels._library_parts(root=SerializedModule("relax.VMExecutable", exe_bytes)),
                   path)
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("compiler", "tvm", "tvm_ffi", "llvmlite"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
import numpy as np
import microruntime as mr
from microruntime.relax_vm import VirtualMachine
ex = mr.load_module({path!r})
assert ex.type_key == "relax.VMExecutable", ex.type_key
vm = VirtualMachine(ex, mr.cpu())
x = np.arange(5, dtype="float32")
out = vm["call_main"](mr.nd.array(x), mr.nd.array(x))
assert np.array_equal(out.numpy(), 3 * x), out.numpy()
print("ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(mr.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-2000:]


def test_kernel_errors_survive_the_pooled_allocator(vm):
    """Releasing a storage back to the pool must not erase the error that ended the call."""
    x, y = mr.nd.array(rand(4)), mr.nd.array(rand(5))
    with pytest.raises(ValueError, match=r"(?s)B\.shape\[0\].*expected n = 4, but got 5"):
        vm["main"](x, y)
    # the VM and its pool are still usable afterwards
    np.testing.assert_array_equal(vm["main"](x, x).numpy(), 2 * x.numpy())
