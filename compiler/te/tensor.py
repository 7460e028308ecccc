"""Tensors and the operations that produce them (placeholder, compute, extern).

A `Tensor` is output `value_index` of an `Operation`; `T[i, j]` (or `T(i, j)`) builds a
`TensorLoad` expression, which lowering turns into a BufferLoad on the tensor's buffer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from microruntime.object import OpaqueValue
from microruntime.object_generic import Map, convert_to_object

from ..ir.dtype import DType
from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.functor import post_order_visit


@dataclass(frozen=True, eq=False, slots=True)
class TensorLoad(E.ProducerLoad):
    """`tensor[indices]` inside a compute body or a hybrid script (before lowering)."""

    tensor: Any
    indices: Tuple[E.PrimExpr, ...]
    dtype: DType = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.tensor.dtype)
        if not isinstance(self.indices, tuple):  # a list, as TVM's ProducerLoad takes
            object.__setattr__(self, "indices", tuple(E.convert(i) for i in self.indices))

    @property
    def producer(self):
        """The tensor read (TVM's ProducerLoad.producer)."""
        return self.tensor

    def __repr__(self) -> str:
        return f"{self.tensor.name}[{', '.join(str(i) for i in self.indices)}]"

    def __getitem__(self, indices):
        n = len(indices) if isinstance(indices, tuple) else 1
        raise IRError(f"tensor {self.tensor.name} has {self.tensor.ndim} dimensions but is "
                      f"indexed with {len(self.indices) + n} indices: {self!r} is already an "
                      "element")



# TVM's name for this expression is `tir.ProducerLoad`; the loop IR sits below te, so the name
# is attached to it here.
E.ProducerLoad = TensorLoad

class Tensor(OpaqueValue):
    """Output `value_index` of `op`, of `shape` and `dtype`."""

    # `expr + tensor` is a whole-tensor operation: the expression's operators defer to ours
    takes_expr_operators = True

    __slots__ = ("op", "value_index", "shape", "dtype", "name")

    def __init__(self, op: "Operation", value_index: int, shape, dtype: DType, name: str):
        self.op, self.value_index, self.shape, self.dtype = op, value_index, shape, dtype
        self.name = name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices):
        """`T[i, j]`: the element, a TensorLoad. Fewer indices than dimensions give a
        TensorSlice to index further, as TVM: `T[i][j]` is `T[i, j]`."""
        if not isinstance(indices, tuple):
            indices = (indices,)
        if any(isinstance(i, slice) for i in indices):
            return TensorRegion.of(self, indices)
        if len(indices) < self.ndim:
            return TensorSlice(self, indices)
        return self(*indices)

    def __call__(self, *indices) -> TensorLoad:
        if len(indices) != self.ndim:
            raise IRError(f"tensor {self.name} has {self.ndim} dimensions but is indexed with "
                          f"{len(indices)} indices")
        return TensorLoad(self, tuple(E.convert(i) for i in indices))

    def __repr__(self) -> str:
        return f"Tensor({self.name}, shape={[str(s) for s in self.shape]}, {self.dtype})"

    def __hash__(self) -> int:
        return hash((id(self.op), self.value_index))

    def __eq__(self, other) -> bool:
        return isinstance(other, Tensor) and other.op is self.op \
            and other.value_index == self.value_index


# ---- arithmetic on whole tensors (TVM's operator overloading with topi loaded) --------------
# `A + 1`, `1 - A`, `A * B`, `A / k`: a new te.compute. With a scalar (a number, an expression,
# an element `B[0, 0]`) it is element-wise, tag "elemwise"; two tensors broadcast as numpy,
# tag "broadcast". The names are topi's (T_add, T_subtract, T_multiply, T_divide).
_TENSOR_OPS = {"add": E.Add, "subtract": E.Sub, "multiply": E.Mul, "divide": E.Div}


def _broadcast_shape(name: str, a, b) -> tuple:
    out = []
    for k in range(max(len(a), len(b))):
        da = a[len(a) - 1 - k] if k < len(a) else None
        db = b[len(b) - 1 - k] if k < len(b) else None
        if da is None or E.is_const_int(da, 1):
            out.append(db if db is not None else da)
        elif db is None or E.is_const_int(db, 1) or _same_extent(da, db):
            out.append(da)
        else:
            raise IRError(f"T_{name}: shapes {[str(s) for s in a]} and {[str(s) for s in b]} do "
                          f"not broadcast (dimension -{k + 1}: {da} vs {db})")
    return tuple(reversed(out))


def _same_extent(a, b) -> bool:
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value
    return a is b


def _broadcast_read(t: "Tensor", index) -> TensorLoad:
    off = len(index) - t.ndim
    return t(*[E.const(0, i.dtype) if E.is_const_int(d, 1) else i
               for d, i in zip(t.shape, index[off:])])


def _tensor_op(name: str, lhs, rhs) -> "Tensor":
    fn = _TENSOR_OPS[name]
    lt, rt = isinstance(lhs, Tensor), isinstance(rhs, Tensor)
    if lt and rt:
        shape = _broadcast_shape(name, lhs.shape, rhs.shape)
        tag = "broadcast"

        def body(idx):
            return E.binary(fn, _broadcast_read(lhs, idx), _broadcast_read(rhs, idx))
    else:
        t = lhs if lt else rhs
        other = rhs if lt else lhs
        if isinstance(other, TensorSlice):
            other = other.asobject()
        shape, tag = t.shape, "elemwise"

        def body(idx):
            return E.binary(fn, t(*idx), other) if lt else E.binary(fn, other, t(*idx))
    axis = tuple(E.IterVar(E.Range(E.make_const(d.dtype, 0), d), E.Var(f"ax{k}", d.dtype))
                 for k, d in enumerate(shape))
    value = body([iv.var for iv in axis])
    return ComputeOp(f"T_{name}", tag, None, axis, (value,)).output(0)


def _tensor_method(name: str, reflected: bool):
    def method(self, other):
        if not isinstance(other, (Tensor, TensorSlice)):
            try:
                other = E.convert(other)
            except IRError:
                return NotImplemented
        return _tensor_op(name, other, self) if reflected else _tensor_op(name, self, other)

    return method


for _op, _name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                   ("truediv", "divide")):
    setattr(Tensor, f"__{_op}__", _tensor_method(_name, False))
    setattr(Tensor, f"__r{_op}__", _tensor_method(_name, True))


def _tensor_neg(self) -> "Tensor":
    return _tensor_op("multiply", self, -1)


Tensor.__neg__ = _tensor_neg


class TensorSlice:
    """`T[i]` of a tensor with more dimensions: indexing it again adds indices (`T[i][j]`);
    used as a value it is the element `T(*indices)` (an error until every dimension has its
    index), as TVM's TensorSlice."""

    __slots__ = ("tensor", "indices")

    def __init__(self, tensor: Tensor, indices):
        self.tensor = tensor
        self.indices = tuple(indices) if isinstance(indices, tuple) else (indices,)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return self.tensor[self.indices + indices]

    def asobject(self) -> TensorLoad:
        return self.tensor(*self.indices)

    _as_expr = asobject  # what E.convert calls

    @property
    def dtype(self) -> DType:
        return self.tensor.dtype

    def __repr__(self) -> str:
        return f"{self.tensor.name}[{', '.join(str(i) for i in self.indices)}]"


class TensorRegion:
    """`T[i, 0:16]`: a region of a tensor, one Range per dimension (an index is a range of
    one); what a tensor intrinsic is called on inside te.compute (compiler/te/tensor_compute.py).
    """

    __slots__ = ("tensor", "ranges")

    def __init__(self, tensor: "Tensor", ranges):
        self.tensor, self.ranges = tensor, tuple(ranges)

    @staticmethod
    def of(tensor: "Tensor", indices) -> "TensorRegion":
        if len(indices) != tensor.ndim:
            raise IRError(f"tensor {tensor.name} has {tensor.ndim} dimensions but the region "
                          f"has {len(indices)}")
        ranges = []
        for i, extent in zip(indices, tensor.shape):
            if isinstance(i, slice):
                if i.step not in (None, 1):
                    raise IRError(f"tensor {tensor.name}: a region's slices take no step, "
                                  f"got {i}")
                lo = E.convert(0 if i.start is None else i.start)
                hi = E.convert(extent if i.stop is None else i.stop)
                ranges.append(E.Range(lo, hi - lo if not (E.is_const_int(lo) and
                                                          E.is_const_int(hi))
                                      else E.const(hi.value - lo.value, hi.dtype)))
            else:
                ranges.append(E.Range(E.convert(i), E.const(1)))
        return TensorRegion(tensor, ranges)

    @staticmethod
    def whole(tensor: "Tensor") -> "TensorRegion":
        return TensorRegion(tensor, [E.Range(E.make_const(s.dtype, 0), s) for s in tensor.shape])

    def asobject(self):
        raise IRError(f"the region {self!r} is not a value; call a tensor intrinsic on it")

    _as_expr = asobject

    def __repr__(self) -> str:
        return (f"{self.tensor.name}[" +
                ", ".join(f"{r.min}:{r.min + r.extent}" for r in self.ranges) + "]")


def _delegate_to_element(name):
    def method(self, *args):
        if args and isinstance(args[0], Tensor):  # an element and a whole tensor
            return getattr(args[0], _REFLECTED.get(name, name))(self)
        return getattr(self.asobject(), name)(*args)

    method.__name__ = name
    return method


_REFLECTED = {"__add__": "__radd__", "__radd__": "__add__", "__sub__": "__rsub__",
              "__rsub__": "__sub__", "__mul__": "__rmul__", "__rmul__": "__mul__",
              "__truediv__": "__rtruediv__", "__rtruediv__": "__truediv__"}


# A slice in an expression stands for its element (`A[i] * 2` with A one-dimensional is a
# TensorLoad already; this gives the clear error for a partial one).
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__neg__", "__lt__", "__le__", "__gt__", "__ge__", "astype"):
    setattr(TensorSlice, _name, _delegate_to_element(_name))


class Operation:
    """Base of operations. `outputs` are its tensors; `input_tensors` (a property, as in TVM)
    those it reads."""

    name: str
    outputs: List[Tensor]

    def output(self, i: int) -> Tensor:
        return self.outputs[i]

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    @property
    def input_tensors(self) -> List[Tensor]:
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


def op_attrs(attrs: Optional[Dict[str, Any]]) -> Map:
    """An operation's attributes as TVM keeps them: a Map whose numbers are IR constants and
    whose lists are Arrays (a Map given stays as it is)."""
    if isinstance(attrs, Map):
        return attrs
    return convert_to_object(dict(attrs or {}))


class PlaceholderOp(Operation):
    def __init__(self, name: str, shape, dtype: DType):
        self.name, self.shape, self.dtype = name, shape, dtype
        self.tag, self.attrs = "", op_attrs(None)
        self.axis: Tuple[E.IterVar, ...] = ()
        self.reduce_axis: Tuple[E.IterVar, ...] = ()
        self.outputs = [Tensor(self, 0, shape, dtype, name)]


class ComputeOp(Operation):
    """`outputs[k][axis] = body[k]`; the bodies may be Reduce nodes over `reduce_axis`."""

    def __init__(self, name: str, tag: str, attrs: Optional[Dict[str, Any]],
                 axis: Tuple[E.IterVar, ...], body: Tuple[E.PrimExpr, ...]):
        self.name, self.tag, self.attrs = name, tag, op_attrs(attrs)
        self.axis, self.body = tuple(axis), tuple(body)
        self.reduce_axis = _reduce_axes(name, self.body)
        shape = tuple(iv.dom.extent for iv in self.axis)
        names = [name] if len(body) == 1 else [f"{name}.v{i}" for i in range(len(body))]
        self.outputs = [Tensor(self, i, shape, b.dtype, names[i]) for i, b in enumerate(body)]

    @property
    def shape(self):
        return self.outputs[0].shape

    @property
    def input_tensors(self) -> List[Tensor]:
        found: List[Tensor] = []
        for b in self.body:
            for load in tensor_loads(b):
                if load.tensor not in found:
                    found.append(load.tensor)
        return found


class ExternOp(Operation):
    """Outputs computed by an opaque statement (`te.extern`): `body` reads the buffers
    `input_placeholders` (one per tensor of `inputs`) and writes `output_placeholders`;
    lowering binds both to the buffers it chose for those tensors. No axes of its own."""

    def __init__(self, name: str, tag: str, attrs: Optional[Dict[str, Any]], inputs,
                 input_placeholders, output_placeholders, body):
        self.name, self.tag, self.attrs = name, tag, op_attrs(attrs)
        self.inputs = list(inputs)
        self.input_placeholders = list(input_placeholders)
        self.output_placeholders = list(output_placeholders)
        self.body = body
        self.axis: Tuple[E.IterVar, ...] = ()
        self.reduce_axis: Tuple[E.IterVar, ...] = ()
        self.outputs = [Tensor(self, i, b.shape, b.dtype, b.name)
                        for i, b in enumerate(self.output_placeholders)]

    @property
    def input_tensors(self) -> List[Tensor]:
        found: List[Tensor] = []
        for t in self.inputs:
            if t not in found:
                found.append(t)
        return found


def _reduce_axes(name: str, body: Tuple[E.PrimExpr, ...]) -> Tuple[E.IterVar, ...]:
    reduces = [b for b in body if isinstance(b, E.Reduce)]
    if not reduces:
        for b in body:
            _no_nested_reduce(name, b)
        return ()
    if len(reduces) != len(body):
        raise IRError(f"compute {name}: either every output is a reduction or none is")
    first = reduces[0]
    for r in reduces[1:]:
        if r.combiner is not first.combiner or len(r.axis) != len(first.axis) \
                or any(a is not b for a, b in zip(r.axis, first.axis)):
            raise IRError(f"compute {name}: the outputs' reductions must share the reducer "
                          "and the axes")
    for s in first.source:
        _no_nested_reduce(name, s)
    return tuple(first.axis)


def _no_nested_reduce(name: str, e: E.PrimExpr) -> None:

    def check(n):
        if isinstance(n, E.Reduce):
            raise IRError(f"compute {name}: a reduction (te.sum, ...) must be the whole body, "
                          "not part of an expression; compute it in its own stage")

    post_order_visit(e, check)


def tensor_loads(e: Any) -> List[TensorLoad]:
    """Every TensorLoad under `e` (Reduce sources and conditions are children)."""

    out: List[TensorLoad] = []

    def fn(n):
        if isinstance(n, TensorLoad):
            out.append(n)

    post_order_visit(e, fn)
    return out
