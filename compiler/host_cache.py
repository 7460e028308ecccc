"""The build cache's side of the host passes: a CPU function made packed before (the same
lowered PrimFunc, name, target and pass context) is read back instead of passed again
(compiler/build_cache.py says where, and how entries are keyed and kept).

A function's key is the text of its structural key before the host passes with its name, the
target and the pass context (opt level, required and disabled passes, config); nothing is
cached while the pass context has instruments (they observe the passes that run). The key is
also the function's object key in the llvm codegen (attr OBJECT_KEY, with whether it is the
module's entry), which then needs no structural key of the packed function. Functions of a
GPU build are not cached (split_host_device makes device kernels of them). Entries hold the
packed function without its entry mark; `annotate_entry` marks the whole module's entry.
"""
from __future__ import annotations

import pickle
from typing import Dict, Optional

from . import build_cache
from .ir.module import IRModule
from .transform import PassContext

KIND = "packed-functions"
# attr of a packed function: the key its object is cached under (codegen/llvm/codegen.py)
OBJECT_KEY = "kiln.object_key"
ENTRY = "tir.is_entry_func"


def keys(mod: IRModule, target) -> Dict[str, str]:
    """{function name: key} of the functions of `mod` (attrs "global_symbol" and "target"
    set) whose packed form may come from the cache; {} when none may."""
    ctx = PassContext.current()
    if build_cache.cache_dir() is None or ctx.instruments or not target.kind.is_host:
        return {}
    config = repr(sorted((k, repr(v)) for k, v in ctx.config.items()))
    head = (str(target), str(ctx.opt_level), repr(sorted(ctx.required_pass)),
            repr(sorted(ctx.disabled_pass)), config, repr(sorted(mod.attrs.items())))
    out = {}
    for name, func in mod.items():
        text = build_cache.structural_text(func)
        if text is not None:
            out[name] = build_cache.key("packed function", *head, name, text)
    return out


def load(key: str):
    """The packed PrimFunc stored under `key`, or None."""
    data = build_cache.load(KIND, key)
    if data is None:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - an unreadable entry is a miss
        return None


def store(key: str, func) -> None:
    func = func.with_attr(ENTRY, False) if func.attrs.get(ENTRY) else func
    build_cache.store(KIND, key, pickle.dumps(func, protocol=pickle.HIGHEST_PROTOCOL))


def object_key(func) -> Optional[str]:
    """The key of `func`'s object when its packed form was keyed here, else None."""
    k = func.attrs.get(OBJECT_KEY)
    return None if k is None else build_cache.key("object", k, repr(bool(func.attrs.get(ENTRY))))


__all__ = ["KIND", "OBJECT_KEY", "keys", "load", "object_key", "store"]
