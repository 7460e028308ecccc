"""LLVM's intrinsic IDs, read from the LLVM that llvmlite carries.

`lookup_id("llvm.ctpop.v8i8")` is LLVM's `Intrinsic::ID` of the intrinsic (a name with an
overload suffix gives its base intrinsic), 0 for a name LLVM does not know; `base_name(id)` is
the name without overload suffix ("llvm.ctpop") of an ID looked up in this process (None
otherwise: LLVM aborts on an ID out of its range, so unknown IDs are never passed to it),
`is_overloaded(id)` whether its name takes type suffixes. The numbers are LLVM's own, so they
change with the LLVM version, as in TVM.

llvmlite links LLVM's C API statically without exporting it: the functions are found in the
library's ELF symbol table and called at the address llvmlite's own exports give away. Where
that table is missing (a stripped build), the IDs are this process's numbering of the names
asked for, and every name starting with "llvm." is taken as known.
"""
from __future__ import annotations

import ctypes
import functools
import struct
import threading
from typing import Dict, List, Optional

from llvmlite.binding import ffi

# The C functions used, and one exported symbol to find where the library was loaded.
_WANTED = ("LLVMLookupIntrinsicID", "LLVMIntrinsicIsOverloaded")
_ANCHOR = "LLVMPY_GetProcessTriple"


def _elf_symbols(path: str, names) -> Dict[str, int]:
    """{name: st_value} of the wanted `names` in the .symtab of the ELF64 file at `path`."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    wanted = {n.encode() for n in names}
    found: Dict[str, int] = {}
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != 2 or not entsize:  # SHT_SYMTAB
            continue
        strtab_off = sections[link][4]
        for pos in range(offset, offset + size, entsize):
            st_name, = struct.unpack_from("<I", data, pos)
            st_value, = struct.unpack_from("<Q", data, pos + 8)
            end = data.index(b"\0", strtab_off + st_name)
            name = data[strtab_off + st_name:end]
            if name in wanted and st_value:
                found[name.decode()] = st_value
    return found


class _LLVMTable:
    def __init__(self, lib: ctypes.CDLL, addresses: Dict[str, int]):
        self._lookup = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t)(
            addresses["LLVMLookupIntrinsicID"])
        self._overloaded = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint)(
            addresses["LLVMIntrinsicIsOverloaded"])
        self._lib = lib  # keeps the library loaded
        self._names: Dict[int, str] = {}
        self._lock = threading.Lock()

    def _id(self, name: str) -> int:
        raw = name.encode()
        return int(self._lookup(raw, len(raw)))

    def lookup_id(self, name: str) -> int:
        ident = self._id(name)
        if ident and ident not in self._names:
            base = name  # the shortest dotted prefix naming the same intrinsic
            while base.count(".") > 1 and self._id(base.rsplit(".", 1)[0]) == ident:
                base = base.rsplit(".", 1)[0]
            with self._lock:
                self._names[ident] = base
        return ident

    def base_name(self, ident: int) -> Optional[str]:
        return self._names.get(ident)

    def is_overloaded(self, ident: int) -> bool:
        return ident in self._names and bool(self._overloaded(ident))


class _ProcessTable:
    """Numbers for names, in the order they are asked for (no LLVM table reachable)."""

    def __init__(self):
        self._names: List[str] = []
        self._lock = threading.Lock()

    def lookup_id(self, name: str) -> int:
        if not name.startswith("llvm.") or len(name) <= 5:
            return 0
        with self._lock:
            if name not in self._names:
                self._names.append(name)
            return self._names.index(name) + 1

    def base_name(self, ident: int) -> Optional[str]:
        return self._names[ident - 1] if 0 < ident <= len(self._names) else None

    def is_overloaded(self, ident: int) -> bool:
        return False  # the name is used as given


@functools.lru_cache(maxsize=1)
def _table():
    try:
        getattr(ffi.lib, _ANCHOR)  # loads the library
        lib, path = ffi.lib._lib_handle, ffi.lib._name
        symbols = _elf_symbols(path, _WANTED + (_ANCHOR,))
        if not all(n in symbols for n in _WANTED + (_ANCHOR,)):
            return _ProcessTable()
        base = ctypes.cast(getattr(lib, _ANCHOR), ctypes.c_void_p).value - symbols[_ANCHOR]
        return _LLVMTable(lib, {n: base + symbols[n] for n in _WANTED})
    except (OSError, AttributeError, ValueError, struct.error):
        return _ProcessTable()


def lookup_id(name: str) -> int:
    """LLVM's ID of the intrinsic `name` (an overloaded one may carry its type suffix), or 0."""
    if not isinstance(name, str) or not name.startswith("llvm."):
        return 0
    return _table().lookup_id(name)


def base_name(ident: int) -> Optional[str]:
    """The intrinsic's name without overload suffix, or None for an ID LLVM does not have."""
    return _table().base_name(int(ident))


def is_overloaded(ident: int) -> bool:
    """Whether the intrinsic's declarations carry type suffixes (llvm.ctpop.v8i8)."""
    return _table().is_overloaded(int(ident))
