"""2-D convolution and transposed convolution, NCHW data.

conv2d: weight OIHW `(out_channels, in_channels / groups, kh, kw)`; groups == in_channels ==
out_channels is a depthwise convolution. conv2d_transpose: weight IOHW `(in_channels,
out_channels / groups, kh, kw)`. `padding` is (top, left, bottom, right) (an int or (h, w) is
expanded); `out_dtype` "void" means the data's dtype.
"""
from __future__ import annotations

from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, as_dtype_str
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


def _static_mismatch(a, b) -> bool:
    return isinstance(a, int) and isinstance(b, int) and a != b


def _conv_out(size, k, stride, dil, pad_total):
    """floor((size + pad_total - dil * (k - 1) - 1) / stride) + 1"""
    span = su.add(su.mul(dil, su.sub(k, 1)), 1)
    return su.add(su.floordiv(su.sub(su.add(size, pad_total), span), stride), 1)


def _infer_conv2d(call: Call) -> StructInfo:
    _check_layouts(call, "OIHW")
    data, weight, out_dtype = _operands(call)
    a = call.attrs
    if data.shape is None or weight.shape is None:
        return TensorStructInfo(None, out_dtype, 4)
    n, c, h, w = data.shape
    o, ci, kh, kw = weight.shape
    g = a.groups
    if g < 1:
        raise fail(call, f"groups must be >= 1, got {g}")
    if isinstance(ci, int) and _static_mismatch(c, ci * g):
        raise fail(call, f"data has {c} channels but weight expects {ci * g} (groups={g})")
    if isinstance(o, int) and o % g:
        raise fail(call, f"weight has {o} output channels, not divisible by groups={g}")
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


_CONV_ATTRS = {"strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
               "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW",
               "out_dtype": "void"}
register("relax.nn.conv2d", _infer_conv2d, ("data", "weight"), _CONV_ATTRS)
register("relax.nn.conv2d_transpose", _infer_conv2d_transpose, ("data", "weight"),
         {"strides": (1, 1), "padding": (0, 0, 0, 0), "output_padding": (0, 0),
          "dilation": (1, 1), "groups": 1, "data_layout": "NCHW", "kernel_layout": "IOHW",
          "out_layout": "NCHW", "out_dtype": "void"})


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
