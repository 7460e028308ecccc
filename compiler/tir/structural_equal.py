"""The loop IR's rules for `compiler.ir.structural_equal`: which nodes define variables, Vars
compared by binding, Buffers (their data Var and symbolic shape Vars are defined with them),
PrimFuncs (params and buffer_map define), and deferred `==`/`!=` compared as their nodes."""
from __future__ import annotations

import dataclasses

from ..ir.structural_equal import Equal, Hasher, register_node, register_number_conversion
from . import block as B
from . import expr as E
from . import stmt as S
from .buffer import Buffer
from .function import PrimFunc


def _var_equal(eq: Equal, a: E.Var, b: E.Var, lp, rp, defining: bool) -> None:
    if defining:
        if a.dtype != b.dtype or type(a) is not type(b):
            eq.fail(lp, rp, a, b, "variables of different dtype or kind")
        eq.bind(a, b)
        return
    mapped = eq.l2r.get(id(a))
    if mapped is not None:
        if mapped is not b:
            eq.fail(lp, rp, a, b, "variables bound at different places")
        return
    if id(b) in eq.r2l:
        eq.fail(lp, rp, a, b, "variables bound at different places")
    if a is not b and (not eq.map_free or a.dtype != b.dtype or type(a) is not type(b)):
        eq.fail(lp, rp, a, b, "different free variables")
    eq.bind(a, b)


def _var_key(h: Hasher, a: E.Var, defining: bool):
    if defining or id(a) in h.numbers or h.map_free:
        return ("var", str(a.dtype), h.number(a))
    return ("free", id(a))


def _buffer_equal(eq: Equal, a: Buffer, b: Buffer, lp, rp, defining: bool) -> None:
    if defining:
        eq.define(a.data, b.data, lp.attr("data"), rp.attr("data"))
    _buffer_body(eq, a, b, lp, rp, defining)


def _buffer_body(eq: Equal, a: Buffer, b: Buffer, lp, rp, defining: bool) -> None:
    """A buffer compared field by field (its data Var already defined when `defining`)."""
    mapped = eq.l2r.get(id(a))
    if mapped is b and not defining:
        return
    if mapped is not None and mapped is not b:
        eq.fail(lp, rp, a, b, "different buffers")
    eq.bind(a, b)
    for f in dataclasses.fields(a):
        if f.name == "name" or (f.name == "data" and defining):
            continue
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if f.name in ("shape", "strides") and (defining or mapped is None):
            _shape_defs(eq, va, vb, lp.attr(f.name), rp.attr(f.name))
        if f.name == "elem_offset" and (defining or mapped is None):
            _shape_defs(eq, (va,), (vb,), lp.attr(f.name), rp.attr(f.name))
        eq.value(va, vb, lp.attr(f.name), rp.attr(f.name))


def _shape_defs(eq: Equal, sa, sb, lp, rp) -> None:
    """Symbolic shape vars of a declared buffer are defined by it (if new)."""
    for i, (x, y) in enumerate(zip(sa, sb)):
        if isinstance(x, E.Var) and isinstance(y, E.Var) and id(x) not in eq.l2r \
                and id(y) not in eq.r2l and x is not y:
            eq.define(x, y, lp.array_index(i), rp.array_index(i))


def _buffer_key(h: Hasher, a: Buffer, defining: bool):
    if id(a) in h.numbers:
        return ("buffer", h.numbers[id(a)])
    h.number(a)
    h.number(a.data)
    for x in (*a.shape, *a.strides, a.elem_offset):
        if isinstance(x, E.Var):
            h.number(x)
    return ("buffer", str(a.dtype), tuple(h.key(s) for s in a.shape),
            tuple(h.key(s) for s in a.strides), h.key(a.elem_offset), a.scope)


def _func_equal(eq: Equal, a: PrimFunc, b: PrimFunc, lp, rp, defining: bool) -> None:
    if len(a.params) != len(b.params):
        eq.fail(lp.attr("params"), rp.attr("params"), a.params, b.params,
                f"{len(a.params)} vs {len(b.params)} params")
    for i, (x, y) in enumerate(zip(a.params, b.params)):
        eq.define(x, y, lp.attr("params").array_index(i), rp.attr("params").array_index(i))
    bl, br = lp.attr("buffer_map"), rp.attr("buffer_map")
    if len(a.buffer_map) != len(b.buffer_map):
        eq.fail(bl, br, a.buffer_map, b.buffer_map, "buffer_map sizes differ")
    for i, ((pa, ba), (pb, bb)) in enumerate(zip(_by_param(a), _by_param(b))):
        eq.value(pa, pb, bl.array_index(i).attr("param"), br.array_index(i).attr("param"))
        if id(ba.data) not in eq.l2r:
            eq.define(ba.data, bb.data, bl.array_index(i).attr("data"),
                      br.array_index(i).attr("data"))
        _buffer_body(eq, ba, bb, bl.array_index(i), br.array_index(i), defining=True)
    eq.value(dict(a.attrs), dict(b.attrs), lp.attr("attrs"), rp.attr("attrs"))
    eq.value(a.body, b.body, lp.attr("body"), rp.attr("body"))


def _by_param(f: PrimFunc):
    """The (param, buffer) pairs of `f`'s buffer_map in the order of its params (a map, as
    TVM's: the order its entries were given in does not matter)."""
    order = {id(p): i for i, p in enumerate(f.params)}
    return sorted(f.buffer_map, key=lambda pb: order.get(id(pb[0]), len(order)))


def _func_key(h: Hasher, a: PrimFunc, defining: bool):
    for p in a.params:
        h.number(p)
    return ("func", tuple(h.key(b) for _, b in _by_param(a)), h.key(dict(a.attrs)),
            h.key(a.body))


def _block_equal(eq: Equal, a: B.Block, b: B.Block, lp, rp, defining: bool) -> None:
    """Blocks compare as TVM's: the iteration variables and allocated buffers are defined
    first (the rest uses them); the name never matters."""
    for name in ("iter_vars", "alloc_buffers"):
        va, vb = getattr(a, name), getattr(b, name)
        fl, fr = lp.attr(name), rp.attr(name)
        if len(va) != len(vb):
            eq.fail(fl, fr, va, vb, f"{len(va)} vs {len(vb)} {name}")
        for i, (x, y) in enumerate(zip(va, vb)):
            eq.define(x, y, fl.array_index(i), fr.array_index(i))
    for name in ("match_buffers", "reads", "writes", "body", "init"):
        eq.value(getattr(a, name), getattr(b, name), lp.attr(name), rp.attr(name))
    eq.value(dict(a.annotations), dict(b.annotations), lp.attr("annotations"),
             rp.attr("annotations"))


register_node(B.Block, equal=_block_equal, defines=("iter_vars", "alloc_buffers"),
              skip=("name_hint",))
register_node(B.MatchBufferRegion, defines=("buffer",))
register_node(E.Var, equal=_var_equal, key=_var_key, binds=True, skip=("name",))
register_node(Buffer, equal=_buffer_equal, key=_buffer_key, skip=("name",))
register_node(PrimFunc, equal=_func_equal, key=_func_key)
register_node(E.EqualOp, canonical=lambda x: x.asobject())
register_node(E.NotEqualOp, canonical=lambda x: x.asobject())
register_node(S.For, defines=("loop_var",))
register_node(S.LetStmt, defines=("var",))
register_node(E.Let, defines=("var",))
register_node(S.Allocate, defines=("buffer",))
register_node(E.IterVar, defines=("var",), defines_once=True)
register_node(E.CommReducer, defines=("lhs", "rhs"))

register_number_conversion(E.convert)  # structural_equal(IntImm(16), 16) holds, as in TVM
