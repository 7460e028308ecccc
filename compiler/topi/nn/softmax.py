"""softmax and log_softmax along any axis: a max reduction, exp, a sum reduction and the
normalising output (tags "softmax_output" / "log_softmax_output" on the output)."""
from __future__ import annotations

from ... import te
from .. import tag as _tag
from ..utils import normalize_axis


def _parts(x, axis, what):
    axis = normalize_axis(axis, x.ndim, what)
    reduced = tuple(s for k, s in enumerate(x.shape) if k != axis)
    k = te.reduce_axis((0, x.shape[axis]), name="k")

    def full(idx, kk):
        return idx[:axis] + (kk,) + idx[axis:]

    def outer(idx):
        return idx[:axis] + idx[axis + 1:]

    max_elem = te.compute(reduced, lambda *i: te.max(x(*full(i, k)), axis=k),
                          name=f"T_{what}_maxelem", tag=_tag.COMM_REDUCE)
    return axis, reduced, full, outer, max_elem


def softmax(x, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along `axis`."""
    axis, reduced, full, outer, max_elem = _parts(x, axis, "softmax")
    exp = te.compute(x.shape, lambda *i: te.exp(x(*i) - max_elem(*outer(i))),
                     name="T_softmax_exp", tag=_tag.ELEMWISE)
    k2 = te.reduce_axis((0, x.shape[axis]), name="k")
    expsum = te.compute(reduced, lambda *i: te.sum(exp(*full(i, k2)), axis=k2),
                        name="T_softmax_expsum", tag=_tag.COMM_REDUCE)
    return te.compute(x.shape, lambda *i: exp(*i) / expsum(*outer(i)), name="T_softmax_norm",
                      tag="softmax_output", attrs={"axis": axis})


def log_softmax(x, axis=-1):
    """x - max - log(sum(exp(x - max))) along `axis`."""
    axis, reduced, full, outer, max_elem = _parts(x, axis, "log_softmax")
    k2 = te.reduce_axis((0, x.shape[axis]), name="k")
    expsum = te.compute(reduced, lambda *i: te.sum(te.exp(x(*full(i, k2)) - max_elem(*i)),
                                                   axis=k2),
                        name="T_log_softmax_expsum", tag=_tag.COMM_REDUCE)
    return te.compute(x.shape,
                      lambda *i: x(*i) - max_elem(*outer(i)) - te.log(expsum(*outer(i))),
                      name="T_log_softmax", tag="log_softmax_output", attrs={"axis": axis})
