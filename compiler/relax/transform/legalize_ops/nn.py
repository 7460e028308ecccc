"""Neural-network operators: convolutions, dense/matmul, pooling, softmax, normalization."""
from .... import te, topi
from ....ir.errors import UnsupportedOpError


def _out_dtype(call):
    d = call.attrs.out_dtype
    return None if d in ("void", "", None) else d


def _layout(call, data="NCHW", kernel=None):
    at = call.attrs
    if getattr(at, "data_layout", data) != data or (
            kernel and getattr(at, "kernel_layout", kernel) != kernel):
        raise UnsupportedOpError(f"{call.op.name}: layout {at.data_layout}/{at.kernel_layout} "
                                 f"has no kernel; use {data}/{kernel}")


def _conv3d(call, a):
    at = call.attrs
    if at.data_layout != "NCDHW" or at.kernel_layout != "OIDHW":
        raise UnsupportedOpError(f"relax.nn.conv3d: layout {at.data_layout}/{at.kernel_layout} "
                                 "has no kernel; use NCDHW/OIDHW")
    return topi.nn.conv3d_ncdhw(a[0], a[1], list(at.strides), list(at.padding),
                                list(at.dilation), at.groups, _out_dtype(call))


def _conv2d_winograd(call, a):
    at = call.attrs
    return topi.nn.conv2d_winograd_NCHWc(a[0], a[1], at.tile_size, list(at.padding),
                                         _out_dtype(call))


def _conv2d_transpose(call, a):
    _layout(call, "NCHW", "IOHW")
    at = call.attrs
    if at.groups != 1 or tuple(at.dilation) != (1, 1):
        raise UnsupportedOpError("relax.nn.conv2d_transpose: only groups=1 and dilation=1 have "
                                 f"a kernel (got groups={at.groups}, dilation={at.dilation})")
    return topi.nn.conv2d_transpose_nchw(a[0], a[1], list(at.strides), list(at.padding),
                                         _out_dtype(call), list(at.output_padding))


def _dense(call, a):
    return topi.nn.dense(a[0], a[1], None, _out_dtype(call))


def _matmul(call, a):
    x, y = a
    out_dtype = _out_dtype(call)
    if x.ndim == 2 and y.ndim == 2:
        return topi.nn.matmul(x, y, None, out_dtype)
    if x.ndim == 3 and y.ndim == 3:
        return topi.nn.batch_matmul(x, y, out_dtype=out_dtype, transpose_b=False)
    return _matmul_nd(call, x, y, out_dtype)


def _matmul_nd(call, x, y, out_dtype):
    """[..., M, K] x [..., K, N], the batch dims broadcast as numpy does."""
    if x.ndim < 2 or y.ndim < 2:
        raise UnsupportedOpError(f"relax.matmul: a {x.ndim}-d by {y.ndim}-d product has no "
                                 "kernel; reshape 1-d operands to 2-d")
    out_shape = tuple(call.struct_info.shape)
    dtype = out_dtype or call.struct_info.dtype
    k = te.reduce_axis((0, x.shape[-1]), name="k")

    def batch_index(t, batch):
        own = t.ndim - 2
        lead = batch[len(batch) - own:]
        return tuple(0 if is_one(t.shape[n]) else lead[n] for n in range(own))

    def f(*idx):
        batch, i, j = idx[:-2], idx[-2], idx[-1]
        vx, vy = x[batch_index(x, batch) + (i, k)], y[batch_index(y, batch) + (k, j)]
        if str(vx.dtype) != dtype:
            vx, vy = vx.astype(dtype), vy.astype(dtype)
        return te.sum(vx * vy, axis=k)

    return te.compute(out_shape, f, name="T_matmul", tag="matmul_nd")


def is_one(d):
    return getattr(d, "value", d) == 1


def _pool(kind):
    def make(call, a):
        at = call.attrs
        kw = {"count_include_pad": at.count_include_pad} if kind == "avg" else {}
        if at.layout != "NCHW":
            topi.nn.channel_block(at.layout)
            return topi.nn.pool2d_NCHWc(a[0], list(at.pool_size), list(at.strides),
                                        list(at.dilation), list(at.padding), kind,
                                        at.ceil_mode, **kw)
        return topi.nn.pool2d(a[0], list(at.pool_size), list(at.strides), list(at.dilation),
                              list(at.padding), kind, at.ceil_mode, "NCHW", **kw)
    return make


def _adaptive(kind):
    def make(call, a):
        size = call.attrs.output_size
        s = call.struct_info
        size = tuple(s.shape[2:4]) if size is None else tuple(size)
        if call.attrs.layout != "NCHW":
            if size != (1, 1):
                raise UnsupportedOpError(f"{call.op.name}: layout {call.attrs.layout} has a "
                                         f"kernel for output_size (1, 1) only, got {size}")
            return topi.nn.global_pool_NCHWc(a[0], kind)
        if size == (1, 1):
            return topi.nn.global_pool(a[0], kind, "NCHW")
        return topi.nn.adaptive_pool(a[0], size, kind, "NCHW")
    return make


def _pool3d(kind):
    def make(call, a):
        at = call.attrs
        kw = {"count_include_pad": at.count_include_pad} if kind == "avg" else {}
        return topi.nn.pool3d(a[0], list(at.pool_size), list(at.strides), list(at.dilation),
                              list(at.padding), kind, at.ceil_mode, at.layout, **kw)
    return make


def _adaptive3d(kind):
    def make(call, a):
        return topi.nn.adaptive_pool3d(a[0], tuple(call.struct_info.shape[2:5]), kind,
                                       call.attrs.layout)
    return make


def _layer_norm(call, a):
    at = call.attrs
    return topi.nn.layer_norm(a[0], a[1] if at.scale else None, a[2] if at.center else None,
                              list(at.axes), at.epsilon)


def _batch_norm(call, a):
    at = call.attrs
    return topi.nn.batch_norm(a[0], a[1], a[2], a[3], a[4], at.axis, at.epsilon, at.center,
                              at.scale, at.training)


def _lrn(call, a):
    at = call.attrs
    return topi.nn.lrn(a[0], at.size, at.axis, at.alpha, at.beta, at.bias)


def _reverse(call, num_dir):
    """Which directions of a recurrent call run backwards in time."""
    return [False, True] if num_dir == 2 else [call.attrs.direction == "reverse"]


def _gru_sequence(call, a):
    at = call.attrs
    nd = int(a[0].shape[2])
    return topi.nn.gru_sequence(a[0], a[1], a[2], a[3], _reverse(call, nd),
                                at.linear_before_reset, at.clip)


def _lstm_sequence(call, a):
    nd = int(a[0].shape[2])
    return topi.nn.lstm_sequence(a[0], a[1], a[2], a[3], a[4] if len(a) > 4 else None,
                                 _reverse(call, nd), call.attrs.clip)


LEGALIZE = {
    "relax.nn.conv2d_transpose": _conv2d_transpose,
    "relax.nn.contrib_conv2d_winograd_without_weight_transform": _conv2d_winograd,
    "relax.nn.contrib_conv2d_winograd_weight_transform":
        lambda call, a: topi.nn.winograd_weight_transform_compute(a[0], call.attrs.tile_size),
    "relax.nn.dense": _dense, "relax.matmul": _matmul,
    "relax.nn.contrib_dense_pack": lambda call, a: topi.nn.dense_packed(
        a[0], a[1], call.attrs.units, _out_dtype(call)),
    "relax.nn.contrib_dense_pack_weight_transform": lambda call, a: topi.nn.dense_pack_weight(
        a[0], call.attrs.block, call.attrs.weight_layout),
    "relax.nn.max_pool2d": _pool("max"), "relax.nn.avg_pool2d": _pool("avg"),
    "relax.nn.adaptive_avg_pool2d": _adaptive("avg"),
    "relax.nn.adaptive_max_pool2d": _adaptive("max"),
    "relax.nn.conv3d": _conv3d,
    "relax.nn.max_pool3d": _pool3d("max"), "relax.nn.avg_pool3d": _pool3d("avg"),
    "relax.nn.adaptive_avg_pool3d": _adaptive3d("avg"),
    "relax.nn.adaptive_max_pool3d": _adaptive3d("max"),
    "relax.nn.softmax": lambda call, a: topi.nn.softmax(a[0], call.attrs.axis),
    "relax.nn.log_softmax": lambda call, a: topi.nn.log_softmax(a[0], call.attrs.axis),
    "relax.nn.layer_norm": _layer_norm, "relax.nn.batch_norm": _batch_norm,
    "relax.nn.lrn": _lrn,
    "relax.nn.gru_sequence": _gru_sequence, "relax.nn.lstm_sequence": _lstm_sequence,
    "relax.layout_transform": lambda call, a: topi.nn.layout_transform(
        a[0], call.attrs.src_layout, call.attrs.dst_layout),
}
