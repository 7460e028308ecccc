"""Recurrent layers whose time loop is one operator: nn.gru_sequence and nn.lstm_sequence (the
ONNX GRU and LSTM with their default activations). The input projection X . W^T + Wb of every
step is computed before them (one dense); they run the recurrence of every direction.

    gru_sequence(gates, weight, bias, h0)     -> (Y, Y_h)
    lstm_sequence(gates, weight, h0, c0[, peephole]) -> (Y, Y_h, Y_c)

gates [seq, batch, num_dir, G * hidden] (G: GRU 3 gates z, r, h; LSTM 4 gates i, o, f, c, in
ONNX order), weight [num_dir, hidden, G * hidden] (R^T per direction: row k is what hidden
unit k adds to every gate), bias [num_dir, G * hidden] (GRU's recurrent bias Rb; an LSTM's
biases are summed into `gates`), h0 / c0 [num_dir, batch, hidden], peephole [num_dir, 3 *
hidden] (P in the order i, o, f). Y [seq, num_dir, batch, hidden] holds the hidden state after
each step in time order (a reverse direction fills it from the end); Y_h and Y_c
[num_dir, batch, hidden] the last states. Attributes: direction ("forward", "reverse" or
"bidirectional": num_dir 1, 1, 2; the second direction of "bidirectional" runs backwards),
clip (None, or the bound of every gate's pre-activation), and GRU's linear_before_reset
(ONNX's: 1 applies r to H . Rh^T + Rbh, 0 to H before the product).
"""
from __future__ import annotations

from ... import shape_util as su
from ...expr import Call
from ...struct_info import StructInfo, TensorStructInfo, TupleStructInfo
from ..registry import arg_name, fail, float_dtype, make_call, register, same_dtype, tensor_arg

_DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _check(call: Call, index: int, want: tuple, dtype: str) -> None:
    """Argument `index` has dtype `dtype` and shape `want` (None: any dim)."""
    s = tensor_arg(call, index)
    same_dtype(call, 0, TensorStructInfo(None, dtype), index, s)
    if s.ndim not in (-1, len(want)):
        raise fail(call, f"{arg_name(call, index)} must have {len(want)} dims, got {s.ndim}")
    if s.shape is not None:
        for d, w in zip(s.shape, want):
            if w is not None and su.known_unequal(d, w):
                shown = tuple("?" if v is None else v for v in want)
                raise fail(call, f"{arg_name(call, index)} has shape {tuple(s.shape)}; the "
                                 f"gates and the attributes need {shown}")


def _infer(call: Call, gates: int, states: tuple, extra: tuple) -> StructInfo:
    """(Y, one [num_dir, batch, hidden] tensor per state): `states` are the argument indices
    of the initial states, `extra` (index, width in hidden units) the per-direction vectors."""
    x = tensor_arg(call, 0)
    float_dtype(call, 0, x)
    direction = call.attrs.direction
    if direction not in _DIRECTIONS:
        raise fail(call, f"direction {direction!r} is not forward, reverse or bidirectional")
    nd = _DIRECTIONS[direction]
    if x.ndim not in (-1, 4):
        raise fail(call, f"gates must have 4 dims (seq, batch, num_dir, {gates} * hidden), "
                         f"got {x.ndim}")
    seq = batch = hidden = None
    if x.shape is not None:
        seq, batch, got_nd, gh = x.shape
        if su.known_unequal(got_nd, nd):
            raise fail(call, f"gates has {got_nd} directions but direction {direction!r} "
                             f"has {nd}")
        if isinstance(gh, int):
            if gh % gates:
                raise fail(call, f"gates has {gh} columns, not a multiple of {gates} gates")
            hidden = gh // gates
    w = tensor_arg(call, 1)
    if hidden is None and w.shape is not None and w.ndim == 3:
        hidden = w.shape[1]
    gh = None if hidden is None else gates * hidden
    _check(call, 1, (nd, hidden, gh), x.dtype)
    for i in states:
        _check(call, i, (nd, batch, hidden), x.dtype)
    for i, width in extra:
        if i < len(call.args):
            _check(call, i, (nd, None if hidden is None else width * hidden), x.dtype)
    if None in (seq, batch, hidden):
        y, state = TensorStructInfo(None, x.dtype, 4), TensorStructInfo(None, x.dtype, 3)
    else:
        y = TensorStructInfo((seq, nd, batch, hidden), x.dtype)
        state = TensorStructInfo((nd, batch, hidden), x.dtype)
    return TupleStructInfo([y] + [state] * len(states))


def _infer_gru(call: Call) -> StructInfo:
    if len(call.args) != 4:
        raise fail(call, f"takes 4 arguments (gates, weight, bias, h0), got {len(call.args)}")
    if call.attrs.linear_before_reset not in (0, 1):
        raise fail(call, f"linear_before_reset is {call.attrs.linear_before_reset}, not 0 or 1")
    return _infer(call, 3, (3,), ((2, 3),))


def _infer_lstm(call: Call) -> StructInfo:
    if len(call.args) not in (4, 5):
        raise fail(call, "takes 4 or 5 arguments (gates, weight, h0, c0[, peephole]), got "
                         f"{len(call.args)}")
    return _infer(call, 4, (2, 3), ((4, 3),))


register("relax.nn.gru_sequence", _infer_gru, ("gates", "weight", "bias", "h0"),
         {"direction": "forward", "linear_before_reset": 0, "clip": None})
register("relax.nn.lstm_sequence", _infer_lstm, ("gates", "weight", "h0", "c0", "peephole"),
         {"direction": "forward", "clip": None})


def gru_sequence(gates, weight, bias, h0, direction: str = "forward",
                 linear_before_reset: int = 0, clip=None) -> Call:
    """(Y, Y_h) of a GRU layer's time loop; see the module docstring."""
    return make_call("relax.nn.gru_sequence", (gates, weight, bias, h0), direction=direction,
                     linear_before_reset=int(linear_before_reset),
                     clip=None if clip is None else float(clip))


def lstm_sequence(gates, weight, h0, c0, peephole=None, direction: str = "forward",
                  clip=None) -> Call:
    """(Y, Y_h, Y_c) of an LSTM layer's time loop; see the module docstring."""
    args = (gates, weight, h0, c0) + (() if peephole is None else (peephole,))
    return make_call("relax.nn.lstm_sequence", args, direction=direction,
                     clip=None if clip is None else float(clip))
