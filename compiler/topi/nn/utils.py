"""Padding and output-size arithmetic shared by convolution and pooling."""
from __future__ import annotations

from ...ir.errors import IRError
from ..utils import get_const_tuple, simplify


def get_pad_tuple(padding, kernel) -> tuple:
    """(top, left, bottom, right) from `padding`: an int (all sides), (h, w) (top=bottom=h,
    left=right=w), (top, left, bottom, right), "VALID" or "SAME" (for stride 1: the output
    keeps the input size; the odd extra padding goes after)."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return 0, 0, 0, 0
        if padding.upper() == "SAME":
            ph, pw = kernel[0] - 1, kernel[1] - 1
            return ph // 2, pw // 2, ph - ph // 2, pw - pw // 2
        raise IRError(f"padding '{padding}' is not one of 'VALID', 'SAME'")
    if isinstance(padding, int):
        return padding, padding, padding, padding
    padding = tuple(int(p) for p in padding)
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    if len(padding) == 4:
        return padding
    raise IRError(f"padding {padding} must be an int, 2 values (h, w) or 4 values "
                  "(top, left, bottom, right)")


def pair(v, what: str) -> tuple:
    """An int or a pair of ints as a pair."""
    if isinstance(v, int):
        return v, v
    v = tuple(int(x) for x in v)
    if len(v) != 2:
        raise IRError(f"{what} must be an int or 2 values (h, w), got {v}")
    return v


def conv_out_size(size, kernel: int, stride: int, pad_total: int, dilation: int):
    """The output size of a window sliding over `size` (an int, or a symbolic dim: then an
    expression, whose value a run time input must keep >= 1)."""
    out = (size + pad_total - (kernel - 1) * dilation - 1) // stride + 1
    if not isinstance(out, int):
        return simplify(out)
    if out < 1:
        raise IRError(f"the window (kernel {kernel}, dilation {dilation}) is larger than the "
                      f"padded input ({size} + {pad_total})")
    return out


def data_shape(tensor, what: str, static_axes=()) -> tuple:
    """`tensor`'s dims as ints where constant, symbolic dims as expressions; IRError when one
    of `static_axes` (the dims the operator's loops or reductions need as numbers, such as a
    kernel's size) is symbolic."""
    shape = get_const_tuple(tensor.shape)
    for a in static_axes:
        if not isinstance(shape[a], int):
            raise IRError(f"{what}: dim {a} of {tensor.name!r} is symbolic "
                          f"({[str(s) for s in shape]}), but this operator needs it static")
    return shape
