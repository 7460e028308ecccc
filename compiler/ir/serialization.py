"""save_json / load_json: any IR value (expressions, statements, PrimFuncs, IRModules, te tensors
and operations, the runtime's Array, Map and NDArray, lists, tuples and dicts of them) as JSON
text, and back.

The text is one graph, as TVM's: `{"root": value, "nodes": [...], "b64ndarrays": [...],
"attrs": {...}}`. Every object is one entry of `nodes`, written once however often it is
referred to, so a variable used in many places (and a cycle, such as a te operation and its
output tensors) comes back as one object: the loaded value is structurally equal to the saved
one, its variables corresponding one to one. A value is written inline when it is None, a bool,
an int, a str or a finite float; as `{"dtype": "float32"}`, `{"float": "inf"}`,
`{"String": "text"}` (a runtime String, which comes back as one) or `{"ref": i}` (entry i of
`nodes`) otherwise. An entry is
`{"type_key": "module:Class", "attrs": {field: value}}` for an IR object (a class of the
`compiler` package: its dataclass fields, or its slots and attributes), and
`{"type_key": "list" | "tuple" | "Array", "data": [...]}`,
`{"type_key": "dict" | "Map", "keys": [...], "values": [...]}` or
`{"type_key": "NDArray", "ndarray": k}` (entry k of `b64ndarrays`: dtype, shape and the
little-endian bytes in base64) for the others.
"""
from __future__ import annotations

import base64
import dataclasses
import json
import math
import sys
from typing import Any, Dict, List

import numpy as np

from microruntime.ndarray import NDArray, array
from microruntime.object import String
from microruntime.object_generic import Array, Map, make_array, make_map

from .dtype import DType
from .errors import IRError

FORMAT = "kiln-ir-json"
VERSION = 1
_PACKAGE = "compiler."  # the package whose classes an entry may name


def _type_key(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _class_of(type_key: str) -> type:
    module_name, _, qualname = type_key.partition(":")
    module = sys.modules.get(module_name) if module_name.startswith(_PACKAGE) else None
    cls = module
    for part in qualname.split(".") if module is not None else ():
        cls = getattr(cls, part, None)
    if not isinstance(cls, type) or _type_key(cls) != type_key:
        raise IRError(f"load_json: unknown type {type_key!r} (IR classes of the compiler "
                      "package only; import the module defining it first)")
    return cls


def _state_names(obj: Any) -> List[str]:
    """The attributes that make up an IR object: its dataclass fields, else its slots and
    instance attributes."""
    cls = type(obj)
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    names = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__weakref__", "__dict__") and hasattr(obj, name):
                names.append(name)
    names.extend(getattr(obj, "__dict__", {}))
    return names


def _is_inline(value: Any) -> bool:
    return value is None or type(value) in (bool, int) or (
        isinstance(value, str) and not isinstance(value, (DType, String))) or (
        type(value) is float and math.isfinite(value))


class _Writer:
    def __init__(self):
        self.index: Dict[int, int] = {}
        self.entries: List[Dict[str, Any]] = []
        self.arrays: List[Dict[str, Any]] = []
        self.keep: List[Any] = []  # keeps every object written alive, so ids stay unique

    def encode(self, value: Any) -> Any:
        """`value` as a JSON value, writing the entries of everything it refers to."""
        pending: list = []
        out = self._ref(value, pending)
        while pending:  # iterative: deep trees must not exhaust the Python stack
            at, item = pending.pop()
            self.entries[at] = self._fill(item, pending)
        return out

    def _ref(self, value: Any, pending: list) -> Any:
        """The JSON value of `value`: inline, or a reference to its entry (queued if new)."""
        if isinstance(value, np.generic):
            value = value.item()
        if _is_inline(value):
            return str(value) if isinstance(value, str) else value
        if isinstance(value, DType):
            return {"dtype": str(value)}
        if isinstance(value, String):
            return {"String": str(value)}
        if isinstance(value, float):
            return {"float": repr(value)}
        found = self.index.get(id(value))
        if found is None:
            found = self.index[id(value)] = len(self.entries)
            self.entries.append({})
            self.keep.append(value)
            pending.append((found, value))
        return {"ref": found}

    def _fill(self, value: Any, pending: list) -> Dict[str, Any]:
        if isinstance(value, (list, tuple, Array)):
            kind = "Array" if isinstance(value, Array) else type(value).__name__
            if kind not in ("list", "tuple", "Array"):
                kind = "tuple" if isinstance(value, tuple) else "list"
            return {"type_key": kind, "data": [self._ref(x, pending) for x in value]}
        if isinstance(value, (dict, Map)):
            pairs = list(value.items())
            return {"type_key": "Map" if isinstance(value, Map) else "dict",
                    "keys": [self._ref(k, pending) for k, _ in pairs],
                    "values": [self._ref(v, pending) for _, v in pairs]}
        if isinstance(value, NDArray):
            data = np.ascontiguousarray(value.numpy())
            self.arrays.append({"dtype": str(value.dtype), "shape": list(data.shape),
                                "data": base64.b64encode(data.astype(
                                    data.dtype.newbyteorder("<")).tobytes()).decode("ascii")})
            return {"type_key": "NDArray", "ndarray": len(self.arrays) - 1}
        cls = type(value)
        if not cls.__module__.startswith(_PACKAGE) or _class_of_or_none(cls) is None:
            raise IRError(f"save_json cannot save a value of type {cls.__module__}."
                          f"{cls.__qualname__}: IR objects, NDArray, Array, Map, lists, tuples, "
                          "dicts, numbers and strings only")
        return {"type_key": _type_key(cls),
                "attrs": {name: self._ref(getattr(value, name), pending)
                          for name in _state_names(value)}}


def _class_of_or_none(cls: type):
    try:
        return _class_of(_type_key(cls))
    except IRError:
        return None


def save_json(node: Any) -> str:
    """`node` as JSON text (see the module doc); `load_json` gives it back."""
    writer = _Writer()
    root = writer.encode(node)
    return json.dumps({"root": root, "nodes": writer.entries, "b64ndarrays": writer.arrays,
                       "attrs": {"format": FORMAT, "version": str(VERSION)}})


class _Reader:
    def __init__(self, graph: Dict[str, Any]):
        self.entries = graph.get("nodes", [])
        self.arrays = graph.get("b64ndarrays", [])
        if not isinstance(self.entries, list) or not isinstance(self.arrays, list):
            raise IRError("load_json: 'nodes' and 'b64ndarrays' must be lists")
        self.objects: List[Any] = [_UNBUILT] * len(self.entries)

    def decode(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, dict) and len(value) == 1:
            (tag, payload), = value.items()
            if tag == "ref" and type(payload) is int and 0 <= payload < len(self.entries):
                return self.built(payload)
            if tag == "dtype" and isinstance(payload, str):
                return DType(payload)
            if tag == "String" and isinstance(payload, str):
                return String(payload)
            if tag == "float" and payload in ("inf", "-inf", "nan"):
                return float(payload)
        raise IRError(f"load_json: malformed value {value!r}")

    def built(self, i: int) -> Any:
        """Entry i as an object: shells made by `load` for objects, lists and dicts; tuples,
        Arrays, Maps and NDArrays made on first use (their items first)."""
        obj = self.objects[i]
        if obj is _BUILDING:
            raise IRError(f"load_json: entry {i} is an immutable container inside itself")
        if obj is not _UNBUILT:
            return obj
        entry = self.entries[i]
        kind = entry.get("type_key")
        self.objects[i] = _BUILDING
        if kind in ("tuple", "Array"):
            items = [self.decode(x) for x in _field(entry, "data", list)]
            obj = tuple(items) if kind == "tuple" else make_array(items)
        elif kind == "Map":
            obj = make_map(dict(self._pairs(entry)))
        elif kind == "NDArray":
            obj = self._ndarray(entry.get("ndarray"))
        else:
            raise IRError(f"load_json: entry {i} has an unknown type_key {kind!r}")
        self.objects[i] = obj
        return obj

    def _pairs(self, entry):
        keys, values = _field(entry, "keys", list), _field(entry, "values", list)
        if len(keys) != len(values):
            raise IRError("load_json: a map has as many keys as values")
        return [(self.decode(k), self.decode(v)) for k, v in zip(keys, values)]

    def _ndarray(self, k):
        if type(k) is not int or not 0 <= k < len(self.arrays):
            raise IRError(f"load_json: no b64ndarrays entry {k!r}")
        spec = self.arrays[k]
        dtype = np.dtype(str(spec["dtype"])).newbyteorder("<")
        data = np.frombuffer(base64.b64decode(spec["data"]), dtype=dtype)
        return array(data.astype(dtype.newbyteorder("=")).reshape(spec["shape"]))

    def load(self, root: Any) -> Any:
        for i, entry in enumerate(self.entries):  # shells: identity before contents (cycles)
            if not isinstance(entry, dict):
                raise IRError(f"load_json: entry {i} is not an object")
            kind = entry.get("type_key")
            if kind == "list":
                self.objects[i] = []
            elif kind == "dict":
                self.objects[i] = {}
            elif isinstance(kind, str) and ":" in kind:
                self.objects[i] = object.__new__(_class_of(kind))
        # Lists before IR objects: an Array or Map built from an IR object's field copies the
        # lists in it. IR objects before dicts: dict keys hash them.
        for i, entry in enumerate(self.entries):
            if entry["type_key"] == "list":
                self.objects[i].extend(self.decode(x) for x in _field(entry, "data", list))
        for i, entry in enumerate(self.entries):
            if isinstance(entry.get("type_key"), str) and ":" in entry["type_key"]:
                for name, value in _field(entry, "attrs", dict).items():
                    object.__setattr__(self.objects[i], name, self.decode(value))
        for i, entry in enumerate(self.entries):
            if entry["type_key"] == "dict":
                self.objects[i].update(self._pairs(entry))
        return self.decode(root)


_UNBUILT, _BUILDING = object(), object()


def _field(entry: Dict[str, Any], name: str, kind: type):
    value = entry.get(name)
    if not isinstance(value, kind):
        raise IRError(f"load_json: {entry.get('type_key')!r} entry needs {name!r} "
                      f"({kind.__name__})")
    return value


def load_json(json_str: str) -> Any:
    """The value that `save_json` wrote as `json_str`."""
    try:
        graph = json.loads(json_str)
    except (TypeError, ValueError) as exc:
        raise IRError(f"load_json: not JSON text: {exc}") from None
    if not isinstance(graph, dict) or "root" not in graph:
        raise IRError("load_json: expected an object with 'root' and 'nodes'")
    fmt = graph.get("attrs", {}).get("format") if isinstance(graph.get("attrs"), dict) else None
    if fmt != FORMAT:
        raise IRError(f"load_json: format {fmt!r} is not {FORMAT!r}")
    return _Reader(graph).load(graph["root"])
