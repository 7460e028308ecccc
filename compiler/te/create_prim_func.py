"""`te.create_prim_func(tensors)`: a PrimFunc of TensorIR blocks computing a TE graph, as TVM's.

Each te.compute becomes a nest of serial loops (one per axis, reduction axes innermost) around
one block per output (a reduction's outputs share one block): the block's iteration variables
`v_<axis>` are bound to the loop variables, and its body stores the compute's value at
`[v_<axis>...]`. A reduction's block stores the combiner's identity in its `init` and
combines into the output in its body (through `v_<output>` lets when there are several
outputs). A te.extern becomes one block around its statement, reading and writing whole
buffers. Tensors in `tensors` become the function's buffer parameters, in that order; other
tensors are allocated by the root block. Block names are the operations' names, made unique
with `_1`, `_2`, ... Compute attrs become block annotations (tensors in them become their
buffers); a "layout_free_placeholders" naming parameter buffers becomes the function attr
"layout_free_buffers" (their parameter positions).

Only placeholders, te.compute and te.extern convert; any other operation raises TypeError
naming it. `index_dtype_override` ("int64") makes every index, loop and shape of that dtype.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from microruntime.object_generic import Array

from ..arith import simplify
from ..ir.dtype import as_dtype, int32
from ..tir import expr as E
from ..tir.block import Block, BlockRealize, BufferRegion
from ..tir.block_access import DETECT_ACCESS, complete
from ..tir.buffer import Buffer, decl_buffer
from ..tir.function import PrimFunc
from ..tir.functor import IRMutator, substitute
from ..tir.stmt import BufferStore, For, ForKind, IfThenElse, LetStmt, Stmt, seq
from .index_dtype import normalize_index_dtype
from .tensor import ComputeOp, ExternOp, Operation, PlaceholderOp, Tensor, TensorLoad


def create_prim_func(ops: Sequence[Tensor], index_dtype_override: Optional[str] = None
                     ) -> PrimFunc:
    """The PrimFunc computing `ops` (its parameters, in order: placeholders and outputs)."""
    args = list(ops)
    for t in args:
        if not isinstance(t, Tensor):
            raise TypeError(f"create_prim_func takes tensors, got {t!r}")
    maker = _Maker(args)
    order = _ordered_ops(args)
    for op in order:
        if isinstance(op, ExternOp):
            for t, buf in zip(op.inputs, op.input_placeholders):
                maker.buffers[t] = buf
    stmts = []
    for op in order:
        if isinstance(op, PlaceholderOp):
            t = op.output(0)
            if t not in maker.buffers:
                maker.buffers[t] = decl_buffer(op.shape, op.dtype, op.name)
        elif isinstance(op, ExternOp):
            stmts.append(maker.extern(op))
        else:
            stmts.append(maker.compute(op))
    params, bmap = [], []
    for t in args:
        var = E.Var("var_" + t.name, "handle")
        params.append(var)
        bmap.append((var, maker.buffers[t]))
    func = PrimFunc(tuple(params), seq(*stmts), tuple(bmap),
                    {"global_symbol": "main", "tir.noalias": True})
    func = complete(func, maker.root_allocs)
    if index_dtype_override is not None:
        func = normalize_index_dtype(func, as_dtype(index_dtype_override))
    return _layout_free_buffers(func)


def _ordered_ops(args: List[Tensor]) -> List[Operation]:
    """The operations `args` need, each after those it reads; TypeError for what cannot be a
    block."""
    order: List[Operation] = []
    seen = set()

    def visit(op):
        if id(op) in seen:
            return
        seen.add(id(op))
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    for t in args:
        visit(t.op)
    for op in order:
        if type(op) not in (PlaceholderOp, ComputeOp, ExternOp):
            raise TypeError(f"Unsupported Operation: {type(op).__name__}. Only te.placeholder, "
                            "te.compute and te.extern can become TensorIR blocks.")
    return order


class _ToBuffers(IRMutator):
    """Tensor loads become loads of the tensors' buffers."""

    def __init__(self, buffers: Dict[Tensor, Buffer]):
        self.buffers = buffers

    def visit_TensorLoad(self, e: TensorLoad):
        buf = self.buffers.get(e.tensor)
        if buf is None:
            raise TypeError(f"create_prim_func: tensor '{e.tensor.name}' is read but is neither "
                            "an argument nor computed by the graph")
        return E.BufferLoad(buf, tuple(self.visit(E.convert(i)) for i in e.indices))


class _Maker:
    def __init__(self, args: List[Tensor]):
        self.args = args
        self.buffers: Dict[Tensor, Buffer] = {}
        self.root_allocs: List[Buffer] = []
        self.names: Dict[str, int] = {}

    def fresh_name(self, base: str) -> str:
        """`base`, or `base_<k>` for the k-th later use of it."""
        if base not in self.names:
            self.names[base] = 0
            return base
        while True:
            self.names[base] += 1
            name = f"{base}_{self.names[base]}"
            if name not in self.names:
                self.names[name] = 0
                return name

    def output_buffer(self, t: Tensor) -> Buffer:
        buf = decl_buffer(t.shape, t.dtype, t.name)
        self.buffers[t] = buf
        if t not in self.args:
            self.root_allocs.append(buf)
        return buf

    def expr(self, e, vmap) -> E.PrimExpr:
        return substitute(_ToBuffers(self.buffers).visit(E.convert(e)), vmap)

    # ---- te.compute ----------------------------------------------------------------------
    def compute(self, op: ComputeOp) -> Stmt:
        axes = list(op.axis) + list(op.reduce_axis)
        loop_vars = [E.Var(iv.var.name, as_dtype(f"int{_bits(iv)}")) for iv in axes]
        if isinstance(op.body[0], E.Reduce):
            outputs = [op.output(k) for k in range(len(op.body))]
            blocks = [self.block(op, outputs, loop_vars, op.body[0])]
        else:
            blocks = [self.block(op, [op.output(k)], loop_vars, op.body[k])
                      for k in range(len(op.body))]
        body = seq(*blocks)
        for iv, var in reversed(list(zip(axes, loop_vars))):
            body = For(var, simplify(iv.dom.min), simplify(iv.dom.extent), ForKind.SERIAL, body)
        return body

    def block(self, op: ComputeOp, outputs: List[Tensor], loop_vars: List[E.Var],
              value: E.PrimExpr) -> BlockRealize:
        axes = list(op.axis) + list(op.reduce_axis)
        vmap: Dict[E.Var, E.PrimExpr] = {}
        iter_vars = []
        for iv in axes:
            var = E.Var("v_" + iv.var.name, iv.var.dtype)
            vmap[iv.var] = var
            kind = E.IterKind.REDUCE if iv.kind == E.IterKind.REDUCE else iv.kind
            iter_vars.append(E.IterVar(E.Range(simplify(iv.dom.min), simplify(iv.dom.extent)),
                                       var, kind))
        buffers = [self.output_buffer(t) for t in outputs]
        indices = tuple(vmap[iv.var] for iv in op.axis)
        init = None
        if isinstance(value, E.Reduce):
            name = self.fresh_name(op.name)
            body, init = self.reduction(value, buffers, indices, vmap)
        else:
            name = self.fresh_name(outputs[0].name)
            body = BufferStore(buffers[0], simplify(self.expr(value, vmap)), indices)
        annotations = {k: self.annotation(v) for k, v in op.attrs.items()}
        annotations[DETECT_ACCESS] = E.make_const(int32, 3)
        bindings = list(loop_vars)
        if not iter_vars:
            iter_vars.append(E.IterVar(E.Range(E.make_const(int32, 0), E.make_const(int32, 1)),
                                       E.Var("vi", int32), E.IterKind.DATA_PAR))
            bindings.append(E.make_const(int32, 0))
        blk = Block(tuple(iter_vars), (), (), name, body, init, (), (), annotations)
        return BlockRealize(tuple(bindings), True, blk)

    def reduction(self, red: E.Reduce, buffers: List[Buffer], indices, vmap):
        n = len(buffers)
        lhs = [E.BufferLoad(b, indices) for b in buffers]
        rhs = [simplify(self.expr(s, vmap)) for s in red.source]
        comb = red.combiner
        identity = red.init if red.init else comb.identity
        init = seq(*[BufferStore(b, self.expr(x, vmap), indices)
                     for b, x in zip(buffers, identity)])
        cmap = {**dict(zip(comb.lhs, lhs)), **dict(zip(comb.rhs, rhs))}
        combined = [substitute(r, cmap) for r in comb.result]
        if n == 1:
            body: Stmt = BufferStore(buffers[0], combined[0], indices)
        else:
            temps = [E.Var("v_" + b.name, b.dtype) for b in buffers]
            body = seq(*[BufferStore(b, t, indices) for b, t in zip(buffers, temps)])
            for t, c in reversed(list(zip(temps, combined))):
                body = LetStmt(t, c, body)
        cond = simplify(self.expr(red.condition, vmap))
        if not (isinstance(cond, E.IntImm) and cond.value):
            body = IfThenElse(cond, body)
        return body, init

    def annotation(self, value: Any) -> Any:
        if isinstance(value, Tensor):
            return self.buffers[value]
        if isinstance(value, (list, tuple, Array)):
            return [self.annotation(v) for v in value]
        return value

    # ---- te.extern -------------------------------------------------------------------------
    def extern(self, op: ExternOp) -> BlockRealize:
        for t, buf in zip(op.outputs, op.output_placeholders):
            self.buffers[t] = buf
            if t not in self.args:
                self.root_allocs.append(buf)
        reads = tuple(BufferRegion.full_region(self.buffers[t]) for t in op.inputs)
        writes = tuple(BufferRegion.full_region(b) for b in op.output_placeholders)
        blk = Block((), reads, writes, self.fresh_name(op.name), op.body, None, (), (),
                    dict(op.attrs))
        return BlockRealize((), True, blk)


def _bits(iv: E.IterVar) -> int:
    return max(iv.dom.min.dtype.bits, iv.dom.extent.dtype.bits)


class _LayoutFree(IRMutator):
    def __init__(self, positions: Dict[Buffer, int]):
        self.positions = positions
        self.found: set = set()

    def visit_Block(self, b: Block):
        b = self.generic_visit(b)
        ann = dict(b.annotations)
        value = ann.get("layout_free_placeholders")
        if value is not None:
            rest = []
            for buf in value:
                if buf in self.positions:
                    self.found.add(self.positions[buf])
                else:
                    rest.append(buf)
            if rest:
                ann["layout_free_placeholders"] = rest
            else:
                del ann["layout_free_placeholders"]
        for key in ("const_matrix", "auto_scheduler_simplify_const_tensor_indices", "workload"):
            ann.pop(key, None)
        if set(ann) == set(b.annotations) and value is None:
            return b
        return Block(b.iter_vars, b.reads, b.writes, b.name_hint, b.body, b.init,
                     b.alloc_buffers, b.match_buffers, ann)


def _layout_free_buffers(func: PrimFunc) -> PrimFunc:
    """Parameters named by blocks' "layout_free_placeholders" become the function attr
    "layout_free_buffers" (their positions); the blocks keep the other buffers named."""
    positions = {buf: i for i, (_, buf) in enumerate(func.buffer_map)}
    m = _LayoutFree(positions)
    body = m.visit(func.body)
    if body is not func.body:
        func = func.with_body(body)
    if m.found:
        func = func.with_attr("layout_free_buffers", sorted(m.found))
    return func
