"""Per-call overhead of the Python FFI: microruntime vs Apache TVM, measured in the same run.

A trivial kernel (hand-written C following the TVM-FFI ABI: three 1-element float32 tensors,
C[0] = A[0] + B[0]) is compiled with cc; microruntime calls it with NDArrays and reports the
median time per call. When a Python that can `import tvm` is found (this interpreter, or
--tvm-python / $KILN_TVM_PYTHON), the same .so is timed there with TVM's tensors, and TVM
also compiles the same kernel (te.create_prim_func + tvm.compile) which both runtimes then run.
Last, the time of `import microruntime` in a fresh interpreter.

    python bench/ffi_overhead.py [--tvm-python PATH] [--calls N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import PER_CALL_US, find_tvm_python

KERNEL_C = r"""
#include <stdint.h>
typedef struct { int32_t t; uint32_t pad; union { int64_t i; void* p; } v; } Any;
typedef struct { void* data; int32_t dev[2]; int32_t ndim; uint8_t code, bits; uint16_t lanes;
                 int64_t* shape; int64_t* strides; uint64_t byte_offset; } DLTensor;
void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* msg);

static DLTensor* tensor(const Any* a) {
  if (a->t == 70) return (DLTensor*)((char*)a->v.p + 24);
  return a->t == 7 ? (DLTensor*)a->v.p : 0;
}

int __tvm_ffi_add1(void* self, const Any* args, int32_t n, Any* result) {
  if (n != 3) { TVMFFIErrorSetRaisedFromCStr("TypeError", "add1: expected 3 args"); return -1; }
  DLTensor* a = tensor(&args[0]); DLTensor* b = tensor(&args[1]); DLTensor* c = tensor(&args[2]);
  if (!a || !b || !c || a->code != 2 || a->bits != 32) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add1: expected float32 tensors"); return -1;
  }
  ((float*)c->data)[0] = ((float*)a->data)[0] + ((float*)b->data)[0];
  return 0;
}
"""



TVM_SCRIPT = PER_CALL_US + r"""
import json, sys
import numpy as np
import tvm
from tvm import te
so_path, tvm_so, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
A = te.placeholder((1,), "float32", name="A")
B = te.placeholder((1,), "float32", name="B")
C = te.compute((1,), lambda i: A[i] + B[i], name="C")
tvm.compile(te.create_prim_func([A, B, C]).with_attr("global_symbol", "add1"),
            target="llvm").export_library(tvm_so)
dev = tvm.cpu(0)
a, b, c = (tvm.runtime.tensor(np.ones(1, "float32"), dev) for _ in range(3))
out = {"version": tvm.__version__}
for key, path in (("same_so", so_path), ("tvm_compiled", tvm_so)):
    f = tvm.runtime.load_module(path)["add1"]
    out[key] = per_call_us(f, a, b, c, calls)
    assert c.numpy()[0] == 2.0
print(json.dumps(out))
"""

IMPORT_SCRIPT = r"""
import time
{pre}
t0 = time.perf_counter()
import microruntime
print(time.perf_counter() - t0)
"""


def import_time_ms(pre, runs=7):
    script = IMPORT_SCRIPT.format(pre=pre)
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True)
        times.append(float(out.stdout.strip()))
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tvm-python", help="a python that can import tvm")
    parser.add_argument("--calls", type=int, default=200000)
    args = parser.parse_args()

    import numpy as np

    import microruntime as mr

    namespace = {}
    exec(PER_CALL_US, namespace)
    per_call_us = namespace["per_call_us"]

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "add1.c")
        so_path = os.path.join(tmp, "add1.so")
        tvm_so = os.path.join(tmp, "tvm_add1.so")
        with open(src, "w") as f:
            f.write(KERNEL_C)
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-o", so_path,
                        src], check=True)

        tvm = None
        tvm_python = find_tvm_python(args.tvm_python)
        if tvm_python:
            # TVM runs in its own process: both runtimes export the same C symbols.
            proc = subprocess.run([tvm_python, "-c", TVM_SCRIPT, so_path, tvm_so,
                                   str(args.calls)], capture_output=True, text=True)
            if proc.returncode == 0:
                tvm = json.loads(proc.stdout.strip().splitlines()[-1])
            else:
                print(f"(TVM run failed: {proc.stderr.strip().splitlines()[-1:]})")

        a, b, c = (mr.nd.array(np.ones(1, "float32")) for _ in range(3))
        ours = {"same_so": per_call_us(mr.load_module(so_path)["add1"], a, b, c, args.calls)}
        assert c.numpy()[0] == 2.0
        if tvm is not None:
            ours["tvm_compiled"] = per_call_us(mr.load_module(tvm_so)["add1"], a, b, c,
                                               args.calls)

    print("per-call time, 3 x 1-element float32 tensors (median of 7 x "
          f"{args.calls} calls), microseconds")
    header = f"{'kernel':<28}{'microruntime':>14}"
    header += f"{'TVM ' + tvm['version']:>20}" if tvm else f"{'TVM':>20}"
    print(header)
    for key, label in (("same_so", "hand-written C (cc)"), ("tvm_compiled", "TVM-compiled (llvm)")):
        if key not in ours:
            continue
        theirs = f"{tvm[key]:.3f}" if tvm else "n/a (no tvm)"
        print(f"{label:<28}{ours[key]:>14.3f}{theirs:>20}")
    print(f"import microruntime: {import_time_ms('import numpy'):.1f} ms "
          f"(numpy already imported), {import_time_ms('pass'):.1f} ms (with numpy)")


if __name__ == "__main__":
    main()
