"""The LLVM error-text helpers (`__kiln_check_tensor`, `__kiln_raise`, ...) are linked into
every kernel object that calls them (with the build cache on and four kernels or more, each
kernel is an object of its own); a library of many kernel objects holds one copy of each
(COMDAT groups), and the kernels still raise their messages."""
import shutil
import subprocess

import numpy as np
import pytest

import microruntime
from compiler import relay
from compiler.relax import op
from compiler.relax.testing.models import _build


def _mlp():
    def body(bb, w, x):
        h = op.nn.relu(op.nn.dense(x, w("w1", (32, 16), 0.3)))
        h = op.sigmoid(op.nn.dense(h, w("w2", (40, 32), 0.3)))
        h = op.nn.relu(op.nn.dense(h, w("w3", (48, 40), 0.3)))
        h = op.sigmoid(op.nn.dense(h, w("w4", (24, 48), 0.3)))
        return op.tanh(op.nn.dense(h, w("w5", (8, 24), 0.3)))

    return _build("mlp", {"x": (4, 16)}, body, None)


def test_one_copy_of_each_helper(tmp_path, monkeypatch):
    tool = shutil.which("readelf") or pytest.skip("readelf is not installed")
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))
    m = _mlp()
    path = str(tmp_path / "mlp.so")
    lib = relay.build(m.mod, target="llvm", params=m.params)
    lib.export_library(path)
    symbols = subprocess.run([tool, "-sW", path], capture_output=True, text=True).stdout
    funcs = {}          # address -> (size, name): the named code
    for line in symbols.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND":
            funcs[int(f[1], 16)] = (int(f[2], 0), f[7])
    names = [name for _, name in funcs.values()]
    kernels = [n for n in names if n.startswith("__tvm_ffi_fused_")]
    assert len(set(kernels)) >= 5         # made apart (PARALLEL_MIN_FUNCTIONS)
    for helper in ("__kiln_check_tensor", "__kiln_raise"):
        assert names.count(helper) == 1, helper
    # a duplicate a linker kept has no symbol of its own: the code no symbol names is the
    # start-up code and alignment, not a helper per object
    sections = subprocess.run([tool, "-SW", path], capture_output=True, text=True).stdout
    text = next(int(line.split()[5], 16) for line in sections.splitlines()
                if " .text " in line)
    assert text - sum(size for size, _ in funcs.values()) < 1024
    last = next(n for n in set(kernels) if n.endswith("_tanh"))     # (lv, p1, T_tanh)
    kernel = microruntime.load_module(path).imported_modules[0][last[len("__tvm_ffi_"):]]
    args = [np.zeros((5, 24), "float32"), np.zeros((24, 8), "float32"),
            np.zeros((4, 8), "float32")]                # 5 rows, not 4: __kiln_check_tensor
    with pytest.raises(ValueError, match="shape"):
        kernel(*(microruntime.nd.array(a) for a in args))
