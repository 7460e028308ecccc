"""`tvm.topi.testing`: numpy reference implementations of operators, and the schedule that
classic TVM tests use for a target, picked by the target's keys ("cpu", "gpu"; "generic"
otherwise)."""
from __future__ import annotations

from typing import Dict, Sequence, Tuple

import numpy as np

from ...target import Target
from .. import cuda, generic, nn, x86

_INJECTIVE = {"generic": generic.schedule_injective, "cpu": x86.schedule_injective,
              "gpu": cuda.schedule_injective}
_REDUCE = {"generic": generic.schedule_reduce, "cpu": x86.schedule_reduce,
           "gpu": cuda.schedule_reduce}
_CONV2D_NCHW = {"generic": (nn.conv2d_nchw, generic.schedule_conv2d_nchw),
                "cpu": (nn.conv2d_nchw, x86.schedule_conv2d_nchw),
                "gpu": (nn.conv2d_nchw, cuda.schedule_conv2d_nchw)}


def dispatch(target, table: Dict[str, object]):
    """The entry of `table` for the first of the target's keys that has one, else "generic"."""
    if isinstance(target, str):
        target = Target(target)
    for key in target.keys:
        if key in table:
            return table[key]
    return table["generic"]


def get_injective_schedule(target):
    """The injective (elementwise, broadcast) schedule function for `target`."""
    return dispatch(target, _INJECTIVE)


def get_reduce_schedule(target):
    """The reduction schedule function for `target`."""
    return dispatch(target, _REDUCE)


get_broadcast_schedule = get_injective_schedule
get_elemwise_schedule = get_injective_schedule


def get_conv2d_nchw_implement(target):
    """(compute, schedule) of an NCHW conv2d for `target`."""
    return dispatch(target, _CONV2D_NCHW)


def _pair(value) -> Tuple[int, int]:
    if isinstance(value, int):
        return value, value
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"expected an int or a pair, got {value!r}")
    return value


def _padding(padding, kernel: Tuple[int, int]) -> Tuple[int, int, int, int]:
    """(top, left, bottom, right) of a conv padding: an int, a pair (height, width), a
    4-tuple, or "SAME" / "VALID"."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return 0, 0, 0, 0
        if padding.upper() == "SAME":
            kh, kw = kernel
            return (kh - 1) // 2, (kw - 1) // 2, kh - 1 - (kh - 1) // 2, kw - 1 - (kw - 1) // 2
        raise ValueError(f"unknown padding {padding!r}")
    if isinstance(padding, int):
        return padding, padding, padding, padding
    padding = tuple(int(p) for p in padding)
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    if len(padding) == 4:
        return padding
    raise ValueError(f"padding must be an int, a pair or a 4-tuple, got {padding!r}")


def conv2d_nchw_python(a_np: np.ndarray, w_np: np.ndarray, stride, padding,
                       groups: int = 1) -> np.ndarray:
    """Convolution of `a_np` (N, C, H, W) with `w_np` (F, C // groups, KH, KW), stride and
    padding as `topi.nn.conv2d_nchw` takes them; the result is (N, F, OH, OW) in a_np's
    dtype, accumulated in float64."""
    n, c, h, w = a_np.shape
    f, cg, kh, kw = w_np.shape
    if c != cg * groups or f % groups:
        raise ValueError(f"conv2d_nchw_python: {c} input channels, {cg} per group in the "
                         f"weights and {groups} groups do not match")
    sh, sw = _pair(stride)
    top, left, bottom, right = _padding(padding, (kh, kw))
    padded = np.pad(a_np.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - kh) // sh + 1
    ow = (w + left + right - kw) // sw + 1
    out = np.zeros((n, f, oh, ow))
    fg = f // groups
    weights = w_np.astype(np.float64)
    for g in range(groups):
        data = padded[:, g * cg:(g + 1) * cg]
        for y in range(kh):
            for x in range(kw):
                window = data[:, :, y:y + sh * (oh - 1) + 1:sh, x:x + sw * (ow - 1) + 1:sw]
                out[:, g * fg:(g + 1) * fg] += np.einsum(
                    "nchw,fc->nfhw", window, weights[g * fg:(g + 1) * fg, :, y, x])
    return out.astype(a_np.dtype)


def conv2d_nhwc_python(a_np: np.ndarray, w_np: np.ndarray, stride, padding,
                       groups: int = 1) -> np.ndarray:
    """Convolution of `a_np` (N, H, W, C) with `w_np` (KH, KW, C // groups, F): the NCHW
    reference on transposed operands."""
    out = conv2d_nchw_python(a_np.transpose(0, 3, 1, 2), w_np.transpose(3, 2, 0, 1), stride,
                             padding, groups)
    return out.transpose(0, 2, 3, 1)


def softmax_python(a_np: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along `axis`, shifted by the maximum for stability."""
    shifted = a_np - np.max(a_np, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(a_np.dtype)


def batch_matmul(x: np.ndarray, y: np.ndarray, trans_x: bool = False,
                 trans_y: bool = True) -> np.ndarray:
    """Batched matmul as `topi.nn.batch_matmul` (y transposed by default); a batch of 1
    broadcasts."""
    if trans_x:
        x = x.transpose(0, 2, 1)
    if trans_y:
        y = y.transpose(0, 2, 1)
    return np.matmul(x, y).astype(x.dtype)
