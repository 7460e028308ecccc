"""2-D convolution and transposed convolution, NCHW data; 3-D convolution, NCDHW data.

conv2d: weight OIHW `(out_channels, in_channels / groups, kh, kw)`; groups == in_channels ==
out_channels is a depthwise convolution. CPU kernels also take conv2d in the blocked layouts
data NCHW[i]c `(n, c / i, h, w, i)`, weight OIHW[i]i[o]o `(o_ch / o, c / i, kh, kw, i, o)`
(depthwise: OIHW1i[o]o; groups of g < i channels within blocks: OIHW[g]i[o]o, o = i), out
NCHW[o]c. conv2d_transpose: weight IOHW `(in_channels, out_channels / groups, kh, kw)`.
`padding` is (top, left, bottom, right) (an int or (h, w) is expanded); `out_dtype` "void"
means the data's dtype.
conv3d: data NCDHW, weight OIDHW `(out_channels, in_channels / groups, kd, kh, kw)`, `padding`
(front, top, left, back, bottom, right). CPU kernels also take conv3d (groups 1) in the blocked
layouts data NCDHW[i]c `(n, c / i, d, h, w, i)`, weight OIDHW[i]i[o]o `(o_ch / o, c / i, kd, kh,
kw, i, o)`, out NCDHW[o]c.
contrib_conv2d_winograd_without_weight_transform (CPU kernels, made by the winograd_conv2d
pass): a 3x3, stride-1 conv2d in the blocked layout whose weight was transformed at compile
time for Winograd F(tile_size, 3) (topi.nn.winograd): `(a*a, o_ch / o, c, o)`, a = tile_size
+ 2.
"""
from __future__ import annotations

import re
from typing import Optional

from ....ir.errors import IRError
from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, as_dtype_str
from ..pattern import OPAQUE, OUT_ELEMWISE_FUSABLE
from ..registry import fail, make_call, padding4, pair, register, same_dtype, tensor_arg


def _check_layouts(call: Call, kernel_layout: str) -> None:
    a = call.attrs
    if a.data_layout != "NCHW" or a.kernel_layout != kernel_layout or \
            a.out_layout not in ("NCHW", ""):
        raise fail(call, f"only data_layout='NCHW', kernel_layout='{kernel_layout}' are supported,"
                         f" got data_layout={a.data_layout!r}, kernel_layout={a.kernel_layout!r},"
                         f" out_layout={a.out_layout!r}")


def _operands(call: Call):
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, data, 1, weight)
    out_dtype = call.attrs.out_dtype if call.attrs.out_dtype != "void" else dtype
    for i, s in ((0, data), (1, weight)):
        if s.ndim not in (-1, 4):
            raise fail(call, f"{('data', 'weight')[i]} must be 4-D, got {s.ndim} dims "
                             f"{s.shape if s.shape is not None else ''}".rstrip())
    return data, weight, out_dtype


def _check_groups(call: Call, c, o, ci, g: int) -> None:
    """Errors for a grouped convolution whose channel counts do not fit its `g` groups."""
    if g < 1:
        raise fail(call, f"groups must be >= 1, got {g}")
    if isinstance(ci, int) and _static_mismatch(c, ci * g):
        raise fail(call, f"data has {c} channels but weight expects {ci * g} (groups={g})")
    if isinstance(o, int) and o % g:
        raise fail(call, f"weight has {o} output channels, not divisible by groups={g}")


def _static_mismatch(a, b) -> bool:
    return isinstance(a, int) and isinstance(b, int) and a != b


def _conv_out(size, k, stride, dil, pad_total):
    """floor((size + pad_total - dil * (k - 1) - 1) / stride) + 1"""
    span = su.add(su.mul(dil, su.sub(k, 1)), 1)
    return su.add(su.floordiv(su.sub(su.add(size, pad_total), span), stride), 1)


_BLOCKED_DATA = re.compile(r"^NCHW(\d+)c$")
_BLOCKED_KERNEL = re.compile(r"^OIHW(\d+)i(\d+)o$")


def _blocked(call: Call):
    """(input block, output block) when the call is in the blocked layouts NCHW[i]c /
    OIHW[i]i[o]o / NCHW[o]c (the kernels of CPU targets), else None."""
    a = call.attrs
    d, k = _BLOCKED_DATA.match(a.data_layout), _BLOCKED_KERNEL.match(a.kernel_layout)
    o = _BLOCKED_DATA.match(a.out_layout or a.data_layout)
    if not (d and k and o):
        return None
    ib, kib, kob, ob = int(d.group(1)), int(k.group(1)), int(k.group(2)), int(o.group(1))
    if is_grouped_in_block(a):
        if ib % kib or ib != ob or kob != ob:
            raise fail(call, f"layouts {a.data_layout}/{a.kernel_layout}/{a.out_layout} do "
                             "not agree: a convolution grouped within blocks needs the same "
                             "data, weight o and output blocks, and groups (the weight's i "
                             "block) that divide them")
    elif (kib, kob) != (ib, ob):
        raise fail(call, f"layouts {a.data_layout}/{a.kernel_layout}/{a.out_layout} do not "
                         "agree: the weight's i block must be the data's channel block (1 for a "
                         "depthwise convolution) and its o block the output's")
    return ib, ob


def is_grouped_in_block(attrs) -> bool:
    """Whether a blocked conv2d (OIHW[i]i[o]o weights) is grouped within blocks: groups > 1
    with an i block (the channels per group) narrower than the data's channel block — 1 for
    a depthwise convolution, g for groups of g channels (depthwise_conv2d_NCHWc computes
    both); groups > 1 with the data's block is a grouped convolution of whole blocks."""
    k = _BLOCKED_KERNEL.match(attrs.kernel_layout)
    d = _BLOCKED_DATA.match(attrs.data_layout)
    return (attrs.groups > 1 and k is not None and
            (int(k.group(1)) == 1 or d is not None and int(k.group(1)) < int(d.group(1))))


def _infer_conv2d_blocked(call: Call, ib: int, ob: int) -> StructInfo:
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, data, 1, weight)
    out_dtype = call.attrs.out_dtype if call.attrs.out_dtype != "void" else dtype
    if data.ndim not in (-1, 5) or weight.ndim not in (-1, 6):
        raise fail(call, f"blocked data must be 5-D and the weight 6-D, got {data.ndim} and "
                         f"{weight.ndim} dims")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, 5)
    a = call.attrs
    n, cb, h, w, c = data.shape
    ocb, icb, kh, kw, kib, kob = weight.shape
    in_block = is_grouped_in_block(a)
    if (not in_block and _static_mismatch(cb, su.mul(icb, a.groups))) or c != ib or kob != ob:
        raise fail(call, f"data {data.shape} and weight {weight.shape} do not match "
                         f"({a.data_layout}, {a.kernel_layout}, groups={a.groups})")
    if in_block and (_static_mismatch(su.mul(a.groups, kib), su.mul(cb, c)) or icb != 1
                      or _static_mismatch(ocb, cb)):
        raise fail(call, f"a blocked convolution grouped within blocks needs groups x "
                         f"{kib} (the weight's i block) = channels and one weight block per "
                         f"data block, got groups={a.groups} for {cb * c} channels and weight "
                         f"{weight.shape}")
    if not in_block and isinstance(ocb, int) and ocb % a.groups:
        raise fail(call, f"{ocb} output blocks do not split into {a.groups} groups")
    pt, pl, pb, pr = a.padding
    oh = _conv_out(h, kh, a.strides[0], a.dilation[0], pt + pb)
    ow = _conv_out(w, kw, a.strides[1], a.dilation[1], pl + pr)
    return TensorStructInfo((n, ocb, oh, ow, ob), out_dtype)


def _infer_conv2d(call: Call) -> StructInfo:
    blocks = _blocked(call)
    if blocks is not None:
        return _infer_conv2d_blocked(call, *blocks)
    _check_layouts(call, "OIHW")
    data, weight, out_dtype = _operands(call)
    a = call.attrs
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, 4)
    n, c, h, w = data.shape
    o, ci, kh, kw = weight.shape
    g = a.groups
    _check_groups(call, c, o, ci, g)
    pt, pl, pb, pr = a.padding
    sh, sw = a.strides
    dh, dw = a.dilation
    oh = _conv_out(h, kh, sh, dh, pt + pb)
    ow = _conv_out(w, kw, sw, dw, pl + pr)
    for name, v in (("height", oh), ("width", ow)):
        if isinstance(v, int) and v <= 0:
            raise fail(call, f"output {name} would be {v}: the kernel does not fit the padded "
                             "input")
    return TensorStructInfo((n, o, oh, ow), out_dtype)


def _infer_conv2d_transpose(call: Call) -> StructInfo:
    _check_layouts(call, "IOHW")
    data, weight, out_dtype = _operands(call)
    a = call.attrs
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, 4)
    n, c, h, w = data.shape
    ci, o, kh, kw = weight.shape
    g = a.groups
    if _static_mismatch(c, ci):
        raise fail(call, f"data has {c} channels but weight expects {ci} (weight layout IOHW)")
    pt, pl, pb, pr = a.padding
    sh, sw = a.strides
    dh, dw = a.dilation
    oph, opw = a.output_padding
    if oph >= max(sh, dh) or opw >= max(sw, dw):
        raise fail(call, f"output_padding {a.output_padding} must be smaller than the stride or "
                         "the dilation")

    def out(size, k, s, d, p, op):
        span = su.add(su.mul(d, su.sub(k, 1)), 1 + op - p)
        return su.add(su.mul(su.sub(size, 1), s), span)

    return TensorStructInfo((n, su.mul(o, g), out(h, kh, sh, dh, pt + pb, oph),
                             out(w, kw, sw, dw, pl + pr, opw)), out_dtype)


def _infer_conv2d_winograd(call: Call) -> StructInfo:
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, data, 1, weight)
    out_dtype = call.attrs.out_dtype if call.attrs.out_dtype != "void" else dtype
    a = call.attrs
    d, o = _BLOCKED_DATA.match(a.data_layout), _BLOCKED_DATA.match(a.out_layout)
    if not (d and o) or data.ndim not in (-1, 5) or weight.ndim not in (-1, 4):
        raise fail(call, f"needs blocked data (NCHW[i]c, 5-D) and a transformed weight (4-D), "
                         f"got {a.data_layout}/{a.out_layout}, {data.ndim} and {weight.ndim} "
                         "dims")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, 5)
    n, cb, h, w, c = data.shape
    points, ocb, ic, ob = weight.shape
    side = a.tile_size + 2
    if points != side * side or c != int(d.group(1)) or ob != int(o.group(1)) or \
            _static_mismatch(ic, su.mul(cb, c)):
        raise fail(call, f"data {data.shape} and weight {weight.shape} do not match a "
                         f"tile_size={a.tile_size} transform ({a.data_layout}/{a.out_layout})")
    pt, pl, pb, pr = a.padding
    return TensorStructInfo((n, ocb, _conv_out(h, 3, 1, 1, pt + pb),
                             _conv_out(w, 3, 1, 1, pl + pr), ob), out_dtype)


def _infer_winograd_weight_transform(call: Call) -> StructInfo:
    weight = tensor_arg(call, 0)
    m = call.attrs.tile_size
    if weight.ndim not in (-1, 6):
        raise fail(call, f"needs a blocked weight [O/o, I/i, 3, 3, i, o] (6-D), got {weight.ndim} "
                         "dims")
    if weight.shape is None:
        return TensorStructInfo(None, weight.dtype, 4)
    ocb, icb, kh, kw, ib, ob = weight.shape
    if (kh, kw) != (3, 3):
        raise fail(call, f"transforms 3x3 filters only, got {kh}x{kw}")
    return TensorStructInfo(((m + 2) * (m + 2), ocb, su.mul(icb, ib), ob), weight.dtype)


_CONV_ATTRS = {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
               "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW",
               "out_dtype": "void"}
register("relax.nn.conv2d", _infer_conv2d, ("data", "weight"), _CONV_ATTRS,
         pattern=OUT_ELEMWISE_FUSABLE)
register("relax.nn.contrib_conv2d_winograd_without_weight_transform", _infer_conv2d_winograd,
         ("data", "weight"), {"tile_size": 2, "padding": (1, 1, 1, 1), "data_layout": "NCHW8c",
                              "out_layout": "NCHW8c", "out_dtype": "void"},
         pattern=OUT_ELEMWISE_FUSABLE)
register("relax.nn.contrib_conv2d_winograd_weight_transform", _infer_winograd_weight_transform,
         ("weight",), {"tile_size": 2}, pattern=OPAQUE)
register("relax.nn.conv2d_transpose", _infer_conv2d_transpose, ("data", "weight"),
         {"strides": (1, 1), "padding": (0, 0, 0, 0), "output_padding": (0, 0),
          "dilation": (1, 1), "groups": 1, "data_layout": "NCHW", "kernel_layout": "IOHW",
          "out_layout": "NCHW", "out_dtype": "void"}, pattern=OUT_ELEMWISE_FUSABLE)


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups: int = 1,
           data_layout: str = "NCHW", kernel_layout: str = "OIHW", out_layout=None,
           out_dtype=None) -> Call:
    """2-D convolution (cross-correlation) of NCHW `data` with OIHW `weight`."""
    return make_call("relax.nn.conv2d", (data, weight), strides=pair(strides, 2, "strides"),
                     padding=padding4(padding), dilation=pair(dilation, 2, "dilation"),
                     groups=int(groups), data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout or data_layout, out_dtype=as_dtype_str(out_dtype))


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups: int = 1, data_layout: str = "NCHW",
                     kernel_layout: str = "IOHW", out_layout=None, out_dtype=None) -> Call:
    """The transpose (gradient) of conv2d: NCHW `data`, IOHW `weight`."""
    return make_call("relax.nn.conv2d_transpose", (data, weight),
                     strides=pair(strides, 2, "strides"), padding=padding4(padding),
                     output_padding=pair(output_padding, 2, "output_padding"),
                     dilation=pair(dilation, 2, "dilation"), groups=int(groups),
                     data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout or data_layout, out_dtype=as_dtype_str(out_dtype))


def contrib_conv2d_winograd_weight_transform(weight, tile_size: int) -> Call:
    """A blocked 3x3 weight [O/o, I/i, 3, 3, i, o] transformed for Winograd F(tile_size, 3):
    [a*a, O/o, I, o], a = tile_size + 2 (topi.nn.winograd_weight_transform)."""
    return make_call("relax.nn.contrib_conv2d_winograd_weight_transform", (weight,),
                     tile_size=int(tile_size))


def contrib_conv2d_winograd_without_weight_transform(data, weight, tile_size: int, padding=(1, 1),
                                                    data_layout: str = "NCHW8c",
                                                    out_layout=None, out_dtype=None) -> Call:
    """A 3x3, stride-1 convolution of blocked `data` with a weight already transformed for
    Winograd F(tile_size, 3) (topi.nn.winograd_weight_transform)."""
    return make_call("relax.nn.contrib_conv2d_winograd_without_weight_transform", (data, weight),
                     tile_size=int(tile_size), padding=padding4(padding),
                     data_layout=data_layout, out_layout=out_layout or data_layout,
                     out_dtype=as_dtype_str(out_dtype))


# ---- 3-D ------------------------------------------------------------------------------------
def padding6(value, name: str = "padding") -> tuple:
    """3-D padding as (front, top, left, back, bottom, right) from an int, (d, h, w) or 6
    values."""
    if isinstance(value, int):
        return (value,) * 6
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 6
    if len(value) == 3:
        return value + value
    if len(value) == 6:
        return value
    raise IRError(f"{name} must have 1, 3 or 6 values (front, top, left, back, bottom, right), "
                  f"got {value}")


_BLOCKED_DATA3D = re.compile(r"^NCDHW(\d+)c$")
_BLOCKED_KERNEL3D = re.compile(r"^OIDHW(\d+)i(\d+)o$")


def _infer_conv3d_blocked(call: Call) -> Optional[StructInfo]:
    """The result of a conv3d in the blocked layouts NCDHW[i]c / OIDHW[i]i[o]o / NCDHW[o]c
    (groups 1; the kernels of CPU targets), or None when the call is not in them."""
    a = call.attrs
    d = _BLOCKED_DATA3D.match(a.data_layout)
    k = _BLOCKED_KERNEL3D.match(a.kernel_layout)
    o = _BLOCKED_DATA3D.match(a.out_layout or a.data_layout)
    if not (d and k and o):
        return None
    ib, ob = int(d.group(1)), int(o.group(1))
    if (int(k.group(1)), int(k.group(2))) != (ib, ob) or a.groups != 1:
        raise fail(call, f"layouts {a.data_layout}/{a.kernel_layout}/{a.out_layout} with "
                         f"groups={a.groups} do not agree: the weight's i block must be the "
                         "data's channel block, its o block the output's, and groups 1")
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, data, 1, weight)
    out_dtype = a.out_dtype if a.out_dtype != "void" else dtype
    if data.ndim not in (-1, 6) or weight.ndim not in (-1, 7):
        raise fail(call, f"blocked data must be 6-D and the weight 7-D, got {data.ndim} and "
                         f"{weight.ndim} dims")
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, 6)
    n, cb, *size, c = data.shape
    ocb, icb, *window, kib, kob = weight.shape
    if _static_mismatch(cb, icb) or c != ib or kib != ib or kob != ob:
        raise fail(call, f"data {data.shape} and weight {weight.shape} do not match "
                         f"({a.data_layout}, {a.kernel_layout})")
    out = [_conv_out(size[i], window[i], a.strides[i], a.dilation[i],
                     a.padding[i] + a.padding[i + 3]) for i in range(3)]
    return TensorStructInfo((n, ocb, *out, ob), out_dtype)


def _infer_conv3d(call: Call) -> StructInfo:
    a = call.attrs
    blocked = _infer_conv3d_blocked(call)
    if blocked is not None:
        return blocked
    if a.data_layout != "NCDHW" or a.kernel_layout != "OIDHW" or \
            a.out_layout not in ("NCDHW", ""):
        raise fail(call, f"only data_layout='NCDHW', kernel_layout='OIDHW' are supported, got "
                         f"data_layout={a.data_layout!r}, kernel_layout={a.kernel_layout!r}, "
                         f"out_layout={a.out_layout!r}")
    data, weight = tensor_arg(call, 0), tensor_arg(call, 1)
    dtype = same_dtype(call, 0, data, 1, weight)
    out_dtype = a.out_dtype if a.out_dtype != "void" else dtype
    for i, s in ((0, data), (1, weight)):
        if s.ndim not in (-1, 5):
            raise fail(call, f"{('data', 'weight')[i]} must be 5-D, got {s.ndim} dims "
                             f"{s.shape if s.shape is not None else ''}".rstrip())
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, 5)
    n, c = data.shape[:2]
    o, ci = weight.shape[:2]
    g = a.groups
    _check_groups(call, c, o, ci, g)
    if min(a.strides) < 1 or min(a.dilation) < 1:
        raise fail(call, f"strides {a.strides} and dilation {a.dilation} must be positive")
    out = [_conv_out(size, k, s, d, a.padding[i] + a.padding[i + 3])
           for i, (size, k, s, d) in enumerate(zip(data.shape[2:], weight.shape[2:],
                                                   a.strides, a.dilation))]
    for name, v in zip(("depth", "height", "width"), out):
        if isinstance(v, int) and v <= 0:
            raise fail(call, f"output {name} would be {v}: the kernel does not fit the padded "
                             "input")
    return TensorStructInfo((n, o, *out), out_dtype)


register("relax.nn.conv3d", _infer_conv3d, ("data", "weight"),
         {"strides": (1, 1, 1), "padding": (0,) * 6, "dilation": (1, 1, 1), "groups": 1,
          "data_layout": "NCDHW", "kernel_layout": "OIDHW", "out_layout": "NCDHW",
          "out_dtype": "void"}, pattern=OUT_ELEMWISE_FUSABLE)


def conv3d(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
           groups: int = 1, data_layout: str = "NCDHW", kernel_layout: str = "OIDHW",
           out_layout=None, out_dtype=None) -> Call:
    """3-D convolution (cross-correlation) of NCDHW `data` with OIDHW `weight`; `padding` is
    (front, top, left, back, bottom, right) (an int or (d, h, w) is expanded)."""
    return make_call("relax.nn.conv3d", (data, weight), strides=pair(strides, 3, "strides"),
                     padding=padding6(padding), dilation=pair(dilation, 3, "dilation"),
                     groups=int(groups), data_layout=data_layout, kernel_layout=kernel_layout,
                     out_layout=out_layout or data_layout, out_dtype=as_dtype_str(out_dtype))
