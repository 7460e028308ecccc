"""Analyses of a scan's body, as TVM's schedule graph functions give them.

`scan_get_body(scan)`: the operations between the scan's state placeholders and inputs and its
updates, producers first (TVM's `ScanGetBody`).

`scan_fix_point_analysis(scan)`: for each spatial axis of the scan, 1 when element `i` of that
axis at step `t` depends only on element `i` of the same axis at earlier steps (so the axis may
be split across threads without exchanging data between steps), else 0 (TVM's
`ScanFixPointAnalysis`). A dimension of a tensor in the body "exactly reaches" a spatial axis
when it is indexed by plain loop variables that trace back to that axis of the state; an axis
fails when a dimension reaches it through anything else (a constant, an expression) or when two
axes meet in one dimension. An axis that passes must also not reach any other dimension of a
state through the body's index expressions.
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

from microruntime.object_generic import make_map

from ..ir.errors import ScheduleError
from ..tir import expr as E
from ..tir.functor import post_order_visit
from .scan import ScanOp
from .tensor import ComputeOp, Operation, Tensor, TensorLoad

DimKey = Tuple[Tensor, int]  # one dimension of one tensor


def scan_get_body(scan_op: ScanOp) -> List[Operation]:
    """The operations on a path from the scan's states or inputs to its updates (those two
    ends excluded), each after the operations it reads."""
    if not isinstance(scan_op, ScanOp):
        raise ScheduleError(f"ScanGetBody takes a scan operation, got {scan_op!r}")
    boundary = {t.op for t in list(scan_op.state_placeholder) + list(scan_op.inputs)}
    reaches: Dict[Operation, bool] = {}
    body: List[Operation] = []

    def visit(op: Operation) -> bool:
        if op in reaches:
            return reaches[op]
        if op in boundary:
            reaches[op] = True
            return True
        reaches[op] = False  # while visiting
        found = False
        for t in op.input_tensors:
            found = visit(t.op) or found
        reaches[op] = found
        if found:
            body.append(op)
        return found

    for t in scan_op.update:
        visit(t.op)
    return body


def _loads(expr) -> List[TensorLoad]:
    found: List[TensorLoad] = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, TensorLoad) else None)
    return found


def _vars(expr) -> List[E.Var]:
    found: List[E.Var] = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, E.Var) else None)
    return found


def _reach_graph(body: List[Operation]) -> Dict[DimKey, List[DimKey]]:
    """Each output dimension of the body's operations -> the dimensions of body tensors its
    loop variable appears in the indices of."""
    inside = set(body)
    reach: Dict[DimKey, List[DimKey]] = {}
    for op in body:
        if isinstance(op, ScanOp):
            for i, update in enumerate(op.update):
                for k in range(1, update.ndim):
                    reach.setdefault((op.output(i), k), []).extend(
                        [(update, k), (op.init[i], k)])
        elif isinstance(op, ComputeOp):
            out = op.output(0)
            owner = {iv.var: (out, i) for i, iv in enumerate(op.axis)}
            for key in owner.values():
                reach.setdefault(key, [])
            for body_expr in op.body:
                for load in _loads(body_expr):
                    if load.tensor.op not in inside:
                        continue
                    for d, index in enumerate(load.indices):
                        for v in _vars(index):
                            if v in owner:
                                reach[owner[v]].append((load.tensor, d))
    return reach


def scan_fix_point_analysis(scan_op: ScanOp):
    """A Map from each spatial axis of `scan_op` to IntImm 1 (a fixed point: see the module
    docstring) or 0."""
    body = scan_get_body(scan_op)
    exact: Dict[DimKey, E.IterVar] = {}
    failed: Set[E.IterVar] = set()
    spatial = iter(scan_op.spatial_axis_)
    for i, update in enumerate(scan_op.update):
        for k in range(1, update.ndim):
            exact[(scan_op.state_placeholder[i], k)] = next(spatial)

    def merge(dst: DimKey, src: DimKey) -> None:
        if src not in exact:
            return
        if dst not in exact:
            exact[dst] = exact[src]
        elif exact[dst] is not exact[src]:
            failed.update((exact[dst], exact[src]))

    for op in body:
        if isinstance(op, ScanOp):
            for i, update in enumerate(op.update):
                for k in range(1, update.ndim):
                    merge((op.output(i), k), (update, k))
                    merge((op.output(i), k), (op.init[i], k))
        elif isinstance(op, ComputeOp):
            dims = {iv.var: [(out, i) for out in op.outputs] for i, iv in enumerate(op.axis)}
            for body_expr in op.body:
                for load in _loads(body_expr):
                    for d, index in enumerate(load.indices):
                        src = (load.tensor, d)
                        if isinstance(index, E.Var) and index in dims:
                            for dst in dims[index]:
                                merge(dst, src)
                        elif src in exact:
                            failed.add(exact[src])
        else:
            raise ScheduleError(f"ScanFixPointAnalysis: the scan body holds {op!r}, which is "
                                "neither a compute nor a scan")

    states = {(t, k) for t in scan_op.state_placeholder for k in range(t.ndim)}
    reach = None
    result = {}
    spatial = iter(scan_op.spatial_axis_)
    for i, update in enumerate(scan_op.update):
        for k in range(1, update.ndim):
            axis = next(spatial)
            key, target = (update, k), (scan_op.state_placeholder[i], k)
            ok = axis not in failed and exact.get(key) is axis
            if ok:
                reach = _reach_graph(body) if reach is None else reach
                ok = not _reaches_other_state(reach, key, target, states)
            result[axis] = E.const(1 if ok else 0)
    return make_map(result)


def _reaches_other_state(reach, start: DimKey, target: DimKey, states) -> bool:
    """Whether some path from `start` through the reach graph meets a state dimension other
    than `target`."""
    seen, stack = {start}, [start]
    while stack:
        key = stack.pop()
        if key != target and key in states:
            return True
        for nxt in reach.get(key, ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False
