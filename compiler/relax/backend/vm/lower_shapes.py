"""lower_shapes_vm: symbolic dims live in a shape heap; inputs are checked at entry (TVM's
VMShapeLower).

before: `plan_memory_vm` ran; shapes (of parameters, of match_casts, in ShapeExprs) may hold
        symbolic dims (tir Vars) and expressions of them.
after:  each graph-level function starts with
            heap = vm.builtin.alloc_shape_heap(k)       (R.null_value() when k == 0)
        then, per parameter, a check of its kind, rank and dtype
        (`vm.builtin.check_tensor_info` / check_shape_info / check_tuple_info, tuple fields
        recursively) and `vm.builtin.match_shape(value, heap, ndim, (code, value)...)` that
        asserts its static dims (code 0), stores a symbolic dim seen first (1) and asserts one
        seen before (3); every check carries an error context naming the function, the
        parameter and its annotation. A dim that is an expression (`2 * n`) is computed into
        its heap slot by a generated loop-IR shape function (`shape_func_<fn>_<k>`, called
        with the heap) as soon as its variables are known, and asserted after it. A
        `match_cast` is the same checks on its value, then the variable bound to the value.
        Shape functions carry attr HOST_FUNC ("tir.is_host_func"): a GPU build runs them on
        the host, with the heap.
        Every ShapeExpr with a symbolic dim is `vm.builtin.make_shape(heap, ndim,
        (code, value)...)` (0 immediate, 1 heap slot) bound just before its use.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from .... import tir
from ....ir.errors import IRError
from ....ir.module import IRModule
from ....ir.structural_equal import structural_equal
from ....lower import lower
from ....tir import expr as E
from ....tir.functor import collect_vars, substitute
from ... import expr as X
from ...functor import ExprMutator, ExprVisitor
from ...op import vm as vm_op
from ...printer import Printer
from ...struct_info import (
    FuncStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)
from ..kernel_library import HOST_FUNC

# match_shape / make_shape codes
ASSERT_IMM, STORE, NO_OP, ASSERT_HEAP = 0, 1, 2, 3
LOAD_IMM, LOAD_HEAP = 0, 1


def annotation(s: StructInfo) -> str:
    return Printer().sinfo(s)


def _dims_of(s: StructInfo):
    if isinstance(s, TensorStructInfo):
        return s.shape
    if isinstance(s, ShapeStructInfo):
        return s.values
    return None


class _ShapeExprs(ExprVisitor):
    def __init__(self):
        self.dims: List[E.PrimExpr] = []
        self.match_sinfos: List[StructInfo] = []

    def visit_shape_expr_(self, e: X.ShapeExpr) -> None:
        self.dims.extend(d for d in e.values if not isinstance(d, int))

    def visit_match_cast_(self, b: X.MatchCast) -> None:
        self.match_sinfos.append(b.struct_info)
        super().visit_match_cast_(b)


def _sinfo_dims(s: StructInfo) -> List[E.PrimExpr]:
    if isinstance(s, TupleStructInfo):
        return [d for f in s.fields for d in _sinfo_dims(f)]
    dims = _dims_of(s)
    return [d for d in (dims or ()) if not isinstance(d, int)]


class _Heap:
    """Slots of the shape heap: one per symbolic variable, one per compound expression."""

    def __init__(self, func: X.Function):
        v = _ShapeExprs()
        v.visit_expr(func.body)
        dims = [d for p in func.params for d in _sinfo_dims(p.struct_info)]
        for s in v.match_sinfos:
            dims += _sinfo_dims(s)
        dims += v.dims
        self.var_slot: Dict[int, int] = {}
        self.vars: List[E.Var] = []
        self.compound: List[Tuple[E.PrimExpr, int]] = []
        for d in dims:
            for var in collect_vars(d):
                if id(var) not in self.var_slot:
                    self.var_slot[id(var)] = len(self.var_slot)
                    self.vars.append(var)
        for d in dims:
            if not isinstance(d, E.Var) and self.slot_of(d) is None:
                self.compound.append((d, len(self.var_slot) + len(self.compound)))

    @property
    def size(self) -> int:
        return len(self.var_slot) + len(self.compound)

    def slot_of(self, d: E.PrimExpr) -> Optional[int]:
        if isinstance(d, E.Var):
            return self.var_slot.get(id(d))
        for e, k in self.compound:
            if structural_equal(e, d):
                return k
        return None


def _prim(v: int) -> X.PrimValue:
    return X.PrimValue(int(v))


class _Lower(ExprMutator):
    def __init__(self, fname: str, func: X.Function, functions: Dict[str, object]):
        super().__init__()
        self.fname, self.functions = fname, functions
        self.heap_slots = _Heap(func)
        self.heap = X.Var("shape_heap", X.ObjectStructInfo())
        self.known: Set[int] = set()       # ids of symbolic vars stored in the heap so far
        self.computed: Set[int] = set()    # compound slots computed so far
        self.n_funcs = 0

    # ---- checks ------------------------------------------------------------------------
    def _builtin(self, name: str, args, out: List[X.Binding], sinfo=None) -> X.Var:
        var = X.Var("_" if sinfo is None else "v", sinfo or vm_op.VOID)
        out.append(X.VarBinding(var, vm_op.call_builtin(name, args, sinfo)))
        return var

    def _match_codes(self, dims, deferred: List[E.PrimExpr], second: bool) -> list:
        codes = []
        for d in dims:
            if isinstance(d, int):
                codes += [ASSERT_IMM, d] if not second else [NO_OP, 0]
                continue
            slot = self.heap_slots.slot_of(d)
            if isinstance(d, E.Var):
                if second:
                    codes += [NO_OP, 0]
                elif id(d) in self.known:
                    codes += [ASSERT_HEAP, slot]
                else:
                    self.known.add(id(d))
                    codes += [STORE, slot]
            elif second:
                codes += [ASSERT_HEAP, slot]
            else:
                deferred.append(d)
                codes += [NO_OP, 0]
        return codes

    def check(self, value: X.Expr, s: StructInfo, err: str, out: List[X.Binding],
              second: List[tuple]) -> None:
        """Bindings checking `value` against `s`; matches of compound dims go to `second`."""
        errs = X.StringImm(err)
        if isinstance(s, TensorStructInfo):
            args = [value, _prim(s.ndim)]
            if s.dtype != "void":
                args.append(X.DataTypeImm(s.dtype))
            self._builtin("vm.builtin.check_tensor_info", args + [errs], out)
        elif isinstance(s, ShapeStructInfo):
            self._builtin("vm.builtin.check_shape_info", [value, _prim(s.ndim), errs], out)
        elif isinstance(s, TupleStructInfo):
            self._builtin("vm.builtin.check_tuple_info", [value, _prim(len(s.fields)), errs],
                          out)
            for i, f in enumerate(s.fields):
                if isinstance(f, (TensorStructInfo, ShapeStructInfo, TupleStructInfo)):
                    item = X.Var(f"field{i}", f)
                    out.append(X.VarBinding(item, X.TupleGetItem(value, i)))
                    self.check(item, f, err, out, second)
            return
        elif isinstance(s, PrimStructInfo):
            self._builtin("vm.builtin.check_prim_value_info",
                          [value, X.DataTypeImm(s.dtype), errs], out)
            return
        else:
            return
        dims = _dims_of(s)
        if dims is None:
            return
        deferred: List[E.PrimExpr] = []
        codes = self._match_codes(dims, deferred, False)
        self._builtin("vm.builtin.match_shape",
                      [value, self.heap, _prim(len(dims))] + [_prim(c) for c in codes] + [errs],
                      out)
        if deferred:
            second.append((value, dims, errs))

    def finish(self, second: List[tuple], out: List[X.Binding]) -> None:
        """Computes the compound slots now computable, then asserts the deferred dims."""
        self.compute(out)
        for value, dims, errs in second:
            missing = [d for d in dims if not isinstance(d, int) and not isinstance(d, E.Var)
                       and self.heap_slots.slot_of(d) not in self.computed]
            if missing:
                raise IRError(f"{self.fname}: the dim {missing[0]} cannot be computed from the "
                              "symbolic dims known at this point; give it a variable of its "
                              "own")
            codes = self._match_codes(dims, [], True)
            self._builtin("vm.builtin.match_shape",
                          [value, self.heap, _prim(len(dims))] + [_prim(c) for c in codes]
                          + [errs], out)

    def compute(self, out: List[X.Binding]) -> None:
        todo = [(e, k) for e, k in self.heap_slots.compound
                if k not in self.computed and all(id(v) in self.known for v in collect_vars(e))]
        if not todo:
            return
        buf = tir.decl_buffer((self.heap_slots.size,), "int64", "shape_heap")
        loads = {v: E.BufferLoad(buf, (E.const(self.heap_slots.var_slot[id(v)], "int64"),))
                 for v in self.heap_slots.vars}
        stores = [tir.BufferStore(buf, E.cast("int64", substitute(e, loads))
                                  if str(e.dtype) != "int64" else substitute(e, loads),
                                  (E.const(k, "int64"),)) for e, k in todo]
        name = f"shape_func_{self.fname}" + (f"_{self.n_funcs}" if self.n_funcs else "")
        while name in self.functions:
            self.n_funcs += 1
            name = f"shape_func_{self.fname}_{self.n_funcs}"
        self.n_funcs += 1
        body = stores[0] if len(stores) == 1 else tir.SeqStmt(tuple(stores))
        pf = tir.PrimFunc([buf], body, attrs={"global_symbol": name, "tir.noalias": True,
                                              HOST_FUNC: True})
        self.functions[name] = lower(pf, name=name)[name]
        out.append(X.VarBinding(X.Var("_", vm_op.VOID),
                                X.Call(X.GlobalVar(name), (self.heap,), None, (vm_op.VOID,))))
        self.computed.update(k for _, k in todo)

    # ---- rewriting ---------------------------------------------------------------------
    def make_shape(self, values) -> X.Expr:
        codes = []
        for d in values:
            if isinstance(d, int):
                codes += [LOAD_IMM, d]
                continue
            slot = self.heap_slots.slot_of(d)
            if slot is None or (slot >= len(self.heap_slots.var_slot)
                                and slot not in self.computed) or (
                    isinstance(d, E.Var) and id(d) not in self.known):
                raise IRError(f"{self.fname}: the symbolic dim {d} is used before any input or "
                              "match_cast defines it")
            codes += [LOAD_HEAP, slot]
        return vm_op.call_builtin("vm.builtin.make_shape",
                                  [self.heap, _prim(len(values))] + [_prim(c) for c in codes],
                                  ShapeStructInfo(values))

    def visit_shape_expr_(self, e: X.ShapeExpr) -> X.Expr:
        if all(isinstance(d, int) for d in e.values):
            return e
        return self.emit(self.make_shape(e.values), "shape")

    def visit_match_cast_(self, b: X.MatchCast) -> None:
        value = self.visit_expr(b.value)
        err = (f"ErrorContext(fn={self.fname}, loc=match_cast {b.var.name_hint}, "
               f"annotation={annotation(b.struct_info)}) ")
        out: List[X.Binding] = []
        second: List[tuple] = []
        self.check(value, b.struct_info, err, out, second)
        self.finish(second, out)
        for nb in out:
            self._append(nb)
        self._append(X.VarBinding(b.var, value))

    def run(self, func: X.Function) -> X.Function:
        out: List[X.Binding] = []
        if self.heap_slots.size:
            out.append(X.VarBinding(self.heap, vm_op.call_builtin_with_ctx(
                "vm.builtin.alloc_shape_heap", (_prim(self.heap_slots.size),))))
        else:
            out.append(X.VarBinding(self.heap, vm_op.null_value()))
        second: List[tuple] = []
        for i, p in enumerate(func.params):
            if isinstance(p.struct_info, FuncStructInfo):
                continue
            err = (f"ErrorContext(fn={self.fname}, loc=param[{i}], param={p.name_hint}, "
                   f"annotation={annotation(p.struct_info)}) ")
            self.check(p, p.struct_info, err, out, second)
        self.finish(second, out)
        body = self.visit_expr(func.body)
        body = X.SeqExpr((X.BindingBlock(tuple(out)),) + body.blocks, body.body)
        return X.Function(func.params, body, func.ret_struct_info, func.is_pure, func.attrs)


def lower_shapes_vm(mod: IRModule) -> IRModule:
    functions = dict(mod.functions)
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            functions[name] = _Lower(name, func, functions).run(func)
    return mod.with_functions(functions)
