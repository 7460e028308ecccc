"""Reads a Python function written in TVMScript into a `tir.PrimFunc`.

The function's source (inspect.getsource) is parsed with `ast`; expressions are evaluated with
the function's globals and closure, the `T` names and the variables the body binds in scope,
so Python arithmetic on them builds loop-IR expressions. Statements map as follows:

- `for i in T.serial(n)` / `T.parallel` / `T.vectorized` / `T.unroll` / `T.thread_binding` /
  `range(a, b)`: a `For`; `for i, j in T.grid(n, m)`: nested serial loops.
- `B[i, j] = v` (and `B[i] += v`): a `BufferStore`; `A[i, j]` in an expression a `BufferLoad`.
- `x = <expression>` (or `x: T.int32 = ...`): a `LetStmt` around the rest of the scope;
  `n = T.int32()` a new variable (a symbolic shape); `x = <Python value>` binds a Python
  value at parse time.
- `A = T.Buffer(shape, dtype, data=...)`: a buffer over existing memory;
  `A = T.match_buffer(a, shape, dtype)`: the tensor argument of handle parameter `a`;
  `p = T.allocate(extents, dtype, scope)` / `A = T.decl_buffer(shape, dtype)`: an `Allocate`
  around the rest of the scope.
- `T.launch_thread(...)`, `with T.attr(...)`, `with T.let(...)`: thread loops, `AttrStmt`,
  `LetStmt`; `if` / `while` / `assert`: `IfThenElse` / `While` / `AssertStmt` (an `if` whose
  condition is a Python value keeps only the taken branch).
- `T.func_attr({...})`: the function's attributes; any other expression statement an
  `Evaluate`.
- `with T.block(name):` a `BlockRealize` of a `Block`: `v = T.axis.spatial(dom, binding)` (and
  reduce, scan, opaque) or `i, j = T.axis.remap("SR", [i0, j0])` define its iteration
  variables, `T.reads(...)` / `T.writes(...)` its regions (`A[i, 0:4]`; left out, they are
  found from the body), `T.block_attr`, `T.where`, `T.alloc_buffer` (outside any block: the
  root block's), `with T.init():` a reduction's init. A function holding blocks gets a root
  block "root" (compiler/tir/block_access.py). `T.tvm_stack_make_array` of a whole buffer is
  that Buffer (how Kiln passes a buffer to call_packed).

Anything else (nested functions, `T.match_buffer` inside a block, ...) raises `ScriptError`
naming the construct and its line.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
import textwrap
import types
from typing import Any, Dict, List, Optional

from ..arith import simplify
from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.block import Block, BlockRealize, BufferRegion
from ..tir.block_access import DETECT_ACCESS, complete
from ..tir.buffer import Buffer
from ..tir.buffer import decl_buffer as _decl_buffer
from ..tir.function import PrimFunc
from ..tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Stmt,
    While,
    no_op,
    seq,
)
from .frames import (
    AllocateDecl,
    AttrDecl,
    AxisDecl,
    BlockDecl,
    BlockPartDecl,
    BufferDecl,
    DTypeName,
    FuncAttrDecl,
    GridDecl,
    InitDecl,
    LaunchDecl,
    LetDecl,
    LoopDecl,
    ScriptError,
    StackArray,
    VarDecl,
    loop,
)

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
_RANGE = loop(ForKind.SERIAL)  # `range` in a prim_func is T.serial
_COMPARE = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def _is_ir(value) -> bool:
    return isinstance(value, (E.PrimExpr, E.IterVar))


def parse_prim_func(func) -> PrimFunc:
    """The PrimFunc that the TVMScript function `func` describes."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as err:
        raise ScriptError(f"T.prim_func: cannot read the source of {func!r}: {err}") from None
    tree = ast.parse(source)
    fdef = next((n for n in tree.body if isinstance(n, (ast.FunctionDef,))), None)
    if fdef is None:
        raise ScriptError(f"T.prim_func: {func!r} is not a function definition")
    closure = inspect.getclosurevars(func)
    env = {**vars(builtins), **func.__globals__, **closure.nonlocals}
    first_line = func.__code__.co_firstlineno
    return _Parser(env, func.__code__.co_filename, first_line - 1).function(fdef)


def parse_source(text: str, t_namespace) -> PrimFunc:
    """The PrimFunc of the first function defined in the TVMScript `text` (what
    `PrimFunc.script()` prints), its `T` being `t_namespace`."""
    tree = ast.parse(textwrap.dedent(text))
    fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fdef is None:
        raise ScriptError("from_source: the text defines no function")
    env = {**vars(builtins), "T": t_namespace}
    return _Parser(env, "<tvmscript>", 0).function(fdef)


class _Parser:
    def __init__(self, env: Dict[str, Any], filename: str, line_offset: int):
        self.env = env
        self.scopes: List[Dict[str, Any]] = [{}]
        self.filename = filename
        self.line_offset = line_offset
        self.attrs: Dict[str, Any] = {}
        self.buffer_map: Dict[E.Var, Buffer] = {}
        self.blocks: List[_BlockFrame] = []    # the blocks being read, innermost last
        self.root_allocs: List[Buffer] = []    # T.alloc_buffer outside any block
        self.loop_ranges: Dict[E.Var, E.Range] = {}
        self.buffers: Dict[E.Var, Buffer] = {}  # data var -> buffer, for T.tvm_stack_make_array

    # ---- errors and names -------------------------------------------------------------------
    def error(self, node, message: str) -> ScriptError:
        line = getattr(node, "lineno", 0) + self.line_offset
        return ScriptError(f"TVMScript, {self.filename}:{line}: {message}")

    def lookup(self, node: ast.Name):
        for scope in reversed(self.scopes):
            if node.id in scope:
                return scope[node.id]
        if node.id in self.env:
            return self.env[node.id]
        raise self.error(node, f"name {node.id!r} is not defined")

    def known(self, var: E.Var) -> bool:
        """Whether `var` is already a variable of the function being read."""
        return any(v is var for scope in self.scopes for v in scope.values()) or \
            any(p is var for p in self.buffer_map)

    def bind(self, name: str, value) -> None:
        self.scopes[-1][name] = value

    # ---- the function ----------------------------------------------------------------------
    def function(self, fdef: ast.FunctionDef) -> PrimFunc:
        params = []
        args = fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            raise self.error(fdef, "a prim_func takes positional parameters only")
        for a in args.args:
            if a.annotation is None:
                raise self.error(a, f"parameter {a.arg!r} needs an annotation "
                                    "(T.Buffer(...), T.handle, T.int32, ...)")
            ann = self.eval(a.annotation)
            if isinstance(ann, BufferDecl):
                buf = ann.build(a.arg)
                var = E.Var(a.arg, "handle")
                self.buffer_map[var] = buf
                self.buffers[buf.data] = buf
                params.append(var)
                self.bind(a.arg, buf)
            elif isinstance(ann, DTypeName):
                var = E.Var(a.arg, ann.dtype)
                params.append(var)
                self.bind(a.arg, var)
            else:
                raise self.error(a, f"parameter {a.arg!r}: unsupported annotation {ann!r}")
        body = self.block(_without_docstring(fdef.body))
        attrs = dict(self.attrs)
        attrs.setdefault("global_symbol", fdef.name)
        func = PrimFunc(tuple(params), body, tuple(self.buffer_map.items()), attrs)
        try:
            return complete(func, self.root_allocs)
        except IRError as err:
            raise self.error(fdef, str(err)) from None

    # ---- statements ------------------------------------------------------------------------
    def block(self, stmts: List[ast.stmt]) -> Stmt:
        """The statement of a list of Python statements, in a scope of its own."""
        self.scopes.append({})
        try:
            return self._stmts(stmts, 0)
        finally:
            self.scopes.pop()

    def _stmts(self, stmts: List[ast.stmt], i: int) -> Stmt:
        out: List[Stmt] = []
        while i < len(stmts):
            node = stmts[i]
            wrap = self.stmt(node, out)
            i += 1
            if wrap is not None:  # the statement scopes the rest of the list
                out.append(wrap(self._stmts(stmts, i)))
                break
        return seq(*out) if out else no_op()

    def stmt(self, node: ast.stmt, out: List[Stmt]):
        """Appends the statement of `node` to `out`, or returns a function wrapping the rest of
        the scope (a let, an allocation, a thread launch)."""
        method = getattr(self, f"stmt_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"unsupported statement {type(node).__name__}")
        return method(node, out)

    def stmt_Pass(self, node, out):
        return None

    def stmt_Expr(self, node, out):
        value = self.eval(node.value)
        if isinstance(value, FuncAttrDecl):
            self.attrs.update(value.attrs)
        elif isinstance(value, BlockPartDecl):
            self.current_block(node, f"T.{value.part}").set(self, node, value)
        elif isinstance(value, Stmt):
            out.append(value)
        elif _is_ir(value):
            out.append(Evaluate(E.convert(value)))
        elif isinstance(value, (LaunchDecl, AttrDecl)):
            return self._scoped(node, value, None)
        elif value is not None and not isinstance(value, str):
            raise self.error(node, f"an expression statement must be an IR expression or "
                                   f"call, got {value!r}")
        return None

    def stmt_Assign(self, node, out):
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment is not supported")
        return self._assign(node, node.targets[0], node.value, None, out)

    def stmt_AnnAssign(self, node, out):
        if node.value is None:
            raise self.error(node, "a declaration without a value is not supported")
        return self._assign(node, node.target, node.value, self.eval(node.annotation), out)

    def stmt_AugAssign(self, node, out):
        if not isinstance(node.target, ast.Subscript):
            raise self.error(node, "augmented assignment needs a buffer element as target")
        buf, indices = self.element(node.target)
        value = _BINARY[type(node.op)](BufferLoad(buf, indices), self.eval(node.value))
        out.append(self.store(node, buf, indices, value))
        return None

    def _assign(self, node, target, value_node, annotation, out):
        if isinstance(target, ast.Subscript):
            buf, indices = self.element(target)
            out.append(self.store(node, buf, indices, self.eval(value_node)))
            return None
        value = self.eval(value_node)
        if isinstance(target, ast.Tuple):
            if _is_ir(value) or not isinstance(value, (tuple, list)) or \
                    len(value) != len(target.elts):
                raise self.error(node, "a tuple target needs a Python tuple of that length")
            for t, v in zip(target.elts, value):
                if not isinstance(t, ast.Name):
                    raise self.error(node, "unsupported assignment target")
                self.bind(t.id, self.axis(node, t.id, v) if isinstance(v, AxisDecl) else v)
            return None
        if not isinstance(target, ast.Name):
            raise self.error(node, f"unsupported assignment target {type(target).__name__}")
        name = target.id
        if isinstance(value, AxisDecl):
            self.bind(name, self.axis(node, name, value))
            return None
        if isinstance(value, (list, tuple)) and len(value) == 1 and \
                isinstance(value[0], AxisDecl):  # `v = T.axis.remap("S", [i])`
            self.bind(name, self.axis(node, name, value[0]))
            return None
        if isinstance(value, BufferDecl) and value.block_alloc:
            buf = value.build(name)
            self.bind(name, buf)
            self.buffers[buf.data] = buf
            (self.blocks[-1].alloc_buffers if self.blocks else self.root_allocs).append(buf)
            return None
        if isinstance(value, VarDecl):
            self.bind(name, value.build(name))
            return None
        if isinstance(value, BufferDecl):
            buf = value.build(name)
            self.bind(name, buf)
            self.buffers[buf.data] = buf
            if value.match is not None:
                self.buffer_map[value.match] = buf
                return None
            if value.allocates:
                return lambda body: Allocate(buf, body)
            return None
        if isinstance(value, AllocateDecl):
            buf = _decl_buffer(value.extents, value.dtype, name, scope=value.scope)
            self.bind(name, buf.data)
            return lambda body: Allocate(buf, body, E.convert(value.condition)
                                         if value.condition is not None else None)
        if isinstance(value, LaunchDecl):
            return self._scoped(node, value, name)
        if isinstance(value, E.Var) and annotation is None and not self.known(value):
            self.bind(name, value)  # a new variable made by a call (te.var): named, not let
            return None
        if _is_ir(value) or isinstance(annotation, DTypeName):
            value = E.convert(value)
            if isinstance(annotation, DTypeName) and value.dtype != annotation.dtype:
                value = E.cast(annotation.dtype, value)
            var = E.Var(name, value.dtype)
            self.bind(name, var)
            return lambda body: LetStmt(var, value, body)
        self.bind(name, value)  # a Python value, used at parse time
        return None

    def element(self, node: ast.Subscript):
        buf = self.eval(node.value)
        if not isinstance(buf, Buffer):
            raise self.error(node, f"only buffer elements can be stored to, not {buf!r}")
        index = self.eval(node.slice)
        indices = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, slice) for i in indices):
            raise self.error(node, f"slices of buffer '{buf.name}' are not supported")
        return buf, tuple(E.convert(i) for i in indices)

    def store(self, node, buf: Buffer, indices, value) -> BufferStore:
        if len(indices) != buf.ndim:
            raise self.error(node, f"buffer '{buf.name}' has {buf.ndim} dimensions, indexed "
                                   f"with {len(indices)}")
        if not _is_ir(value):
            value = E.make_const(buf.dtype, value)
        return BufferStore(buf, E.convert(value), indices)

    def stmt_For(self, node, out):
        if node.orelse:
            raise self.error(node, "for ... else is not supported")
        it = self.eval(node.iter)
        names = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if not all(isinstance(n, ast.Name) for n in names):
            raise self.error(node, "loop targets must be names")
        if isinstance(it, GridDecl):
            loops = [LoopDecl(ForKind.SERIAL, E.make_const(e.dtype, 0), e) for e in it.extents]
        elif isinstance(it, LoopDecl):
            loops = [it]
        else:
            raise self.error(node, f"unsupported loop iterator {it!r}; use range, T.serial, "
                                   "T.parallel, T.vectorized, T.unroll, T.thread_binding or "
                                   "T.grid")
        if len(loops) != len(names):
            raise self.error(node, f"{len(names)} loop variables for {len(loops)} loops")
        self.scopes.append({})
        try:
            loop_vars = []
            for name, loop in zip(names, loops):
                var = E.Var(name.id, loop.extent.dtype)
                loop_vars.append(var)
                self.bind(name.id, var)
                self.loop_ranges[var] = E.Range(loop.min, loop.extent)
            body = self._stmts(node.body, 0)
        finally:
            self.scopes.pop()
        for var, loop in reversed(list(zip(loop_vars, loops))):
            iv = None
            if loop.kind == ForKind.THREAD_BINDING:
                iv = E.IterVar(E.Range(loop.min, loop.extent), var, E.IterKind.THREAD,
                               loop.thread)
            body = For(var, loop.min, loop.extent, loop.kind, body, thread_binding=iv,
                       annotations=tuple(loop.annotations.items()))
        out.append(body)
        return None

    def stmt_While(self, node, out):
        if node.orelse:
            raise self.error(node, "while ... else is not supported")
        out.append(While(E.convert(self.eval(node.test)), self.block(node.body)))
        return None

    def stmt_If(self, node, out):
        cond = self.eval(node.test)
        if not _is_ir(cond):  # decided while parsing
            out.append(self.block(node.body if cond else node.orelse))
            return None
        else_case = self.block(node.orelse) if node.orelse else None
        out.append(IfThenElse(E.convert(cond), self.block(node.body), else_case))
        return None

    def stmt_Assert(self, node, out):
        cond = E.convert(self.eval(node.test))
        message = self.eval(node.msg) if node.msg is not None else "assertion failed"
        message = message.value if isinstance(message, E.StringImm) else message
        return lambda body: AssertStmt(cond, "RuntimeError", (str(message),), body)

    def stmt_With(self, node, out):
        if len(node.items) != 1:
            raise self.error(node, "one context manager per `with`")
        item = node.items[0]
        value = self.eval(item.context_expr)
        name = None
        if item.optional_vars is not None:
            if not isinstance(item.optional_vars, ast.Name):
                raise self.error(node, "`with ... as` needs a name")
            name = item.optional_vars.id
        if isinstance(value, BlockDecl):
            out.append(self.block_stmt(node, value))
            return None
        if isinstance(value, InitDecl):
            frame = self.current_block(node, "T.init")
            if frame.init is not None:
                raise self.error(node, "a block has one T.init()")
            frame.init = self.block(node.body)
            return None
        self.scopes.append({})
        try:
            wrap = self._scoped(node, value, name)
            body = self._stmts(node.body, 0)
        finally:
            self.scopes.pop()
        out.append(wrap(body))
        return None

    # ---- blocks ----------------------------------------------------------------------------
    def current_block(self, node, what: str) -> "_BlockFrame":
        if not self.blocks:
            raise self.error(node, f"{what} is only allowed inside a T.block()")
        return self.blocks[-1]

    def axis(self, node, name: str, decl: AxisDecl) -> E.Var:
        """Defines the iteration variable `name` of the block being read."""
        frame = self.current_block(node, "T.axis")
        dom = decl.dom
        if dom is None:  # T.axis.remap: the range of the loop it is bound to
            dom = self.loop_ranges.get(decl.binding)
            if dom is None:
                raise self.error(node, f"T.axis.remap: '{decl.binding.name}' is not the "
                                       "variable of an enclosing loop")
        iv = E.IterVar(dom, E.Var(name, decl.dtype), decl.kind)
        frame.iter_vars.append(iv)
        frame.iter_values.append(decl.binding)
        return iv.var

    def block_stmt(self, node, decl: BlockDecl) -> Stmt:
        frame = _BlockFrame(decl.name)
        self.blocks.append(frame)
        try:
            body = self.block(node.body)
        finally:
            self.blocks.pop()
        annotations = dict(frame.annotations)
        detect = (frame.reads is None) | ((frame.writes is None) << 1)
        if detect:
            annotations[DETECT_ACCESS] = E.make_const("int64", detect)
        blk = Block(tuple(frame.iter_vars), frame.reads or (), frame.writes or (), decl.name,
                    body, frame.init, tuple(frame.alloc_buffers), (), annotations)
        if decl.no_realize:
            raise self.error(node, "T.block(no_realize=True) is not supported")
        return BlockRealize(tuple(frame.iter_values), frame.predicate, blk)

    def _scoped(self, node, value, name: Optional[str]):
        """The wrapper of a scoping construct (`T.launch_thread`, `T.attr`, `T.let`,
        `T.allocate`, `T.decl_buffer`), binding `name` to what it defines."""
        if isinstance(value, LaunchDecl):
            iv, extent = value.iter_var, value.extent
            iv = E.IterVar(E.Range(E.make_const(extent.dtype, 0), extent),
                           E.Var(name or iv.var.name, extent.dtype), E.IterKind.THREAD,
                           iv.thread_tag)
            if name:
                self.bind(name, iv.var)
            for scope in self.scopes:  # the axis from T.env_thread stands for this loop's var
                for key, bound in list(scope.items()):
                    if isinstance(bound, E.IterVar) and bound is value.iter_var:
                        scope[key] = iv.var
            return lambda body: For(iv.var, E.make_const(extent.dtype, 0), extent,
                                    ForKind.THREAD_BINDING, body, thread_binding=iv)
        if isinstance(value, AttrDecl):
            return lambda body: AttrStmt(value.node, value.key, value.value, body)
        if isinstance(value, LetDecl):
            return lambda body: LetStmt(value.var, value.value, body)
        if isinstance(value, AllocateDecl):
            buf = _decl_buffer(value.extents, value.dtype, name or "buf", scope=value.scope)
            if name:
                self.bind(name, buf.data)
            return lambda body: Allocate(buf, body)
        if isinstance(value, BufferDecl) and value.allocates:
            buf = value.build(name or "buf")
            if name:
                self.bind(name, buf)
            return lambda body: Allocate(buf, body)
        raise self.error(node, f"unsupported scope {value!r}")

    def stmt_Return(self, node, out):
        raise self.error(node, "`return` in a prim_func is not supported")

    def stmt_FunctionDef(self, node, out):
        raise self.error(node, "nested functions are not supported")

    # ---- expressions -----------------------------------------------------------------------
    def eval(self, node: ast.expr):
        method = getattr(self, f"eval_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"unsupported expression {type(node).__name__}")
        return method(node)

    def eval_Constant(self, node):
        return node.value

    def eval_Name(self, node):
        value = self.lookup(node)
        if value is builtins.range:
            return _RANGE
        return value

    def eval_Attribute(self, node):
        value = self.eval(node.value)
        try:
            return getattr(value, node.attr)
        except AttributeError:
            if isinstance(value, types.ModuleType):
                owner = ast.unparse(node.value)
                raise self.error(node, f"{owner}.{node.attr} is not supported by Kiln's "
                                       "TVMScript") from None
            raise self.error(node, f"{value!r} has no attribute {node.attr!r}") from None

    def eval_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def eval_List(self, node):
        return list(self._elements(node.elts))

    def _elements(self, elts):
        for e in elts:
            if isinstance(e, ast.Starred):
                yield from self.eval(e.value)
            else:
                yield self.eval(e)

    def eval_Dict(self, node):
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    def eval_Slice(self, node):
        return slice(*(self.eval(p) if p is not None else None
                       for p in (node.lower, node.upper, node.step)))

    def eval_Call(self, node):
        func = self.eval(node.func)
        args = list(self._elements(node.args))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        try:
            result = func(*args, **kwargs)
        except ScriptError as err:
            raise self.error(node, str(err)) from None
        if isinstance(result, StackArray):
            return self.stack_array(node, result)
        return result

    def stack_array(self, node, arr: StackArray) -> Buffer:
        """The buffer a `T.tvm_stack_make_array` describes: whole, compact, of its own element
        type (Kiln passes a Buffer to call_packed where TVM writes this call)."""
        buf = self.buffers.get(arr.data)
        ok = buf is not None and E.is_const_int(E.convert(arr.strides), 0) and \
            len(arr.shape.dims) == buf.ndim and all(
                _same(a, b) for a, b in zip(arr.shape.dims, buf.shape)) and \
            _same(arr.elem_offset, buf.elem_offset)
        if not ok:
            raise self.error(node, "T.tvm_stack_make_array must describe a whole compact buffer "
                                   "of the function (its data, shape and elem_offset)")
        return buf

    def region(self, node, buf: Buffer, parts) -> BufferRegion:
        if len(parts) != buf.ndim:
            raise self.error(node, f"buffer '{buf.name}' has {buf.ndim} dimensions, sliced "
                                   f"with {len(parts)}")
        ranges = []
        for p in parts:
            if isinstance(p, slice):
                if p.step is not None:
                    raise self.error(node, "buffer slices take no step")
                lo = E.convert(p.start if p.start is not None else 0)
                if p.stop is None:
                    raise self.error(node, "a buffer slice needs its end")
                hi = E.convert(p.stop)
                extent = E.make_const(hi.dtype, hi.value - lo.value) \
                    if E.is_const_int(lo) and E.is_const_int(hi) else simplify(hi - lo)
                ranges.append(E.Range(lo, extent))
            else:
                p = E.convert(p)
                ranges.append(E.Range(p, E.make_const(p.dtype, 1)))
        return BufferRegion(buf, tuple(ranges))

    def eval_BinOp(self, node):
        return _BINARY[type(node.op)](self.eval(node.left), self.eval(node.right))

    def eval_UnaryOp(self, node):
        value = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            return E.logical_not(value) if _is_ir(value) else not value
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return value
        return ~value

    def eval_BoolOp(self, node):
        values = [self.eval(v) for v in node.values]
        if not any(_is_ir(v) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if isinstance(node.op, ast.And) else (result or v)
            return result
        combine = E.logical_and if isinstance(node.op, ast.And) else E.logical_or
        result = E.convert(values[0])
        for v in values[1:]:
            result = combine(result, E.convert(v))
        return result

    def eval_Compare(self, node):
        left = self.eval(node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in _COMPARE:
                raise self.error(node, f"unsupported comparison {type(op).__name__}")
            right = self.eval(right_node)
            value = _COMPARE[type(op)](left, right)
            if isinstance(value, (E.EqualOp, E.NotEqualOp)):
                value = value.asobject()
            result = value if result is None else (
                E.logical_and(result, value) if _is_ir(result) or _is_ir(value)
                else result and value)
            left = right
        return result

    def eval_IfExp(self, node):
        cond = self.eval(node.test)
        if not _is_ir(cond):
            return self.eval(node.body if cond else node.orelse)
        t, f = E.unify(E.convert(self.eval(node.body)), E.convert(self.eval(node.orelse)))
        return E.Select(E.convert(cond), t, f)

    def eval_Subscript(self, node):
        value = self.eval(node.value)
        if isinstance(value, Buffer):
            index = self.eval(node.slice)
            parts = index if isinstance(index, tuple) else (index,)
            if any(isinstance(i, slice) for i in parts):
                return self.region(node, value, parts)
            buf, indices = self.element(node)
            if len(indices) != buf.ndim:
                raise self.error(node, f"buffer '{buf.name}' has {buf.ndim} dimensions, "
                                       f"indexed with {len(indices)}")
            return BufferLoad(buf, indices)
        return value[self.eval(node.slice)]


BufferLoad = E.BufferLoad


def _same(a, b) -> bool:
    a, b = E.convert(a), E.convert(b)
    if a is b:
        return True
    return E.is_const_int(a) and E.is_const_int(b) and a.value == b.value


class _BlockFrame:
    """What the statements of a `with T.block()` declare about it."""

    def __init__(self, name: str):
        self.name = name
        self.iter_vars: List[E.IterVar] = []
        self.iter_values: List[E.PrimExpr] = []
        self.reads = None
        self.writes = None
        self.annotations: Dict[str, Any] = {}
        self.predicate = E.make_const("bool", True)
        self.init: Optional[Stmt] = None
        self.alloc_buffers: List[Buffer] = []

    def set(self, parser, node, decl: BlockPartDecl) -> None:
        if decl.part == "annotations":
            self.annotations.update(decl.value)
        elif getattr(self, decl.part) is not None and decl.part in ("reads", "writes"):
            raise parser.error(node, f"T.{decl.part} is given twice for block '{self.name}'")
        else:
            setattr(self, decl.part, decl.value)


def _without_docstring(body: List[ast.stmt]) -> List[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body
