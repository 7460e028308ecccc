"""Module: a runtime module (a loaded library, the system library, a static library, or an
imported module that a library's `__tvm_ffi__library_bin` rebuilt).

A pure runtime object: it knows no source code and no compiler. What `compiler.build` returns
wraps one of these (compiler/runtime_module.py) and adds the host code, its sources and the
export of the whole import tree into one library.
"""
import os
import re
import shutil
import tempfile

from ._loader import ffi, lib
from .abi import TypeIndex
from .base import c_str, check_call, last_error
from .device import DEVICE_TYPE_OF_NAME, Device
from .linker import export_static, link_shared
from .object import WRAPPERS, Object
from .packed_func import PackedFunc, get_global_func
from .profiling import BenchmarkResult, time_evaluator  # noqa: F401 (tvm.runtime.module names it)

# Kinds of module that hold device code (their loaders are the runtime's GPU backends).
_DEVICE_MODULE_KINDS = ("opencl", "cuda", "vulkan")


class Module(Object):
    """A runtime Module: `mod["name"](*args)` calls one of its functions."""

    # The entry function's name, as tvm_ffi.Module.entry_name in TVM 0.27: `mod["main"]`
    # resolves to the symbol `__tvm_ffi_main` (classic TVM used "__tvm_main__").
    entry_name = "main"

    def __init__(self, handle, type_key=None):
        Object.__init__(self, handle)
        self._type_key = type_key
        self._funcs = {}
        self._path = None  # the shared library file it was loaded from
        self._keep = None

    # ---- functions ---------------------------------------------------------------------
    def get_function(self, name, query_imports=False):
        """The function `name` (AttributeError when the module has none)."""
        if not isinstance(name, str):
            raise TypeError(f"function name must be a str, not {type(name).__name__}")
        if self._handle is None:
            raise AttributeError(f"Module[{self.type_key}] cannot run functions; it has no "
                                 f"function {name!r} to call")
        out = ffi.new("TVMFFIObject**")
        check_call(lib.mr_module_get_function(self._handle, c_str(name), int(query_imports), out))
        if out[0] == ffi.NULL:
            raise AttributeError(f"Module[{self.type_key}] has no function {name!r}")
        return PackedFunc(out[0])

    def __getitem__(self, name):
        func = self._funcs.get(name)
        if func is None:
            func = self._funcs[name] = self.get_function(name)
        return func

    def __call__(self, *args):
        return self.entry_func(*args)

    @property
    def entry_func(self):
        """The entry function (`__tvm_ffi_main`), i.e. get_function(entry_name)."""
        return self[self.entry_name]

    def implements_function(self, name, query_imports=False):
        """Whether the module defines function `name`."""
        if self._handle is None:
            return name in (self._keep or {}).get("func_names", ())
        status = lib.mr_module_implements(self._handle, c_str(name), int(query_imports))
        if status < 0:
            raise last_error()
        return status != 0

    # ---- attributes --------------------------------------------------------------------
    @property
    def type_key(self):
        if self._type_key is None:
            key = lib.mr_module_type_key(self._handle)
            self._type_key = ffi.string(key).decode() if key != ffi.NULL else ""
        return self._type_key

    kind = type_key

    @property
    def format(self):
        return "so" if self._path else ""

    @property
    def is_dso_exportable(self):
        """Whether export_library can put this module into a shared library's host code."""
        return self.type_key in ("llvm", "c", "static_library")

    @property
    def is_runnable(self):
        """Whether its functions can be called here (a static library is only linked)."""
        return self._handle is not None and self.type_key != "static_library"

    @property
    def is_binary_serializable(self):
        """Whether the module is saved as a payload of a library's blob (device code)."""
        return self.type_key in DEVICE_MODULE_KINDS

    def get_property_mask(self):
        """The properties as classic TVM's bit mask: 1 binary serializable, 2 runnable, 4 DSO
        exportable."""
        return property_mask(self)

    @property
    def imported_modules(self):
        if self._handle is None:
            return []
        out = []
        for i in range(lib.mr_module_num_imports(self._handle)):
            handle = lib.mr_module_import_at(self._handle, i)
            lib.mr_object_retain(handle)
            out.append(Module(handle))
        return out

    def import_module(self, module):
        """Adds `module` to this module's imports."""
        if not isinstance(module, Module) or module._handle is None:
            raise TypeError("import_module expects a runtime Module")
        check_call(lib.mr_module_import(self._handle, module._handle))

    # ---- source, save, export ----------------------------------------------------------
    def get_source(self, fmt=""):
        """The code of a device module (OpenCL C, PTX); other runtime modules have no source
        (modules the compiler builds do)."""
        if self._handle is not None and self.type_key in _DEVICE_MODULE_KINDS:
            inspect = get_global_func("ffi.ModuleInspectSource", allow_missing=True)
            if inspect is not None:
                return str(inspect(self, fmt))
        raise ValueError(f"Module[{self.type_key}] has no source in format {fmt!r}: only "
                         "modules built by the compiler and device modules carry their source")

    inspect_source = get_source

    def save(self, file_name, fmt=""):
        """Saves a loaded shared library (a copy of the file it was loaded from)."""
        fmt = fmt or os.path.splitext(file_name)[1].lstrip(".")
        if self._path is not None and fmt in ("so", "dll", "dylib"):
            shutil.copyfile(self._path, file_name)
        else:
            raise ValueError(f"Module[{self.type_key}] cannot be saved in format {fmt!r}")

    def export_library(self, file_name, fcompile=None, addons=None, workspace_dir=None,
                       **kwargs):
        """Exports a loaded shared library (a copy) or a static library (.o/.a/.tar/.so).
        Modules the compiler builds export their host code and imports themselves."""
        del fcompile, addons, workspace_dir, kwargs
        file_name = os.fspath(file_name)
        if self._keep is not None and "static_path" in self._keep:
            return export_static(self._keep["static_path"], file_name)
        if self._path is not None:
            if not file_name.endswith((".so", ".dll", ".dylib")):
                raise ValueError(f"a module loaded from {self._path!r} can only be exported "
                                 f"as a shared library (.so), not {file_name!r}")
            shutil.copyfile(self._path, file_name)
            return None
        raise RuntimeError(f"Module[{self.type_key}] cannot be exported: export_library works "
                           "for modules built by the compiler and for loaded libraries")

    # ---- timing ------------------------------------------------------------------------
    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0,
                       limit_zero_time_iterations=100, cooldown_interval_ms=0,
                       repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=""):
        """A callable that times `func_name` and returns a BenchmarkResult (TVM semantics)."""
        func = self.get_function(func_name, query_imports=True)
        preproc = None
        if f_preproc:
            try:
                preproc = self.get_function(f_preproc, query_imports=True)
            except AttributeError:
                preproc = get_global_func(f_preproc)
        return time_evaluator(func, dev, number=number, repeat=repeat,
                              min_repeat_ms=min_repeat_ms,
                              limit_zero_time_iterations=limit_zero_time_iterations,
                              cooldown_interval_ms=cooldown_interval_ms,
                              repeats_to_cooldown=repeats_to_cooldown,
                              cache_flush_bytes=cache_flush_bytes, f_preproc=preproc)

    def __repr__(self):
        return f"Module({self.type_key}, {self._handle})"


WRAPPERS[TypeIndex.MODULE] = Module


def _load_shared(path):
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_module_load(c_str(path), out))
    mod = Module(out[0])
    mod._path = path
    return mod


def _load_linked(path):
    """Links an object file or a tar of them into a shared library in a temporary folder and
    loads it. A failure names the user's file (`model.tar`, or `model.tar:lib0.o` for one of
    its members), not the temporary library."""
    try:
        tmpdir, so_path = link_shared(path)
        mod = _load_shared(so_path)
    except Exception as err:
        renamed = _naming_user_file(err, path)
        if renamed is None:
            raise
        raise renamed from None
    mod._keep = {"tmpdir": tmpdir}
    return mod


def _naming_user_file(err, path):
    """`err` with the temporary files of `_load_linked` replaced by `path` in its message (the
    same exception class), or None when it names none of them."""
    so_name = os.path.basename(path).rsplit(".", 1)[0] + ".so"
    temp = re.compile(re.escape(os.path.join(tempfile.gettempdir(), "microruntime_")) +
                      r"[^/\s'\"]*/([^\s'\":,]+)")

    def user_file(m):
        return path if m.group(1) == so_name else f"{path}:{m.group(1)}"

    message, n = temp.subn(user_file, str(err))
    if n == 0:
        return None
    try:
        return type(err)(message)
    except Exception:  # an exception class whose constructor wants other arguments
        return None


# Module kinds of device code, which travel as payloads of a library's blob.
DEVICE_MODULE_KINDS = ("cuda", "opencl", "vulkan", "metal", "rocm")
BINARY_SERIALIZABLE, RUNNABLE, DSO_EXPORTABLE = 1, 2, 4


def property_mask(module):
    """Classic TVM's property bits of a module (anything with is_binary_serializable,
    is_runnable and is_dso_exportable)."""
    return (BINARY_SERIALIZABLE * bool(module.is_binary_serializable)
            | RUNNABLE * bool(module.is_runnable)
            | DSO_EXPORTABLE * bool(module.is_dso_exportable))


def load_module(path, fmt=""):
    """Loads a module from a file: a shared library, or a `.o`/`.tar` linked into one first."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"cannot load module: no such file {path!r}")
    fmt = fmt or (path.rsplit(".", 1)[-1] if "." in os.path.basename(path) else "")
    if fmt in ("so", "dll", "dylib", "dso"):
        return _load_shared(path)
    if fmt in ("o", "obj", "tar"):
        return _load_linked(path)
    loader = get_global_func(f"ffi.Module.load_from_file.{fmt}", allow_missing=True)
    if loader is None:
        raise ValueError(f"cannot load module {path!r}: unknown format {fmt!r} "
                         "(expected .so, .o or .tar)")
    return loader(path, fmt)


def system_lib(prefix=""):
    """The process-wide system library module for `prefix` (functions linked in statically)."""
    out = ffi.new("TVMFFIObject**")
    check_call(lib.mr_module_system_lib(c_str(prefix), out))
    return Module(out[0])


def load_static_library(path, func_names):
    """A module for the object file `path` implementing `func_names`; it is not relinked or
    loaded, only exported (export_library) into another library."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"cannot load static library: no such file {path!r}")
    mod = Module(None, type_key="static_library")
    mod._keep = {"static_path": path, "func_names": tuple(func_names)}
    return mod


def enabled(target):
    """Whether the runtime can run code for `target` ("llvm", "cuda", "opencl -device=.."):
    for a GPU, whether its driver loads and has a device."""
    name = str(target).split()[0] if str(target).strip() else ""
    if name in ("cpu", "llvm", "c", "stackvm"):
        return True
    dev_type = DEVICE_TYPE_OF_NAME.get(name)
    if dev_type is None:
        return False
    return Device(dev_type).exist


def num_threads():
    """The number of threads the runtime's thread pool uses."""
    return lib.mr_num_threads()
