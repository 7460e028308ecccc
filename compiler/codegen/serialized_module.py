"""SerializedModule: a compiled module that is not host code, known by its kind and payload bytes
(what TVM's SaveToBytes writes and the runtime's `ffi.Module.load_from_bytes.<kind>` reads): a
device module (codegen/device_module.py, codegen/spirv), a VM executable, a graph executor
factory. Exported libraries carry it in their `__tvm_ffi__library_bin` blob."""
from __future__ import annotations


class SerializedModule:
    """A module that is not host code, known by its kind and payload bytes (what TVM's
    SaveToBytes writes and `ffi.Module.load_from_bytes.<kind>` reads): a device module, say.
    Its runtime module is made by that loader when one is registered in this process."""

    is_dso_exportable = False
    is_binary_serializable = True

    def __init__(self, kind: str, payload: bytes):
        if not kind or kind == "_lib":
            raise ValueError(f"invalid module kind {kind!r}")
        self.kind = kind
        self.payload = bytes(payload)
        self._runtime = None

    type_key = property(lambda self: self.kind)

    @property
    def runtime_module(self):
        """The loaded runtime module, or None when no loader for this kind is registered."""
        if self._runtime is None:
            import microruntime

            loader = microruntime.get_global_func(f"ffi.Module.load_from_bytes.{self.kind}",
                                                  allow_missing=True)
            if loader is not None:
                self._runtime = loader(bytearray(self.payload))
        return self._runtime

    def __repr__(self):
        return f"SerializedModule({self.kind}, {len(self.payload)} bytes)"


__all__ = ["SerializedModule"]
