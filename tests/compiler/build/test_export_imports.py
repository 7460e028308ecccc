"""export_library packs imported modules that are not host code into `__tvm_ffi__library_bin`
(TVM-FFI 0.27 layout) inside ONE library; a fresh process that imports only microruntime (and
registers the test-only "test.echo" loader, echo_module.py) gets the kernel and the import back.
Also `Module.save("k.o")` + `load_module("k.o")` as in TVM's tutorials."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from echo_module import ECHO_KIND, register_echo_loader
from sample_kernels import vector_add

import compiler
import microruntime
from compiler import TargetError
from compiler.export import pack_library_bin
from compiler.runtime_module import RuntimeModule, SerializedModule
from compiler.testing import requires_opencl

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PAYLOAD = b"kiln\x00echo\xff" * 3

RUNNER = """
import ctypes, sys
import numpy as np
import microruntime
from echo_module import register_echo_loader
path, how, payload = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
if how != "noloader":
    register_echo_loader(microruntime.register_func, microruntime.load_module)
m = microruntime.load_module(path)
if how == "syslib":
    m = microruntime.system_lib()
assert "compiler" not in sys.modules
a = np.arange(16, dtype="float32")
c = microruntime.nd.array(np.zeros(16, "float32"))
m["test_add"](microruntime.nd.array(a), microruntime.nd.array(a), c)
np.testing.assert_array_equal(c.numpy(), 2 * a)
imports = m.imported_modules
assert len(imports) == 1, imports
assert imports[0]["echo"]() == payload
assert m.get_function("echo", query_imports=True)() == payload
if how == "module" and path.endswith(".so"):
    lib = ctypes.CDLL(path)
    n = ctypes.c_uint64.in_dll(lib, "__tvm_ffi__library_bin").value
    print("blob", bytes((ctypes.c_ubyte * (n + 8)).in_dll(lib, "__tvm_ffi__library_bin")).hex())
print("ok")
"""


def run_fresh(path, how="module"):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, HERE]))
    return subprocess.run([sys.executable, "-c", RUNNER, path, how, PAYLOAD.hex()], env=env,
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture(autouse=True)
def echo_loader():
    register_echo_loader(microruntime.register_func, microruntime.load_module)
    yield
    microruntime.remove_global_func(f"ffi.Module.load_from_bytes.{ECHO_KIND}")


def _with_echo(target):
    m = compiler.build(*vector_add(), target=target, name="test_add")
    assert isinstance(m, RuntimeModule)
    m.import_module(SerializedModule(ECHO_KIND, PAYLOAD))
    return m


def _parse_blob(blob):
    """The blob by the layout of TVM-FFI 0.27 (reference §1.8), read independently."""
    pos = 0

    def u64():
        nonlocal pos
        pos += 8
        return struct.unpack_from("<Q", blob, pos - 8)[0]

    def string():
        nonlocal pos
        n = u64()
        pos += n
        return blob[pos - n:pos]

    nbytes = u64()
    assert nbytes == len(blob) - 8
    indptr = [u64() for _ in range(u64())]
    children = [u64() for _ in range(u64())]
    modules = []
    for _ in range(len(indptr) - 1):
        kind = string().decode()
        modules.append((kind, None if kind == "_lib" else string()))
    assert pos == len(blob)
    return indptr, children, modules


def test_blob_layout():
    blob = pack_library_bin([("_lib", None), ("cuda", b"ptx!")], [0, 1, 1], [1])
    assert blob == (struct.pack("<QQQQQQQ", len(blob) - 8, 3, 0, 1, 1, 1, 1)
                    + struct.pack("<Q", 4) + b"_lib" + struct.pack("<Q", 4) + b"cuda"
                    + struct.pack("<Q", 4) + b"ptx!")


def test_imported_module_callable_in_process(target):
    m = _with_echo(target)
    assert m.get_function("echo", query_imports=True)() == PAYLOAD
    assert len(m.imported_modules) == 1 and m.imported_modules[0]["echo"]() == PAYLOAD
    assert [type(i) for i in m.imports] == [SerializedModule]


@pytest.mark.parametrize("ext", ["so", "tar", "o"])
def test_export_one_library_with_blob(target, tmp_path, ext):
    m = _with_echo(target)
    path = str(tmp_path / f"lib.{ext}")
    m.export_library(path)
    out = run_fresh(path)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout
    if ext == "so":
        syms = subprocess.run(["nm", path], stdout=subprocess.PIPE, text=True).stdout
        assert " R __tvm_ffi__library_bin" in syms
        blob = bytes.fromhex(out.stdout.split("blob ")[1].split()[0])
        indptr, children, modules = _parse_blob(blob)
        assert indptr == [0, 1, 1] and children == [1]
        assert modules == [("_lib", None), (ECHO_KIND, PAYLOAD)]


def test_fresh_process_without_loader_fails_to_load(tmp_path):
    path = str(tmp_path / "lib.so")
    _with_echo("c").export_library(path)
    out = run_fresh(path, how="noloader")
    assert out.returncode != 0 and "test.echo" in out.stdout


def test_no_blob_without_imports(tmp_path):
    path = str(tmp_path / "plain.so")
    compiler.build(*vector_add(), target="c", name="test_add").export_library(path)
    syms = subprocess.run(["nm", path], stdout=subprocess.PIPE, text=True).stdout
    assert "__tvm_ffi__library_bin" not in syms


def test_system_lib_with_blob(target, tmp_path):
    m = compiler.build(*vector_add(), target=f"{target} --system-lib", name="test_add")
    m.import_module(SerializedModule(ECHO_KIND, PAYLOAD))
    so = str(tmp_path / "sys.so")
    m.export_library(so)
    out = run_fresh(so, how="syslib")
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout
    archive = str(tmp_path / "sys.a")
    m.export_library(archive)
    syms = subprocess.run(["nm", archive], stdout=subprocess.PIPE, text=True).stdout
    assert " W kiln_system_lib_register" in syms and "kiln_library_bin" in syms
    assert " T __tvm_ffi__library_bin" not in syms and " R __tvm_ffi__library_bin" not in syms


def test_import_host_module_links_both(tmp_path):
    a = compiler.build(*vector_add(), target="c", name="test_add")
    b = compiler.build(*vector_add(), target="c", name="other_add")
    a.import_module(b)
    assert a.get_function("other_add", query_imports=True) is not None
    path = str(tmp_path / "both.so")
    a.export_library(path)
    syms = subprocess.run(["nm", path], stdout=subprocess.PIPE, text=True).stdout
    assert " T __tvm_ffi_test_add" in syms and " T __tvm_ffi_other_add" in syms
    with pytest.raises(ValueError, match="cycle"):
        b.import_module(a)


def test_import_rejects_non_modules_and_unexportable():
    m = compiler.build(*vector_add(), target="c", name="test_add")
    with pytest.raises(TypeError):
        m.import_module("not a module")
    with pytest.raises(ValueError):
        SerializedModule("_lib", b"")


@pytest.mark.parametrize("ext", ["o", "c", "ll", "s"])
def test_save_host_code(target, tmp_path, ext):
    m = compiler.build(*vector_add(), target=target, name="test_add")
    path = str(tmp_path / f"k.{ext}")
    if ext != "o" and {"s": "asm"}.get(ext, ext) not in m._artifact.sources:
        with pytest.raises(TargetError, match="no"):
            m.save(path)
        return
    m.save(path)
    if ext == "o":
        loaded = microruntime.load_module(path)
        x = np.arange(16, dtype="float32")
        c = microruntime.nd.array(np.zeros(16, "float32"))
        loaded["test_add"](microruntime.nd.array(x), microruntime.nd.array(x), c)
        np.testing.assert_array_equal(c.numpy(), 2 * x)
    else:
        assert open(path).read() == m.get_source({"s": "asm"}.get(ext, ext))


@requires_opencl
def test_system_lib_with_device_code_loads_as_a_library(tmp_path):
    # its library context slot is internal (dlsym cannot see it): load_module finds the slot
    # the library registered as a system library, so the host code reaches its OpenCL kernel
    from compiler import te

    n = 1024
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=8)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    f = compiler.build(s, [A, B], "opencl", "llvm --system-lib", name="add_one_cl")
    path = str(tmp_path / "dev_lib.so")
    f.export_library(path)
    dev = microruntime.opencl(0)
    a = microruntime.nd.array(np.arange(n, dtype="float32"), dev)
    b = microruntime.nd.array(np.zeros(n, "float32"), dev)
    microruntime.load_module(path)["add_one_cl"](a, b)
    np.testing.assert_array_equal(b.numpy(), a.numpy() + 1)
    b = microruntime.nd.array(np.zeros(n, "float32"), dev)
    microruntime.system_lib()["add_one_cl"](a, b)
    np.testing.assert_array_equal(b.numpy(), a.numpy() + 1)
