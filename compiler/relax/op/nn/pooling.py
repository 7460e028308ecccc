"""2-D pooling over NCHW data: max_pool2d, avg_pool2d (count_include_pad), adaptive_avg_pool2d
and adaptive_max_pool2d (output_size (1, 1) is a global pool); the same over NCDHW data:
max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d (padding (front, top, left,
back, bottom, right)).

Window pools: out = floor((in + pad_top + pad_bottom - dilation * (k - 1) - 1) / stride) + 1,
rounded up instead when `ceil_mode`, except that (as in ONNX and PyTorch) a last window that
would start past the input and its top/left padding is dropped. Windows hanging past the
bottom/right padding in ceil mode only see the input and the padding: max ignores the rest, and
avg divides by the number of elements of the window inside the input (count_include_pad=False)
or inside the padded input (count_include_pad=True).
"""
from __future__ import annotations

import re

from ....tir import expr as E
from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, as_dtype_str
from ..pattern import OUT_ELEMWISE_FUSABLE
from ..registry import fail, make_call, padding4, pair, register, tensor_arg
from .convolution import padding6


def pool_out(size, k: int, stride: int, dil: int, pad_before: int, pad_after: int,
             ceil_mode: bool):
    span = dil * (k - 1) + 1
    num = su.sub(su.add(size, pad_before + pad_after), span)
    if not ceil_mode:
        return su.add(su.floordiv(num, stride), 1)
    out = su.add(su.ceildiv(num, stride), 1)
    if isinstance(out, int) and isinstance(size, int):
        if (out - 1) * stride >= size + pad_before:
            out -= 1
        return out
    # a symbolic size: at most as many windows as start inside the input or its leading padding
    starts = su.add(su.floordiv(su.add(size, pad_before - 1), stride), 1)
    return su.norm(E.binary(E.Min, su.dim_expr(out), su.dim_expr(starts)))


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
register("relax.nn.max_pool2d", _infer_pool, ("data",), _POOL, pattern=OUT_ELEMWISE_FUSABLE)
register("relax.nn.avg_pool2d", _infer_pool, ("data",), {**_POOL, "count_include_pad": False},
         pattern=OUT_ELEMWISE_FUSABLE)
_ADAPTIVE = {"output_size": None, "layout": "NCHW", "out_layout": "NCHW", "out_dtype": "void"}
register("relax.nn.adaptive_avg_pool2d", _infer_adaptive, ("data",), _ADAPTIVE,
         pattern=OUT_ELEMWISE_FUSABLE)
register("relax.nn.adaptive_max_pool2d", _infer_adaptive, ("data",), _ADAPTIVE,
         pattern=OUT_ELEMWISE_FUSABLE)


def _pool_attrs(pool_size, strides, padding, dilation, ceil_mode, layout, out_layout,
                out_dtype, rank: int = 2):
    """The attributes of a `rank`-d pooling call (2: NCHW, 3: NCDHW)."""
    pads = padding4(padding) if rank == 2 else padding6(padding)
    return dict(pool_size=pair(pool_size, rank, "pool_size"),
                strides=pair(strides, rank, "strides"), padding=pads,
                dilation=pair(dilation, rank, "dilation"), ceil_mode=bool(ceil_mode),
                layout=layout, out_layout=out_layout or layout, out_dtype=as_dtype_str(out_dtype))


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


# ---- 3-D (NCDHW) ----------------------------------------------------------------------------
def _data3d(call: Call) -> TensorStructInfo:
    a = call.attrs
    if a.layout != "NCDHW" or a.out_layout not in ("NCDHW", ""):
        raise fail(call, f"only layout='NCDHW' is supported, got layout={a.layout!r}, "
                         f"out_layout={a.out_layout!r}")
    s = tensor_arg(call, 0)
    if s.ndim not in (-1, 5):
        raise fail(call, f"data must be 5-D (NCDHW), got {s.ndim} dims")
    return s


def _infer_pool3d(call: Call) -> StructInfo:
    s = _data3d(call)
    a = call.attrs
    out_dtype = a.out_dtype if a.out_dtype != "void" else s.dtype
    if s.shape is None:
        return TensorStructInfo(None, out_dtype, 5)
    if min(a.pool_size + a.strides + a.dilation) < 1:
        raise fail(call, f"pool_size {a.pool_size}, strides {a.strides} and dilation "
                         f"{a.dilation} must be positive")
    out = []
    for i, name in enumerate(("depth", "height", "width")):
        k, st, d = a.pool_size[i], a.strides[i], a.dilation[i]
        before, after = a.padding[i], a.padding[i + 3]
        if max(before, after) >= k * d:
            raise fail(call, f"padding {a.padding} must be smaller than the window "
                             f"{a.pool_size}")
        v = pool_out(s.shape[2 + i], k, st, d, before, after, a.ceil_mode)
        if isinstance(v, int) and v <= 0:
            raise fail(call, f"output {name} would be {v}: the window {a.pool_size} does not "
                             "fit the padded input")
        out.append(v)
    return TensorStructInfo(tuple(s.shape[:2]) + tuple(out), out_dtype)


def _infer_adaptive3d(call: Call) -> StructInfo:
    s = _data3d(call)
    a = call.attrs
    out_dtype = a.out_dtype if a.out_dtype != "void" else s.dtype
    if s.shape is None:
        return TensorStructInfo(None, out_dtype, 5)
    size = tuple(a.output_size) if a.output_size is not None else tuple(s.shape[2:])
    if any(isinstance(v, int) and v < 1 for v in size):
        raise fail(call, f"output_size {a.output_size} must be positive")
    return TensorStructInfo(tuple(s.shape[:2]) + size, out_dtype)


_POOL3D = {"pool_size": (1, 1, 1), "strides": (1, 1, 1), "padding": (0,) * 6,
           "dilation": (1, 1, 1), "ceil_mode": False, "layout": "NCDHW", "out_layout": "NCDHW",
           "out_dtype": "void"}
register("relax.nn.max_pool3d", _infer_pool3d, ("data",), _POOL3D, pattern=OUT_ELEMWISE_FUSABLE)
register("relax.nn.avg_pool3d", _infer_pool3d, ("data",), {**_POOL3D, "count_include_pad": False},
         pattern=OUT_ELEMWISE_FUSABLE)
_ADAPTIVE3D = {"output_size": None, "layout": "NCDHW", "out_layout": "NCDHW",
               "out_dtype": "void"}
register("relax.nn.adaptive_avg_pool3d", _infer_adaptive3d, ("data",), _ADAPTIVE3D,
         pattern=OUT_ELEMWISE_FUSABLE)
register("relax.nn.adaptive_max_pool3d", _infer_adaptive3d, ("data",), _ADAPTIVE3D,
         pattern=OUT_ELEMWISE_FUSABLE)


def max_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), padding=(0, 0, 0),
               dilation=(1, 1, 1), ceil_mode: bool = False, layout: str = "NCDHW",
               out_layout=None, out_dtype=None) -> Call:
    """Maximum over 3-D windows of NCDHW data; `padding` is (front, top, left, back, bottom,
    right) (an int or (d, h, w) is expanded)."""
    return make_call("relax.nn.max_pool3d", (data,),
                     **_pool_attrs(pool_size, strides, padding, dilation, ceil_mode, layout,
                                     out_layout, out_dtype, rank=3))


def avg_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), padding=(0, 0, 0),
               dilation=(1, 1, 1), ceil_mode: bool = False, count_include_pad: bool = False,
               layout: str = "NCDHW", out_layout=None, out_dtype=None) -> Call:
    """Average over 3-D windows of NCDHW data (as avg_pool2d)."""
    return make_call("relax.nn.avg_pool3d", (data,), count_include_pad=bool(count_include_pad),
                     **_pool_attrs(pool_size, strides, padding, dilation, ceil_mode, layout,
                                     out_layout, out_dtype, rank=3))


def _output_size3(output_size):
    return None if output_size is None else pair(output_size, 3, "output_size")


def adaptive_avg_pool3d(data, output_size=None, layout: str = "NCDHW", out_layout=None,
                        out_dtype=None) -> Call:
    """Average over adaptive 3-D windows (as adaptive_avg_pool2d); (1, 1, 1) is a global
    pool."""
    return make_call("relax.nn.adaptive_avg_pool3d", (data,),
                     output_size=_output_size3(output_size), layout=layout,
                     out_layout=out_layout or layout, out_dtype=as_dtype_str(out_dtype))


def adaptive_max_pool3d(data, output_size=None, layout: str = "NCDHW", out_layout=None,
                        out_dtype=None) -> Call:
    """Maximum over adaptive 3-D windows; (1, 1, 1) is a global max pool."""
    return make_call("relax.nn.adaptive_max_pool3d", (data,),
                     output_size=_output_size3(output_size), layout=layout,
                     out_layout=out_layout or layout, out_dtype=as_dtype_str(out_dtype))
