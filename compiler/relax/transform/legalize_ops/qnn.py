"""Quantized operators (relax.qnn.*): quantize / dequantize / requantize, the integer
convolution (NCHW and blocked) and matmul (topi.nn.qnn)."""
from .... import te, topi


def _float_dtype(p, default: str) -> str:
    return str(p.dtype) if isinstance(p, te.Tensor) else default


def _quantize(call, a):
    at = call.attrs
    return topi.nn.qnn.quantize(a[0], a[1], a[2], at.axis, at.out_dtype)


def _dequantize(call, a):
    at = call.attrs
    return topi.nn.qnn.dequantize(a[0], a[1], a[2], at.axis, at.out_dtype)


def _requantize(call, a):
    at = call.attrs
    dtype = str(call.args[1].struct_info.dtype)
    return topi.nn.qnn.requantize(a[0], a[1], a[2], at.axis, at.out_dtype,
                                  _float_dtype(a[1], dtype))


def _conv2d(call, a):
    at = call.attrs
    return topi.nn.qnn.qnn_conv2d_nchw(a[0], a[1], a[2], a[3], list(at.strides),
                                       list(at.padding), list(at.dilation), at.groups)


def _conv2d_nchwc(call, a):
    at = call.attrs
    return topi.nn.qnn.qnn_conv2d_NCHWc_int8(a[0], a[1], at.data_zero_point, list(at.strides),
                                             list(at.padding), list(at.dilation), at.channels,
                                             at.groups)


def _matmul(call, a):
    return topi.nn.qnn.qnn_matmul(a[0], a[1], a[2], a[3])


def _depthwise_nchwc(call, a):
    at = call.attrs
    return topi.nn.qnn.qnn_depthwise_conv2d_NCHWc_int8(
        a[0], a[1], at.data_zero_point, list(at.strides), list(at.padding), list(at.dilation),
        at.channels)


def _matmul_packed(call, a):
    return topi.nn.qnn.qnn_matmul_packed_int8(a[0], a[1], a[2], a[3])


LEGALIZE = {
    "relax.qnn.quantize": _quantize,
    "relax.qnn.dequantize": _dequantize,
    "relax.qnn.requantize": _requantize,
    "relax.qnn.conv2d": _conv2d,
    "relax.qnn.conv2d_NCHWc": _conv2d_nchwc,
    "relax.qnn.matmul": _matmul,
    "relax.qnn.matmul_packed": _matmul_packed,
    "relax.qnn.depthwise_conv2d_NCHWc": _depthwise_nchwc,
}
