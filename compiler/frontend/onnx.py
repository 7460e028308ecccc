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
file), opsets 7 to 21 (newer opsets where the operator is unchanged). A node whose inputs are
all known while importing (initializers, Constant nodes, Shape of a static shape, and whatever
is computed from them alone) is evaluated at once: by its converter and the graph-level
reference interpreter when the frontend supports the operator, otherwise by onnx's reference
evaluator. So shape subgraphs disappear whatever operators they use, and only the operators
left on the run-time path need a converter. Before any conversion the importer checks that it
can handle every node: if not, UnsupportedOpError lists each operator it cannot handle once,
with its node count, the ones on the run-time path apart from those that only compute
constants.

Control flow (onnx_ops/control_flow.py): an If on a condition known while importing becomes
the branch taken; an If on a run-time condition becomes a graph-level If, and a Loop a call of a
module-level function (one per Loop) that calls itself once per iteration. `main` then has
plain bindings (no dataflow block) and only the Relax VM runs the module (compiler.relax.build).

A model that is not valid ONNX is refused (ModelError): a tensor written by two nodes (or by a
node and an input or initializer), two initializers of one name, a default-domain opset newer
than the onnx package knows.
"""
from __future__ import annotations

import dataclasses
import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from ..ir.errors import CompilerError
from ..ir.module import IRModule
from ..relax import expr as X
from ..relax.block_builder import BlockBuilder
from ..relax.interpreter import evaluate
from ..relax.struct_info import TensorStructInfo
from ..relax.transform.fold_constant import symbolic_result
from ..tir import expr as E
from .errors import ModelError, UnsupportedOpError
from .onnx_ops import CONVERTERS, NodeContext, Value, dtype_of_elem_type, symbolic
from .onnx_support import (
    CONTROL_FLOW_OPS,
    DEFAULT_DOMAINS,
    UnsupportedReport,
    check_supported,
    foldable,
    op_key,
    reference_gap,
    supported,
)

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
    _check_definitions(proto.graph)
    return proto


def _check_definitions(graph: onnx.GraphProto) -> None:
    """ModelError unless every tensor has exactly one definition (an input, an initializer
    or one node's output; an input may also have an initializer, its default) made before
    any node reads it."""
    inits = set()
    for t in graph.initializer:
        if t.name in inits:
            raise ModelError(f"the ONNX model is invalid: two initializers are named {t.name!r}; "
                             "each tensor name must be defined once (rename or drop one)")
        inits.add(t.name)
    defined: Dict[str, str] = {}
    for vi in graph.input:
        if vi.name in defined:
            raise ModelError(f"the ONNX model is invalid: two graph inputs are named "
                             f"{vi.name!r}; each tensor name must be defined once")
        defined[vi.name] = "a graph input"
    for name in inits:
        defined.setdefault(name, "an initializer")
    for i, node in enumerate(graph.node):
        where = f"node {node.name or f'#{i}'!r} ({node.op_type})"
        for name in node.input:
            if name and name not in defined:
                raise ModelError(f"the ONNX model is malformed: {where} reads {name!r}, which no "
                                 "earlier node, input or initializer defines")
        for name in node.output:
            if not name:
                continue
            if name in defined:
                raise ModelError(f"the ONNX model is invalid: {where} writes {name!r}, which "
                                 f"{defined[name]} already defines; each tensor name must be "
                                 "defined once (rename one of the two)")
            defined[name] = where


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
    given = opset is not None
    if opset is None:
        found = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
        opset = found[0] if found else onnx.defs.onnx_opset_version()
    opset = int(opset)
    newest = onnx.defs.onnx_opset_version()
    if opset > newest:
        what = f"opset={opset} was given" if given else f"the model imports opset {opset}"
        raise ModelError(f"{what}, but no such opset of the default ONNX domain exists: the "
                         f"newest the ONNX frontend knows is {newest} (onnx "
                         f"{onnx.__version__}); the model is invalid or needs a newer onnx "
                         "package")
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
        self.opset_imports = list(proto.opset_import)
        self.folding = False    # while a node is evaluated at import: weights read as constants
        self.functions: List[tuple] = []    # (name, Function) of loops, added after main
        self.function_names = {"main"}

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
        """The input's shape (given, else the model's); a dim of 0 is refused: the kernels
        and the runtime take no zero-size tensors."""
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
        self.add_initializers(self.graph.initializer)

    def add_initializers(self, initializers) -> None:
        for t in initializers:
            try:
                data = numpy_helper.to_array(t)
            except Exception as e:  # noqa: BLE001 - a malformed TensorProto
                raise ModelError(f"initializer {t.name!r} cannot be read: {e}") from None
            dtype_of_elem_type(t.data_type, f"initializer {t.name!r}")
            data = np.require(data, requirements="C")  # keeps 0-d arrays 0-d
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

    def weight_var(self, value: Value) -> X.Expr:
        """The parameter of `main` for a weight, made when the computation first reads it (a
        constant while a node is evaluated at import)."""
        if value.expr is None:
            data = value.known
            if data.dtype.kind not in "biuf":
                raise UnsupportedOpError(f"{value.name!r} is a tensor of {data.dtype} computed "
                                         "while importing; the compiler cannot compute with it")
            if self.folding:
                return X.const(data, str(data.dtype))
            var = X.Var(value.name, TensorStructInfo(data.shape, str(data.dtype)))
            self.weights.append(var)
            self.params[value.name] = data
            value.expr = var
        return value.expr

    # ---- nodes --------------------------------------------------------------------------------
    def convert(self, nodes) -> None:
        for index, node in enumerate(nodes):
            ctx = NodeContext(self, node, index)
            if self.fold_symbolic(ctx):
                continue
            if node.op_type == "If" and node.input and self.is_known(node.input[0]):
                self.take_branch(ctx)
                continue
            if foldable(node) and all(self.is_known(n) for n in node.input if n):
                self.fold(ctx)
                continue
            if not supported(node):
                report = UnsupportedReport()
                report.runtime[op_key(node)] = [ctx.name]
                raise report.error()
            self.bind(ctx, self.run_converter(ctx))

    def run_converter(self, ctx: NodeContext) -> list:
        try:
            outs = CONVERTERS[ctx.op_type](ctx)
        except CompilerError:
            raise
        except Exception as e:  # noqa: BLE001 - a model the converter cannot make sense of
            raise ModelError(f"{ctx.where}: cannot be converted: {type(e).__name__}: {e}") \
                from e
        if isinstance(outs, (X.Expr, type(None))):
            outs = [outs]
        return list(outs)

    def bind(self, ctx: NodeContext, outs: list) -> None:
        for i, name in enumerate(ctx.node.output):
            if not name:
                continue
            if i >= len(outs) or outs[i] is None:
                raise UnsupportedOpError(f"{ctx.where}: output {i} ({name!r}) is not "
                                         "supported; the model reads it")
            self.values[name] = Value(name, expr=ctx.emit(outs[i]))

    def is_known(self, name: str) -> bool:
        value = self.values.get(name)
        return value is not None and (value.known is not None or
                                      isinstance(value.expr, X.Constant))

    def known(self, name: str) -> np.ndarray:
        value = self.values[name]
        return value.known if value.known is not None else value.expr.data

    # ---- evaluating nodes at import -----------------------------------------------------------
    def fold(self, ctx: NodeContext) -> None:
        """Evaluates a node whose inputs are all known: by its converter (the graph-level
        reference interpreter folds what it emits) when the operator is supported, otherwise
        (or when the converter refuses the variant) by onnx's reference evaluator."""
        node = ctx.node
        from_weights = any(self.values[n].weight for n in node.input if n)
        first_error: Optional[CompilerError] = None
        results = None
        if supported(node):
            self.folding = True
            try:
                outs = self.run_converter(ctx)
                results = [None if not name else self._folded(ctx, outs, i)
                           for i, name in enumerate(node.output)]
            except CompilerError as e:  # the variant is not supported: try the reference
                first_error = e
            finally:
                self.folding = False
            if results is not None and any(r is None and node.output[i]
                                           for i, r in enumerate(results)):
                results = None
        if results is None:
            results = self._reference(ctx, first_error)
        for name, data in zip(node.output, results):
            if not name:
                continue
            data = np.require(data, requirements="C")  # keeps 0-d arrays 0-d
            if from_weights and data.dtype.kind == "f" or data.dtype.kind not in "biuf":
                self.values[name] = Value(name, known=data, weight=data.dtype.kind == "f")
            else:
                self.values[name] = Value(name, expr=X.const(data, str(data.dtype)), known=data)

    def fold_symbolic(self, ctx: NodeContext) -> bool:
        """Evaluates a node on shape values with symbolic dims (symbolic.py) when it computes
        one: Shape / Size of a tensor whose shape is symbolic, or a node reading such values
        and otherwise only values known now. True when it did."""
        node = ctx.node
        if node.domain not in DEFAULT_DOMAINS:
            return False
        names = [n for n in node.input if n]
        if node.op_type in ("Shape", "Size") and self.values[names[0]].sym is not None:
            return self._shape_of_symbolic(ctx, self.values[names[0]].sym)
        if node.op_type in ("Shape", "Size"):
            s = ctx.input(0).struct_info
            if not isinstance(s, TensorStructInfo) or s.shape is None or \
                    all(isinstance(d, int) for d in s.shape):
                return False
        elif not (any(self.values[n].sym is not None for n in names) and
                  all(self.is_known(n) or self.values[n].sym is not None for n in names)):
            return False
        inputs = []
        for n in node.input:
            value = self.values.get(n) if n else None
            if value is None or node.op_type in ("Shape", "Size"):
                inputs.append(None)
            else:
                inputs.append(value.sym if value.sym is not None else self.known(n))
        outs = symbolic.evaluate(node.op_type, ctx.attrs, inputs, lambda i: ctx.shape(i))
        if outs is None:
            return False
        for name, out in zip(node.output, outs):
            if not name:
                continue
            data = symbolic.concrete(out, "int64")
            if data is None:
                self.values[name] = Value(name, sym=out)
            else:
                self.values[name] = Value(name, expr=X.const(data, "int64"), known=data)
        return True

    def _shape_of_symbolic(self, ctx: NodeContext, sym: np.ndarray) -> bool:
        """Shape / Size of a shape value with symbolic elements: its length is known now."""
        if ctx.op_type == "Size":
            data = np.asarray(sym.size, dtype="int64")
        else:
            dims = list(sym.shape)
            start, end = int(ctx.attr("start", 0)), ctx.attr("end")
            end = len(dims) if end is None else int(end)
            data = np.asarray(dims[slice(*slice(start, end).indices(len(dims))[:2])], "int64")
        name = ctx.node.output[0]
        self.values[name] = Value(name, expr=X.const(data, "int64"), known=data)
        return True

    def _folded(self, ctx: NodeContext, outs: list, i: int) -> Optional[np.ndarray]:
        if i >= len(outs) or outs[i] is None:
            return None
        e = ctx.emit(outs[i])
        return e.data if isinstance(e, X.Constant) else None

    def _reference(self, ctx: NodeContext, first_error: Optional[CompilerError]) -> list:
        """The node's outputs computed by onnx's reference evaluator on a one-node model."""
        node = ctx.node
        gap = reference_gap(node, self.opset)
        try:
            if gap is not None:
                raise NotImplementedError(gap)
            names = list(dict.fromkeys(n for n in node.input if n))
            feeds = {n: self.known(n) for n in names}
            inputs = [onnx.helper.make_tensor_value_info(
                n, onnx.helper.np_dtype_to_tensor_dtype(feeds[n].dtype), feeds[n].shape)
                for n in names]
            outputs = [onnx.helper.make_empty_tensor_value_info(o) for o in node.output if o]
            graph = onnx.helper.make_graph([node], "fold", inputs, outputs)
            opsets = {o.domain: o.version for o in self.opset_imports}
            opsets[""] = self.opset
            model = onnx.helper.make_model(graph, opset_imports=[
                onnx.helper.make_opsetid(d, v) for d, v in opsets.items()])
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = ReferenceEvaluator(model).run(None, feeds)
            results = iter(got)
            out = [next(results) if o else None for o in node.output]
            for o, r in zip(node.output, out):
                if o and not isinstance(r, np.ndarray) and not np.isscalar(r):
                    raise NotImplementedError(f"output {o!r} is a {type(r).__name__}, not a "
                                              "tensor")
            return [None if r is None else np.asarray(r) for r in out]
        except Exception as e:  # noqa: BLE001 - whatever the reference evaluator raises
            if first_error is not None:
                raise first_error from None
            raise UnsupportedOpError(
                f"{ctx.where} only computes constants, but evaluating it while importing "
                f"failed: {type(e).__name__}: {e}") from None

    def output(self, name: str) -> X.Expr:
        value = self.values.get(name)
        if value is None:
            raise ModelError(f"graph output {name!r} is not computed by any node, input or "
                             "initializer")
        if value.sym is not None:
            raise UnsupportedOpError(f"graph output {name!r} holds dims of a symbolic shape; "
                                     "an output computed from shapes alone needs them bound: "
                                     f"from_onnx(model, shape={self.bind_example()})")
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
            if args and all(_known(a) for a in args) and expr.op.name != "relax.shape_of" \
                    and not symbolic_result(expr):
                try:
                    return _as_constant(evaluate(expr))
                except CompilerError:
                    raise
                except Exception as e:  # noqa: BLE001 - a numpy kernel refusing the values
                    raise ModelError(f"evaluating {expr.op.name} while importing failed: "
                                     f"{type(e).__name__}: {e}") from e
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

    # ---- subgraphs (If branches, Loop bodies) -------------------------------------------------
    def subgraph(self, graph: onnx.GraphProto,
                 inputs: Optional[Mapping[str, X.Expr]] = None) -> X.SeqExpr:
        """A subgraph converted into a sequence of bindings of its own, its outputs (a tuple
        when several) as the result; `inputs` gives the values of its inputs (a loop body's).
        Its nodes may read the values of the enclosing graphs; the values it defines are not
        seen outside it."""
        outer_bb, outer_values = self.bb, dict(self.values)
        self.bb = BlockBuilder()
        self.bb.begin_function(None, [], {})
        try:
            for name, expr in (inputs or {}).items():
                self.values[name] = Value(name, expr=expr)
            self.add_initializers(graph.initializer)
            self.convert(graph.node)
            outs = [self.output(o.name) for o in graph.output]
            result = outs[0] if len(outs) == 1 else X.Tuple(tuple(outs))
            func = self.bb.emit_func_output(result)
        finally:
            self.bb, self.values = outer_bb, outer_values
        return func.body

    def take_branch(self, ctx: NodeContext) -> None:
        """An If whose condition is known while importing: the branch taken is converted here,
        and the If's outputs are its outputs' values, so that what is known of them (constants,
        symbolic dims of shapes) stays known to the nodes after the If."""
        cond = np.asarray(self.known(ctx.node.input[0]))
        if cond.size != 1:
            raise ctx.error(f"the condition must have one element, got shape {cond.shape}")
        graph = ctx.graph_attr("then_branch" if bool(cond.reshape(-1)[0]) else "else_branch")
        if len(graph.output) != ctx.num_outputs:
            raise ctx.error(f"the node has {ctx.num_outputs} outputs but its branch "
                            f"{len(graph.output)}")
        self.add_initializers(graph.initializer)
        self.convert(graph.node)
        for name, out in zip(ctx.node.output, graph.output):
            if name:
                value = self.values.get(out.name)
                if value is None:
                    raise ModelError(f"{ctx.where}: the branch output {out.name!r} is not "
                                     "computed by any node of it")
                self.values[name] = dataclasses.replace(value, name=name)

    def add_function(self, base: str) -> X.GlobalVar:
        """A fresh module-level name (`base`, or with a suffix) for a function the converter
        will build (a loop); `define` adds it."""
        name, i = base, 0
        while name in self.function_names:
            i += 1
            name = f"{base}{i}"
        self.function_names.add(name)
        return X.GlobalVar(name)

    def define(self, gv: X.GlobalVar, func: X.Function) -> None:
        self.functions.append((gv.name_hint, func))

    # ---- the module ---------------------------------------------------------------------------
    def build(self) -> IRModule:
        bb = self.bb
        bb.begin_function("main", None, {"global_symbol": "main"})
        # control flow cannot sit in a dataflow block: a model with it gets plain bindings
        dataflow = not any(n.op_type in CONTROL_FLOW_OPS for n in self.graph.node)
        if dataflow:
            bb.begin_dataflow_block()
        self.convert(self.graph.node)
        outs = [self.output(o.name) for o in self.graph.output]
        result = outs[0] if len(outs) == 1 else X.Tuple(tuple(outs))
        if dataflow:
            out = bb.emit_output(result, "output")
            bb.end_block()
        else:
            out = bb.emit(result, "output")
        params = self.inputs + self.weights
        bb.set_function_attr("num_input", len(self.inputs))
        bb.emit_func_output(out, params)
        for name, func in self.functions:
            bb.add_func(func, name)
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
    opset = model_opset(proto, opset)
    check_supported(proto.graph, opset)
    imp = _Importer(proto, shape, dtype, opset)
    imp.add_inputs()
    mod = imp.build()
    return mod, dict(imp.params)
