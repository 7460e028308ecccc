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


# Annotations of fields that never hold IR (the dtype, names, kinds, literal values).
_SCALAR_ANNOTATIONS = frozenset({"DType", "str", "int", "float", "bool"})
_CHILD_FIELDS: Dict[type, tuple] = {}


def child_field_names(cls: type) -> tuple:
    """The field names of `cls` that may hold IR children: all of `field_names(cls)` but those
    annotated as a scalar (DType, str, int, float, bool), cached. Traversals skip the others."""
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(
            f.name for f in dataclasses.fields(cls)
            if str(f.type) not in _SCALAR_ANNOTATIONS) \
            if dataclasses.is_dataclass(cls) else ()
    return names
