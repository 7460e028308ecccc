"""The dataflow graph of operations, as TVM's schedule graph functions give it: which tensors
each operation reads (`create_read_graph`) and the operations in post-order (`post_dfs_order`)."""
from __future__ import annotations

from typing import Dict, List, Sequence

from .tensor import Operation, Tensor


def _ops(roots) -> List[Operation]:
    roots = roots if isinstance(roots, (list, tuple)) else [roots]
    return [r.op if isinstance(r, Tensor) else r for r in roots]


def create_read_graph(roots) -> Dict[Operation, List[Tensor]]:
    """Every operation that `roots` (operations or tensors) depend on, mapped to the tensors it
    reads, in reading order."""
    graph: Dict[Operation, List[Tensor]] = {}
    stack = _ops(roots)
    while stack:
        op = stack.pop()
        if op in graph:
            continue
        graph[op] = list(op.input_tensors)
        stack.extend(t.op for t in graph[op])
    return graph


def post_dfs_order(roots, graph: Dict[Operation, Sequence[Tensor]]) -> List[Operation]:
    """The operations of `graph` reachable from `roots`, each after every operation it reads."""
    order: List[Operation] = []
    seen = set()

    def visit(op):
        if op in seen:
            return
        seen.add(op)
        for t in graph.get(op, ()):
            visit(t.op)
        order.append(op)

    for op in _ops(roots):
        visit(op)
    return order
