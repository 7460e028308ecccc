"""`tvm.rpc` within one process: sessions whose "remote" side is this process.

A LocalSession is an RPC session that runs every call here: files uploaded go to a folder of
its own, `load_module` loads from that folder, devices are this process's devices and functions
are its global functions. Code written for a remote board (upload, load_module, remote.cpu(0),
graph executors and arrays on the remote device) runs unchanged against it.

`Server` and `connect` are the loopback form of the same: a Server stands for a host and port
of this process (no socket is opened), and `connect` to that address gives a session as a
LocalSession. Reaching another process or machine over a network is not supported: connecting
to any other address raises RPCError.
"""
import os
import shutil
import tempfile
import threading
import weakref

from .device import device
from .module import load_module, system_lib
from .packed_func import get_global_func


class RPCError(RuntimeError):
    """An RPC session cannot be opened, or a call through it failed."""


class RPCSession:
    """What a remote session offers; this one's remote side is this process (see LocalSession)."""

    def __init__(self):
        self._folder = tempfile.mkdtemp(prefix="mr_rpc_")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._folder, True)

    # ---- files -------------------------------------------------------------------------------
    def _path(self, name):
        """The file `name` of this session's folder (a relative name stays inside it)."""
        name = os.fspath(name)
        if os.path.isabs(name):
            return name
        path = os.path.normpath(os.path.join(self._folder, name))
        if os.path.commonpath([path, self._folder]) != self._folder:
            raise RPCError(f"{name!r} names a file outside the session's folder")
        return path

    def upload(self, data, target=None):
        """Copies `data` (a file's path, or bytes) to the session's folder as `target` (default:
        the file's base name)."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            if target is None:
                raise ValueError("upload of bytes needs a target name")
            blob = bytes(data)
        else:
            with open(data, "rb") as f:
                blob = f.read()
            target = os.path.basename(os.fspath(data)) if target is None else target
        path = self._path(target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(blob)

    def download(self, path):
        """The bytes of the file `path` of the session's folder."""
        with open(self._path(path), "rb") as f:
            return bytearray(f.read())

    def remove(self, path):
        """Deletes the file or folder `path` of the session's folder."""
        path = self._path(path)
        if os.path.isdir(path):
            shutil.rmtree(path)
        else:
            os.remove(path)

    def listdir(self, path="."):
        """The names in the folder `path` of the session's folder, comma-separated (as TVM's)."""
        return ",".join(sorted(os.listdir(self._path(path))))

    # ---- modules and functions ---------------------------------------------------------------
    def load_module(self, path):
        """Loads the module file `path` of the session's folder (after `upload`)."""
        return load_module(self._path(path))

    def system_lib(self):
        """The session's system library module."""
        return system_lib()

    def get_function(self, name):
        """The global function `name` of the session's side."""
        func = get_global_func(name, allow_missing=True)
        if func is None:
            raise RPCError(f"the session has no global function {name!r}")
        return func

    # ---- devices -----------------------------------------------------------------------------
    def device(self, dev_type, dev_id=0):
        """A device of the session's side."""
        return device(dev_type, dev_id)

    def cpu(self, dev_id=0):
        return self.device("cpu", dev_id)

    def cuda(self, dev_id=0):
        return self.device("cuda", dev_id)

    gpu = cuda

    def cl(self, dev_id=0):
        return self.device("opencl", dev_id)

    def vulkan(self, dev_id=0):
        return self.device("vulkan", dev_id)

    def metal(self, dev_id=0):
        return self.device("metal", dev_id)

    def rocm(self, dev_id=0):
        return self.device("rocm", dev_id)

    def ext_dev(self, dev_id=0):
        return self.device("ext_dev", dev_id)

    def __repr__(self):
        return f"<{type(self).__name__} folder={self._folder!r}>"


class LocalSession(RPCSession):
    """An RPC session whose remote side is this process."""


# ---- loopback servers ------------------------------------------------------------------------
_SERVERS = weakref.WeakValueDictionary()  # port -> live Server of this process
_SERVERS_LOCK = threading.Lock()
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "0.0.0.0", "::1", "")


class Server:
    """A host and port of this process that `connect` opens LocalSessions to.

    The port is the first of [port, port_end) that no other Server of this process holds. No
    socket is opened, so it cannot be reached from another process. It serves until
    `terminate()` or until it is garbage.
    """

    def __init__(self, host="0.0.0.0", port=9091, port_end=9199, **options):
        unknown = set(options) - {"is_proxy", "use_popen", "silent", "tracker_addr", "key",
                                  "load_library", "custom_addr", "server_init_callback",
                                  "reuse_addr", "timeout", "no_fork"}
        if unknown:
            raise TypeError(f"Server got unexpected options {sorted(unknown)}")
        if options.get("tracker_addr") or options.get("is_proxy"):
            raise RPCError("rpc trackers and proxies are not supported: a Server serves "
                           "sessions within this process only")
        if host not in _LOOPBACK_HOSTS:
            raise RPCError(f"a Server serves this process only; host {host!r} is not a "
                           f"loopback address {_LOOPBACK_HOSTS[:3]}")
        with _SERVERS_LOCK:
            free = next((p for p in range(port, max(port_end, port + 1)) if p not in _SERVERS),
                        None)
            if free is None:
                raise RPCError(f"no free port in [{port}, {port_end})")
            _SERVERS[free] = self
        self.host, self.port, self.key = host, free, options.get("key", "")

    def terminate(self):
        """Stops serving: `connect` to this port fails from now on."""
        with _SERVERS_LOCK:
            if _SERVERS.get(self.port) is self:
                del _SERVERS[self.port]

    def __repr__(self):
        return f"<rpc.Server {self.host}:{self.port} (in this process)>"


def connect(url, port, key="", session_timeout=0, session_constructor_args=None,
            enable_logging=False):
    """A session to the Server of this process at `url`:`port`: a new LocalSession."""
    if session_constructor_args:
        raise RPCError("session_constructor_args is not supported")
    with _SERVERS_LOCK:
        server = _SERVERS.get(port)
    if url not in _LOOPBACK_HOSTS or server is None:
        raise RPCError(f"cannot connect to {url}:{port}: sessions reach only a Server of this "
                       "process (network RPC is not supported)")
    if key and server.key and not server.key.startswith(key):
        raise RPCError(f"the server at {url}:{port} does not match key {key!r}")
    return LocalSession()


__all__ = ["LocalSession", "RPCError", "RPCSession", "Server", "connect"]
