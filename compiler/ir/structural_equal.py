"""Structural equality and hashing of IR trees, for every IR level.

Two trees are equal when they have the same shape, node types, dtypes and constants, and their
variables correspond: a variable defined at some place in one tree (a loop variable, a let, a
function parameter, ...) maps to the variable defined at the same place in the other. A free
variable (used, never defined) equals only itself, unless `map_free_vars` lets free variables
correspond by first use. Names never matter.

The walker here knows tuples, dicts, floats, dataclass nodes and IRModule; the runtime's Array,
Map and String compare as the list, dict and str they hold, NDArrays by dtype, shape and
contents. Each IR level
registers what is special about its nodes (`register_node`): which fields define variables,
which fields to skip (names), and custom comparison/hashing for variables, buffers and
functions. `assert_structural_equal` names the first mismatch as an `ObjectPathPair`, e.g.
`<root>.body.seq[1].value.a`, mirroring TVM's ObjectPath.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from microruntime.ndarray import NDArray
from microruntime.object import String
from microruntime.object_generic import Array, Map

from .dtype import DType
from .module import IRModule
from .node import Node
from .printer import to_text


class ObjectPath:
    """A path from the root of a tree to one node: `<root>.body.seq[1].value`."""

    __slots__ = ("parent", "step")

    def __init__(self, parent: Optional["ObjectPath"] = None, step: str = "<root>"):
        self.parent, self.step = parent, step

    @staticmethod
    def root() -> "ObjectPath":
        return ObjectPath()

    def attr(self, name: str) -> "ObjectPath":
        return ObjectPath(self, "." + name)

    def array_index(self, i: int) -> "ObjectPath":
        return ObjectPath(self, f"[{i}]")

    def map_value(self, key: Any) -> "ObjectPath":
        return ObjectPath(self, f"[{key!r}]")

    def __str__(self) -> str:
        steps = []
        p: Optional[ObjectPath] = self
        while p is not None:
            steps.append(p.step)
            p = p.parent
        return "".join(reversed(steps))

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, ObjectPath) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


@dataclasses.dataclass(frozen=True)
class ObjectPathPair:
    """Where two trees first differ: the path in the left tree and the path in the right."""

    lhs_path: ObjectPath
    rhs_path: ObjectPath

    def __str__(self) -> str:
        return f"lhs: {self.lhs_path}, rhs: {self.rhs_path}"


@dataclasses.dataclass
class NodeRules:
    """What an IR level says about one node class (and its subclasses).

    `defines`: fields whose variable(s) the node defines; `skip`: fields that never matter
    (names); `canonical(node)`: the node to compare instead (e.g. a deferred `==`);
    `equal(eq, a, b, lp, rp, defining)` / `key(hasher, a)`: custom comparison and hashing
    (variables, buffers, functions); `binds`: instances are variables; `defines_once`: a
    variable this node defines may already be defined elsewhere, and is then compared as a use
    (an IterVar shared by several nodes)."""

    defines: Tuple[str, ...] = ()
    skip: Tuple[str, ...] = ()
    canonical: Optional[Callable[[Any], Any]] = None
    equal: Optional[Callable[..., None]] = None
    key: Optional[Callable[..., Any]] = None
    binds: bool = False
    defines_once: bool = False


_RULES: Dict[type, NodeRules] = {}


def register_node(cls: type, **rules) -> None:
    """Registers the structural rules of `cls` (see NodeRules)."""
    _RULES[cls] = NodeRules(**rules)


def _plain(obj: Any) -> Any:
    """A runtime Array as a list, a Map as a dict, a String as a str, an NDArray as a numpy
    array; anything else as it is."""
    if isinstance(obj, Array):
        return list(obj)
    if isinstance(obj, Map):
        return dict(obj.items())
    if isinstance(obj, String):
        return str(obj)
    if isinstance(obj, NDArray):
        return obj.numpy()
    return obj


def _rules(obj: Any) -> Optional[NodeRules]:
    for cls in type(obj).__mro__:
        r = _RULES.get(cls)
        if r is not None:
            return r
    return None


class Mismatch(Exception):
    def __init__(self, lp: ObjectPath, rp: ObjectPath, lhs: Any, rhs: Any, why: str):
        super().__init__(why)
        self.pair, self.lhs, self.rhs, self.why = ObjectPathPair(lp, rp), lhs, rhs, why


class Equal:
    """One comparison: the variable correspondence found so far, both ways."""

    def __init__(self, map_free_vars: bool):
        self.map_free = map_free_vars
        self.l2r: Dict[int, Any] = {}
        self.r2l: Dict[int, Any] = {}

    def fail(self, lp, rp, a, b, why):
        raise Mismatch(lp, rp, a, b, why)

    def bind(self, a, b) -> None:
        self.l2r[id(a)], self.r2l[id(b)] = b, a

    def define(self, a, b, lp, rp) -> None:
        """`a` and `b` are defined at corresponding places."""
        r = _rules(a)
        if r is not None and r.equal is not None and type(a) is type(b):
            r.equal(self, a, b, lp, rp, True)
        else:
            self.value(a, b, lp, rp)

    def value(self, a: Any, b: Any, lp, rp) -> None:
        a, b = _plain(a), _plain(b)
        ra = _rules(a)
        if ra is not None and ra.canonical is not None:
            a = ra.canonical(a)
            ra = _rules(a)
        rb = _rules(b)
        if rb is not None and rb.canonical is not None:
            b = rb.canonical(b)
        if a is b and not isinstance(a, (Node, tuple, list, dict)):
            return
        if type(a) is not type(b):
            self.fail(lp, rp, a, b, f"{type(a).__name__} vs {type(b).__name__}")
        if ra is not None and ra.equal is not None:
            ra.equal(self, a, b, lp, rp, False)
        elif isinstance(a, (tuple, list)):
            if len(a) != len(b):
                self.fail(lp, rp, a, b, f"lengths {len(a)} vs {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                self.value(x, y, lp.array_index(i), rp.array_index(i))
        elif isinstance(a, dict):
            if set(a) != set(b):
                self.fail(lp, rp, a, b, f"keys {sorted(a)} vs {sorted(b)}")
            for k in a:
                self.value(a[k], b[k], lp.map_value(k), rp.map_value(k))
        elif isinstance(a, IRModule):
            self.module(a, b, lp, rp)
        elif isinstance(a, float):
            if not (a == b or (math.isnan(a) and math.isnan(b))):
                self.fail(lp, rp, a, b, f"{a} vs {b}")
        elif isinstance(a, np.ndarray):
            if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
                self.fail(lp, rp, a, b, "arrays of different dtype, shape or contents")
        elif dataclasses.is_dataclass(a) and not isinstance(a, DType):
            self.node(a, b, lp, rp, ra)
        elif a != b:
            self.fail(lp, rp, a, b, f"{a!r} vs {b!r}")

    def node(self, a, b, lp, rp, rules: Optional[NodeRules]) -> None:
        defines = rules.defines if rules else ()
        skip = rules.skip if rules else ()
        for f in dataclasses.fields(a):
            if f.name in skip:
                continue
            fl, fr = lp.attr(f.name), rp.attr(f.name)
            va, vb = getattr(a, f.name), getattr(b, f.name)
            if f.name not in defines:
                self.value(va, vb, fl, fr)
            elif isinstance(va, tuple) and isinstance(vb, tuple) and len(va) == len(vb):
                for i, (x, y) in enumerate(zip(va, vb)):
                    self.define(x, y, fl.array_index(i), fr.array_index(i))
            elif rules.defines_once and id(va) in self.l2r:
                self.value(va, vb, fl, fr)
            else:
                self.define(va, vb, fl, fr)

    def module(self, a: IRModule, b: IRModule, lp, rp) -> None:
        if set(a.functions) != set(b.functions):
            self.fail(lp.attr("functions"), rp.attr("functions"), a, b,
                      f"functions {sorted(a.functions)} vs {sorted(b.functions)}")
        for name in sorted(a.functions):
            self.value(a[name], b[name], lp.attr("functions").map_value(name),
                       rp.attr("functions").map_value(name))
        self.value(dict(a.attrs), dict(b.attrs), lp.attr("attrs"), rp.attr("attrs"))


# How a Python number given as a whole side of a comparison becomes a node (as TVM converts
# both arguments of structural_equal): registered by the loop IR (a constant of it).
_NUMBER_AS_NODE: Dict[str, Callable[[Any], Any]] = {}


def register_number_conversion(convert: Callable[[Any], Any]) -> None:
    """`convert(number)`: the node a bool, int or float argument of structural_equal stands
    for."""
    _NUMBER_AS_NODE["convert"] = convert


def _as_node(x: Any) -> Any:
    convert = _NUMBER_AS_NODE.get("convert")
    if convert is not None and isinstance(x, (bool, int, float, np.number)):
        return convert(x)
    return x


def _compare(a, b, map_free_vars: bool) -> Optional[Mismatch]:
    a, b = _as_node(a), _as_node(b)
    try:
        Equal(map_free_vars).value(a, b, ObjectPath.root(), ObjectPath.root())
    except Mismatch as m:
        return m
    return None


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Whether `a` and `b` are the same tree up to the renaming of defined variables."""
    return _compare(a, b, map_free_vars) is None


def first_mismatch(a: Any, b: Any, map_free_vars: bool = False) -> Optional[ObjectPathPair]:
    """The paths of the first difference, or None when equal."""
    m = _compare(a, b, map_free_vars)
    return None if m is None else m.pair


def _text(x: Any) -> str:
    try:
        return to_text(x) if isinstance(x, Node) else repr(x)
    except Exception:  # noqa: BLE001 - printing must never hide the real mismatch
        return repr(x)


def assert_structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> None:
    """Raises ValueError naming the first mismatch (an ObjectPathPair) and both texts."""
    m = _compare(a, b, map_free_vars)
    if m is None:
        return
    raise ValueError(
        f"StructuralEqual check failed ({m.why}) at {m.pair}\n"
        f"  lhs at {m.pair.lhs_path}: {_text(m.lhs)}\n"
        f"  rhs at {m.pair.rhs_path}: {_text(m.rhs)}\n"
        f"--- lhs ---\n{_text(a)}\n--- rhs ---\n{_text(b)}")


# ---- hashing ----------------------------------------------------------------------------------
class Hasher:
    """One hash: variables are numbered in order of definition."""

    def __init__(self, map_free_vars: bool):
        self.map_free = map_free_vars
        self.numbers: Dict[int, int] = {}

    def number(self, v) -> int:
        n = self.numbers.get(id(v))
        if n is None:
            n = self.numbers[id(v)] = len(self.numbers)
        return n

    def define(self, v) -> None:
        r = _rules(v)
        if r is not None and r.key is not None and not r.binds:
            r.key(self, v, True)
        else:
            self.number(v)

    def key(self, a: Any) -> Any:
        a = _plain(a)
        r = _rules(a)
        if r is not None and r.canonical is not None:
            a = r.canonical(a)
            r = _rules(a)
        if r is not None and r.key is not None:
            return r.key(self, a, False)
        if isinstance(a, (tuple, list)):
            return tuple(self.key(x) for x in a)
        if isinstance(a, dict):
            return tuple(sorted((str(k), self.key(v)) for k, v in a.items()))
        if isinstance(a, IRModule):
            return ("module", tuple((n, self.key(a[n])) for n in sorted(a.functions)))
        if isinstance(a, DType):
            return str(a)
        if isinstance(a, float) and math.isnan(a):
            return ("nan",)
        if isinstance(a, np.ndarray):
            return ("ndarray", str(a.dtype), a.shape, a.tobytes())
        if dataclasses.is_dataclass(a):
            defines = r.defines if r else ()
            skip = r.skip if r else ()
            for name in defines:
                v = getattr(a, name)
                for x in (v if isinstance(v, tuple) else (v,)):
                    self.define(x)
            return (type(a).__name__,) + tuple(
                self.key(getattr(a, f.name)) for f in dataclasses.fields(a) if f.name not in skip)
        try:
            hash(a)
            return a
        except TypeError:
            return repr(a)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with `structural_equal` (equal trees hash equal)."""
    return hash(Hasher(map_free_vars).key(node))
