"""The ONNX importer: `from_onnx(model) -> (mod, params)`.

    import onnx
    from compiler.frontend import from_onnx
    mod, params = from_onnx(onnx.load("model.onnx"), shape={"x": (1, 3, 224, 224)})
    lib = compiler.relay.build(mod, target="llvm", params=params)

`model` is a ModelProto, a path or the serialized bytes. `main`'s parameters are the graph
inputs (in the model's order) then the weights; `main.attrs["num_input"]` says how many inputs.
`params` maps each weight to its array under its ONNX initializer name. Floating-point
initializers that the computation reads as tensors are weights; integer and bool initializers
(shapes, axes, indices) and those read only as compile-time arguments (a Resize's scales, a
Clip's bounds) are constants of the graph.

Shapes come from the model's input types; `shape={"x": (1, 784)}` overrides them. A dim given
by name (`dim_param`, or a string in `shape`: `shape={"x": ("n", 784)}`) or not given at all
becomes a symbolic dim (one per name, shared by every input that uses it); the graph executor
needs them bound, by `shape`. `dtype` is the type of inputs whose type the model leaves out
(a str, or a dict by input name). `opset` overrides the model's default-domain opset.

Operators are converted one ONNX node at a time by the converters of `onnx_ops` (a family per
file), opsets 7 to 21 (newer opsets where the operator is unchanged). Values known while
importing (Constant nodes, integer initializers, Shape of a static shape, and whatever is
computed from them alone) are folded at once, so shape subgraphs disappear. Before any
conversion the importer checks that it knows every operator of the model: if not,
UnsupportedOpError lists each unsupported operator with the names of its nodes.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import numpy_helper

from ..ir.errors import CompilerError
from ..ir.module import IRModule
from ..relax import expr as X
from ..relax.block_builder import BlockBuilder
from ..relax.interpreter import evaluate
from ..relax.struct_info import TensorStructInfo
from ..tir import expr as E
from .errors import ModelError, UnsupportedOpError
from .onnx_ops import CONVERTERS, NodeContext, Value, dtype_of_elem_type

MIN_OPSET = 7
MAX_TESTED_OPSET = 21

ModelLike = Union[onnx.ModelProto, bytes, str, os.PathLike]


def load_model(model: ModelLike) -> onnx.ModelProto:
    """A checked ModelProto from a ModelProto, a path or serialized bytes; ModelError when it
    cannot be read or is malformed."""
    if isinstance(model, onnx.ModelProto):
        proto = model
    elif isinstance(model, (bytes, bytearray, memoryview)):
        proto = _parse(bytes(model), "the given bytes")
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ModelError(f"cannot read ONNX model {path!r}: {e.strerror or e}") from None
        proto = _parse(data, repr(path))
        try:
            onnx.load_external_data_for_model(proto, os.path.dirname(path) or ".")
        except Exception as e:  # noqa: BLE001 - any failure of the onnx package is the model's
            raise ModelError(f"ONNX model {path!r}: cannot load its external data: {e}") \
                from None
    else:
        raise ModelError(f"from_onnx needs an onnx.ModelProto, a path or bytes, got "
                         f"{type(model).__name__}")
    if not proto.HasField("graph") or not proto.graph.output:
        raise ModelError("the ONNX model has no graph or its graph has no outputs: the file is "
                         "truncated or not an ONNX model")
    names = {i.name for i in proto.graph.input} | {t.name for t in proto.graph.initializer}
    for i, node in enumerate(proto.graph.node):
        for name in node.input:
            if name and name not in names:
                raise ModelError(f"the ONNX model is malformed: node {node.name or i!r} "
                                 f"({node.op_type}) reads {name!r}, which no earlier node, input "
                                 "or initializer defines")
        names.update(node.output)
    return proto


def _parse(data: bytes, what: str) -> onnx.ModelProto:
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and its kin
        raise ModelError(f"{what} is not a readable ONNX model (truncated or corrupt: {e})") \
            from None
    return proto


def model_opset(proto: onnx.ModelProto, opset: Optional[int] = None) -> int:
    """The default-domain opset the model is read with. An opset older than 7 is read as 7
    when each of the model's operators is the same in both."""
    if opset is None:
        found = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
        opset = found[0] if found else onnx.defs.onnx_opset_version()
    opset = int(opset)
    if opset < MIN_OPSET:
        changed = sorted({n.op_type for n in proto.graph.node
                          if n.domain in ("", "ai.onnx") and _changed_since(n.op_type, opset)})
        if changed:
            raise UnsupportedOpError(
                f"the model uses opset {opset}, older than the oldest the ONNX frontend reads "
                f"({MIN_OPSET}), and {', '.join(changed)} changed since; convert it with "
                "onnx.version_converter.convert_version(model, 13)")
        opset = MIN_OPSET
    return opset


def _changed_since(op_type: str, opset: int) -> bool:
    try:
        old = onnx.defs.get_schema(op_type, opset).since_version
        return old != onnx.defs.get_schema(op_type, MIN_OPSET).since_version
    except Exception:  # noqa: BLE001 - an operator unknown at that opset
        return True


def unsupported_ops(graph: onnx.GraphProto) -> Dict[str, List[str]]:
    """{op description: [node names]} of the operators no converter handles."""
    out: Dict[str, List[str]] = {}
    for i, node in enumerate(graph.node):
        if node.domain not in ("", "ai.onnx"):
            key = f"{node.domain}.{node.op_type}"
        elif node.op_type in CONVERTERS:
            continue
        else:
            key = node.op_type
        out.setdefault(key, []).append(node.name or f"#{i} (unnamed)")
    return out


def check_supported(graph: onnx.GraphProto) -> None:
    missing = unsupported_ops(graph)
    if not missing:
        return
    lines = [f"  {op}: node{'s' if len(names) > 1 else ''} " + ", ".join(repr(n) for n in names)
             for op, names in sorted(missing.items())]
    raise UnsupportedOpError(
        f"the model uses {len(missing)} operator{'s' if len(missing) > 1 else ''} the ONNX "
        "frontend does not support:\n" + "\n".join(lines) +
        f"\nsupported: {', '.join(sorted(CONVERTERS))}")


def required_constants(model: ModelLike) -> List[str]:
    """The graph inputs whose values the compiler needs while compiling (a Reshape's shape, a
    Slice's starts, ... given as graph inputs, and whatever computes them): to compile such a
    model, make them initializers (onnx.numpy_helper.from_array)."""
    proto = load_model(model)
    graph = proto.graph
    producers = {o: n for n in graph.node for o in n.output}
    inputs = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    wanted: List[str] = []
    for node in graph.node:
        conv = CONVERTERS.get(node.op_type)
        for i in getattr(conv, "const_inputs", ()):
            if i < len(node.input) and node.input[i]:
                wanted.append(node.input[i])
    seen, out = set(), []
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs:
            out.append(name)
        elif name in producers and producers[name].op_type not in ("Shape", "Size"):
            wanted.extend(n for n in producers[name].input if n)
    return sorted(out)


class _Importer:
    def __init__(self, proto: onnx.ModelProto, shape, dtype, opset: int):
        self.graph = proto.graph
        self.opset = opset
        self.bb = BlockBuilder()
        self.values: Dict[str, Value] = {}
        self.symbols: Dict[str, E.Var] = {}
        self.inputs: List[X.Var] = []
        self.weights: List[X.Var] = []
        self.params: Dict[str, np.ndarray] = {}
        self._shape = dict(shape or {})
        self._dtype = dtype

    # ---- inputs and initializers --------------------------------------------------------------
    def _dim(self, d: Any, where: str):
        if isinstance(d, str):
            if d not in self.symbols:
                self.symbols[d] = E.Var(d, "int64")
            return self.symbols[d]
        if isinstance(d, E.PrimExpr):
            return d
        if isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0:
            return int(d)
        raise ModelError(f"{where}: a dim must be a non-negative int or a name (a symbolic "
                         f"dim), got {d!r}")

    def _input_dtype(self, vi: onnx.ValueInfoProto) -> str:
        elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
        if elem:
            return dtype_of_elem_type(elem, f"graph input {vi.name!r}")
        d = self._dtype.get(vi.name, "float32") if isinstance(self._dtype, Mapping) \
            else self._dtype
        return str(np.dtype(d))

    def _input_shape(self, vi: onnx.ValueInfoProto) -> tuple:
        name = vi.name
        if name in self._shape:
            given = self._shape[name]
            if not isinstance(given, (list, tuple)):
                raise ModelError(f"shape[{name!r}] must be a tuple of dims, got {given!r}")
            return tuple(self._dim(d, f"shape[{name!r}]") for d in given)
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise UnsupportedOpError(f"graph input {name!r} is not a tensor (sequences, maps and "
                                     "optionals are not supported)")
        if not t.HasField("shape"):
            raise ModelError(f"graph input {name!r} has no shape in the model: give it, e.g. "
                             f"from_onnx(model, shape={{{name!r}: (1, 3, 224, 224)}})")
        dims = []
        for i, d in enumerate(t.shape.dim):
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            else:
                dims.append(self._dim(d.dim_param or f"{name}_dim{i}", name))
        return tuple(dims)

    def add_inputs(self) -> None:
        init_names = {t.name for t in self.graph.initializer}
        names = [vi.name for vi in self.graph.input if vi.name not in init_names]
        unknown = sorted(set(self._shape) - set(names))
        if unknown:
            raise ModelError(f"shape names {unknown}, which are not inputs of the model (its "
                             f"inputs: {names})")
        for vi in self.graph.input:
            if vi.name in init_names:
                continue
            var = X.Var(vi.name, TensorStructInfo(self._input_shape(vi), self._input_dtype(vi)))
            self.inputs.append(var)
            self.values[vi.name] = Value(vi.name, expr=var)
        for t in self.graph.initializer:
            try:
                data = numpy_helper.to_array(t)
            except Exception as e:  # noqa: BLE001 - a malformed TensorProto
                raise ModelError(f"initializer {t.name!r} cannot be read: {e}") from None
            dtype_of_elem_type(t.data_type, f"initializer {t.name!r}")
            data = np.ascontiguousarray(data)
            if data.dtype.kind == "f":
                self.values[t.name] = Value(t.name, known=data, weight=True)
            else:
                self.values[t.name] = Value(t.name, expr=X.const(data, str(data.dtype)),
                                            known=data)

    def bind_example(self) -> str:
        """`{name: shape}` for the inputs with symbolic dims, those dims replaced by 1."""
        items = []
        for v in self.inputs:
            shape = v.struct_info.shape
            if not all(isinstance(d, int) for d in shape):
                dims = [str(d) if isinstance(d, int) else "1" for d in shape]
                items.append(f"{v.name_hint!r}: ({', '.join(dims)}{',' if len(dims) == 1 else ''})")
        return "{" + ", ".join(items) + "}"

    def weight_var(self, value: Value) -> X.Var:
        """The parameter of `main` for a weight, made when the computation first reads it."""
        if value.expr is None:
            var = X.Var(value.name, TensorStructInfo(value.known.shape, str(value.known.dtype)))
            self.weights.append(var)
            self.params[value.name] = value.known
            value.expr = var
        return value.expr

    # ---- nodes --------------------------------------------------------------------------------
    def convert(self) -> None:
        for index, node in enumerate(self.graph.node):
            ctx = NodeContext(self, node, index)
            try:
                outs = CONVERTERS[node.op_type](ctx)
            except CompilerError:
                raise
            except (ValueError, IndexError, KeyError, TypeError) as e:
                raise ModelError(f"{ctx.where}: cannot be converted: {e}") from e
            if isinstance(outs, (X.Expr, type(None))):
                outs = [outs]
            outs = list(outs)
            for i, name in enumerate(node.output):
                if not name:
                    continue
                if i >= len(outs) or outs[i] is None:
                    raise UnsupportedOpError(f"{ctx.where}: output {i} ({name!r}) is not "
                                             "supported; the model reads it")
                self.values[name] = Value(name, expr=ctx.emit(outs[i]))

    def output(self, name: str) -> X.Expr:
        value = self.values.get(name)
        if value is None:
            raise ModelError(f"graph output {name!r} is not computed by any node, input or "
                             "initializer")
        if value.expr is None:
            return self.weight_var(value)
        return value.expr

    # ---- folding ------------------------------------------------------------------------------
    def emit(self, expr: X.Expr) -> X.Expr:
        """`expr` bound in main, or its value when it only reads values known now."""
        if isinstance(expr, X.Call) and isinstance(expr.op, X.Op):
            args = tuple(self.leaf(a) for a in expr.args)
            if any(a is not b for a, b in zip(args, expr.args)):
                expr = X.Call(expr.op, args, expr.attrs, expr.sinfo_args)
            if args and all(_known(a) for a in args) and expr.op.name != "relax.shape_of":
                return _as_constant(evaluate(expr))
        elif isinstance(expr, X.TupleGetItem):
            t = self.leaf(expr.tuple_value)
            if isinstance(t, X.Tuple):
                return t.fields[expr.index]
            expr = X.TupleGetItem(t, expr.index)
        elif isinstance(expr, X.Tuple):
            return self.leaf(expr)
        if isinstance(expr, X.Constant) or isinstance(expr, X.Var):
            return expr
        return self.bb.emit(expr)

    def leaf(self, expr: X.Expr) -> X.Expr:
        if isinstance(expr, X.Tuple):
            fields = tuple(self.leaf(f) for f in expr.fields)
            return expr if all(a is b for a, b in zip(fields, expr.fields)) else X.Tuple(fields)
        if X.is_leaf(expr):
            return expr
        return self.emit(expr)

    # ---- the module ---------------------------------------------------------------------------
    def build(self) -> IRModule:
        bb = self.bb
        bb.begin_function("main", None, {"global_symbol": "main"})
        bb.begin_dataflow_block()
        self.convert()
        outs = [self.output(o.name) for o in self.graph.output]
        result = outs[0] if len(outs) == 1 else X.Tuple(tuple(outs))
        out = bb.emit_output(result, "output")
        bb.end_block()
        params = self.inputs + self.weights
        bb.set_function_attr("num_input", len(self.inputs))
        bb.emit_func_output(out, params)
        return bb.get()


def _known(e: X.Expr) -> bool:
    if isinstance(e, X.Tuple):
        return all(_known(f) for f in e.fields)
    if isinstance(e, X.ShapeExpr):
        return all(isinstance(d, int) for d in e.values)
    if isinstance(e, X.PrimValue):
        return not isinstance(e.value, E.PrimExpr)
    return isinstance(e, (X.Constant, X.StringImm, X.DataTypeImm))


def _as_constant(value) -> X.Expr:
    if isinstance(value, (tuple, list)):
        return X.Tuple(tuple(_as_constant(v) for v in value))
    return X.Constant(np.asarray(value))


def from_onnx(model: ModelLike, shape: Optional[Mapping[str, Sequence[Any]]] = None,
              dtype: Union[str, Mapping[str, str]] = "float32",
              opset: Optional[int] = None) -> tuple:
    """(IRModule, params) of an ONNX model; see the module docstring."""
    proto = load_model(model)
    check_supported(proto.graph)
    imp = _Importer(proto, shape, dtype, model_opset(proto, opset))
    imp.add_inputs()
    mod = imp.build()
    return mod, dict(imp.params)
