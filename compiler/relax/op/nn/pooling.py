"""2-D pooling over NCHW data: max_pool2d, avg_pool2d (count_include_pad), adaptive_avg_pool2d
and adaptive_max_pool2d (output_size (1, 1) is a global pool).

Window pools: out = floor((in + pad_top + pad_bottom - dilation * (k - 1) - 1) / stride) + 1,
rounded up instead when `ceil_mode`, except that (as in ONNX and PyTorch) a last window that
would start past the input and its top/left padding is dropped. Windows hanging past the
bottom/right padding in ceil mode only see the input and the padding: max ignores the rest, and
avg divides by the number of elements of the window inside the input (count_include_pad=False)
or inside the padded input (count_include_pad=True).
"""
from __future__ import annotations

import re

from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, as_dtype_str
from ..registry import fail, make_call, padding4, pair, register, tensor_arg


def pool_out(size, k: int, stride: int, dil: int, pad_before: int, pad_after: int,
             ceil_mode: bool):
    span = dil * (k - 1) + 1
    num = su.sub(su.add(size, pad_before + pad_after), span)
    if not ceil_mode:
        return su.add(su.floordiv(num, stride), 1)
    out = su.add(su.ceildiv(num, stride), 1)
    if isinstance(out, int) and isinstance(size, int) and (out - 1) * stride >= size + pad_before:
        out -= 1
    return out


_BLOCKED = re.compile(r"^NCHW(\d+)c$")


def _layout(call: Call) -> int:
    """The channel block of the call's layout (0 for NCHW)."""
    a = call.attrs
    m = _BLOCKED.match(a.layout)
    if (a.layout != "NCHW" and not m) or a.out_layout not in (a.layout, ""):
        raise fail(call, f"only layout='NCHW' (or a blocked NCHW[x]c with the same out_layout) "
                         f"is supported, got layout={a.layout!r}, out_layout={a.out_layout!r}")
    return int(m.group(1)) if m else 0


def _data(call: Call, block: int = 0) -> TensorStructInfo:
    s = tensor_arg(call, 0)
    want = 5 if block else 4
    if s.ndim not in (-1, want):
        raise fail(call, f"data must be {want}-D ({call.attrs.layout}), got {s.ndim} dims")
    return s


def _spatial(s: TensorStructInfo, block: int):
    """(n, c, h, w, rest): the NCHW dims of a (possibly blocked) shape, `rest` the block axis."""
    if block:
        n, cb, h, w, c = s.shape
        return n, cb, h, w, (c,)
    n, c, h, w = s.shape
    return n, c, h, w, ()


def _infer_pool(call: Call) -> StructInfo:
    block = _layout(call)
    s = _data(call, block)
    a = call.attrs
    out_dtype = a.out_dtype if a.out_dtype != "void" else s.dtype
    if s.shape is None:
        return TensorStructInfo(None, out_dtype, 5 if block else 4)
    n, c, h, w, rest = _spatial(s, block)
    (kh, kw), (sh, sw), (dh, dw) = a.pool_size, a.strides, a.dilation
    pt, pl, pb, pr = a.padding
    if min(kh, kw, sh, sw, dh, dw) < 1:
        raise fail(call, f"pool_size {a.pool_size}, strides {a.strides} and dilation "
                         f"{a.dilation} must be positive")
    if max(pt, pb) >= kh * dh or max(pl, pr) >= kw * dw:
        raise fail(call, f"padding {a.padding} must be smaller than the window {a.pool_size}")
    oh = pool_out(h, kh, sh, dh, pt, pb, a.ceil_mode)
    ow = pool_out(w, kw, sw, dw, pl, pr, a.ceil_mode)
    for name, v in (("height", oh), ("width", ow)):
        if isinstance(v, int) and v <= 0:
            raise fail(call, f"output {name} would be {v}: the window {a.pool_size} does not fit "
                             "the padded input")
    return TensorStructInfo((n, c, oh, ow) + rest, out_dtype)


def _infer_adaptive(call: Call) -> StructInfo:
    block = _layout(call)
    s = _data(call, block)
    a = call.attrs
    out_dtype = a.out_dtype if a.out_dtype != "void" else s.dtype
    if s.shape is None:
        return TensorStructInfo(None, out_dtype, 5 if block else 4)
    n, c, h, w, rest = _spatial(s, block)
    oh, ow = a.output_size if a.output_size is not None else (h, w)
    if isinstance(oh, int) and oh < 1 or isinstance(ow, int) and ow < 1:
        raise fail(call, f"output_size {a.output_size} must be positive")
    return TensorStructInfo((n, c, oh, ow) + rest, out_dtype)


_POOL = {"pool_size": (1, 1), "strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1),
         "ceil_mode": False, "layout": "NCHW", "out_layout": "NCHW", "out_dtype": "void"}
register("relax.nn.max_pool2d", _infer_pool, ("data",), _POOL)
register("relax.nn.avg_pool2d", _infer_pool, ("data",), {**_POOL, "count_include_pad": False})
_ADAPTIVE = {"output_size": None, "layout": "NCHW", "out_layout": "NCHW", "out_dtype": "void"}
register("relax.nn.adaptive_avg_pool2d", _infer_adaptive, ("data",), _ADAPTIVE)
register("relax.nn.adaptive_max_pool2d", _infer_adaptive, ("data",), _ADAPTIVE)


def _pool_attrs(pool_size, strides, padding, dilation, ceil_mode, layout, out_layout,
                out_dtype):
    return dict(pool_size=pair(pool_size, 2, "pool_size"), strides=pair(strides, 2, "strides"),
                padding=padding4(padding), dilation=pair(dilation, 2, "dilation"),
                ceil_mode=bool(ceil_mode), layout=layout, out_layout=out_layout or layout,
                out_dtype=as_dtype_str(out_dtype))


def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1),
               ceil_mode: bool = False, layout: str = "NCHW", out_layout=None,
               out_dtype=None) -> Call:
    return make_call("relax.nn.max_pool2d", (data,),
                     **_pool_attrs(pool_size, strides, padding, dilation, ceil_mode, layout,
                                   out_layout, out_dtype))


def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1),
               ceil_mode: bool = False, count_include_pad: bool = False, layout: str = "NCHW",
               out_layout=None, out_dtype=None) -> Call:
    return make_call("relax.nn.avg_pool2d", (data,), count_include_pad=bool(count_include_pad),
                     **_pool_attrs(pool_size, strides, padding, dilation, ceil_mode, layout,
                                   out_layout, out_dtype))


def _output_size(output_size):
    if output_size is None:
        return None
    return pair(output_size, 2, "output_size")


def adaptive_avg_pool2d(data, output_size=None, layout: str = "NCHW", out_layout=None,
                        out_dtype=None) -> Call:
    """Average over adaptive windows: output cell i covers input rows [floor(i*H/oh),
    ceil((i+1)*H/oh)). `output_size` None keeps the input size; (1, 1) is a global pool."""
    return make_call("relax.nn.adaptive_avg_pool2d", (data,), output_size=_output_size(output_size),
                     layout=layout, out_layout=out_layout or layout,
                     out_dtype=as_dtype_str(out_dtype))


def adaptive_max_pool2d(data, output_size=None, layout: str = "NCHW", out_layout=None,
                        out_dtype=None) -> Call:
    """Maximum over adaptive windows (as adaptive_avg_pool2d); (1, 1) is a global max pool."""
    return make_call("relax.nn.adaptive_max_pool2d", (data,), output_size=_output_size(output_size),
                     layout=layout, out_layout=out_layout or layout,
                     out_dtype=as_dtype_str(out_dtype))
