"""Field names of IR node classes, for traversals driven by the dataclass fields."""
from __future__ import annotations

import dataclasses
from typing import Dict

_FIELDS: Dict[type, tuple] = {}


def field_names(cls: type) -> tuple:
    """The dataclass field names of `cls` (() for a class that is not a dataclass), cached:
    `dataclasses.fields` is too slow to call once per node visited."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)) \
            if dataclasses.is_dataclass(cls) else ()
    return names
