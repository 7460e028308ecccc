"""load_module of a `.tar` (linked into a temporary shared library first): its errors name the
user's file, never the temporary library or folder."""
import tarfile
import tempfile

import pytest

import microruntime as mr

BAD_BLOB = ("const unsigned char __tvm_ffi__library_bin[16] = "
            "{0x40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};\n")


def _tar(tmp_path, name, source):
    src = tmp_path / "devc.c"
    src.write_text(source)
    path = tmp_path / name
    with tarfile.open(path, "w") as tar:
        tar.add(src, arcname="devc.c")
    return str(path)


def test_a_bad_blob_names_the_tar(tmp_path):
    path = _tar(tmp_path, "model.tar", BAD_BLOB)
    with pytest.raises((ValueError, RuntimeError)) as info:
        mr.load_module(path)
    message = str(info.value)
    assert path in message and "blob" in message, message
    assert tempfile.gettempdir() + "/microruntime_" not in message


def test_a_link_failure_names_the_member(tmp_path):
    path = _tar(tmp_path, "broken.tar", "int broken(void) { return }\n")
    with pytest.raises(RuntimeError) as info:
        mr.load_module(path)
    message = str(info.value)
    assert f"{path}:devc.c:1:" in message, message
    assert tempfile.gettempdir() + "/microruntime_" not in message
