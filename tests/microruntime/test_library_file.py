"""Reading an exported library without loading it (microruntime/library_file.py): entries of a
kind are found in the file's bytes and each payload is made into its module by the runtime's C
loader, so the manifest `read_manifest` gives is the one the C factory checked (graph, params,
checksums), and a damaged payload is refused with the loader's reason."""
import json
import struct

import graph_model as gm
import pytest

import microruntime as mr
from microruntime import graph_executor, library_file

KIND = "GraphExecutorFactory"


def _payload(with_manifest=True):
    from compiler.relay.executor_factory import make_manifest, write_payload

    _, _, w = gm.data()
    params = {"w": mr.nd.array(w)}
    manifest = make_manifest(gm.graph_json(), params) if with_manifest else None
    return write_payload(gm.graph_json(), params, "default", manifest), manifest


def _entry(kind, payload):
    kind = kind.encode()
    return struct.pack("<Q", len(kind)) + kind + struct.pack("<Q", len(payload)) + payload


def _library(tmp_path, *parts):
    path = tmp_path / "model.so"
    path.write_bytes(b"\x7fELF not really" + b"".join(parts) + b"the rest of the file")
    return str(path)


def test_manifest_comes_from_the_c_loader(tmp_path):
    payload, manifest = _payload()
    # An entry of the kind with a length past the file's end comes first: it is passed over.
    fake = struct.pack("<Q", len(KIND)) + KIND.encode() + struct.pack("<Q", 1 << 40)
    path = _library(tmp_path, fake, _entry("other.kind", b"xyz"), _entry(KIND, payload))
    got = graph_executor.read_manifest(path)
    assert got.pop("crc32c").keys() == {"graph_json", "params"}  # written by write_payload
    assert got == manifest


def test_a_damaged_payload_is_refused_with_the_loaders_reason(tmp_path):
    payload, _ = _payload()
    at = payload.index(b'"nodes"')
    damaged = payload[:at] + b"'" + payload[at + 1:]  # the graph JSON no longer matches its CRC
    with pytest.raises(ValueError, match="GraphExecutorFactory module does not load: .*checksum"):
        graph_executor.read_manifest(_library(tmp_path, _entry(KIND, damaged)))


def test_no_manifest_and_no_model(tmp_path):
    payload, _ = _payload(with_manifest=False)
    with pytest.raises(ValueError, match="the model has no manifest"):
        graph_executor.read_manifest(_library(tmp_path, _entry(KIND, payload)))
    with pytest.raises(ValueError, match="no GraphExecutorFactory module in this file"):
        graph_executor.read_manifest(_library(tmp_path, _entry("other.kind", payload)))


def test_payloads_and_holds_kind():
    data = b"..." + _entry(KIND, b"first") + _entry("x", b"") + _entry(KIND, b"second") + b".."
    assert list(library_file.payloads(data, KIND)) == [b"first", b"second"]
    assert library_file.holds_kind(data, "x") and not library_file.holds_kind(data, "y")


def test_a_factory_without_kernels_gives_only_its_manifest():
    payload, manifest = _payload()
    factory = mr.get_global_func(f"ffi.Module.load_from_bytes.{KIND}")(payload)
    got = json.loads(factory["get_manifest"]())
    assert got["inputs"] == manifest["inputs"]
    with pytest.raises(graph_executor.GraphExecutorError, match="no kernel library is imported"):
        factory["get_graph_json"]
