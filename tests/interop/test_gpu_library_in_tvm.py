"""A Kiln GPU library in Apache TVM 0.27: `export_library` of an OpenCL (and CUDA) build is one
.so whose `__tvm_ffi__library_bin` TVM's loader reads. TVM's pip build registers no OpenCL/CUDA
device loader, so the TVM subprocess registers `ffi.Module.load_from_bytes.<kind>` itself: it
records the payload TVM cut out of our blob (the import tree and module boundaries are TVM's
reading) and decodes it with TVM 0.27's device-module layout (fmt, FunctionInfo map, code),
then fails the load on purpose. Without that loader, TVM must fail naming the missing loader."""
import json
import subprocess

import pytest
from tvm_subprocess import TVM_PYTHON, requires_tvm

pytestmark = requires_tvm

SCRIPT = r'''
import json, struct, sys
import tvm, tvm_ffi
path, kind, register = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
seen = {}
def loader(payload):
    data = bytes(payload)
    pos = 0
    def u64():
        global_pos[0] += 8
        return struct.unpack_from("<Q", data, global_pos[0] - 8)[0]
    def string():
        n = u64(); s = data[global_pos[0]:global_pos[0] + n]; global_pos[0] += n
        return s.decode()
    global_pos = [0]
    fmt = string()
    funcs = {}
    for _ in range(u64()):
        key = string(); name = string()
        types = [struct.unpack_from("<BBH", data, global_pos[0] + 4 * i) for i in range(u64())]
        global_pos[0] += 4 * len(types)
        tags = [string() for _ in range(u64())]
        extra = [struct.unpack_from("<i", data, global_pos[0] + 4 * i)[0] for i in range(u64())]
        global_pos[0] += 4 * len(extra)
        funcs[key] = {"name": name, "arg_types": types, "tags": tags, "extra": extra}
    code = string()
    seen.update(fmt=fmt, funcs=funcs, code_len=len(code), rest=len(data) - global_pos[0],
                code_head=code[:200])
    raise RuntimeError("kiln-test: payload decoded")
if register:
    tvm_ffi.register_global_func("ffi.Module.load_from_bytes." + kind, loader, override=True)
try:
    tvm.runtime.load_module(path)
    error = ""
except Exception as err:
    error = str(err)
print(json.dumps({"seen": seen, "error": error}))
'''


def _gpu_library(tmp_path, target):
    from compiler import build, te

    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], factor=64)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    mod = build(s, [A, B], target=target, target_host="c", name="scale")
    path = str(tmp_path / f"scale_{target}.so")
    mod.export_library(path)
    return mod, path


def _run_tvm(path, kind, register):
    out = subprocess.run([TVM_PYTHON, "-c", SCRIPT, path, kind, "1" if register else "0"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_tvm_reads_the_device_module_of_a_kiln_library(tmp_path, target):
    mod, path = _gpu_library(tmp_path, target)
    dev = mod.imported_modules[0]
    result = _run_tvm(path, target, register=True)
    seen = result["seen"]
    assert "kiln-test: payload decoded" in result["error"]
    assert seen["fmt"] == dev.fmt and seen["rest"] == 0
    assert seen["code_len"] == len(dev.code.encode())
    info = seen["funcs"]["scale_kernel"]
    assert info["name"] == "scale_kernel"
    assert info["arg_types"] == [[3, 64, 1], [3, 64, 1], [0, 32, 1]]
    assert info["tags"] == ["blockIdx.x", "threadIdx.x"] and info["extra"] == [0, 0, 0]


def test_tvm_without_an_opencl_loader_names_it(tmp_path):
    _, path = _gpu_library(tmp_path, "opencl")
    result = _run_tvm(path, "opencl", register=False)
    assert "ffi.Module.load_from_bytes.opencl" in result["error"]
