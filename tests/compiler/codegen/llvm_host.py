"""Test helper: link a host object with llvm_stub_runtime.c into a shared library and call its
`__tvm_ffi_<name>` functions through ctypes with the TVM-FFI calling convention, without the
microruntime. Context slots (`__TVMBackend*`) are filled as a loader would fill them."""
from __future__ import annotations

import ctypes
import os
import subprocess

import numpy as np

STUB = os.path.join(os.path.dirname(__file__), "llvm_stub_runtime.c")
SLOTS = ("TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "TVMBackendParallelLaunch",
         "TVMFFIFunctionCall", "TVMFFIEnvModLookupFromImports", "TVMFFIHandleInitOnce")


class Any(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32),
                ("v_int64", ctypes.c_int64)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


SAFE_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Any), ctypes.c_int32,
                             ctypes.POINTER(Any))
_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}


def link(object_file: str, out: str) -> str:
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", out, object_file, STUB,
                    "-Wl,-Bsymbolic", "-lpthread", "-lm"], check=True)
    return out


def _aligned(array: np.ndarray) -> np.ndarray:
    """`array`'s contents in 64-byte aligned memory (kernels assume the runtime's alignment)."""
    raw = np.empty(array.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


class Tensor:
    """A numpy array seen as a DLTensor (`dtype` overrides the DLPack dtype, e.g. bfloat16:
    (code, bits) or (code, bits, lanes)); its data is 64-byte aligned as the runtime's is,
    copied when it is not (`sync()` copies results back to the array given)."""

    def __init__(self, array: np.ndarray, dtype=None):
        self.given = array
        self.array = np.ascontiguousarray(array)
        if self.array.ctypes.data % 64:
            self.array = _aligned(self.array)
        self.shape = (ctypes.c_int64 * max(self.array.ndim, 1))(*self.array.shape)
        code, bits, lanes = (*dtype, 1)[:3] if dtype else \
            (_CODES[self.array.dtype.kind], self.array.dtype.itemsize * 8, 1)
        self.dl = DLTensor(self.array.ctypes.data, 1, 0, self.array.ndim, code, bits, lanes,
                           self.shape, None, 0)

    def sync(self) -> None:
        if self.array is not self.given and isinstance(self.given, np.ndarray) \
                and self.given.flags.writeable and self.given.shape == self.array.shape:
            self.given[...] = self.array


class HostLib:
    def __init__(self, object_file: str, workdir: str, threads: int = 1):
        self.path = link(object_file, os.path.join(workdir, "lib.so"))
        self.lib = ctypes.CDLL(self.path)
        for name in SLOTS:
            try:
                slot = ctypes.c_void_p.in_dll(self.lib, "__" + name)
            except ValueError:
                continue
            slot.value = ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value
        self.lib.stub_last_error.restype = ctypes.c_char_p
        ctypes.c_int.in_dll(self.lib, "stub_num_threads").value = threads
        self._keep = []

    def counter(self, name: str) -> int:
        return ctypes.c_int.in_dll(self.lib, name).value

    def set_counter(self, name: str, value: int) -> None:
        ctypes.c_int.in_dll(self.lib, name).value = value

    def has(self, symbol: str) -> bool:
        return hasattr(self.lib, symbol)

    def register(self, name: str, fn) -> None:
        """Makes the Python `fn(args: list) -> int` callable by call_packed as `name`."""
        def safe_call(_self, args, n, _result):
            return fn([args[i] for i in range(n)])
        cb = SAFE_CALL(safe_call)
        self._keep.append(cb)
        assert self.lib.stub_register_function(name.encode(), cb) == 0

    def call(self, name: str, *args):
        """Calls `__tvm_ffi_<name>`; returns (status, error message or None)."""
        fn = getattr(self.lib, "__tvm_ffi_" + name)
        fn.restype = ctypes.c_int
        packed = (Any * (len(args) + 1))()
        keep = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                a = Tensor(a)
            if isinstance(a, Tensor):
                keep.append(a)
                packed[i].type_index = 7
                packed[i].v_int64 = ctypes.addressof(a.dl)
            elif isinstance(a, float):
                packed[i].type_index = 3
                ctypes.cast(ctypes.byref(packed[i], 8), ctypes.POINTER(ctypes.c_double))[0] = a
            elif isinstance(a, bool):
                packed[i].type_index, packed[i].v_int64 = 2, int(a)
            else:
                packed[i].type_index, packed[i].v_int64 = 1, int(a)
        result = Any()
        rc = fn(None, packed, len(args), ctypes.byref(result))
        for t in keep:
            t.sync()
        return rc, (self.lib.stub_last_error().decode() if rc != 0 else None)

    def run(self, name: str, *args) -> None:
        rc, err = self.call(name, *args)
        if rc != 0:
            raise RuntimeError(err)


def packed_module(funcs, attrs=None):
    """An IRModule of PrimFuncs {name: (params, buffer_map, body)} in packed form, its large
    Allocates turned into workspaces (lower_workspace), its parallel loops outlined
    (lower_parallel)."""
    from compiler.ir import IRModule
    from compiler.tir import PrimFunc
    from compiler.tir.transform.lower_parallel import lower_parallel
    from compiler.tir.transform.lower_workspace import lower_workspace
    from compiler.tir.transform.make_packed_api import make_packed_api

    mod = IRModule({name: PrimFunc(tuple(params), body, tuple(bmap), {"global_symbol": name})
                    for name, (params, bmap, body) in funcs.items()}, attrs or {})
    return lower_parallel(lower_workspace(make_packed_api(mod)))


def compile_host(tmp_path, funcs, target="llvm", attrs=None, threads=1):
    """(HostLib, HostArtifact) for `funcs` (see packed_module) built by the host codegen of
    `target` ("llvm..." or "c")."""
    from compiler.codegen import codegen_host
    from compiler.target import Target

    target = Target(target)
    art = codegen_host(packed_module(funcs, attrs), target, str(tmp_path))
    return HostLib(art.object_file, str(tmp_path), threads), art
