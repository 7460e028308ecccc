"""The graph level's rules for `compiler.ir.structural_equal`: variables compare by where they
are bound (function parameters, bindings), and a definition also compares the variable's struct
info; symbolic dims (loop-IR Vars) are defined by the first parameter or match_cast that
mentions them; Constants compare by dtype, shape and contents; derived struct info is skipped
(it follows from the children)."""
from __future__ import annotations

import numpy as np

from ..ir.structural_equal import Equal, Hasher, register_node
from . import expr as X
from .struct_info_analysis import symbolic_vars


def _var_equal(eq: Equal, a: X.Var, b: X.Var, lp, rp, defining: bool) -> None:
    if defining:
        if type(a) is not type(b):
            eq.fail(lp, rp, a, b, f"{type(a).__name__} vs {type(b).__name__}")
        eq.bind(a, b)
        eq.value(a.struct_info, b.struct_info, lp.attr("struct_info"), rp.attr("struct_info"))
        return
    mapped = eq.l2r.get(id(a))
    if mapped is not None:
        if mapped is not b:
            eq.fail(lp, rp, a, b, "variables bound at different places")
        return
    if id(b) in eq.r2l:
        eq.fail(lp, rp, a, b, "variables bound at different places")
    if a is not b and (not eq.map_free or type(a) is not type(b)):
        eq.fail(lp, rp, a, b, "different free variables")
    eq.bind(a, b)


def _var_key(h: Hasher, a: X.Var, defining: bool):
    if defining or id(a) in h.numbers or h.map_free:
        return ("rvar", type(a).__name__, h.number(a))
    return ("free", id(a))


def _define_symbolic(eq: Equal, sa, sb, lp, rp) -> None:
    """Defines the symbolic dims `sa`/`sb` mention that are not defined yet, in order."""
    va, vb = symbolic_vars(sa), symbolic_vars(sb)
    for i, (x, y) in enumerate(zip(va, vb)):
        if id(x) not in eq.l2r and id(y) not in eq.r2l:
            eq.define(x, y, lp.attr("symbolic").array_index(i),
                      rp.attr("symbolic").array_index(i))


def _func_equal(eq: Equal, a: X.Function, b: X.Function, lp, rp, defining: bool) -> None:
    pl, pr = lp.attr("params"), rp.attr("params")
    if len(a.params) != len(b.params):
        eq.fail(pl, pr, a.params, b.params, f"{len(a.params)} vs {len(b.params)} params")
    for i, (x, y) in enumerate(zip(a.params, b.params)):
        _define_symbolic(eq, x.struct_info, y.struct_info, pl.array_index(i), pr.array_index(i))
        eq.define(x, y, pl.array_index(i), pr.array_index(i))
    eq.value(a.ret_struct_info, b.ret_struct_info, lp.attr("ret_struct_info"),
             rp.attr("ret_struct_info"))
    eq.value(a.is_pure, b.is_pure, lp.attr("is_pure"), rp.attr("is_pure"))
    eq.value(dict(a.attrs), dict(b.attrs), lp.attr("attrs"), rp.attr("attrs"))
    eq.value(a.body, b.body, lp.attr("body"), rp.attr("body"))


def _func_key(h: Hasher, a: X.Function, defining: bool):
    for p in a.params:
        for v in symbolic_vars(p.struct_info):
            h.number(v)
        h.number(p)
    return ("rfunc", tuple(h.key(p.struct_info) for p in a.params), h.key(a.ret_struct_info),
            a.is_pure, h.key(dict(a.attrs)), h.key(a.body))


def _match_cast_equal(eq: Equal, a: X.MatchCast, b: X.MatchCast, lp, rp, defining: bool):
    eq.value(a.value, b.value, lp.attr("value"), rp.attr("value"))
    _define_symbolic(eq, a.struct_info, b.struct_info, lp.attr("struct_info"),
                     rp.attr("struct_info"))
    eq.value(a.struct_info, b.struct_info, lp.attr("struct_info"), rp.attr("struct_info"))
    eq.define(a.var, b.var, lp.attr("var"), rp.attr("var"))


def _match_cast_key(h: Hasher, a: X.MatchCast, defining: bool):
    value = h.key(a.value)
    for v in symbolic_vars(a.struct_info):
        h.number(v)
    h.number(a.var)
    return ("match_cast", value, h.key(a.struct_info), h.key(a.var.struct_info))


def _const_equal(eq: Equal, a: X.Constant, b: X.Constant, lp, rp, defining: bool) -> None:
    x, y = a.data, b.data
    if x.dtype != y.dtype or x.shape != y.shape:
        eq.fail(lp, rp, a, b, f"constants {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}")
    if x.tobytes() != y.tobytes() and not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
        eq.fail(lp, rp, a, b, "constants with different values")


def _const_key(h: Hasher, a: X.Constant, defining: bool):
    return ("const", str(a.data.dtype), a.data.shape, hash(a.data.tobytes()))


register_node(X.Expr, skip=("_sinfo",))
register_node(X.Var, equal=_var_equal, key=_var_key, binds=True, skip=("name_hint",))
register_node(X.Function, equal=_func_equal, key=_func_key)
register_node(X.MatchCast, equal=_match_cast_equal, key=_match_cast_key)
register_node(X.VarBinding, defines=("var",))
register_node(X.Constant, equal=_const_equal, key=_const_key)
