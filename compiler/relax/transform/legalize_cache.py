"""The build cache's side of legalize: a kernel lowered before (the same primitive function,
kernel name, target and pass context) is read back instead of lowered again
(compiler/build_cache.py says where, and how entries are keyed and kept).

A primitive function's key is the text of its structural key (compiler/ir/structural_equal.py:
operators, attributes, shapes, dtypes, constants' bytes; variables numbered in order of
definition) with its parameters' names (the kernel's buffers and messages carry them). Lowering
is not cached while a tuning context occupies the seat (it records the configs it applies) or
while the pass context has instruments (they observe the passes that run); a pass context
config holding functions (tir.add_lower_pass) prints differently in every process, so it
never matches a stored key. A function too deep for the structural key's walk is not cached.
"""
from __future__ import annotations

import pickle
from typing import Optional

from ... import build_cache
from ...transform import PassContext
from ..strategy import TuningSeat

KIND = "kernels"     # the build cache's kind for lowered kernels (pickled PrimFuncs)


def lowering_key(func, name: str, target) -> Optional[str]:
    """The cache key of lowering primitive function `func` as kernel `name` for `target`, or
    None when the lowering may not come from the cache (see the module docstring)."""
    ctx = PassContext.current()
    if build_cache.cache_dir() is None or TuningSeat.current() is not None or ctx.instruments:
        return None
    text = build_cache.structural_text(func)
    if text is None:
        return None
    config = repr(sorted((k, repr(v)) for k, v in ctx.config.items()))
    return build_cache.key("kernel", name, str(target), str(ctx.opt_level),
                           repr(sorted(ctx.required_pass)), repr(sorted(ctx.disabled_pass)),
                           config, repr([p.name_hint for p in func.params]), text)


def load(key: Optional[str]):
    """The PrimFunc stored under `key`, or None."""
    data = build_cache.load(KIND, key) if key is not None else None
    if data is None:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - an unreadable entry is a miss
        return None


def store(key: Optional[str], prim) -> None:
    if key is not None:
        build_cache.store(KIND, key, pickle.dumps(prim, protocol=pickle.HIGHEST_PROTOCOL))


__all__ = ["KIND", "load", "lowering_key", "store"]
