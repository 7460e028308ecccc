"""TEST-ONLY module kind "test.echo": its payload is any bytes; the module it loads into has one
function, `echo`, that returns the payload (as Bytes). It exercises `__tvm_ffi__library_bin`
before device modules exist.

`register_echo_loader(register_func, load_module)` registers the global
`ffi.Module.load_from_bytes.test.echo` with either runtime (microruntime's or tvm_ffi's
`register_func`/`load_module`): the loader writes a tiny C library embedding the payload,
compiles it with the system C compiler and loads it. Only the standard library is imported here,
so a fresh process that must not see the compiler can use it.
"""
import os
import subprocess
import tempfile

ECHO_KIND = "test.echo"

_SOURCE = """#include <stddef.h>
#include <stdint.h>
typedef struct { const char* data; size_t size; } ByteArray;
typedef struct { int32_t type_index; uint32_t padding; int64_t value; } Any;
int TVMFFIBytesFromByteArray(const ByteArray* input, Any* out);
static const char payload[%(n1)d] = {%(data)s};
int __tvm_ffi_echo(void* self, const Any* args, int32_t num_args, Any* result) {
  ByteArray bytes = {payload, %(n)d};
  (void)self; (void)args; (void)num_args;
  return TVMFFIBytesFromByteArray(&bytes, result);
}
"""


def echo_library(payload: bytes, workdir: str) -> str:
    """A shared library whose function `echo` returns `payload`."""
    payload = bytes(payload)
    source = os.path.join(workdir, "echo.c")
    with open(source, "w") as f:
        f.write(_SOURCE % {"n": len(payload), "n1": len(payload) + 1,
                           "data": ", ".join(str(b) for b in payload + b"\0")})
    out = os.path.join(workdir, "echo.so")
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", out, source],
                   check=True)
    return out


def register_echo_loader(register_func, load_module):
    """Registers `ffi.Module.load_from_bytes.test.echo` (replacing an earlier one)."""

    def load(payload):
        return load_module(echo_library(bytes(payload), tempfile.mkdtemp(prefix="echo_")))

    register_func(f"ffi.Module.load_from_bytes.{ECHO_KIND}", load, override=True)
    return load
