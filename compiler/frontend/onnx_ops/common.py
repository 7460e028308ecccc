"""What converters share: the registry (`@converter("Relu", ...)`), the view of one node
(`NodeContext`: its inputs as expressions or as values known now, attributes, opset, shapes)
and the ONNX element types."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ...ir.errors import UnsupportedOpError
from ...relax import expr as X
from ...relax import op as R
from ...relax import shape_util as su
from ...relax.struct_info import ShapeStructInfo, TensorStructInfo
from ...tir import expr as E
from ..errors import ModelError

CONVERTERS: Dict[str, Callable] = {}

# ONNX element types the compiler computes with.
_DTYPES = {
    onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.FLOAT16: "float16", onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.INT16: "int16", onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64", onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.UINT16: "uint16", onnx.TensorProto.UINT32: "uint32",
    onnx.TensorProto.UINT64: "uint64", onnx.TensorProto.BOOL: "bool",
}


def dtype_of_elem_type(elem_type: int, where: str) -> str:
    dtype = _DTYPES.get(int(elem_type))
    if dtype is None:
        name = onnx.TensorProto.DataType.Name(elem_type) \
            if elem_type in onnx.TensorProto.DataType.values() else str(elem_type)
        raise UnsupportedOpError(f"{where} has element type {name}, which the compiler does not "
                                 f"support (supported: {sorted(set(_DTYPES.values()))})")
    return dtype


def converter(*op_types: str, const_inputs: Sequence[int] = ()):
    """Registers a converter for `op_types`; `const_inputs` are the input positions whose
    values are needed while compiling (shapes, axes, pads...)."""
    def register(fn):
        fn.const_inputs = tuple(const_inputs)
        for t in op_types:
            CONVERTERS[t] = fn
        return fn
    return register


@dataclass
class Value:
    """An ONNX value: its expression (None for a weight not read yet) and its array when it is
    known while importing."""

    name: str
    expr: Optional[X.Expr] = None
    known: Optional[np.ndarray] = None
    weight: bool = False
    sym: Optional[np.ndarray] = None   # a shape value with symbolic elements (symbolic.py)


class NodeContext:
    """One node, as its converter sees it."""

    def __init__(self, importer, node: onnx.NodeProto, index: int):
        self._imp = importer
        self.node = node
        self.op_type = node.op_type
        self.opset = importer.opset
        self.name = node.name or f"#{index}"
        self.where = f"{node.op_type} node {self.name!r}"
        self.attrs: Dict[str, Any] = {a.name: helper.get_attribute_value(a)
                                      for a in node.attribute}
        for k, v in list(self.attrs.items()):
            if isinstance(v, bytes):
                self.attrs[k] = v.decode()
            elif isinstance(v, onnx.TensorProto):
                self.attrs[k] = numpy_helper.to_array(v)
            elif isinstance(v, list) and v and isinstance(v[0], bytes):
                self.attrs[k] = [s.decode() for s in v]

    # ---- errors -------------------------------------------------------------------------------
    def unsupported(self, what: str) -> UnsupportedOpError:
        return UnsupportedOpError(f"{self.where}: {what} is not supported")

    def error(self, what: str) -> ModelError:
        return ModelError(f"{self.where}: {what}")

    # ---- inputs -------------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.node.input)

    @property
    def num_outputs(self) -> int:
        return len(self.node.output)

    def output_used(self, i: int) -> bool:
        return i < len(self.node.output) and bool(self.node.output[i])

    def has(self, i: int) -> bool:
        return i < len(self.node.input) and bool(self.node.input[i])

    def _value(self, i: int) -> Value:
        name = self.node.input[i]
        value = self._imp.values.get(name)
        if value is None:
            raise ModelError(f"{self.where} reads {name!r}, which no earlier node, input or "
                             "initializer defines (are the nodes in topological order?)")
        return value

    def input(self, i: int) -> Optional[X.Expr]:
        """Input i as an expression (None when absent)."""
        if not self.has(i):
            return None
        value = self._value(i)
        if value.sym is not None:
            dims = ", ".join(su.dim_str(d) for d in value.sym.reshape(-1))
            raise UnsupportedOpError(
                f"{self.where}: input {i} ({self.node.input[i]!r}) holds dims of a symbolic "
                f"shape ({dims}); they can be used as a shape (Reshape, Expand, "
                "ConstantOfShape, Range, Slice) and in elementwise arithmetic (Add, Mul, "
                "Where, ...), not as this operator's input; bind the dims when "
                f"importing: from_onnx(model, shape={self._imp.bind_example()})")
        if value.expr is None:
            return self._imp.weight_var(value)
        return value.expr

    def inputs(self) -> list:
        return [self.input(i) for i in range(self.num_inputs)]

    def const(self, i: int, what: str = "") -> Optional[np.ndarray]:
        """Input i's value, which must be known while compiling (None when absent)."""
        if not self.has(i):
            return None
        value = self._value(i)
        if value.known is not None:
            return value.known
        if isinstance(value.expr, X.Constant):
            return value.expr.data
        name = self.node.input[i]
        raise ModelError(
            f"{self.where}: input {i} ({what or name!r}) must be known while compiling, but "
            f"{name!r} is computed at run time; make it an initializer or a Constant (for a "
            "graph input: onnx.numpy_helper.from_array(value, name) in graph.initializer)")

    def dims(self, i: int, what: str = "") -> Optional[Tuple[Any, ...]]:
        """Input i as dims (ints, or symbolic dims of a shape value), known while compiling
        (None when absent)."""
        if self.has(i) and self._value(i).sym is not None:
            return tuple(self._value(i).sym.reshape(-1).tolist())
        return self.ints(i, what)

    def is_symbolic(self, i: int) -> bool:
        return self.has(i) and self._value(i).sym is not None

    def operand(self, i: int) -> Optional[X.Expr]:
        """Input i as an expression; a shape value with symbolic elements (a dim read by
        arithmetic on tensors) becomes an int64 tensor computed at run time."""
        if not self.is_symbolic(i):
            return self.input(i)
        sym = self._value(i).sym
        parts = [self._dim_tensor(d) for d in sym.reshape(-1)]
        if sym.ndim == 0:
            return parts[0]
        return R.concat([R.reshape(self.emit(p), (1,)) for p in parts], 0)

    def _dim_tensor(self, d) -> X.Expr:
        """A 0-d int64 tensor holding dim `d`: the sum of `d` ones, a kernel that reads `d`
        from its input's shape (a dim that is an expression is first bound to a dim of its
        own by a match_cast)."""
        if isinstance(d, int):
            return const(d, "int64")
        return R.sum(self.emit(R.ones((self.dim_var(d),), "int64")))

    def dim_var(self, d, name: str = "dim"):
        """`d` itself when an int or a variable, else a new variable bound to its value at run
        time (a match_cast of the shape (d,)), which kernels read from the buffers they get."""
        if isinstance(d, (int, E.Var)):
            return d
        n = E.Var(name, "int64")
        self.match_cast(X.ShapeExpr((d,)), ShapeStructInfo((n,)))
        return n

    def is_known(self, i: int) -> bool:
        if not self.has(i):
            return False
        value = self._value(i)
        return value.known is not None or isinstance(value.expr, X.Constant)

    def ints(self, i: int, what: str = "") -> Optional[Tuple[int, ...]]:
        v = self.const(i, what)
        return None if v is None else tuple(int(x) for x in np.asarray(v).reshape(-1))

    def sinfo(self, i: int) -> TensorStructInfo:
        s = self.input(i).struct_info
        if not isinstance(s, TensorStructInfo):
            raise self.error(f"input {i} is not a tensor ({s})")
        return s

    def shape(self, i: int) -> tuple:
        s = self.sinfo(i)
        if s.shape is None:
            raise self.error(f"the shape of input {i} is unknown")
        return tuple(s.shape)

    def static_shape(self, i: int, why: str = "") -> Tuple[int, ...]:
        shape = self.shape(i)
        if not all(isinstance(d, int) for d in shape):
            dims = ", ".join(su.dim_str(d) for d in shape)
            raise ModelError(f"{self.where}: input {i} has symbolic shape ({dims}), but "
                             f"{why or 'this operator'} needs its dims; bind them when "
                             f"importing: from_onnx(model, shape={self._imp.bind_example()})")
        return shape

    def ndim(self, i: int) -> int:
        s = self.sinfo(i)
        if s.ndim < 0:
            raise self.error(f"the rank of input {i} is unknown")
        return s.ndim

    def dtype(self, i: int) -> str:
        return self.sinfo(i).dtype

    # ---- attributes ---------------------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def graph_attr(self, name: str) -> onnx.GraphProto:
        g = self.attrs.get(name)
        if not isinstance(g, onnx.GraphProto):
            raise self.error(f"attribute {name!r} must be a graph")
        return g

    # ---- emitting -----------------------------------------------------------------------------
    def emit(self, expr: X.Expr) -> X.Expr:
        """Binds `expr` (folded when its arguments are known now); returns a variable or the
        constant."""
        return self._imp.emit(expr)

    def match_cast(self, value: X.Expr, sinfo) -> X.Expr:
        """Binds `value` checked at run time against `sinfo` (its new symbolic dims bound by
        it)."""
        return self._imp.bb.match_cast(value, sinfo)

    def subgraph(self, graph: onnx.GraphProto, inputs=None) -> X.SeqExpr:
        """A subgraph's nodes converted into bindings of their own (a branch of an If, a loop
        body whose inputs are given by name in `inputs`); the result is its outputs (a tuple
        when several)."""
        return self._imp.subgraph(graph, inputs)

    def add_function(self, base: str) -> X.GlobalVar:
        """A GlobalVar of a fresh name for a module-level function; `define` adds the
        function."""
        return self._imp.add_function(base)

    def define(self, gv: X.GlobalVar, func: X.Function) -> None:
        self._imp.define(gv, func)

    def outer_value(self, name: str):
        """The importer's Value of `name` as the node sees it (None when nothing defines it)."""
        return self._imp.values.get(name)

    def outer_expr(self, name: str) -> X.Expr:
        """The expression of value `name` (for a weight: the parameter of main, made when
        first read)."""
        value = self._imp.values[name]
        return value.expr if value.expr is not None else self._imp.weight_var(value)


def norm_axis(ctx: NodeContext, axis: int, ndim: int) -> int:
    a = int(axis)
    if not -ndim <= a < max(ndim, 1):
        raise ctx.error(f"axis {axis} is out of range for a tensor of {ndim} dims")
    return a + ndim if a < 0 else a


def const(value, dtype: str) -> X.Constant:
    return X.const(np.asarray(value, dtype=dtype), dtype)


def agree(ctx: NodeContext, *xs):
    """`xs` (operands broadcast together) with every two symbolic dims that meet on one axis
    and cannot be told apart while compiling (`seq` and a slice's `min(seq, 128)`) made one:
    the operand with the other dim is match_cast to the one kept (an input's named dim when
    there is one), a check at run time, where ONNX Runtime also fails unless they are equal
    (or one is 1)."""
    shapes = [getattr(x.struct_info, "shape", None) for x in xs]
    if any(s is None for s in shapes):
        return list(xs)
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    named = {id(v) for v in ctx._imp.symbols.values()}
    out = [list(s) for s in padded]
    for k in range(rank):
        dims = [s[k] for s in out if not (isinstance(s[k], int) and s[k] == 1)]
        if len(dims) < 2 or any(isinstance(d, int) for d in dims) or \
                all(su.equal(dims[0], d) for d in dims[1:]):
            continue
        keep = next((d for d in dims if id(d) in named), dims[0])
        for s in out:
            if not (isinstance(s[k], int) and s[k] == 1):
                s[k] = keep
    result = []
    for x, old, new in zip(xs, padded, out):
        if any(a is not b for a, b in zip(old, new)):
            sinfo = x.struct_info
            x = ctx.match_cast(ctx.emit(x), TensorStructInfo(tuple(new[rank - len(
                sinfo.shape):]), sinfo.dtype))
        result.append(x)
    return result
