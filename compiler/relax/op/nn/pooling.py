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


def _layout(call: Call) -> None:
    if call.attrs.layout != "NCHW" or call.attrs.out_layout not in ("NCHW", ""):
        raise fail(call, f"only layout='NCHW' is supported, got layout={call.attrs.layout!r}, "
                         f"out_layout={call.attrs.out_layout!r}")


def _data(call: Call) -> TensorStructInfo:
    s = tensor_arg(call, 0)
    if s.ndim not in (-1, 4):
        raise fail(call, f"data must be 4-D (NCHW), got {s.ndim} dims")
    return s


def _infer_pool(call: Call) -> StructInfo:
    _layout(call)
    s = _data(call)
    a = call.attrs
    out_dtype = a.out_dtype if a.out_dtype != "void" else s.dtype
    if s.shape is None:
        return TensorStructInfo(None, out_dtype, 4)
    n, c, h, w = s.shape
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
    return TensorStructInfo((n, c, oh, ow), out_dtype)


def _infer_adaptive(call: Call) -> StructInfo:
    _layout(call)
    s = _data(call)
    a = call.attrs
    out_dtype = a.out_dtype if a.out_dtype != "void" else s.dtype
    if s.shape is None:
        return TensorStructInfo(None, out_dtype, 4)
    n, c, h, w = s.shape
    oh, ow = a.output_size if a.output_size is not None else (h, w)
    if isinstance(oh, int) and oh < 1 or isinstance(ow, int) and ow < 1:
        raise fail(call, f"output_size {a.output_size} must be positive")
    return TensorStructInfo((n, c, oh, ow), out_dtype)


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
