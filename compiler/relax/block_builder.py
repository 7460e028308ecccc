"""BlockBuilder: builds graph-level functions binding by binding, as tvm.relax.BlockBuilder.

    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((n, 784), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.op.nn.relu(x))
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    mod = bb.get()

`emit` normalizes what it is given: call arguments that are not leaves (variables, constants,
shapes, tuples of leaves) are bound to variables of their own first, so every binding is one
operation on named values (A-normal form), and the struct info of every expression is
inferred there, so mistakes raise `TypeInferenceError` at the line that made them. Inside a
dataflow block `emit` makes DataflowVars; `emit_output` makes the variables visible after it.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence

from ..ir.errors import IRError
from ..ir.module import IRModule
from .expr import (
    Binding,
    BindingBlock,
    Call,
    DataflowBlock,
    DataflowVar,
    Expr,
    Function,
    GlobalVar,
    If,
    MatchCast,
    SeqExpr,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
    is_leaf,
    set_struct_info,
)
from .struct_info import StructInfo


class _Block:
    def __init__(self, dataflow: bool):
        self.dataflow = dataflow
        self.bindings: List[Binding] = []

    def close(self) -> BindingBlock:
        cls = DataflowBlock if self.dataflow else BindingBlock
        return cls(tuple(self.bindings))


class _FunctionFrame:
    def __init__(self, name: Optional[str], params: Optional[Sequence[Var]],
                 attrs: Dict[str, Any], pure: bool):
        self.name, self.attrs, self.pure = name, attrs, pure
        self.params = None if params is None else list(params)
        self.blocks: List[BindingBlock] = []
        self.block: Optional[_Block] = None
        self.output: Optional[Expr] = None


class BlockBuilder:
    """Builds functions into a module; `get()` returns it."""

    def __init__(self, mod: Optional[IRModule] = None):
        self._functions: Dict[str, Any] = dict(mod.functions) if mod is not None else {}
        self._attrs: Dict[str, Any] = dict(mod.attrs) if mod is not None else {}
        self._gvars: Dict[str, GlobalVar] = {}
        self._frames: List[_FunctionFrame] = []
        for name, func in self._functions.items():
            self._global_var(name, func)

    # ---- module ------------------------------------------------------------------------------
    def _global_var(self, name: str, func: Any) -> GlobalVar:
        gv = self._gvars.get(name)
        if gv is None:
            gv = self._gvars[name] = GlobalVar(name)
        sinfo = getattr(func, "struct_info", None)
        if isinstance(sinfo, StructInfo):
            set_struct_info(gv, sinfo)
        return gv

    def add_func(self, func: Any, func_name: str) -> GlobalVar:
        """Adds a function (graph-level or a loop-IR PrimFunc) under a name not taken yet
        (a suffix is added when it is); returns its GlobalVar."""
        name, i = func_name, 0
        while name in self._functions:
            i += 1
            name = f"{func_name}{i}"
        self._functions[name] = func
        return self._global_var(name, func)

    def update_func(self, gv: GlobalVar, func: Any) -> None:
        self._functions[gv.name_hint] = func

    def get_global_var(self, name: str) -> GlobalVar:
        if name not in self._gvars:
            raise IRError(f"no function {name!r} in the module; it has {sorted(self._gvars)}")
        return self._gvars[name]

    def get(self) -> IRModule:
        """The module built so far."""
        if self._frames:
            raise IRError("BlockBuilder.get() inside a function: call emit_func_output first")
        return IRModule(self._functions, self._attrs)

    def set_function_attr(self, key: str, value: Any) -> None:
        """Sets an attr of the function being built."""
        self._frame().attrs[key] = value

    # ---- scopes ------------------------------------------------------------------------------
    @contextmanager
    def function(self, name: str, params: Optional[Sequence[Var]] = None,
                 attrs: Optional[Dict[str, Any]] = None, pure: bool = True,
                 private: bool = False) -> Iterator[None]:
        """A function scope; it must end with `emit_func_output`. Unless `private`, the
        function's "global_symbol" attr is its name."""
        attrs = dict(attrs or {})
        if not private:
            attrs.setdefault("global_symbol", name)
        depth = len(self._frames)
        self.begin_function(name, params, attrs, pure)
        try:
            yield
        except BaseException:
            del self._frames[depth:]
            raise
        if len(self._frames) > depth:
            del self._frames[depth:]
            raise IRError(f"function {name!r} ended without emit_func_output")

    def begin_function(self, name: Optional[str], params: Optional[Sequence[Var]] = None,
                       attrs: Optional[Dict[str, Any]] = None, pure: bool = True) -> None:
        for p in params or ():
            if not isinstance(p, Var) or isinstance(p, DataflowVar):
                raise IRError(f"function {name!r}: parameters must be relax Vars, got {p!r}")
        self._frames.append(_FunctionFrame(name, params, dict(attrs or {}), pure))
        self._frames[-1].block = _Block(False)

    @contextmanager
    def dataflow(self) -> Iterator[None]:
        """A dataflow block: pure bindings whose variables stay inside unless emit_output."""
        self.begin_dataflow_block()
        try:
            yield
        finally:
            self.end_block()

    def begin_dataflow_block(self) -> None:
        frame = self._frame()
        if frame.block is not None and frame.block.dataflow:
            raise IRError("dataflow blocks do not nest")
        self._close_block(frame)
        frame.block = _Block(True)

    def begin_binding_block(self) -> None:
        frame = self._frame()
        self._close_block(frame)
        frame.block = _Block(False)

    def end_block(self) -> None:
        frame = self._frame()
        self._close_block(frame)
        frame.block = _Block(False)

    def _close_block(self, frame: _FunctionFrame) -> None:
        if frame.block is not None and frame.block.bindings:
            frame.blocks.append(frame.block.close())
        frame.block = None

    def _frame(self) -> _FunctionFrame:
        if not self._frames:
            raise IRError("emit outside a function: use `with bb.function(name, params):`")
        return self._frames[-1]

    def _block(self) -> _Block:
        frame = self._frame()
        if frame.block is None:
            frame.block = _Block(False)
        return frame.block

    # ---- bindings ----------------------------------------------------------------------------
    def _new_var(self, name: str, sinfo: StructInfo, dataflow: bool) -> Var:
        return (DataflowVar if dataflow else Var)(name, sinfo)

    def emit(self, expr: Expr, name_hint: str = "") -> Var:
        """Binds `expr` (normalized) to a new variable and returns it."""
        expr = self.normalize(expr)
        block = self._block()
        var = self._new_var(name_hint or "lv", expr.struct_info, block.dataflow)
        block.bindings.append(VarBinding(var, expr))
        return var

    def emit_normalized(self, binding: Binding) -> None:
        """Appends a binding as it is (its value must already be normalized)."""
        self._block().bindings.append(binding)

    def match_cast(self, value: Expr, struct_info: StructInfo, name_hint: str = "") -> Var:
        """Binds `value` checked (at run time) against `struct_info`; symbolic dims it mentions
        for the first time are bound by it."""
        value = self.normalize(value)
        block = self._block()
        var = self._new_var(name_hint or "lv", struct_info, block.dataflow)
        block.bindings.append(MatchCast(var, value, struct_info))
        return var

    def emit_output(self, output: Any, name_hint: str = "") -> Var:
        """In a dataflow block: binds `output` to a variable visible after the block."""
        block = self._block()
        if not block.dataflow:
            raise IRError("emit_output is only for dataflow blocks (use emit outside them)")
        if isinstance(output, (list, tuple)):
            output = Tuple(tuple(output))
        expr = self.normalize(output)
        var = Var(name_hint or "gv", expr.struct_info)
        block.bindings.append(VarBinding(var, expr))
        return var

    def emit_func_output(self, output: Any, params: Optional[Sequence[Var]] = None) -> GlobalVar:
        """Ends the function with its result (a tuple when a list is given); adds it to the
        module and returns its GlobalVar."""
        frame = self._frame()
        if frame.block is not None and frame.block.dataflow:
            raise IRError("emit_func_output inside a dataflow block: leave the block first")
        if params is not None:
            if frame.params is not None:
                raise IRError("function parameters given twice (in function() and "
                              "emit_func_output())")
            frame.params = list(params)
        if frame.params is None:
            raise IRError(f"function {frame.name!r} has no parameter list")
        if isinstance(output, (list, tuple)):
            output = Tuple(tuple(output))
        output = self.normalize(output)
        _check_no_dataflow_var(output)
        self._close_block(frame)
        frame.output = output
        func = Function(frame.params, SeqExpr(tuple(frame.blocks), output), None, frame.pure,
                        frame.attrs)
        self._frames.pop()
        if frame.name is None:
            return func
        return self.add_func(func, frame.name)

    # ---- normalization ----------------------------------------------------------------------
    def normalize(self, expr: Expr) -> Expr:
        """`expr` in normal form (non-leaf call arguments bound first) with its struct info
        inferred."""
        if not isinstance(expr, Expr):
            raise IRError(f"expected a graph-level expression, got {expr!r}")
        out = self._normalize(expr)
        out.struct_info  # noqa: B018 - infers, raising TypeInferenceError here
        return out

    def _leaf(self, expr: Expr) -> Expr:
        if isinstance(expr, Tuple):
            fields = tuple(self._leaf(f) for f in expr.fields)
            if all(a is b for a, b in zip(fields, expr.fields)):
                return expr
            return Tuple(fields)
        if is_leaf(expr):
            return expr
        return self.emit(self._normalize(expr))

    def _normalize(self, expr: Expr) -> Expr:
        if isinstance(expr, Call):
            args = tuple(self._leaf(a) for a in expr.args)
            if all(a is b for a, b in zip(args, expr.args)):
                return expr
            return Call(expr.op, args, expr.attrs, expr.sinfo_args)
        if isinstance(expr, TupleGetItem):
            t = self._leaf(expr.tuple_value)
            return expr if t is expr.tuple_value else TupleGetItem(t, expr.index)
        if isinstance(expr, Tuple):
            return self._leaf(expr)
        if isinstance(expr, If):
            cond = self._leaf(expr.cond)
            tb, fb = self._branch(expr.true_branch), self._branch(expr.false_branch)
            if cond is expr.cond and tb is expr.true_branch and fb is expr.false_branch:
                return expr
            return If(cond, tb, fb)
        return expr

    def _branch(self, seq: SeqExpr) -> SeqExpr:
        """A branch of an If, its nested expressions bound inside the branch."""
        if is_leaf(seq.body):
            return seq
        frame = self._frame()
        saved = frame.block
        frame.block = _Block(False)
        body = self._normalize(seq.body)
        new = frame.block.bindings
        frame.block = saved
        if not new:
            return seq if body is seq.body else SeqExpr(seq.blocks, body)
        return SeqExpr(seq.blocks + (BindingBlock(tuple(new)),), body)


def _check_no_dataflow_var(expr: Expr) -> None:
    if isinstance(expr, DataflowVar):
        raise IRError(f"the function returns dataflow variable {expr.name_hint!r}, which is not "
                      "visible outside its dataflow block: bind it with emit_output")
    if isinstance(expr, Tuple):
        for f in expr.fields:
            _check_no_dataflow_var(f)
