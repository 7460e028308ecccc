"""A model compiled for the AOT executor, exported as a `--system-lib` static library with its
header, links into a C program (tests/c/test_aot_model.c) with the AOT runtime only
(microruntime/src/aot: no dlopen, no graph, no allocation): on every model of the model set,
on c and llvm, the program runs the model twice with the allocator refusing every call after
initialisation, and its outputs equal the graph executor's to the bit. The same program built
with AddressSanitizer and UndefinedBehaviorSanitizer over the run function, the AOT runtime
(and the kernels, for target c) runs clean."""
import glob
import os
import subprocess

import numpy as np
import pytest
from aot_model_set import NAMES, graph_outputs, model, same

from compiler import relay
from compiler.relay.backend import Executor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
HARNESS = os.path.join(ROOT, "tests", "c", "test_aot_model.c")
AOT_RUNTIME = sorted(glob.glob(os.path.join(ROOT, "microruntime", "src", "aot", "*.c")))
CC = os.environ.get("CC", "cc")
FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L",
         "-I" + os.path.join(ROOT, "microruntime", "include")]
WRAP = ["-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign"]
SAN = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


def _program(tmp, sources, flags, out):
    cmd = [CC] + FLAGS + flags + ["-I" + tmp, HARNESS] + sources + ["-o", out, "-lm"] + WRAP
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def _run(program, tmp, inputs, outputs):
    ins = []
    for k, value in enumerate(inputs.values()):
        path = os.path.join(tmp, f"in{k}.bin")
        np.ascontiguousarray(value).tofile(path)
        ins.append(path)
    outs = [os.path.join(tmp, f"out{k}.bin") for k in range(len(outputs))]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
    proc = subprocess.run([program] + ins + outs, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 allocations after initialisation" in proc.stdout
    return [np.fromfile(p, dtype=w.dtype).reshape(w.shape) for p, w in zip(outs, outputs)]


@pytest.mark.parametrize("name", NAMES)
def test_static_c_program(name, target, tmp_path):
    tmp = str(tmp_path)
    mod, params, inputs = model(name)
    factory = relay.build(mod, f"{target} --system-lib", params=params,
                          executor=Executor("aot"))
    factory.export_library(os.path.join(tmp, "model.a"))
    factory.export_header(tmp)
    want = graph_outputs(name, target)

    program = _program(tmp, [os.path.join(tmp, "model.a")] + AOT_RUNTIME, ["-O2"],
                       os.path.join(tmp, "app"))
    nm = subprocess.run(["nm", "-u", program], capture_output=True, text=True).stdout
    assert "dlopen" not in nm and "mr_graph" not in nm
    assert same(_run(program, tmp, inputs, want), want)

    # ASan + UBSan: the run function and the AOT runtime instrumented; for target c the
    # kernels too (their C source), for llvm their object as compiled.
    run_file = os.path.join(tmp, "run.c")
    with open(run_file, "w") as f:
        f.write(factory.get_source("c"))
    kernels = factory.get_lib()
    if target == "c":
        kernel_src = os.path.join(tmp, "kernels.c")
        with open(kernel_src, "w") as f:
            f.write(kernels.get_source("c"))
        kernel_part = [kernel_src]
    else:
        kernel_part = [kernels.object_file]
    san = _program(tmp, [run_file] + kernel_part + AOT_RUNTIME,
                   ["-O1", "-g", "-Wno-unused-function", "-Wno-unused-parameter",
                    "-Wno-unused-variable", "-Wno-unused-but-set-variable"] + SAN,
                   os.path.join(tmp, "app_asan"))
    got = _run(san, tmp, inputs, want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
