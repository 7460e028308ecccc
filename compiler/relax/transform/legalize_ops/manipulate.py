"""Shape manipulation: reshape and its kin (computed from the inferred output shape),
permute_dims, concat, split, strided_slice, take, pad, resize2d, broadcast_to, zeros / ones /
full and *_like, and arange (whose bounds may be symbolic)."""
from .... import te, topi
from ....ir.errors import UnsupportedOpError
from ....tir import expr as E


def _out_shape(call):
    s = call.struct_info
    return tuple(s.shape)


def _reshape(call, a):
    return topi.reshape(a[0], _out_shape(call))


def _permute_dims(call, a):
    axes = call.attrs.axes
    return topi.transpose(a[0], None if axes is None else list(axes))


def _concat(call, a):
    return topi.concatenate(list(a[0]), call.attrs.axis)


def _split(call, a):
    ios = call.attrs.indices_or_sections
    ios = list(ios) if isinstance(ios, (tuple, list)) else int(ios)
    return topi.split(a[0], ios, call.attrs.axis)


def _strided_slice(call, a):
    at = call.attrs
    return topi.strided_slice(a[0], list(at.begin), list(at.end),
                              None if at.strides is None else list(at.strides), list(at.axes),
                              assume_inbound=bool(at.assume_inbound))


def _take(call, a):
    mode = {"fast": "clip"}.get(call.attrs.mode, call.attrs.mode)
    return topi.take(a[0], a[1], call.attrs.axis, mode=mode)


def _pad(call, a):
    at = call.attrs
    if at.pad_mode != "constant":
        raise UnsupportedOpError(f"relax.nn.pad: pad_mode '{at.pad_mode}' has no kernel; only "
                                 "'constant' padding is supported")
    w = list(at.pad_width)
    return topi.nn.pad(a[0], w[0::2], w[1::2], at.pad_value)


def _resize2d(call, a, separable=False):
    at = call.attrs
    size = a[1]
    out_dtype = None if at.out_dtype == "void" else at.out_dtype
    return topi.image.resize2d(a[0], list(at.roi), list(size), at.layout, at.method,
                               at.coordinate_transformation_mode, at.rounding_method,
                               at.cubic_alpha, at.cubic_exclude, at.extrapolation_value,
                               out_dtype, separable=separable)


def _broadcast_to(call, a):
    if not hasattr(a[0], "shape"):  # a scalar constant, inlined into the kernel
        dtype = call.struct_info.dtype
        return te.compute(_out_shape(call), lambda *i: E.const(a[0], dtype), name="T_full")
    return topi.broadcast_to(a[0], _out_shape(call))


def _arange(call, a):
    """start + i * step for i in [0, n): start (and the length) may be symbolic dims, filled
    from the kernel's buffers."""
    at = call.attrs
    dtype = call.struct_info.dtype

    def f(i):
        if dtype.startswith(("float", "bfloat")):
            return E.cast(dtype, at.start) + E.cast(dtype, i) * E.make_const(dtype, at.step)
        return E.cast(dtype, E.convert(at.start) + E.cast("int64", i) * at.step)

    return te.compute(_out_shape(call), f, name="T_arange", tag=topi.tag.INJECTIVE)


def _filled(shape, dtype, v):
    value = E.cast(dtype, v) if isinstance(v, E.PrimExpr) else E.const(v, dtype)
    return te.compute(shape, lambda *i: value, name="T_full", tag=topi.tag.ELEMWISE)


def _full(value):
    """zeros / ones / full (value None: the fill value is argument 1)."""
    def make(call, a):
        return _filled(_out_shape(call), call.struct_info.dtype, value if value is not None
                       else a[1])
    return make


def _full_like(value):
    """zeros_like / ones_like / full_like (value None: the fill value is argument 1)."""
    def make(call, a):
        return _filled(_out_shape(call), call.struct_info.dtype, value if value is not None
                       else a[1])
    return make


LEGALIZE = {
    "relax.reshape": _reshape, "relax.flatten": _reshape, "relax.expand_dims": _reshape,
    "relax.squeeze": _reshape, "relax.permute_dims": _permute_dims, "relax.concat": _concat,
    "relax.split": _split, "relax.strided_slice": _strided_slice, "relax.take": _take,
    "relax.nn.pad": _pad, "relax.image.resize2d": _resize2d,
    "relax.broadcast_to": _broadcast_to, "relax.zeros_like": _full_like(0),
    "relax.ones_like": _full_like(1), "relax.full_like": _full_like(None),
    "relax.arange": _arange, "relax.zeros": _full(0), "relax.ones": _full(1),
    "relax.full": _full(None),
}
