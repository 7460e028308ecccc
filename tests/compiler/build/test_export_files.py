"""What export_library leaves on disk: no temporary folders (also when it fails), and a library
written under a new inode, so a process that loaded the old file keeps running it."""
import os
import sys
import tempfile

import numpy as np
import pytest
from sample_kernels import vector_add

import microruntime
from compiler import TargetError, build, te
from compiler.contrib import cc


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A private system temp folder, so that what is left in it can be counted."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _scale(factor, target="llvm"):
    A = te.placeholder((8,), name="A")
    B = te.compute(A.shape, lambda i: A[i] * factor, name="B")
    return build(te.create_schedule(B.op), [A, B], target=target, name="scale")


@pytest.mark.parametrize("ext", ["so", "tar", "o"])
def test_export_leaves_no_temporary_folder(tmp_path, private_tmp, ext):
    s, args = vector_add()
    mod = build(s, args, target="llvm", name="test_add")
    before = sorted(os.listdir(private_tmp))
    out = tmp_path / f"add.{ext}"
    mod.export_library(str(out))
    assert out.is_file()
    assert sorted(os.listdir(private_tmp)) == before
    assert sorted(os.listdir(tmp_path)) == sorted(["tmp", f"add.{ext}"])


def test_static_export_of_two_modules_leaves_no_temporary_folder(tmp_path, private_tmp):
    s, args = vector_add()
    mod = build(s, args, target="c --system-lib", name="test_add")
    lib = build(s, args, target="c --system-lib-prefix=other_", name="test_add2")
    mod.import_module(lib)
    before = sorted(os.listdir(private_tmp))
    mod.export_library(str(tmp_path / "add.a"))
    assert sorted(os.listdir(private_tmp)) == before


def test_failed_export_leaves_no_temporary_folder(tmp_path, private_tmp):
    s, args = vector_add()
    mod = build(s, args, target="llvm", name="test_add")
    before = sorted(os.listdir(private_tmp))

    def failing_compile(file_name, inputs, **kwargs):
        raise RuntimeError("the linker failed")

    with pytest.raises(RuntimeError, match="the linker failed"):
        mod.export_library(str(tmp_path / "add.so"), fcompile=failing_compile)
    assert sorted(os.listdir(private_tmp)) == before
    assert sorted(os.listdir(tmp_path)) == ["tmp"]  # neither the library nor a staged file
    with pytest.raises(TargetError, match="system library"):
        mod.export_library(str(tmp_path / "add.a"))
    assert sorted(os.listdir(private_tmp)) == before
    assert sorted(os.listdir(tmp_path)) == ["tmp"]


def test_failed_build_leaves_no_temporary_folder(private_tmp, monkeypatch):
    s, args = vector_add()
    before = sorted(os.listdir(private_tmp))

    def failing_shared(*args, **kwargs):
        raise RuntimeError("the linker failed")

    monkeypatch.setattr(sys.modules["compiler.build"], "create_shared", failing_shared)
    with pytest.raises(RuntimeError, match="the linker failed"):
        build(s, args, target="llvm", name="test_add")
    assert sorted(os.listdir(private_tmp)) == before


def test_re_export_writes_a_new_file(tmp_path):
    """Re-exporting over a loaded library replaces the file (a new inode) instead of
    rewriting the loaded one; the old module keeps working and a new load sees the new one."""
    path = str(tmp_path / "scale.so")
    _scale(2.0).export_library(path)
    inode = os.stat(path).st_ino
    old = microruntime.load_module(path)
    _scale(3.0).export_library(path)
    assert os.stat(path).st_ino != inode
    a = np.arange(8, dtype="float32")
    b = microruntime.nd.empty((8,), "float32")
    old["scale"](microruntime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 2)  # the old code, unharmed
    microruntime.load_module(path)["scale"](microruntime.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 3)  # the new library
    assert sorted(os.listdir(tmp_path)) == ["scale.so"]


def test_workspace_dir_is_kept(tmp_path):
    s, args = vector_add()
    work = tmp_path / "work"
    work.mkdir()
    build(s, args, target="llvm --system-lib", name="test_add").export_library(
        str(tmp_path / "add.a"), workspace_dir=str(work))
    assert work.is_dir()


def test_cross_fcompile_result_is_the_asked_name(tmp_path):
    s, args = vector_add()
    out = str(tmp_path / "add.so")
    got = build(s, args, target="c", name="test_add").export_library(
        out, fcompile=cc.create_shared)
    assert got == out and os.path.isfile(out)
