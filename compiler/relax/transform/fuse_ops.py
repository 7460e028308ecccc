"""fuse_ops: operators become kernels; elementwise work joins the kernel that produces its input.

before: graph-level functions in normal form (constants folded, local functions lifted); they
        may call each other, hold If expressions, tuples, closures and symbolic dims.
after:  every operator call with a fusion pattern, in every graph-level function and in every
        branch of an If, is a call of a primitive function (attr "Primitive": 1, added to the
        module as `fused_<ops>`, a long name shortened to a prefix and a hash of it,
        backend/names.py) holding one or more operators, grouped inside one sequence of
        bindings (an If is a boundary) as follows:
        - an elementwise or broadcast operator joins the group of the operator producing one of
          its inputs when that value has no other use, and the group is a chain of injective
          operators, or an output-fusable anchor (conv2d, dense, matmul, pooling) whose output
          shape it keeps (so conv2d + bias add + relu is one kernel); such an operator's
          other operand, when a chain of at most MAX_SIDE_OPS elementwise or broadcast
          operators of its shape used only there (a residual input's dequantize), joins that
          kernel too;
        - a value with several uses still fuses when its uses are elementwise operators (of its
          shape) that meet again in one value, the only one used elsewhere: the whole diamond
          joins the producing group (GELU's x * (1 + erf(x / sqrt 2)) / 2 after a matmul);
        - an injective operator (reshape, transpose, concat, ...) joins a producing group of
          injective operators the same way (concat: the group of one of its tensors); a
          reduction absorbs elementwise producers;
        - anything else (softmax, normalization, multi-output operators) is a group of its own;
        - a kernel takes at most the target's `max_function_args` arguments (tensors read and
          the result; split_args splits the concats that alone would take more);
        - a group holds at most `max_depth` operators (MAX_FUSE_DEPTH, TVM's max_fuse_depth): a
          longer chain is cut into several kernels, so no kernel's expression nests deeper than
          the compiler's recursive passes can walk. `max_depth=1` (the pipeline's choice when a
          PassContext disables "FuseOps") makes every operator a kernel of its own.
        Non-scalar constants become arguments of the call; scalars stay inside the function.
        Variable aliases (`b = a`) are gone; a computed result of a sequence (an If branch's
        `x * 2`) is bound first, so that it is fused too. Calls of other functions, closures,
        builtins and match_casts stay as they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ...ir.module import IRModule
from .. import expr as X
from ..backend.names import short_kernel_name
from ..functor import ExprMutator, post_order_visit
from ..op.pattern import (
    BROADCAST,
    COMM_REDUCE,
    ELEMWISE,
    INJECTIVE,
    OUT_ELEMWISE_FUSABLE,
    op_pattern,
)
from ..struct_info import TensorStructInfo
from .eliminate_dead_code import use_counts
from .split_args import max_function_args

# Most operators of an elementwise side input an anchored kernel's epilogue takes over.
MAX_SIDE_OPS = 2

# Operators that are not computations for a kernel (calls, closures, shapes): never grouped.
NOT_KERNELS = {"relax.call_tir", "relax.call_dps_packed", "relax.shape_of",
               "relax.call_builtin_with_ctx", "relax.vm.kill_object", "relax.null_value",
               "relax.make_closure", "relax.invoke_closure"}


@dataclass
class _Group:
    pattern: int
    bindings: List[X.VarBinding] = field(default_factory=list)
    # ids of the kernel's arguments (kept only under a target's max_function_args)
    inputs: Dict[int, None] = field(default_factory=dict)

    def inputs_with(self, call: X.Call) -> Dict[int, None]:
        """The kernel's arguments if `call` joined the group."""
        inside = {id(b.var) for b in self.bindings}
        return {**self.inputs, **{k: None for k in _input_ids(call) if k not in inside}}

    @property
    def out(self) -> X.Var:
        return self.bindings[-1].var


def _shape(v: X.Expr):
    s = v.struct_info
    return tuple(s.shape) if isinstance(s, TensorStructInfo) and s.shape is not None else None


# A use of a value outside operator calls (the result, a tuple, a non-kernel call).
_OUTSIDE = -1
# Most operators of one diamond region.
MAX_DIAMOND = 16
# Most operators of one group (a chain of elementwise operators becomes one expression, as deep
# as the chain is long).
MAX_FUSE_DEPTH = 16


def _diamonds(func: X.Function) -> Dict[int, int]:
    """{id(var): id(root)} for the bindings of diamond regions: a root value with several uses,
    all elementwise or broadcast operators of the root's shape, whose results are used only
    inside the region except for one value (the sink)."""
    alias: Dict[int, X.Expr] = {}
    users: Dict[int, List[int]] = {}
    elementwise: Dict[int, tuple] = {}      # id(var) -> (order, shape) of elementwise calls
    kernels = set()

    def resolve(e):
        while isinstance(e, X.Var) and id(e) in alias:
            e = alias[id(e)]
        return e

    def used_outside(e):
        def visit(v):
            if isinstance(v, X.Var):
                users.setdefault(id(resolve(v)), []).append(_OUTSIDE)
        post_order_visit(e, visit)

    for block in func.body.blocks:
        for b in block.bindings:
            value = b.value
            if isinstance(b, X.VarBinding) and isinstance(value, X.Var):
                alias[id(b.var)] = resolve(value)
                continue
            if not (isinstance(b, X.VarBinding) and isinstance(value, X.Call)
                    and isinstance(value.op, X.Op) and value.op.name not in NOT_KERNELS):
                used_outside(value)
                continue
            kernels.add(id(b.var))
            for a in value.args:
                if isinstance(a, X.Var):
                    users.setdefault(id(resolve(a)), []).append(id(b.var))
                else:
                    used_outside(a)
            if op_pattern(value) in (ELEMWISE, BROADCAST):
                elementwise[id(b.var)] = (len(elementwise), _shape(b.var))
    used_outside(func.body.body)

    planned: Dict[int, int] = {}
    for root in kernels:
        uses = users.get(root, [])
        if len(uses) < 2 or root in planned:
            continue
        members = _region(uses, users, elementwise)
        if members is not None and all(elementwise[m][1] == elementwise[members[0]][1]
                                       for m in members):
            planned.update({m: root for m in members if m not in planned})
    return planned


def _region(uses: List[int], users: Dict[int, List[int]], elementwise: Dict[int, tuple]):
    """The members of the diamond that starts with `uses`, or None when it does not close."""
    members = set(uses)
    while len(members) <= MAX_DIAMOND:
        if any(m not in elementwise for m in members):
            return None
        open_ = sorted((m for m in members if any(u not in members for u in users.get(m, ()))),
                       key=lambda m: elementwise[m][0])
        if len(open_) == 1 and all(users.get(m) for m in members):
            return sorted(members, key=lambda m: elementwise[m][0])
        if not open_ or _OUTSIDE in users.get(open_[0], [_OUTSIDE]):
            return None
        members.update(users[open_[0]])
    return None


def _input_ids(call: X.Call) -> List[int]:
    """ids of the tensors `call` reads that a kernel takes as arguments (not scalar
    constants)."""
    out = []
    for a in call.args:
        for e in (a.fields if isinstance(a, X.Tuple) else (a,)):
            if isinstance(e, (X.Var, X.Constant)) and not _is_scalar_const(e):
                out.append(id(e))
    return out


class _Fuser:
    def __init__(self, func: X.Function, max_depth: int = MAX_FUSE_DEPTH,
                 max_args: Optional[int] = None):
        self.func = func
        self.max_depth = max_depth
        self.max_args = max_args
        self.counts = use_counts(func)
        self.alias: Dict[int, X.Expr] = {}
        self.group_of: Dict[int, _Group] = {}
        self.diamond_root = _diamonds(func)
        self.diamond_size: Dict[int, int] = {}
        for root in self.diamond_root.values():
            self.diamond_size[root] = self.diamond_size.get(root, 0) + 1
        self.diamond_group: Dict[int, Optional[_Group]] = {}   # root -> the group it joins

    def _diamond(self, var: X.Var, pattern: int) -> Optional[_Group]:
        """The group a diamond member joins: its root's, if that group takes elementwise work
        of the root's shape (decided at the first member)."""
        root = self.diamond_root.get(id(var))
        if root is None:
            return None
        if root not in self.diamond_group:
            g = self.group_of.get(root)
            ok = g is not None and id(g.out) == root and pattern in (ELEMWISE, BROADCAST) and (
                len(g.bindings) + self.diamond_size[root] <= self.max_depth) and (
                g.pattern <= INJECTIVE
                or (g.pattern == OUT_ELEMWISE_FUSABLE and _shape(var) == _shape(g.out)))
            self.diamond_group[root] = g if ok else None
        return self.diamond_group[root]

    def resolve(self, e: X.Expr) -> X.Expr:
        while isinstance(e, X.Var) and id(e) in self.alias:
            e = self.alias[id(e)]
        return e

    def _joinable(self, arg: X.Expr, pattern: int, out_var: X.Var,
                  call: X.Call) -> Optional[_Group]:
        if not isinstance(arg, X.Var):
            return None
        g = self.group_of.get(id(arg))
        if g is None or g.out is not arg or self.counts.get(id(arg), 0) != 1 \
                or len(g.bindings) >= self.max_depth:
            return None
        if self.max_args is not None and len(g.inputs_with(call)) + 1 > self.max_args:
            return None                       # the kernel would take too many arguments
        if pattern in (ELEMWISE, BROADCAST):
            if g.pattern <= INJECTIVE:
                return g
            if g.pattern == OUT_ELEMWISE_FUSABLE and _shape(out_var) == _shape(arg):
                return g
            return None
        if pattern == INJECTIVE:
            return g if g.pattern <= INJECTIVE else None
        if pattern == COMM_REDUCE:
            return g if g.pattern <= BROADCAST else None
        return None

    def _producer_to_join(self, args, pattern: int, out_var: X.Var, call: X.Call):
        """(group, operand) of the producing group `call` joins, or (None, None): the first
        operand's that may, or of a concat's tensors the one whose group holds the most
        operators (the layout transform back from a blocked branch, not a cheap slice)."""
        joinable = [(g, a) for a in _operands(args)
                    if (g := self._joinable(a, pattern, out_var, call)) is not None]
        if not joinable:
            return None, None
        if not any(isinstance(x, X.Tuple) for x in args):
            return joinable[0]
        return max(joinable, key=lambda ga: len(ga[0].bindings))

    def _take_side_input(self, g: _Group, a: X.Expr, joined: X.Expr, out_var: X.Var,
                         call: X.Call, items: List[object]) -> None:
        """Moves into the anchored group `g` the group of `call`'s other operand `a` when that
        is a short chain of elementwise or broadcast operators of `call`'s shape used only
        here (the dequantize of a residual input): computed inside g's epilogue instead of
        written by a kernel of its own and read back."""
        if a is joined or not isinstance(a, X.Var) or g.pattern != OUT_ELEMWISE_FUSABLE:
            return
        h = self.group_of.get(id(a))
        if h is None or h is g or h.out is not a or self.counts.get(id(a), 0) != 1 \
                or len(h.bindings) > MAX_SIDE_OPS or _shape(a) != _shape(out_var) \
                or len(g.bindings) + len(h.bindings) + 1 > self.max_depth \
                or any(op_pattern(hb.value) > BROADCAST for hb in h.bindings):
            return
        if self.max_args is not None:
            merged = {**g.inputs, **h.inputs}
            inside = {id(x.var) for x in g.bindings + h.bindings}
            merged.update({k: None for k in _input_ids(call) if k not in inside})
            if len(merged) + 1 > self.max_args:
                return
            g.inputs = {k: None for k in merged if k not in inside}
        items.remove(h)
        g.bindings.extend(h.bindings)
        for hb in h.bindings:
            self.group_of[id(hb.var)] = g

    def groups(self) -> List[object]:
        """The bindings of the function in order, operator calls grouped."""
        items: List[object] = []
        for block in self.func.body.blocks:
            for b in block.bindings:
                value = b.value
                if isinstance(b, X.VarBinding) and isinstance(value, X.Var):
                    self.alias[id(b.var)] = self.resolve(value)
                    # the alias's uses become uses of the value it names
                    target = self.resolve(value)
                    self.counts[id(target)] = (self.counts.get(id(target), 0) - 1
                                               + self.counts.get(id(b.var), 0))
                    continue
                if not (isinstance(b, X.VarBinding) and isinstance(value, X.Call)
                        and isinstance(value.op, X.Op) and value.op.name not in NOT_KERNELS):
                    items.append(b)
                    continue
                args = tuple(self.resolve(a) for a in value.args)
                value = X.Call(value.op, args, value.attrs, value.sinfo_args)
                b = X.VarBinding(b.var, value)
                pattern = op_pattern(value)
                g = self._diamond(b.var, pattern)
                joined = None
                if g is None:
                    g, joined = self._producer_to_join(args, pattern, b.var, value)
                if g is None:
                    g = _Group(pattern)
                    items.append(g)
                else:
                    items.remove(g)
                    items.append(g)
                    g.pattern = max(g.pattern, pattern)
                    if joined is not None:
                        for a in args:
                            self._take_side_input(g, a, joined, b.var, value, items)
                if self.max_args is not None:
                    g.inputs = g.inputs_with(value)
                g.bindings.append(b)
                self.group_of[id(b.var)] = g
        return items


def _operands(args) -> List[X.Expr]:
    """A call's operands, the fields of a tuple argument (concat's tensors) each one."""
    return [f for a in args for f in (a.fields if isinstance(a, X.Tuple) else (a,))]


def _is_scalar_const(e: X.Expr) -> bool:
    return isinstance(e, X.Constant) and e.data.ndim == 0


def _op_short(name: str) -> str:
    return name[len("relax."):].replace(".", "_") if name.startswith("relax.") else name


def _primitive(g: _Group) -> tuple:
    """The primitive function of a group, and the arguments to call it with."""
    inside = {id(b.var) for b in g.bindings}
    params: List[X.Var] = []
    args: List[X.Expr] = []
    remap: Dict[int, X.Var] = {}

    def param_for(e: X.Expr) -> X.Expr:
        if id(e) in inside or _is_scalar_const(e) or not isinstance(e, (X.Var, X.Constant)):
            return remap.get(id(e), e)
        p = remap.get(id(e))
        if p is None:
            name = e.name_hint if isinstance(e, X.Var) else f"p{len(params)}"
            p = remap[id(e)] = X.Var(name, e.struct_info)
            params.append(p)
            args.append(e)
        return p

    bindings = []
    for b in g.bindings:
        v = b.value
        new_args = tuple(X.Tuple(tuple(param_for(f) for f in a.fields)) if isinstance(a, X.Tuple)
                         else param_for(a) for a in v.args)
        var = X.Var(b.var.name_hint, b.var.struct_info)
        remap[id(b.var)] = var
        bindings.append(X.VarBinding(var, X.Call(v.op, new_args, v.attrs, v.sinfo_args)))
    out = remap[id(g.out)]
    func = X.Function(tuple(params), X.SeqExpr((X.DataflowBlock(tuple(bindings)),), out),
                      out.struct_info, True, {"Primitive": 1})
    return func, args


class _Kernels:
    """The primitive functions made so far, added to `functions` under fresh names."""

    def __init__(self, functions: Dict[str, object], max_depth: int,
                 max_args: Optional[int] = None):
        self.functions = functions
        self.max_depth = max_depth
        self.max_args = max_args
        self.names: Dict[str, int] = {}

    def add(self, g: _Group) -> tuple:
        """(GlobalVar of the group's new primitive function, the arguments to call it with)."""
        prim, args = _primitive(g)
        base = short_kernel_name(
            "fused_" + "_".join(_op_short(b.value.op.name) for b in g.bindings))
        n = self.names.get(base, 0)
        name = base if n == 0 else f"{base}{n}"
        while name in self.functions:
            n += 1
            name = f"{base}{n}"
        self.names[base] = n + 1
        gv = X.GlobalVar(name)
        X.set_struct_info(gv, prim.struct_info)
        self.functions[name] = prim
        return gv, args


class _Rename(ExprMutator):
    def __init__(self, remap):
        super().__init__()
        self.var_remap.update(remap)


def _fuse_seq(seq: X.SeqExpr, kernels: _Kernels) -> X.SeqExpr:
    """`seq` with its operator calls grouped (and each If branch's, recursively)."""
    dataflow = bool(seq.blocks) and all(isinstance(b, X.DataflowBlock) for b in seq.blocks)
    if not X.is_leaf(seq.body):
        ret = X.Var("ret", seq.body.struct_info)
        seq = X.SeqExpr(seq.blocks + (X.BindingBlock((X.VarBinding(ret, seq.body),)),), ret)
    fuser = _Fuser(X.Function((), seq), kernels.max_depth, kernels.max_args)
    items = fuser.groups()
    rename = _Rename({k: fuser.resolve(v) for k, v in fuser.alias.items()})
    bindings: List[X.Binding] = []
    for item in items:
        if isinstance(item, _Group):
            gv, args = kernels.add(item)
            bindings.append(X.VarBinding(item.out, X.Call(gv, tuple(args))))
            continue
        b = item
        value = _resolve_all(b.value, fuser)
        if isinstance(value, X.If):
            value = rename.visit_expr(value)
            value = X.If(value.cond, _fuse_seq(value.true_branch, kernels),
                         _fuse_seq(value.false_branch, kernels))
        if value is b.value:
            bindings.append(b)
        elif isinstance(b, X.MatchCast):
            bindings.append(X.MatchCast(b.var, value, b.struct_info))
        else:
            bindings.append(X.VarBinding(b.var, value))
    body = _resolve_all(fuser.resolve(seq.body), fuser)
    if not bindings:
        return X.SeqExpr((), body)
    block = X.DataflowBlock if dataflow else X.BindingBlock
    return X.SeqExpr((block(tuple(bindings)),), body)


def fuse_ops(mod: IRModule, max_depth: int = MAX_FUSE_DEPTH, target=None) -> IRModule:
    """`mod` with the operator calls of every graph-level function grouped into primitive
    functions of at most `max_depth` operators, and, for a `target` that limits them
    (max_function_args), of at most that many arguments counting the result."""
    functions = dict(mod.functions)
    kernels = _Kernels(functions, max_depth, max_function_args(target))
    for name, func in mod.items():
        if isinstance(func, X.Function) and not func.attrs.get("Primitive"):
            functions[name] = X.Function(func.params, _fuse_seq(func.body, kernels),
                                         func.ret_struct_info, func.is_pure, func.attrs)
    return mod.with_functions(functions)


def _resolve_all(e: X.Expr, fuser: _Fuser) -> X.Expr:
    if isinstance(e, X.Var):
        return fuser.resolve(e)
    if isinstance(e, X.Tuple):
        return X.Tuple(tuple(_resolve_all(f, fuser) for f in e.fields))
    if isinstance(e, X.TupleGetItem):
        return X.TupleGetItem(_resolve_all(e.tuple_value, fuser), e.index)
    if isinstance(e, X.Call):
        return X.Call(e.op, tuple(_resolve_all(a, fuser) for a in e.args), e.attrs, e.sinfo_args)
    return e
