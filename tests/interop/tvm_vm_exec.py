"""Run with a Python that has Apache TVM: the executable-format half of the VM interop.

    tvm_vm_exec.py OUT [KILN_BYTES]

Builds an executable with TVM's own ExecBuilder (constants of every tag, a VM-to-VM call, If and
Goto), exports it, and writes the executable's bytes (read back from the library's
`__tvm_ffi__library_bin`) to OUT/tvm_exec.bin. Given KILN_BYTES (a file of executable bytes
written by Kiln), loads them with TVM's own loader and writes its as_text() to OUT/kiln.txt.
"""
import ctypes
import os
import struct
import sys

import numpy as np
import tvm
from tvm.relax.exec_builder import ExecBuilder, VMFuncKind


def library_bin_payloads(path):
    """[(kind, payload)] of a loaded library's __tvm_ffi__library_bin."""
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    addr = ctypes.addressof(ctypes.c_char.in_dll(lib, "__tvm_ffi__library_bin"))
    size = struct.unpack("<Q", ctypes.string_at(addr, 8))[0]
    data = ctypes.string_at(addr + 8, size)
    pos = 0

    def u64():
        nonlocal pos
        v = struct.unpack_from("<Q", data, pos)[0]
        pos += 8
        return v

    def string():
        nonlocal pos
        n = u64()
        s = data[pos:pos + n]
        pos += n
        return s

    for _ in range(2):
        n = u64()
        pos += 8 * n
    out = []
    while pos < len(data):
        kind = string().decode()
        out.append((kind, None if kind == "_lib" else string()))
    return out


def build(out):
    eb = ExecBuilder()
    eb.declare_function("helper", VMFuncKind.VM_FUNC)
    with eb.function("main", num_inputs=1, param_names=["x"]):
        eb.emit_call("vm.builtin.read_if_cond", args=[eb.r(0)], dst=eb.r(1))
        eb.emit_if(eb.r(1), 3)
        eb.emit_call("helper", args=[eb.r(0)], dst=eb.r(2))
        eb.emit_goto(2)
        eb.emit_call("vm.builtin.copy", args=[eb.r(0)], dst=eb.r(2))
        eb.emit_call("vm.builtin.make_tuple", args=[
            eb.r(2), eb.convert_constant(tvm.runtime.tensor(np.arange(6, dtype="float32"))),
            eb.convert_constant(tvm.runtime.ShapeTuple([2, 3])), eb.convert_constant("hello"),
            eb.convert_constant(1 << 60), eb.convert_constant(2.5),
            eb.convert_constant(tvm.DataType("float16")), eb.imm(-7)], dst=eb.r(3))
        eb.emit_ret(eb.r(3))
    with eb.function("helper", num_inputs=1, param_names=["y"]):
        eb.emit_ret(eb.r(0))
    ex = eb.get()
    # a kernel, so that the exported library has host code to link
    n = tvm.te.var("n")
    a = tvm.te.placeholder((n,), "float32", name="a")
    b = tvm.te.compute((n,), lambda i: a[i] + 1.0, name="b")
    kern = tvm.compile(tvm.te.create_prim_func([a, b]).with_attr("global_symbol", "inc"), "llvm")
    ex.mod.import_module(kern.mod if hasattr(kern, "mod") else kern)
    path = os.path.join(out, "tvm_exec.so")
    ex.export_library(path)
    tvm.runtime.load_module(path)
    payloads = [p for k, p in library_bin_payloads(path) if k == "relax.VMExecutable"]
    with open(os.path.join(out, "tvm_exec.bin"), "wb") as f:
        f.write(payloads[0])
    with open(os.path.join(out, "tvm_exec.txt"), "w") as f:
        f.write(ex.as_text())


def load_kiln(out, kiln_path):
    with open(kiln_path, "rb") as f:
        data = f.read()
    loader = tvm.get_global_func("ffi.Module.load_from_bytes.relax.VMExecutable")
    mod = loader(bytearray(data))
    text = mod["as_text"]()
    with open(os.path.join(out, "kiln.txt"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    build(sys.argv[1])
    if len(sys.argv) > 2:
        load_kiln(sys.argv[1], sys.argv[2])
