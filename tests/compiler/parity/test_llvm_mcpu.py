"""`llvm -mcpu=native` is this host's CPU; an unknown -mcpu / -mattr name is a TargetError listing
the valid ones (checked before LLVM sees it: LLVM aborts the process on some unknown CPUs)."""
import numpy as np
import pytest

import microruntime as runtime
from compiler import build, te
from compiler.ir.errors import TargetError
from compiler.target import Target

llvm = pytest.importorskip("llvmlite.binding")
codegen = pytest.importorskip("compiler.codegen.llvm.codegen")


def _schedule():
    A = te.placeholder((64,), name="A")
    B = te.compute((64,), lambda i: A[i] * 2.0 + 1.0, name="B")
    s = te.create_schedule(B.op)
    return s, [A, B]


def _run(target):
    s, args = _schedule()
    f = build(s, args, target=target, name="f")
    a = np.arange(64, dtype="float32")
    b = runtime.nd.empty((64,), "float32")
    f["f"](runtime.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + 1)
    return f


def test_native_is_the_host_cpu():
    f = _run("llvm -mcpu=native")
    host = _run("llvm")  # no -mcpu: the host CPU too
    assert f.get_source("asm") == host.get_source("asm")


def test_host_cpu_by_name():
    _run(f"llvm -mcpu={llvm.get_host_cpu_name()}")


def test_known_cpus_of_the_host_triple():
    cpus = codegen.known_cpus(llvm.get_process_triple())
    assert llvm.get_host_cpu_name() in cpus and "generic" in cpus
    assert "native" not in cpus


def test_unknown_cpu_is_a_target_error():
    s, args = _schedule()
    with pytest.raises(TargetError, match="-mcpu=no-such-cpu is not a CPU LLVM knows") as err:
        build(s, args, target="llvm -mcpu=no-such-cpu", name="f")
    message = str(err.value)
    assert llvm.get_host_cpu_name() in message and "-mcpu=native" in message
    assert "generic" in message  # the valid names are listed


def test_unknown_feature_is_a_target_error():
    with pytest.raises(TargetError, match="no-such-feature is not a feature"):
        codegen.create_target_machine(Target("llvm -mattr=+no-such-feature"))


def test_native_when_cross_compiling_is_a_target_error():
    host_arch = llvm.get_process_triple().split("-")[0]
    other = "aarch64-linux-gnu" if host_arch != "aarch64" else "x86_64-linux-gnu"
    with pytest.raises(TargetError, match="-mcpu=native means this host's CPU"):
        codegen.create_target_machine(Target(f"llvm -mtriple={other} -mcpu=native"))
    with pytest.raises(TargetError, match="not a CPU LLVM knows") as err:
        codegen.create_target_machine(Target(f"llvm -mtriple={other} -mcpu=no-such-cpu"))
    assert "-mcpu=native" not in str(err.value)
    other_cpu = "cortex-a72" if other.startswith("aarch64") else "x86-64"
    codegen.create_target_machine(Target(f"llvm -mtriple={other} -mcpu={other_cpu}"))
