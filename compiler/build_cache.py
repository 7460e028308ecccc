"""A cache, on disk, of what building a kernel produced, so that building the same kernel again
(the same model rebuilt, or another model with layers of the same shape) skips that work.

Where: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln; KILN_CACHE_DIR=off (or
0, none, an empty string) turns the cache off. Each entry is one file under `<dir>/<kind>/`,
named by its key: a SHA-256 over the parts the caller names (everything the product depends
on) and over this build's fingerprint (the compiler's own source files, llvmlite's and LLVM's
versions, the host CPU), so that a changed compiler never reads what an older one wrote.
Entries are written whole or not at all (a temporary file renamed into place), so concurrent
builds may share one directory. A kind keeps its newest MAX_ENTRIES entries (by last use). A
cache that cannot be read or written is skipped: it never fails a build.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import tempfile
from typing import Optional, Union

from .ir.structural_equal import Hasher

CACHE_ENV = "KILN_CACHE_DIR"
OFF = ("off", "0", "none", "")
MAX_ENTRIES = 4096     # per kind; the oldest quarter goes when a kind holds more

_ROOT = pathlib.Path(__file__).resolve().parent.parent


def cache_dir() -> Optional[pathlib.Path]:
    """The cache's directory, or None when the cache is off."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return None if env.strip().lower() in OFF else pathlib.Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "kiln"


@functools.lru_cache(maxsize=1)
def fingerprint() -> bytes:
    """A digest of what every cached product depends on beyond its key's parts: the source of
    the compiler package and the code templates, the versions of llvmlite and LLVM, and the host
CPU (whose features a target without -mcpu builds for)."""
    h = hashlib.sha256()
    for folder in ("compiler", "codegen_templates"):
        for path in sorted((_ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".j2", ".h", ".c", ".ll") and path.is_file():
                h.update(str(path.relative_to(_ROOT)).encode())
                h.update(path.read_bytes())
    try:
        import llvmlite
        import llvmlite.binding as llvm
        h.update(f"llvmlite {llvmlite.__version__} llvm {llvm.llvm_version_info} host "
                 f"{llvm.get_host_cpu_name()} {llvm.get_host_cpu_features().flatten()}".encode())
    except ImportError:
        pass
    return h.digest()


def key(*parts: Union[str, bytes]) -> str:
    """The key of a product determined by `parts` (with this build's fingerprint)."""
    h = hashlib.sha256(fingerprint())
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def structural_text(node) -> Optional[str]:
    """The text of `node`'s structural key (compiler/ir/structural_equal.py: variables numbered
    in order of definition), for a cache key part; None for a tree too deep to walk (such a
    product is not cached)."""
    try:
        return repr(Hasher(True).key(node))
    except RecursionError:
        return None


def load(kind: str, k: str) -> Optional[bytes]:
    """The bytes stored under key `k` of `kind`, or None (absent, or the cache is off)."""
    root = cache_dir()
    if root is None:
        return None
    path = root / kind / k
    try:
        data = path.read_bytes()
        os.utime(path)          # last use, for pruning
        return data
    except OSError:
        return None


def store(kind: str, k: str, data: bytes) -> None:
    """Stores `data` under key `k` of `kind` (nothing when the cache is off or unwritable)."""
    root = cache_dir()
    if root is None:
        return
    folder = root / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, folder / k)
    except OSError:
        return
    _prune(folder)


def _prune(folder: pathlib.Path) -> None:
    """Drops the least recently used quarter of `folder` once it holds over MAX_ENTRIES."""
    try:
        entries = [e for e in os.scandir(folder) if not e.name.startswith(".tmp-")]
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat().st_mtime)
        for e in entries[:len(entries) - MAX_ENTRIES * 3 // 4]:
            os.unlink(e.path)
    except OSError:
        pass


__all__ = ["CACHE_ENV", "MAX_ENTRIES", "cache_dir", "fingerprint", "key", "load", "store",
           "structural_text"]
