"""export_library as .so / .tar / .o / .a, loaded in a fresh process that imports only
microruntime (never the compiler)."""
import os
import subprocess
import sys
import tarfile

import pytest
from sample_kernels import vector_add

import compiler
from compiler import TargetError
from compiler.contrib import cc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

RUNNER = """
import sys
import numpy as np
import microruntime
assert "compiler" not in sys.modules
path, how = sys.argv[1], sys.argv[2]
if how == "syslib":
    microruntime.load_module(path)  # loading runs the constructor that registers the functions
    f = microruntime.system_lib()["test_add"]
else:
    f = microruntime.load_module(path)["test_add"]
a = np.arange(16, dtype="float32")
c = microruntime.nd.array(np.zeros(16, "float32"))
f(microruntime.nd.array(a), microruntime.nd.array(a), c)
assert "compiler" not in sys.modules
np.testing.assert_array_equal(c.numpy(), 2 * a)
print("ok")
"""


def run_fresh(path, how="module"):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", RUNNER, path, how], env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert out.returncode == 0, out.stdout
    assert out.stdout.strip().endswith("ok")


def symbols(path):
    return subprocess.run(["nm", path], stdout=subprocess.PIPE, text=True, check=True).stdout


@pytest.mark.parametrize("ext", ["so", "tar", "o"])
def test_export_and_load_fresh(target, tmp_path, ext):
    m = compiler.build(*vector_add(), target=target, name="test_add")
    path = str(tmp_path / f"add.{ext}")
    m.export_library(path)
    assert os.path.isfile(path)
    if ext == "tar":
        with tarfile.open(path) as tar:
            assert [n for n in tar.getnames() if n.endswith(".o")]
    run_fresh(path)


def test_export_with_fcompile_options(tmp_path):
    m = compiler.build(*vector_add(), target="c", name="test_add")
    path = str(tmp_path / "add.so")
    m.export_library(path, fcompile=cc.create_shared, options=["-O1"])
    run_fresh(path)
    fcompile = cc.cross_compiler("cc", options=["-O2"])
    m.export_library(str(tmp_path / "cross.so"), fcompile=fcompile)
    run_fresh(str(tmp_path / "cross.so"))


def test_export_system_lib_static_archive(target, tmp_path):
    m = compiler.build(*vector_add(), target=f"{target} --system-lib", name="test_add")
    path = str(tmp_path / "add.a")
    m.export_library(path)
    syms = symbols(path)
    # weak: objects of several system-lib builds link into one library, each registering its
    # own functions; a static link still pulls the archive member in by it
    assert " W kiln_system_lib_register" in syms
    assert " T __tvm_ffi_test_add" in syms
    assert " U TVMFFIEnvModRegisterSystemLibSymbol" in syms
    m.export_library(str(tmp_path / "add_sys.so"))
    run_fresh(str(tmp_path / "add_sys.so"), how="syslib")


def test_static_archive_needs_system_lib(tmp_path):
    m = compiler.build(*vector_add(), target="c", name="test_add")
    with pytest.raises(TargetError, match="--system-lib"):
        m.export_library(str(tmp_path / "add.a"))


def test_shared_library_symbols_load_in_tvm_too(target, tmp_path):
    """What TVM 0.27's loader needs: `__tvm_ffi_<name>`, a weak `__tvm_ffi_main`, errors through
    the global TVMFFIErrorSetRaisedFromCStrParts, and no DT_NEEDED on our runtime."""
    m = compiler.build(*vector_add(), target=target, name="test_add")
    path = str(tmp_path / "add.so")
    m.export_library(path)
    syms = symbols(path)
    assert " T __tvm_ffi_test_add" in syms
    assert " W __tvm_ffi_main" in syms
    assert " U TVMFFIErrorSetRaisedFromCStrParts" in syms
    dyn = subprocess.run(["readelf", "-d", path], stdout=subprocess.PIPE, text=True).stdout
    assert "microruntime" not in dyn


def test_get_source_and_save(tmp_path):
    m = compiler.build(*vector_add(), target="c", name="test_add")
    assert "int32_t __tvm_ffi_test_add(" in m.get_source()
    m.export_library(str(tmp_path / "add.c"))
    assert (tmp_path / "add.c").read_text() == m.get_source("c")
