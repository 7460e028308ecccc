"""Structural equality and hashing of IR trees.

Two trees are equal when they have the same shape, node types, dtypes and constants, and their
variables correspond: a Var defined by a For, Let, LetStmt, Allocate, IterVar, function param or
buffer_map entry in one tree maps to the Var defined at the same place in the other. A free Var
(used, never defined) equals only itself, unless `map_free_vars` lets free vars correspond by
first use. Variable and buffer names never matter.

`assert_structural_equal` names the first mismatch as an `ObjectPathPair`, e.g.
`<root>.body.seq[1].value.a`, mirroring TVM's ObjectPath.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, Optional, Tuple

from . import expr as E
from . import stmt as S
from .buffer import Buffer
from .dtype import DType
from .function import IRModule, PrimFunc


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


class _Mismatch(Exception):
    def __init__(self, lp: ObjectPath, rp: ObjectPath, lhs: Any, rhs: Any, why: str):
        super().__init__(why)
        self.pair, self.lhs, self.rhs, self.why = ObjectPathPair(lp, rp), lhs, rhs, why


# Fields whose Var (or Buffer) is defined by the node holding them.
_DEFINES = {S.For: ("loop_var",), S.LetStmt: ("var",), E.Let: ("var",), S.Allocate: ("buffer",),
            E.IterVar: ("var",), E.CommReducer: ("lhs", "rhs")}
_SKIP_FIELDS = {E.Var: ("name",), E.SizeVar: ("name",), Buffer: ("name",)}


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.map_free = map_free_vars
        self.l2r: Dict[int, Any] = {}
        self.r2l: Dict[int, Any] = {}

    def fail(self, lp, rp, a, b, why):
        raise _Mismatch(lp, rp, a, b, why)

    def define(self, a, b, lp, rp) -> None:
        if isinstance(a, E.Var) and isinstance(b, E.Var):
            if a.dtype != b.dtype or type(a) is not type(b):
                self.fail(lp, rp, a, b, "variables of different dtype or kind")
            self.l2r[id(a)], self.r2l[id(b)] = b, a
        elif isinstance(a, Buffer) and isinstance(b, Buffer):
            self.define(a.data, b.data, lp.attr("data"), rp.attr("data"))
            self.buffer(a, b, lp, rp, defining=True)
        else:
            self.value(a, b, lp, rp)

    def var(self, a: E.Var, b: E.Var, lp, rp) -> None:
        mapped = self.l2r.get(id(a))
        if mapped is not None:
            if mapped is not b:
                self.fail(lp, rp, a, b, "variables bound at different places")
            return
        if id(b) in self.r2l:
            self.fail(lp, rp, a, b, "variables bound at different places")
        if a is not b and (not self.map_free or a.dtype != b.dtype or type(a) is not type(b)):
            self.fail(lp, rp, a, b, "different free variables")
        self.l2r[id(a)], self.r2l[id(b)] = b, a

    def buffer(self, a: Buffer, b: Buffer, lp, rp, defining: bool = False) -> None:
        mapped = self.l2r.get(id(a))
        if mapped is b and not defining:
            return
        if mapped is not None and mapped is not b:
            self.fail(lp, rp, a, b, "different buffers")
        self.l2r[id(a)], self.r2l[id(b)] = b, a
        for f in dataclasses.fields(a):
            if f.name == "name":
                continue
            if f.name == "data" and defining:
                continue
            va, vb = getattr(a, f.name), getattr(b, f.name)
            if f.name == "shape" and (defining or mapped is None):
                self.shape_defs(va, vb, lp.attr("shape"), rp.attr("shape"))
            self.value(va, vb, lp.attr(f.name), rp.attr(f.name))

    def shape_defs(self, sa, sb, lp, rp) -> None:
        """Symbolic shape vars of a declared buffer are defined by it (if new)."""
        for i, (x, y) in enumerate(zip(sa, sb)):
            if isinstance(x, E.Var) and isinstance(y, E.Var) and id(x) not in self.l2r \
                    and id(y) not in self.r2l and x is not y:
                self.define(x, y, lp.array_index(i), rp.array_index(i))

    def value(self, a: Any, b: Any, lp, rp) -> None:
        if a is b and not isinstance(a, (E.Var, Buffer)):
            if not isinstance(a, (E.PrimExpr, S.Stmt, tuple)):
                return
        if isinstance(a, (E.EqualOp, E.NotEqualOp)):
            a = a.asobject()
        if isinstance(b, (E.EqualOp, E.NotEqualOp)):
            b = b.asobject()
        if type(a) is not type(b):
            self.fail(lp, rp, a, b, f"{type(a).__name__} vs {type(b).__name__}")
        if isinstance(a, E.Var):
            self.var(a, b, lp, rp)
        elif isinstance(a, Buffer):
            self.buffer(a, b, lp, rp)
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
        elif isinstance(a, PrimFunc):
            self.func(a, b, lp, rp)
        elif isinstance(a, IRModule):
            self.module(a, b, lp, rp)
        elif isinstance(a, float):
            if not (a == b or (math.isnan(a) and math.isnan(b))):
                self.fail(lp, rp, a, b, f"{a} vs {b}")
        elif dataclasses.is_dataclass(a) and not isinstance(a, DType):
            self.node(a, b, lp, rp)
        elif a != b:
            self.fail(lp, rp, a, b, f"{a!r} vs {b!r}")

    def node(self, a, b, lp, rp) -> None:
        defines = _DEFINES.get(type(a), ())
        for f in dataclasses.fields(a):
            fl, fr = lp.attr(f.name), rp.attr(f.name)
            va, vb = getattr(a, f.name), getattr(b, f.name)
            if f.name in defines:
                if isinstance(va, tuple) and isinstance(vb, tuple) and len(va) == len(vb):
                    for i, (x, y) in enumerate(zip(va, vb)):
                        self.define(x, y, fl.array_index(i), fr.array_index(i))
                elif isinstance(a, E.IterVar) and id(va) in self.l2r:
                    self.value(va, vb, fl, fr)
                else:
                    self.define(va, vb, fl, fr)
            else:
                self.value(va, vb, fl, fr)

    def func(self, a: PrimFunc, b: PrimFunc, lp, rp) -> None:
        if len(a.params) != len(b.params):
            self.fail(lp.attr("params"), rp.attr("params"), a.params, b.params,
                      f"{len(a.params)} vs {len(b.params)} params")
        for i, (x, y) in enumerate(zip(a.params, b.params)):
            self.define(x, y, lp.attr("params").array_index(i), rp.attr("params").array_index(i))
        bl, br = lp.attr("buffer_map"), rp.attr("buffer_map")
        if len(a.buffer_map) != len(b.buffer_map):
            self.fail(bl, br, a.buffer_map, b.buffer_map, "buffer_map sizes differ")
        for i, ((pa, ba), (pb, bb)) in enumerate(zip(a.buffer_map, b.buffer_map)):
            self.value(pa, pb, bl.array_index(i).attr("param"), br.array_index(i).attr("param"))
            if id(ba.data) not in self.l2r:
                self.define(ba.data, bb.data, bl.array_index(i).attr("data"),
                            br.array_index(i).attr("data"))
            self.buffer(ba, bb, bl.array_index(i), br.array_index(i), defining=True)
        self.value(dict(a.attrs), dict(b.attrs), lp.attr("attrs"), rp.attr("attrs"))
        self.value(a.body, b.body, lp.attr("body"), rp.attr("body"))

    def module(self, a: IRModule, b: IRModule, lp, rp) -> None:
        if set(a.functions) != set(b.functions):
            self.fail(lp.attr("functions"), rp.attr("functions"), a, b,
                      f"functions {sorted(a.functions)} vs {sorted(b.functions)}")
        for name in sorted(a.functions):
            self.value(a[name], b[name], lp.attr("functions").map_value(name),
                       rp.attr("functions").map_value(name))
        self.value(dict(a.attrs), dict(b.attrs), lp.attr("attrs"), rp.attr("attrs"))


def _compare(a, b, map_free_vars: bool) -> Optional[_Mismatch]:
    try:
        _Equal(map_free_vars).value(a, b, ObjectPath.root(), ObjectPath.root())
    except _Mismatch as m:
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
    from .printer import to_text

    try:
        return to_text(x) if isinstance(x, (E.Node, E.PrimExpr)) else repr(x)
    except Exception:  # printing must never hide the real mismatch
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
class _Hasher:
    def __init__(self, map_free_vars: bool):
        self.map_free = map_free_vars
        self.numbers: Dict[int, int] = {}

    def number(self, v) -> int:
        n = self.numbers.get(id(v))
        if n is None:
            n = self.numbers[id(v)] = len(self.numbers)
        return n

    def key(self, a: Any) -> Any:
        if isinstance(a, (E.EqualOp, E.NotEqualOp)):
            a = a.asobject()
        if isinstance(a, E.Var):
            if id(a) in self.numbers or self.map_free:
                return ("var", str(a.dtype), self.number(a))
            return ("free", id(a))
        if isinstance(a, Buffer):
            if id(a) in self.numbers:
                return ("buffer", self.numbers[id(a)])
            self.number(a)
            self.number(a.data)
            for x in a.shape:
                if isinstance(x, E.Var):
                    self.number(x)
            return ("buffer", str(a.dtype), tuple(self.key(s) for s in a.shape),
                    tuple(self.key(s) for s in a.strides), self.key(a.elem_offset), a.scope)
        if isinstance(a, (tuple, list)):
            return tuple(self.key(x) for x in a)
        if isinstance(a, dict):
            return tuple(sorted((str(k), self.key(v)) for k, v in a.items()))
        if isinstance(a, PrimFunc):
            for p in a.params:
                self.number(p)
            return ("func", tuple(self.key(b) for _, b in a.buffer_map),
                    self.key(dict(a.attrs)), self.key(a.body))
        if isinstance(a, IRModule):
            return ("module", tuple((n, self.key(a[n])) for n in sorted(a.functions)))
        if isinstance(a, DType):
            return str(a)
        if isinstance(a, float) and math.isnan(a):
            return ("nan",)
        if dataclasses.is_dataclass(a):
            defines = _DEFINES.get(type(a), ())
            for name in defines:
                v = getattr(a, name)
                for x in (v if isinstance(v, tuple) else (v,)):
                    if isinstance(x, Buffer):
                        self.number(x.data)
                    else:
                        self.number(x)
            return (type(a).__name__,) + tuple(
                self.key(getattr(a, f.name)) for f in dataclasses.fields(a)
                if f.name not in _SKIP_FIELDS.get(type(a), ()))
        try:
            hash(a)
            return a
        except TypeError:
            return repr(a)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with `structural_equal` (equal trees hash equal)."""
    return hash(_Hasher(map_free_vars).key(node))


_ = Tuple
