"""A hybrid script's Python (its AST) -> the statement of a HybridOp.

Names of the script are bound as follows:
- the function's arguments: tensors, variables, constants, or sequences of them (Arrays);
- `x = output_tensor(shape, dtype)`: an output, a placeholder tensor the statement stores to;
- `x = allocate(shape, dtype, scope)`: a scratch tensor, realized (ProducerRealize) around the
  statements of the loop (or function) that declares it;
- `x = <expression>` never stored again: a constant, substituted where it is read;
- `x = <expression>` stored again later: a variable, a one-element scratch tensor;
- `x = f(...)` with `f` another hybrid script: f's statement inlined, its outputs scratch
  tensors named `x`;
- loop targets: the loop's variable (`range`, `serial`, `parallel`, `vectorize`, `unroll`),
  a thread index (`bind(tag, extent)`: the statement runs inside a `thread_extent` attribute of
  that thread axis), or each constant in turn (`const_range`: the loop is unrolled here);
- names captured from the enclosing Python (globals, closures): numbers and tuples/lists of
  them as constants, hybrid scripts as callees.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Dict, List, Optional, Sequence

from microruntime.object_generic import Array

from ...arith import simplify
from ...ir.errors import HybridScriptError
from ...tir import expr as E
from ...tir.functor import IRMutator, post_order_visit
from ...tir.stmt import (
    AssertStmt,
    AttrStmt,
    Evaluate,
    For,
    IfThenElse,
    ProducerRealize,
    ProducerStore,
    Stmt,
    no_op,
    seq,
)
from .. import intrin
from ..hybrid_op import HybridOp
from ..operation import placeholder
from ..tensor import Tensor, TensorLoad
from .calls import CALLS, LOOP_KINDS, Allocation
from .usage import Usage, fail, variable_usage

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.BitOr: operator.or_, ast.BitAnd: operator.and_,
           ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_COMPARE = {ast.Lt: E.LT, ast.LtE: E.LE, ast.Gt: E.GT, ast.GtE: E.GE, ast.Eq: E.EQ,
            ast.NotEq: E.NE}
_PY_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
               ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _is_expr(x) -> bool:
    return isinstance(x, (E.PrimExpr, E.EqualOp, E.NotEqualOp))


def _floordiv(a, b):
    if _is_expr(a) or _is_expr(b):
        return E.binary(E.FloorDiv, a, b)
    return a // b


def _floormod(a, b):
    if _is_expr(a) or _is_expr(b):
        return E.binary(E.FloorMod, a, b)
    return a % b


_BINARY[ast.FloorDiv] = _floordiv
_BINARY[ast.Mod] = _floormod


def _is_seq(x) -> bool:
    return isinstance(x, (tuple, list, Array))


class _ReciprocalDiv(IRMutator):
    """`x / c` with c a float constant is `x * (1 / c)`, as TVM's simplifier writes it."""

    def visit_Div(self, e: E.Div):
        e = self.generic_visit(e)
        if isinstance(e, E.Div) and isinstance(e.b, E.FloatImm) and e.b.value != 0:
            return E.Mul(e.a, E.FloatImm(e.b.dtype, 1.0 / e.b.value))
        return e


def _simplify_value(value: E.PrimExpr) -> E.PrimExpr:
    return _ReciprocalDiv().visit(simplify(value))


class _Symbol:
    """A bound name: `kind` is input, output, buffer, var, const, loop, const_loop or thread."""

    __slots__ = ("kind", "value", "scope")

    def __init__(self, kind: str, value: Any, scope: str = ""):
        self.kind, self.value, self.scope = kind, value, scope


class HybridParser:
    def __init__(self, args: Sequence[Any], usage: Dict[str, Usage], closure: Dict[str, Any]):
        self.args = list(args)
        self.usage = usage
        self.closure = closure
        self.symbols: Dict[str, _Symbol] = {}
        self.binds: Dict[str, E.IterVar] = {}  # thread tag -> its axis
        self.device = 0  # depth of bind loops
        self.declared_outputs: List[Tensor] = []
        self.outputs: Optional[List[Tensor]] = None
        self.name = ""

    # ---- statements ------------------------------------------------------------------------
    def visit(self, node: ast.AST):
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise fail(node, f"{type(node).__name__} ({ast.unparse(node)!r}) is not part of the "
                             "hybrid language")
        return method(node)

    def block(self, stmts: List[ast.stmt]) -> Stmt:
        out = []
        for s in stmts:
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) \
                    and isinstance(s.value.value, str):
                continue  # a docstring
            r = self.visit(s)
            if not (isinstance(r, Stmt) and _is_no_op(r)):
                out.append(r)
        return seq(*out) if out else no_op()

    def add_symbol(self, node: ast.AST, name: str, sym: _Symbol) -> None:
        if name in self.symbols:
            raise fail(node, f"'{name}' is already defined here")
        self.symbols[name] = sym
        if sym.kind == "thread":
            iv = sym.value
            old = self.binds.get(iv.thread_tag)
            if old is None:
                self.binds[iv.thread_tag] = iv
                return
            if not E.is_const_int(simplify(old.dom.extent - iv.dom.extent), 0):
                raise fail(node, f"bind('{iv.thread_tag}', ...) is used with the extents "
                                 f"{old.dom.extent} and {iv.dom.extent}; a thread axis has one")
            sym.value = old

    def wrap_up_realize(self, scope: ast.AST, body: Stmt) -> Stmt:
        """Realizes the scratch tensors declared in `scope` around `body`."""
        for name, use in self.usage.items():
            sym = self.symbols.get(name)
            if use.scope is not scope or sym is None or sym.kind not in ("buffer", "var"):
                continue
            if sym.scope == "global":
                body = self.wrap_up_binds(body)
            t = sym.value
            bounds = tuple(E.Range(E.const(0, s.dtype), s) for s in t.shape)
            body = ProducerRealize(t, bounds, E.const(True), body, sym.scope)
            del self.symbols[name]
        return body

    def wrap_up_binds(self, body: Stmt) -> Stmt:
        for iv in self.binds.values():
            body = AttrStmt(iv, "thread_extent", iv.dom.extent, body)
        self.binds = {}
        return body

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Stmt:
        params = node.args
        if params.vararg or params.kwarg or params.kwonlyargs or params.defaults:
            raise fail(node, "a hybrid script takes plain positional arguments only")
        if len(params.args) != len(self.args):
            raise fail(node, f"{node.name} takes {len(params.args)} arguments but is called with "
                             f"{len(self.args)}")
        self.name = self.name or node.name
        for a, value in zip(params.args, self.args):
            self.add_symbol(a, a.arg, _Symbol("input", value))
        body = self.block(node.body)
        if self.outputs is None:
            raise fail(node, f"{node.name} has no return statement; return its output tensors")
        body = self.wrap_up_realize(node, body)
        return self.wrap_up_binds(body)

    def visit_Pass(self, node: ast.Pass) -> Stmt:
        return no_op()

    def visit_Expr(self, node: ast.Expr) -> Stmt:
        value = self.visit(node.value)
        if not isinstance(value, Stmt):
            raise fail(node, f"the expression statement {ast.unparse(node)!r} has no effect")
        return value

    def visit_Assign(self, node: ast.Assign) -> Stmt:
        if len(node.targets) != 1:
            raise fail(node, "chained assignment (a = b = ...) is not supported")
        target = node.targets[0]
        rhs = self.visit(node.value)
        if isinstance(rhs, HybridOp):
            return self.inline_call(node, target, rhs)
        if isinstance(target, ast.Name):
            return self.assign_name(node, target, rhs)
        if isinstance(target, ast.Subscript):
            tensor, indices = self.visit(target)
            return ProducerStore(tensor, self.value(node.value, rhs), indices)
        raise fail(node, f"cannot assign to {ast.unparse(target)!r}")

    def value(self, node: ast.AST, v) -> E.PrimExpr:
        if isinstance(v, (Tensor, Allocation)) or not (_is_expr(v) or
                                                       isinstance(v, (bool, int, float))):
            raise fail(node, f"{ast.unparse(node)!r} is not a scalar value")
        return _simplify_value(E.convert(v))

    def assign_name(self, node: ast.Assign, target: ast.Name, rhs) -> Stmt:
        name = target.id
        use = self.usage.get(name)
        sym = self.symbols.get(name)
        if sym is not None and sym.kind in ("loop", "const_loop", "thread"):
            raise fail(node, f"the loop variable '{name}' cannot be assigned")
        if sym is not None and sym.kind == "input":
            raise fail(node, f"the argument '{name}' cannot be assigned; store to its elements")
        if use is not None and use.decl is target:  # the declaration
            if isinstance(rhs, Allocation):
                t = placeholder(rhs.shape, rhs.dtype, name)
                if rhs.scope == "output":
                    self.add_symbol(node, name, _Symbol("output", t))
                    self.declared_outputs.append(t)
                else:
                    self.add_symbol(node, name, _Symbol("buffer", t, rhs.scope))
                return no_op()
            if _is_seq(rhs) and not use.stored_again:
                self.add_symbol(node, name, _Symbol("const", rhs))
                return no_op()
            value = self.value(node.value, rhs)
            if not use.stored_again and not _reads_tensor(value):
                self.add_symbol(node, name, _Symbol("const", value))
                return no_op()
            if self.device:
                raise fail(node, f"the variable '{name}' is assigned inside a bind loop; "
                                 "allocate a 'local' buffer outside the loop instead")
            t = placeholder((1,), value.dtype, name)
            self.add_symbol(node, name, _Symbol("var", t, "global"))
            return ProducerStore(t, value, (E.const(0),))
        if sym is None:
            raise fail(node, f"'{name}' is assigned outside the loop that declares it")
        if sym.kind != "var":
            raise fail(node, f"'{name}' is a {sym.kind} and cannot be assigned again; store to "
                             "its elements (name[i] = ...)")
        return ProducerStore(sym.value, self.value(node.value, rhs), (E.const(0),))

    def inline_call(self, node: ast.Assign, target: ast.AST, op: HybridOp) -> Stmt:
        names = [target] if isinstance(target, ast.Name) else \
            list(target.elts) if isinstance(target, ast.Tuple) else []
        if len(names) != op.num_outputs or not all(isinstance(n, ast.Name) for n in names):
            raise fail(node, f"the call returns {op.num_outputs} tensors; assign them to as "
                             "many names")
        for n, out in zip(names, op.outputs):
            use = self.usage.get(n.id)
            if use is None or use.decl is not n or use.stored_again:
                raise fail(node, f"'{n.id}' must be a new name, assigned only here")
            self.add_symbol(node, n.id, _Symbol("buffer", out, "global"))
        return _ReplaceTensors(dict(zip(op.output_placeholders, op.outputs))).visit(op.body)

    def visit_AugAssign(self, node: ast.AugAssign) -> Stmt:
        fn = _BINARY.get(type(node.op))
        if fn is None:
            raise fail(node, f"the operator of {ast.unparse(node)!r} is not supported")
        rhs = self.visit(node.value)
        if isinstance(node.target, ast.Name):
            sym = self.symbols.get(node.target.id)
            if sym is None or sym.kind != "var":
                raise fail(node, f"'{node.target.id}' is not a variable to update")
            tensor, indices = sym.value, (E.const(0),)
        else:
            tensor, indices = self.visit(node.target)
        value = fn(TensorLoad(tensor, indices), rhs)
        return ProducerStore(tensor, self.value(node.value, value), indices)

    def visit_For(self, node: ast.For) -> Stmt:
        if node.orelse:
            raise fail(node, "a for loop cannot have an else branch")
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and (it.func.id in LOOP_KINDS or it.func.id == "bind")):
            raise fail(node, "a loop iterates over range, serial, parallel, vectorize, unroll, "
                             f"const_range or bind, not {ast.unparse(it)!r}")
        name = node.target.id
        args = [self.visit(a) for a in it.args]
        if it.func.id == "bind":
            return self.bind_loop(node, name, args)
        if len(args) not in (1, 2) or it.keywords:
            raise fail(node, f"{it.func.id} takes one or two positional arguments (an extent, "
                             "or a start and an end)")
        low, high = (E.const(0), args[0]) if len(args) == 1 else args
        low = E.convert(low)
        ext = simplify(E.convert(high) if E.is_const_int(low, 0) else E.convert(high) - low)
        kind = LOOP_KINDS[it.func.id]
        if kind == "const":
            return self.const_loop(node, name, simplify(low), ext)
        var = E.Var(name, ext.dtype)
        self.add_symbol(node, name, _Symbol("loop", var if E.is_const_int(low, 0) else var + low))
        body = self.wrap_up_realize(node, self.block(node.body))
        del self.symbols[name]
        return For(var, E.const(0, ext.dtype), ext, kind, body)

    def const_loop(self, node: ast.For, name: str, low, ext) -> Stmt:
        if not isinstance(low, E.IntImm) or not isinstance(ext, E.IntImm):
            raise fail(node, f"const_range needs constant bounds, got start {low} and extent "
                             f"{ext}")
        bodies = []
        for i in range(low.value, low.value + ext.value):
            self.add_symbol(node, name, _Symbol("const_loop", E.const(i)))
            bodies.append(self.wrap_up_realize(node, self.block(node.body)))
            del self.symbols[name]
        return seq(*bodies) if bodies else no_op()

    def bind_loop(self, node: ast.For, name: str, args) -> Stmt:
        if len(args) != 2 or not isinstance(args[0], str):
            raise fail(node, "bind takes a thread tag (a string such as 'threadIdx.x') and an "
                             "extent")
        ext = E.convert(args[1])
        iv = E.IterVar(E.Range(E.const(0, ext.dtype), ext), E.Var(args[0], ext.dtype),
                       E.IterKind.THREAD, args[0])
        self.add_symbol(node, name, _Symbol("thread", iv))
        self.device += 1
        body = self.block(node.body)
        self.device -= 1
        body = self.wrap_up_realize(node, body)
        del self.symbols[name]
        return body

    def visit_If(self, node: ast.If) -> Stmt:
        cond = self.visit(node.test)
        cond = simplify(E.convert(cond)) if not isinstance(cond, (bool, int)) else cond
        if isinstance(cond, (bool, int, E.IntImm)):
            taken = node.body if bool(cond.value if isinstance(cond, E.IntImm) else cond) \
                else node.orelse
            return self.block(taken) if taken else no_op()
        then = self.block(node.body)
        other = self.block(node.orelse) if node.orelse else None
        return IfThenElse(cond, then, other)

    def visit_Assert(self, node: ast.Assert) -> Stmt:
        cond = E.convert(self.visit(node.test))
        msg = self.visit(node.msg) if node.msg is not None else "assertion failed"
        if not isinstance(msg, str):
            raise fail(node, "an assertion's message must be a string")
        return AssertStmt(cond, "RuntimeError", E.StringImm(msg), no_op())

    def visit_Return(self, node: ast.Return) -> Stmt:
        if any(s.kind in ("loop", "const_loop", "thread") for s in self.symbols.values()):
            raise fail(node, "return must not be inside a loop")
        value = node.value
        elts = value.elts if isinstance(value, ast.Tuple) else [value]
        if not all(isinstance(e, ast.Name) for e in elts):
            raise fail(node, "return the output tensors by name (return c, or return c, d)")
        names = [e.id for e in elts]
        if len(set(names)) != len(names):
            raise fail(node, "a tensor is returned twice")
        outs = []
        for n in names:
            sym = self.symbols.get(n)
            if sym is None or sym.kind != "output":
                raise fail(node, f"'{n}' is returned but is not an output_tensor")
            outs.append(sym.value)
        self.outputs = outs
        return no_op()

    # ---- expressions -----------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return E.const(v, "bool")
        if isinstance(v, int):
            return E.const(v)
        if isinstance(v, float):
            return E.const(v, "float32")
        if isinstance(v, str):
            return v
        raise fail(node, f"the constant {v!r} is not a number or a string")

    def visit_Name(self, node: ast.Name):
        name = node.id
        sym = self.symbols.get(name)
        if sym is not None:
            if sym.kind == "thread":
                return sym.value.var
            if sym.kind == "var":
                if isinstance(node.ctx, ast.Load):
                    return TensorLoad(sym.value, (E.const(0),))
                return sym.value, (E.const(0),)
            return sym.value
        if name in self.closure:
            return _captured(node, name, self.closure[name])
        raise fail(node, f"unknown name '{name}'")

    def visit_Attribute(self, node: ast.Attribute):
        value = self.visit(node.value)
        if not hasattr(value, node.attr):
            raise fail(node, f"{ast.unparse(node.value)!r} has no attribute '{node.attr}'")
        return getattr(value, node.attr)

    def visit_Tuple(self, node: ast.Tuple):
        return tuple(self.visit(e) for e in node.elts)

    visit_List = visit_Tuple

    def visit_Subscript(self, node: ast.Subscript):
        index = node.slice
        indices = [self.visit(e) for e in index.elts] if isinstance(index, ast.Tuple) \
            else [self.visit(index)]
        arr = self.visit(node.value)
        if isinstance(arr, Tensor):
            if len(indices) != arr.ndim:
                raise fail(node, f"tensor '{arr.name}' has {arr.ndim} dimensions but is indexed "
                                 f"with {len(indices)}")
            idx = tuple(E.convert(i) for i in indices)
            if isinstance(node.ctx, ast.Load):
                return TensorLoad(arr, idx)
            return arr, idx
        if _is_seq(arr) and isinstance(node.ctx, ast.Load):
            for i in indices:
                i = simplify(E.convert(i)) if not isinstance(i, int) else i
                if not isinstance(i, (int, E.IntImm)):
                    raise fail(node, f"{ast.unparse(node.value)!r} is a sequence, indexed by "
                                     f"constants only, not {i}")
                if not _is_seq(arr):
                    raise fail(node, f"{ast.unparse(node.value)!r} has fewer dimensions than "
                                     "indices")
                arr = arr[i if isinstance(i, int) else i.value]
            return arr
        raise fail(node, f"{ast.unparse(node.value)!r} cannot be indexed")

    def visit_BinOp(self, node: ast.BinOp):
        fn = _BINARY.get(type(node.op))
        if fn is None:
            raise fail(node, f"the operator of {ast.unparse(node)!r} is not supported")
        return fn(self.operand(node.left), self.operand(node.right))

    def operand(self, node: ast.AST):
        v = self.visit(node)
        if isinstance(v, (E.EqualOp, E.NotEqualOp)):
            return v.asobject()
        if not (_is_expr(v) or isinstance(v, (bool, int, float))):
            raise fail(node, f"{ast.unparse(node)!r} is not a scalar value")
        return v

    def visit_UnaryOp(self, node: ast.UnaryOp):
        v = self.operand(node.operand)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return not v if isinstance(v, (bool, int)) else E.logical_not(v)
        return ~v

    def visit_Compare(self, node: ast.Compare):
        values = [self.operand(node.left)] + [self.operand(c) for c in node.comparators]
        parts = []
        for op, a, b in zip(node.ops, values, values[1:]):
            if type(op) not in _COMPARE:
                raise fail(node, f"the comparison of {ast.unparse(node)!r} is not supported")
            if _is_expr(a) or _is_expr(b):
                parts.append(E.binary(_COMPARE[type(op)], a, b))
            else:
                parts.append(E.const(bool(_PY_COMPARE[type(op)](a, b))))
        return intrin.all(*parts)

    def visit_BoolOp(self, node: ast.BoolOp):
        values = [self.operand(v) for v in node.values]
        return intrin.all(*values) if isinstance(node.op, ast.And) else intrin.any(*values)

    def visit_IfExp(self, node: ast.IfExp):
        return intrin.select(self.operand(node.test), self.operand(node.body),
                             self.operand(node.orelse))

    def visit_Call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name):
            raise fail(node, f"only functions called by name are supported, not "
                             f"{ast.unparse(node.func)!r}")
        name = node.func.id
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        if name in LOOP_KINDS or name == "bind":
            raise fail(node, f"{name}(...) is a loop iterator; use it in a for statement")
        if name in CALLS:
            return CALLS[name](node, args, kwargs)
        callee = self.closure.get(name)
        script = getattr(callee, "hybrid_function", None)
        if script is None:
            raise fail(node, f"'{name}' is neither a hybrid intrinsic nor a hybrid script")
        if kwargs:
            raise fail(node, f"{name}: a hybrid script takes positional arguments only")
        outs = callee(*args)
        return outs.op if isinstance(outs, Tensor) else outs[0].op


def _is_no_op(s: Stmt) -> bool:
    return isinstance(s, Evaluate) and E.is_const_int(s.value)


def _reads_tensor(e: E.PrimExpr) -> bool:
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, TensorLoad) else None)
    return bool(found)


class _ReplaceTensors(IRMutator):
    """Stores to and loads of the tensors of `vmap` use the tensors they map to."""

    def __init__(self, vmap: Dict[Tensor, Tensor]):
        self.vmap = vmap

    def visit_ProducerStore(self, s: ProducerStore):
        s = self.generic_visit(s)
        t = self.vmap.get(s.producer)
        return s if t is None else ProducerStore(t, s.value, s.indices)

    def visit_TensorLoad(self, e: TensorLoad):
        e = self.generic_visit(e)
        t = self.vmap.get(e.tensor)
        return e if t is None else TensorLoad(t, e.indices)


def _captured(node: ast.AST, name: str, value):
    """A value the script captures from the enclosing Python, as the parser sees it."""
    if isinstance(value, bool):
        return E.const(value, "bool")
    if isinstance(value, int):
        return E.const(value)
    if isinstance(value, float):
        return E.const(value, "float32")
    if isinstance(value, (tuple, list)):
        return tuple(_captured(node, name, v) for v in value)
    if isinstance(value, (E.PrimExpr, Tensor, str)):
        return value
    raise HybridScriptError(f"hybrid script: '{name}' is captured from the enclosing Python as "
                            f"a {type(value).__name__}; only numbers and tuples or lists of "
                            f"them can be (line {getattr(node, 'lineno', '?')})")


def parse(root: ast.FunctionDef, args: Sequence[Any], closure: Dict[str, Any]) -> HybridParser:
    """The parser after reading `root` with `args`: `body`, `name`, `outputs`."""
    usage = variable_usage(root, closure)
    p = HybridParser(args, usage, closure)
    p.body = p.visit(root)
    return p
