"""nn.pad: pad_width is (before_0, after_0, before_1, after_1, ...), one pair per axis (a list
of pairs is flattened); pad_mode "constant" (with pad_value), "edge" or "reflect"."""
from __future__ import annotations

from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo
from ..pattern import INJECTIVE
from ..registry import fail, make_call, register, tensor_arg

MODES = ("constant", "edge", "reflect")


def _infer_pad(call: Call) -> StructInfo:
    s = tensor_arg(call, 0)
    a = call.attrs
    if a.pad_mode not in MODES:
        raise fail(call, f"pad_mode must be one of {MODES}, got {a.pad_mode!r}")
    if s.ndim < 0:
        return TensorStructInfo(None, s.dtype)
    if len(a.pad_width) != 2 * s.ndim:
        raise fail(call, f"pad_width has {len(a.pad_width)} values but data has {s.ndim} dims "
                         f"(needs {2 * s.ndim}: before and after per axis)")
    if s.shape is None:
        return TensorStructInfo(None, s.dtype, s.ndim)
    out = []
    for i, d in enumerate(s.shape):
        before, after = a.pad_width[2 * i], a.pad_width[2 * i + 1]
        if a.pad_mode == "reflect" and isinstance(d, int) and max(before, after) >= d:
            raise fail(call, f"reflect padding {before, after} on axis {i} must be smaller "
                             f"than its size {d}")
        o = su.add(d, before + after)
        if isinstance(o, int) and o < 0:
            raise fail(call, f"pad_width {a.pad_width} leaves axis {i} with {o} elements")
        out.append(o)
    return TensorStructInfo(tuple(out), s.dtype)


register("relax.nn.pad", _infer_pad, ("data",),
         {"pad_width": (), "pad_mode": "constant", "pad_value": 0.0}, pattern=INJECTIVE)


def pad(data, pad_width, pad_mode: str = "constant", pad_value: float = 0.0) -> Call:
    flat = []
    for p in pad_width:
        if isinstance(p, (list, tuple)):
            flat.extend(int(x) for x in p)
        else:
            flat.append(int(p))
    return make_call("relax.nn.pad", (data,), pad_width=tuple(flat), pad_mode=pad_mode,
                     pad_value=float(pad_value))
