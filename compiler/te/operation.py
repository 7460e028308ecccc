"""Declaring tensors: placeholder, compute, extern, reduce_axis, thread_axis and variables."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional

from ..ir.dtype import DTypeLike, as_dtype, int32
from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.buffer import decl_buffer
from ..tir.stmt import Evaluate, Stmt
from .tag import scoped_tag
from .tensor import ComputeOp, ExternOp, PlaceholderOp, Tensor
from .tensor_compute import TensorIntrinCall, make_tensor_compute


def _shape(shape) -> tuple:
    """The shape as expressions; a Python float extent (`N / bn`) is truncated to int, as TVM's
    te.compute does."""
    if not isinstance(shape, (list, tuple)):
        shape = (shape,)
    return tuple(E.convert(int(s) if isinstance(s, float) else s) for s in shape)


def var(name: str = "v", dtype: DTypeLike = "int32") -> E.Var:
    return E.Var(name, as_dtype(dtype))


def size_var(name: str = "n", dtype: DTypeLike = "int32") -> E.SizeVar:
    """A variable known to be non-negative (a symbolic size)."""
    return E.SizeVar(name, as_dtype(dtype))


def const(value, dtype: Optional[DTypeLike] = None) -> E.PrimExpr:
    return E.const(value, dtype)


def placeholder(shape, dtype: DTypeLike = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of `shape` (ints or symbolic Vars)."""
    return PlaceholderOp(name, _shape(shape), as_dtype(dtype)).output(0)


def _range(dom) -> E.Range:
    if isinstance(dom, E.Range):
        return dom
    if isinstance(dom, (tuple, list)):
        if len(dom) != 2:
            raise IRError(f"a domain is (min, max_exclusive), got {dom!r}")
        lo, hi = E.convert(dom[0]), E.convert(dom[1])
        return E.Range(lo, hi - lo if not E.is_const_int(lo, 0) else hi)
    return E.Range(E.const(0), E.convert(dom))


def reduce_axis(dom, name: str = "rv") -> E.IterVar:
    """A reduction axis over `dom` (an extent, a (min, max) pair or a Range)."""
    rng = _range(dom)
    return E.IterVar(rng, E.Var(name, rng.extent.dtype), E.IterKind.REDUCE)


def thread_axis(tag="", name: str = "", dom=None) -> E.IterVar:
    """A GPU thread axis ("blockIdx.x", "threadIdx.y", "vthread", ...) for `Stage.bind`.
    TVM's argument order `thread_axis(dom, tag, name)` works too: `thread_axis((0, 32),
    "threadIdx.x")`. Bound to a loop, the axis runs over that loop's range (the range given
    here is its range elsewhere, as TVM's)."""
    if not isinstance(tag, str):  # TVM's positional order: (dom, tag, name)
        tag, name, dom = name, dom if isinstance(dom, str) else "", tag
    if isinstance(dom, str) and not tag:
        tag, dom = dom, None
    if not tag:
        raise IRError("thread_axis needs a tag such as 'threadIdx.x' or 'blockIdx.x'")
    return E.IterVar(None if dom is None else _range(dom), E.Var(name or tag), E.IterKind.THREAD,
                     tag)


def _arg_names(fcompute: Callable, ndim: int) -> list:
    """The index names fcompute declares, as TVM's te.compute reads them: named parameters,
    then `i0, i1, ...` for the dimensions a `*indices` parameter takes. Fewer named parameters
    than dimensions (and no `*indices`) declare that many leading dimensions."""
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        params = []
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    if len(named) > ndim:
        raise IRError(f"compute: fcompute takes {len(named)} indices but the shape has "
                      f"{ndim} dimensions")
    if varargs or not named:
        rest = ndim - len(named)
        return named + ([f"i{k}" for k in range(rest)] if rest != 1 or named else ["i"])
    return named


def compute(shape, fcompute: Callable, name: str = "compute", tag: str = "",
            attrs: Optional[Dict[str, Any]] = None):
    """A tensor whose element at index `i...` is `fcompute(i...)`. If fcompute returns a tuple
    the operation has several outputs (a list of Tensors is returned). `tag` defaults to the
    tag of the enclosing `te.tag_scope`.

    fcompute takes one index per dimension, by name or as `*indices`; as TVM's, one taking
    fewer named indices (and no `*indices`) computes only that many leading dimensions of
    `shape` (`compute((4, 5), lambda i: A[i, 0])` has shape (4,))."""
    tag = scoped_tag(tag, f"compute {name}")
    full_shape = _shape(shape)
    names = _arg_names(fcompute, len(full_shape))
    shape = full_shape[:len(names)]
    axis = tuple(E.IterVar(E.Range(E.make_const(s.dtype, 0), s), E.Var(n, s.dtype))
                 for n, s in zip(names, shape))
    body = fcompute(*[iv.var for iv in axis])
    if isinstance(body, TensorIntrinCall):  # computed by a tensor intrinsic on regions
        return make_tensor_compute(full_shape, axis, body, name, tag, attrs)
    multi = isinstance(body, (tuple, list))
    bodies = tuple(E.convert(b) for b in (body if multi else (body,)))
    if not bodies:
        raise IRError(f"compute {name}: fcompute returned no value")
    op = ComputeOp(name, tag, attrs, axis, bodies)
    return list(op.outputs) if multi else op.output(0)



def extern(shape, inputs, fcompute: Callable, name: str = "extern", dtype=None, tag: str = "",
           attrs: Optional[Dict[str, Any]] = None):
    """Tensors computed by an opaque statement, as TVM's `te.extern`: `fcompute(ins, outs)`
    gets one Buffer per input tensor and per output and returns a statement or an expression
    (wrapped in Evaluate), typically `tir.call_packed("f", *ins, *outs)`. `shape` is one shape
    or a list of shapes (several outputs); `dtype` one dtype or one per output (default: the
    first input's). Returns a Tensor, or a list of Tensors for several outputs. `tag` defaults
    to the tag of the enclosing `te.tag_scope`."""
    tag = scoped_tag(tag, f"extern {name}")
    multi = isinstance(shape, (list, tuple)) and bool(shape) \
        and all(isinstance(s, (list, tuple)) for s in shape)
    shapes = [_shape(s) for s in shape] if multi else [_shape(shape)]
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    for t in inputs:
        if not isinstance(t, Tensor):
            raise IRError(f"extern {name}: input {t!r} is not a Tensor")
    if dtype is None:
        if not inputs:
            raise IRError(f"extern {name}: give dtype= when there are no inputs")
        dtype = inputs[0].dtype
    dtypes = list(dtype) if isinstance(dtype, (list, tuple)) else [dtype] * len(shapes)
    if len(dtypes) != len(shapes):
        raise IRError(f"extern {name}: {len(shapes)} output shapes but {len(dtypes)} dtypes")
    # as TVM's, each placeholder has an element offset of its own (a Var), bound to that of the
    # buffer the tensor gets
    ins = [decl_buffer(t.shape, t.dtype, t.name, elem_offset=E.Var("elem_offset", int32))
           for t in inputs]
    names = [name] if len(shapes) == 1 else [f"{name}.v{i}" for i in range(len(shapes))]
    outs = [decl_buffer(s, as_dtype(d), n, elem_offset=E.Var("elem_offset", int32))
            for s, d, n in zip(shapes, dtypes, names)]
    body = fcompute(ins, outs)
    if not isinstance(body, Stmt):
        try:
            body = Evaluate(E.convert(body))
        except IRError:
            raise IRError(f"extern {name}: fcompute must return a statement or an expression, "
                          f"got {type(body).__name__}") from None
    op = ExternOp(name, tag, attrs, inputs, ins, outs, body)
    return list(op.outputs) if multi else op.output(0)
