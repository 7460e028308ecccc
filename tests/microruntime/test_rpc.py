"""microruntime.rpc: a LocalSession uploads, loads and calls a library in this process; a
Server of this process is reached by connect, any other address is refused."""
import numpy as np
import pytest

import microruntime as mr
from microruntime import rpc


def test_local_session_uploads_loads_and_runs(kernels):
    sess = rpc.LocalSession()
    sess.upload(kernels.so("add"), target="lib/add.so")
    assert sess.listdir("lib") == "add.so"
    mod = sess.load_module("lib/add.so")
    dev = sess.cpu(0)
    assert dev == mr.cpu(0)
    a = np.arange(16, dtype="float32")
    b = np.full(16, 0.5, dtype="float32")
    out = mr.nd.empty((16,), "float32", dev)
    mod["add"](mr.nd.array(a, dev), mr.nd.array(b, dev), out)
    np.testing.assert_array_equal(out.numpy(), a + b)
    sess.remove("lib/add.so")
    assert sess.listdir("lib") == ""


def test_local_session_files_and_functions():
    sess = rpc.LocalSession()
    sess.upload(b"\x00\x01blob", target="data.bin")
    assert sess.download("data.bin") == bytearray(b"\x00\x01blob")
    with pytest.raises(ValueError, match="target name"):
        sess.upload(b"x")
    with pytest.raises(rpc.RPCError, match="outside"):
        sess.upload(b"x", target="../escape.bin")
    mr.register_func("test.rpc_twice", lambda x: 2 * x, override=True)
    assert sess.get_function("test.rpc_twice")(21) == 42
    with pytest.raises(rpc.RPCError, match="no global function"):
        sess.get_function("test.rpc_missing")


def test_connect_reaches_a_server_of_this_process_only(kernels):
    server = rpc.Server("127.0.0.1", port=9300, port_end=9310)
    other = rpc.Server("127.0.0.1", port=9300, port_end=9310)
    assert server.port == 9300 and other.port == 9301
    remote = rpc.connect(server.host, server.port)
    assert isinstance(remote, rpc.LocalSession)
    remote.upload(kernels.so("add"))
    mod = remote.load_module("add.so")
    x = mr.nd.array(np.ones(4, "float32"), remote.cpu(0))
    y = mr.nd.empty((4,), "float32", remote.cpu(0))
    mod["add"](x, x, y)
    np.testing.assert_array_equal(y.numpy(), 2)
    with pytest.raises(rpc.RPCError, match="network RPC is not supported"):
        rpc.connect("10.1.2.3", server.port)
    other.terminate()
    with pytest.raises(rpc.RPCError, match="Server of this process"):
        rpc.connect("127.0.0.1", other.port)
    with pytest.raises(rpc.RPCError, match="loopback"):
        rpc.Server("192.0.2.1")
    server.terminate()
