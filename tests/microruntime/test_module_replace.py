"""Loading a library file again after it was replaced (a recompile, an `mv`) gives the new
library, while modules loaded from the old file keep working."""
import os
import shutil
import subprocess
import sys

import pytest

import microruntime as mr

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "microruntime", "include")
CC = os.environ.get("CC", "cc")

SOURCE = """
#include "microruntime/c_api.h"
int __tvm_ffi_version(void* self, const TVMFFIAny* args, int32_t num_args,
                      TVMFFIAny* result) {
  (void)self; (void)args; (void)num_args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = VERSION;
  return 0;
}
"""


def _library(folder, version, padding=0):
    """A library whose function `version` returns `version` (`padding` bytes of extra data
    make its size differ)."""
    src = os.path.join(folder, f"v{version}_{padding}.c")
    with open(src, "w") as f:
        f.write(SOURCE)
        if padding:
            f.write(f"const char kiln_test_padding[{padding}] = {{1}};\n")
    out = os.path.join(folder, f"v{version}_{padding}.so")
    subprocess.run([CC, "-std=c99", "-O2", "-fPIC", "-shared", "-I" + INCLUDE,
                    f"-DVERSION={version}", "-o", out, src], check=True)
    return out


def test_load_after_mv_gives_the_new_library(tmp_path):
    path = str(tmp_path / "model.so")
    shutil.copyfile(_library(str(tmp_path), 1), path)
    old = mr.load_module(path)
    assert old["version"]() == 1
    os.replace(_library(str(tmp_path), 2), path)   # a recompile written elsewhere, then mv
    new = mr.load_module(path)
    assert new["version"]() == 2
    assert old["version"]() == 1                    # the old module still runs its own code
    assert mr.load_module(path)["version"]() == 2   # and loading again reuses the new one


# Run in a process of its own: rewriting a loaded library in place changes the code under the
# loaded module (the hazard the README warns of), and even the old library's finalizer, run
# at a normal exit, would then execute the new file's bytes. The child leaves with os._exit.
REWRITE_CHILD = """
import os, sys
import microruntime as mr
path, new = sys.argv[1], sys.argv[2]
first = mr.load_module(path)["version"]()
with open(new, "rb") as src, open(path, "r+b") as dst:
    dst.write(src.read())
    dst.truncate()
second = mr.load_module(path)["version"]()
print(first, second, flush=True)
os._exit(0)
"""


def test_load_after_rewrite_in_place_gives_the_new_library(tmp_path):
    """The same inode with new contents (`cp new.so model.so`): loaded from a private copy."""
    path = str(tmp_path / "model.so")
    shutil.copyfile(_library(str(tmp_path), 1), path)
    new = _library(str(tmp_path), 3, padding=4096)
    out = subprocess.run([sys.executable, "-c", REWRITE_CHILD, path, new], check=True,
                         capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(HERE))))
    assert out.stdout.split() == ["1", "3"]


def test_unchanged_file_loads_the_same_module(tmp_path):
    path = _library(str(tmp_path), 4)
    a = mr.load_module(path)
    b = mr.load_module(path)
    assert a.same_as(b)
    assert b["version"]() == 4


def test_replaced_file_leaves_no_private_copy(tmp_path, monkeypatch):
    """The private copy a replaced library is loaded from is removed once it is loaded."""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    path = str(tmp_path / "model.so")
    shutil.copyfile(_library(str(tmp_path), 5), path)
    assert mr.load_module(path)["version"]() == 5
    os.replace(_library(str(tmp_path), 6), path)
    assert mr.load_module(path)["version"]() == 6
    assert os.listdir(private) == []


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        mr.load_module(str(tmp_path / "absent.so"))
