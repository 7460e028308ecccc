"""The shape shared by the schedules of a fused group with one anchor (a convolution, a
dense, a pool): injective producers of the anchor inlined (pads kept as their own stage where
asked), elementwise stages after it inlined into the group's output, and the anchor computed
inside the output's tile loop, so the whole group is one loop nest.

    O = the group's output (the anchor itself when nothing follows it)
    tile O's loops (the schedule's choice); compute the anchor at O's tile axis
"""
from __future__ import annotations

from typing import Callable, List, Optional

from ...te import create_schedule
from ...te.tensor import ComputeOp
from .. import tag
from ..utils import as_outputs, find_anchor
from .injective import inline_injective_producers, schedule_injective_from_existing


def inline_epilogue(s, out_op, anchor, outputs):
    """Inline the injective non-output stages between the output and the anchor."""
    todo, seen = [out_op], set()
    while todo:
        op = todo.pop()
        if id(op) in seen or op is anchor or not isinstance(op, ComputeOp):
            continue
        seen.add(id(op))
        if tag.is_injective(op.tag):
            if id(op) not in outputs:
                s[op].compute_inline()
            todo.extend(t.op for t in op.input_tensors)


def is_kept_input(op) -> bool:
    """Whether a producer of an anchor stays a stage of its own under keep_pad: a pad stage
    ("pad" in its tag) or depthwise_conv2d_NCHWc's input arranged by groups ("group_input",
    which pads too)."""
    return "pad" in op.tag or "group_input" in op.tag


def anchor_producers(s, anchor, outputs, keep_pad: bool) -> List[ComputeOp]:
    """Inline the anchor's injective producers; with keep_pad, a pad stage (`is_kept_input`)
    stays a stage of its own (its own producers inlined). Returns the kept stages."""
    kept = []
    for t in anchor.input_tensors:
        p = t.op
        if not isinstance(p, ComputeOp) or not tag.is_injective(p.tag) or id(p) in outputs:
            continue
        if keep_pad and is_kept_input(p):
            inline_injective_producers(s, p, outputs)
            kept.append(p)
        else:
            s[p].compute_inline()
            inline_injective_producers(s, p, outputs)
    return kept


def accumulator_stages(s, anchor, out_op):
    """(accumulator tensor, output stage) of a tiled anchor: with no epilogue (`out_op` is the
    anchor) a "local" cache stage of the anchor accumulates and the anchor writes the output;
    else the anchor itself accumulates and `out_op` writes the output through the epilogue."""
    if out_op is anchor:
        return s.cache_write(anchor.output(0), "local"), s[anchor]
    return anchor.output(0), s[out_op]


def schedule_anchored(outs, is_anchor: Callable[[str], bool],
                      tile: Callable, keep_pad: bool = False, pad_schedule: Optional[Callable]
                      = None):
    """A schedule of `outs` around the anchor that `is_anchor(tag)` picks.
    `tile(s, anchor, O)` lays out the loops of the output stage O and attaches the anchor's
    computation to them (O is the anchor itself, or the one output that follows it).
    `pad_schedule(s, pad_op)` lays out a kept pad stage (at the root)."""
    outs = as_outputs(outs)
    s = create_schedule([o.op for o in outs])
    outputs = {id(o.op) for o in outs}
    anchor = find_anchor(outs, is_anchor)
    if anchor is None:
        for o in outs:
            inline_injective_producers(s, o.op, outputs)
            schedule_injective_from_existing(s, o)
        return s
    for o in outs:
        inline_epilogue(s, o.op, anchor, outputs)
    for pad in anchor_producers(s, anchor, outputs, keep_pad):
        if pad_schedule is not None:
            pad_schedule(s, pad)
    if id(anchor) in outputs:
        tile(s, anchor, anchor)
        for o in outs:
            if o.op is not anchor:
                schedule_injective_from_existing(s, o)
        return s
    main = outs[0]
    tile(s, anchor, main.op)
    for o in outs[1:]:
        schedule_injective_from_existing(s, o)
    return s
