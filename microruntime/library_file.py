"""An exported library read without loading it (no dlopen, no linking): the modules of one kind
that its library blob holds, each made by the runtime's loader of that kind from its payload.

The blob lists each module as `str kind; str payload` (u64 length, then the bytes); that entry
is all this module knows of the blob. It finds entries by their kind in the file's bytes (the
blob has no symbol table to look it up by here), and hands each payload to the C loader
(`ffi.Module.load_from_bytes.<kind>`), which validates it: nothing here decodes a payload.
"""
import re
import struct
import tarfile

from .packed_func import get_global_func


def read_library_bytes(path):
    """The bytes of a library file in which its blob can be found: the file itself (.so, .a,
    .o), or for a .tar each member, the blob array of a C source member (devc.c) decoded."""
    if not path.endswith(".tar"):
        with open(path, "rb") as f:
            return f.read()
    parts = []
    try:
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if not m.isfile():
                    continue
                data = tar.extractfile(m).read()
                if m.name.endswith(".c"):
                    array = re.search(rb"library_bin\[\d+\]\s*=\s*\{([^}]*)\}", data)
                    data = _c_array_bytes(array.group(1)) if array else b""
                parts.append(data)
    except (tarfile.TarError, EOFError) as err:
        raise ValueError(f"{path}: not a readable tar file ({err})") from None
    return b"".join(parts)


def _c_array_bytes(body):
    """The bytes of a C array initializer such as `0x4b, 0x0a, 7`."""
    items = body.replace(b",", b" ").split()
    if all(len(t) == 4 and t[:2] in (b"0x", b"0X") for t in items):
        return bytes.fromhex(b"".join(t[2:] for t in items).decode("ascii"))
    return bytes(int(t, 0) for t in items)


def _entry_marker(kind):
    kind = kind.encode("utf-8")
    return struct.pack("<Q", len(kind)) + kind


def holds_kind(data, kind):
    """Whether library bytes (`read_library_bytes`) name a module of `kind`."""
    return _entry_marker(kind) in data


def payloads(data, kind):
    """The payload of each entry of a module of `kind` in library bytes, in file order (an
    entry found by its kind may be a coincidence: its loader tells)."""
    marker = _entry_marker(kind)
    start = 0
    while (at := data.find(marker, start)) >= 0:
        start = at + 1
        pos = at + len(marker)
        if pos + 8 > len(data):
            continue
        (n,) = struct.unpack_from("<Q", data, pos)
        if n <= len(data) - pos - 8:
            yield data[pos + 8:pos + 8 + n]


def load_module_of_kind(path, kind):
    """The module of `kind` in the library at `path` (.so, .a, .o or .tar), made by the
    runtime's loader of that kind from the first entry that it accepts; no kernel is loaded.
    ValueError when the file holds none (with the loader's reason when an entry was found)."""
    load = get_global_func(f"ffi.Module.load_from_bytes.{kind}")
    error = None
    for payload in payloads(read_library_bytes(path), kind):
        try:
            return load(payload)
        except (ValueError, TypeError, RuntimeError) as err:
            error = err
    if error is not None:
        raise ValueError(f"{path}: its {kind} module does not load: {error}") from None
    raise ValueError(f"{path}: no {kind} module in this file")
