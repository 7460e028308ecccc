"""nn.pad: constant padding (tag "injective,pad")."""
from __future__ import annotations

from ... import te
from ...ir.errors import IRError
from ...tir import expr as E
from .. import tag
from ..utils import simplify


def pad(data, pad_before, pad_after=None, pad_value=0.0, name: str = "PadInput", attrs=None):
    """`data` with pad_before[k] / pad_after[k] elements of `pad_value` added before / after
    dimension k (pad_after defaults to pad_before)."""
    n = data.ndim
    pad_after = pad_before if pad_after is None else pad_after
    if len(pad_before) != n or len(pad_after) != n:
        raise IRError(f"pad: the input has {n} dimensions but pad_before has {len(pad_before)} "
                      f"and pad_after {len(pad_after)} entries")
    before = [E.convert(p) for p in pad_before]
    after = [E.convert(p) for p in pad_after]
    shape = tuple(simplify(data.shape[k] + before[k] + after[k]) for k in range(n))

    def f(*idx):
        conds, index = [], []
        for k in range(n):
            if E.is_const_int(before[k], 0) and E.is_const_int(after[k], 0):
                index.append(idx[k])
                continue
            index.append(idx[k] - before[k])
            if not E.is_const_int(before[k], 0):
                conds.append(idx[k] >= before[k])
            if not E.is_const_int(after[k], 0):
                conds.append(idx[k] < data.shape[k] + before[k])
        value = E.make_const(data.dtype, pad_value) if not isinstance(pad_value, E.PrimExpr) \
            else E.cast(data.dtype, pad_value)
        if not conds:
            return data(*index)
        return te.if_then_else(te.all(*conds), data(*index), value)

    return te.compute(shape, f, name=name, tag=tag.INJECTIVE + ",pad", attrs=attrs)
