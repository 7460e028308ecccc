"""Which nodes of an ONNX graph the importer can handle, and the error that lists the others.

A node is handled when the frontend has a converter for its operator, or when it can be
evaluated while importing: its inputs are all known (initializers, and what is computed from
them alone) and nothing random or a subgraph is involved; operators without a converter are
then evaluated by onnx's reference evaluator. `check_supported` raises one
UnsupportedOpError that lists every operator the importer cannot handle, once, with its node
count, those on the run-time path apart from those that only compute constants. The nodes of
a supported operator's subgraphs (the branches of If) are checked as well.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import onnx
from onnx.reference.ops import load_op

from .errors import UnsupportedOpError
from .onnx_ops import CONTRIB_OPS, CONVERTERS

# Operators whose outputs are not a function of their inputs: never evaluated while importing.
RANDOM_OPS = frozenset({"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike",
                         "RandomUniform", "RandomUniformLike"})
# Operators kept in the graph even when their inputs are known: a dequantized weight stays an
# integer tensor for the graph pass quantize_to_integer (fold_constant folds what it leaves).
KEPT_OPS = frozenset({"DequantizeLinear"})
DEFAULT_DOMAINS = ("", "ai.onnx")
# Operators whose subgraphs run (or not) as the data says: a model with one needs the VM.
CONTROL_FLOW_OPS = frozenset({"If", "Loop", "Scan"})
_NAMES_SHOWN = 3


def op_key(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"


def supported(node: onnx.NodeProto) -> bool:
    return node.op_type in CONVERTERS and (node.domain in DEFAULT_DOMAINS or (
        node.domain == "com.microsoft" and node.op_type in CONTRIB_OPS))


def foldable(node: onnx.NodeProto) -> bool:
    """Whether the node's outputs depend on its inputs alone (no random numbers, no subgraph
    that could read values of the enclosing graph), so it can be evaluated while importing."""
    if node.op_type in RANDOM_OPS or node.op_type in KEPT_OPS:
        return False
    return not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                   for a in node.attribute)


def reference_gap(node: onnx.NodeProto, opset: int) -> Optional[str]:
    """None when onnx's reference evaluator implements the node's operator, else why not."""
    if node.domain not in DEFAULT_DOMAINS + ("ai.onnx.ml",):
        return f"onnx's reference evaluator has no operators of domain {node.domain!r}"
    if node.domain == "ai.onnx.ml":
        return None
    if node.op_type == "Dropout":   # reached only in training mode, which is random
        return "Dropout in training mode is random"
    try:
        load_op("", node.op_type, opset)
    except Exception:  # noqa: BLE001 - an operator the onnx package does not know
        return f"onnx {onnx.__version__} has no reference implementation of it at opset {opset}"
    return None


class UnsupportedReport:
    """The nodes the importer cannot handle, by operator: `runtime` (on the run-time path, no
    converter) and `constant` (they only compute constants, but nothing can evaluate them),
    each {operator: [node names]}; `reasons` says why for the constant ones."""

    def __init__(self) -> None:
        self.runtime: Dict[str, List[str]] = {}
        self.constant: Dict[str, List[str]] = {}
        self.reasons: Dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.runtime or self.constant)

    def error(self) -> UnsupportedOpError:
        ops = sorted(set(self.runtime) | set(self.constant))
        nodes = sum(len(v) for v in self.runtime.values()) + \
            sum(len(v) for v in self.constant.values())
        lines = [f"the model uses {len(ops)} operator{_s(len(ops))} the ONNX frontend cannot "
                 f"handle ({nodes} node{_s(nodes)}):"]
        if self.runtime:
            lines.append("on the run-time path (computed from the model's inputs, so each "
                         "needs a converter):")
            lines += _op_lines(self.runtime, {})
        if self.constant:
            lines.append("only computing constants, but they cannot be evaluated while "
                         "importing:")
            lines += _op_lines(self.constant, self.reasons)
        lines.append("what to do: export the model without these operators (another opset, or "
                     "their decomposition into supported ones), or make the values they compute "
                     "constants (initializers); compiler.frontend.onnx_ops.CONVERTERS lists the "
                     "supported operators")
        return UnsupportedOpError("\n".join(lines))


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _op_lines(ops: Dict[str, List[str]], reasons: Dict[str, str]) -> List[str]:
    width = max(len(op) for op in ops)
    out = []
    for op, names in sorted(ops.items()):
        shown = ", ".join(repr(n) for n in names[:_NAMES_SHOWN])
        if len(names) > _NAMES_SHOWN:
            shown += f", ... ({len(names) - _NAMES_SHOWN} more)"
        why = f" ({reasons[op]})" if op in reasons else ""
        out.append(f"  {op:<{width}}  {len(names)} node{_s(len(names))}: {shown}{why}")
    return out


def classify_unsupported(graph: onnx.GraphProto, opset: int) -> UnsupportedReport:
    """The nodes the importer cannot handle. A value counts as known while importing when it
    is an initializer, the output of Shape or Size (their input's shape is assumed static) or
    of a node that only reads known values and can be evaluated; nodes of unsupported
    operators that only read known values are evaluated by onnx's reference evaluator."""
    report = UnsupportedReport()
    _classify(graph, opset, set(), report)
    return report


def _classify(graph: onnx.GraphProto, opset: int, known: set,
              report: UnsupportedReport) -> None:
    """Adds the nodes of `graph` and of its subgraphs (the branches of If, whose nodes may
    read the values `known` of the enclosing graphs) that the importer cannot handle."""
    known = set(known) | {t.name for t in graph.initializer}
    for i, node in enumerate(graph.node):
        folds = foldable(node) and all(n in known for n in node.input if n)
        handled = supported(node)
        if folds or (handled and node.op_type in ("Shape", "Size")):
            known.update(o for o in node.output if o)
        if handled:
            for a in node.attribute:
                for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else
                            list(a.graphs) if a.type == onnx.AttributeProto.GRAPHS else []):
                    _classify(sub, opset, known, report)
            continue
        key, name = op_key(node), node.name or f"#{i} (unnamed)"
        if not folds:
            report.runtime.setdefault(key, []).append(name)
            continue
        why = reference_gap(node, opset)
        if why is not None:
            report.constant.setdefault(key, []).append(name)
            report.reasons[key] = why


def unsupported_ops(graph: onnx.GraphProto, opset: Optional[int] = None) -> Dict[str, List[str]]:
    """{op description: [node names]} of the operators the importer cannot handle (those it
    evaluates while importing are not listed)."""
    opset = onnx.defs.onnx_opset_version() if opset is None else opset
    report = classify_unsupported(graph, opset)
    out = {k: list(v) for k, v in report.runtime.items()}
    for k, v in report.constant.items():
        out.setdefault(k, []).extend(v)
    return out


def check_supported(graph: onnx.GraphProto, opset: Optional[int] = None) -> None:
    """UnsupportedOpError (listing every operator the importer cannot handle) unless it can
    handle every node."""
    report = classify_unsupported(graph, onnx.defs.onnx_opset_version() if opset is None
                                  else opset)
    if report:
        raise report.error()
