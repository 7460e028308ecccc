"""A model exported as one .so carries checksums that the runtime verifies at load: the
manifest's CRC-32C of the graph JSON and of the params, and a trailer over the rest of the
file (ELF headers, code, dynamic section) checked before dlopen. A flipped byte is a clear
error, never a silently different output or a crash; MR_SKIP_CHECKSUM=1 turns the checks
off. Also: a blob symbol whose size reaches past the file's loaded data is refused before
dlopen."""
import os
import re
import struct
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_model as gm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAILER = 32
MISMATCH = r"checksum mismatch in {} \(expected 0x[0-9a-f]{{8}}, got 0x[0-9a-f]{{8}}\): " \
           r"the file is corrupt"

# Loads each model in turn in one fresh process (the runtime only); one line per model.
RUNNER = r"""
import sys
import microruntime as mr
for path in sys.argv[1:]:
    try:
        mr.load_module(path)
        print("loaded")
    except Exception as err:
        print("error", type(err).__name__, str(err).replace("\n", " "))
    sys.stdout.flush()
print("done")
"""


def _load_each(paths, **env):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **env)
    out = subprocess.run([sys.executable, "-c", RUNNER] + list(paths), env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                         check=False)
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and lines[-1] == "done", out.stdout[-3000:]
    assert len(lines) == len(paths) + 1
    return lines[:-1]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    pytest.importorskip("llvmlite")
    from compiler.relay import GraphExecutorFactoryModule

    _, _, w = gm.data(7)
    path = str(tmp_path_factory.mktemp("model") / "model.so")
    factory = GraphExecutorFactoryModule(gm.graph_json(), gm.kernels("c"), {"w": w})
    factory.export_library(path)
    with open(path, "rb") as f:
        data = f.read()
    blob = factory.lib._library_parts(root=factory._serialized).library_bin
    return data, w.tobytes(), data.find(blob), len(blob)


def _write(tmp_path, name, data):
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _flip(data, at, mask=0x10):
    return data[:at] + bytes([data[at] ^ mask]) + data[at + 1:]


def test_the_exported_file_has_a_trailer_and_loads(model, tmp_path):
    data, _, blob_at, blob_size = model
    assert data[-TRAILER:-TRAILER + 8] == b"KILNCRC1"
    assert struct.unpack_from("<QQ", data, len(data) - 24) == (blob_at, blob_size)
    assert _load_each([_write(tmp_path, "model.so", data)]) == ["loaded"]


def test_flipped_weights_are_a_clear_error(model, tmp_path):
    data, weights, blob_at, _ = model
    at = data.find(weights)
    assert at > blob_at
    paths = [_write(tmp_path, f"model_w{i}.so", _flip(data, at + i * 13))
             for i in range(len(weights) // 13)]
    for path, line in zip(paths, _load_each(paths)):
        assert re.fullmatch("error RuntimeError " + re.escape(path) + ": " + MISMATCH.format(
            "params"), line), line
    # Opted out: the same file loads (its output is then silently different).
    assert _load_each(paths[:1], MR_SKIP_CHECKSUM="1") == ["loaded"]


def test_flipped_graph_json_is_a_clear_error(model, tmp_path):
    data, _, _, _ = model
    at = data.find(b'"node_row_ptr"') + 3
    path = _write(tmp_path, "model_g.so", _flip(data, at, 0x01))
    [line] = _load_each([path])
    assert re.search(re.escape(path) + ": " + MISMATCH.format("the graph JSON"), line), line


def test_bit_flips_outside_the_blob_fail_before_dlopen(model, tmp_path):
    """Flips in headers, code, relocations and the dynamic section crashed in ld.so or in the
    kernels (SIGSEGV, SIGILL) or exited with 127; the trailer's checksum finds each first."""
    data, _, blob_at, blob_size = model
    body = len(data) - TRAILER
    outside = [i for i in range(0, body, max(1, body // 150))
               if not blob_at <= i < blob_at + blob_size]
    outside += list(range(body + 8, len(data)))  # the trailer's fields (not its magic)
    paths = [_write(tmp_path, f"model_f{at}.so", _flip(data, at, 1 << (at % 8)))
             for at in outside]
    phrase = MISMATCH.format("the library's code and headers")
    for path, line in zip(paths, _load_each(paths)):
        assert re.search(re.escape(path) + ": " + phrase, line), line


def _dynsym(data, name):
    """(file offset of the st_size field, st_value) of a 64-bit ELF's .dynsym entry `name`."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 11:  # SHT_DYNSYM
            continue
        strtab = sections[link][4]
        for at in range(offset, offset + size, entsize):
            st_name, = struct.unpack_from("<I", data, at)
            end = data.index(b"\0", strtab + st_name)
            if data[strtab + st_name:end] == name:
                return at + 16, struct.unpack_from("<Q", data, at + 8)[0]
    raise AssertionError(f"no symbol {name!r}")


def test_blob_symbol_past_the_loaded_data_is_refused(model, tmp_path):
    """Coordinated length edits (the symbol's size and the blob's nbytes) made the reader run
    past the mapped file; the symbol is checked against the segments before dlopen (with the
    checksums off, so that this check is what finds it)."""
    if struct.unpack_from("<H", model[0], 0x12)[0] != 62:  # EM_X86_64: a 64-bit layout
        pytest.skip("the test edits a 64-bit little-endian ELF file")
    data, _, blob_at, blob_size = model
    size_at, _ = _dynsym(data, b"__tvm_ffi__library_bin")
    assert struct.unpack_from("<Q", data, size_at)[0] == blob_size
    edited = bytearray(data)
    struct.pack_into("<Q", edited, size_at, 1 << 30)
    struct.pack_into("<Q", edited, blob_at, (1 << 30) - 8)
    path = _write(tmp_path, "model_size.so", bytes(edited))
    [line] = _load_each([path], MR_SKIP_CHECKSUM="1")
    assert "corrupt library blob" in line and "do not lie in the file's loaded data" in line, line
    assert path in line
