"""Recurrent operators: LSTM, GRU and RNN over a sequence whose length is known while compiling.

The input projection of every time step and every direction is ONE dense (X . W^T over the
whole sequence, the biases added once). A GRU or LSTM with the default activations (and no
coupled input and forget gates) then runs its time loop as ONE operator, nn.gru_sequence /
nn.lstm_sequence (its recurrent weight transposed to R^T, folded while compiling when R is a
constant). Otherwise, and for RNN, the time loop is unrolled into graph-level operators: a
step adds its recurrent product H[t-1] . R^T and applies the gates. Converted: the
three directions, layouts 0 and 1, the outputs Y, Y_h (and LSTM's Y_c), initial states, biases
(absent: zero), LSTM peepholes, `clip`, GRU's `linear_before_reset` 0 and 1, and the
activations ONNX lists (with `activation_alpha` / `activation_beta`). Refused:
`sequence_lens` other than the full length for every batch entry, LSTM's input_forget=1."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from ...relax import op as R
from .common import const, converter
from .elementwise import scalar

_NUM_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTIVATIONS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"),
                        "RNN": ("Tanh",)}


# ---- activations --------------------------------------------------------------------------
def _relu(x, dt, a, b):
    return R.nn.relu(x)


def _affine(x, dt, a, b):
    return R.add(R.multiply(x, scalar(a, dt)), scalar(b, dt))


def _thresholded_relu(x, dt, a, b):
    return R.where(R.greater(x, scalar(a, dt)), x, scalar(0, dt))


def _scaled_tanh(x, dt, a, b):
    return R.multiply(scalar(a, dt), R.tanh(R.multiply(x, scalar(b, dt))))


def _hard_sigmoid(x, dt, a, b):
    return R.clip(R.add(R.multiply(x, scalar(a, dt)), scalar(b, dt)), 0.0, 1.0)


def _elu(x, dt, a, b):
    neg = R.multiply(scalar(a, dt), R.subtract(R.exp(x), scalar(1, dt)))
    return R.where(R.less(x, scalar(0, dt)), neg, x)


def _softsign(x, dt, a, b):
    return R.divide(x, R.add(R.abs(x), scalar(1, dt)))


def _softplus(x, dt, a, b):
    return R.log(R.add(R.exp(x), scalar(1, dt)))


# lower-case name -> (function of (x, dtype, alpha, beta), default alpha, default beta); a
# None default means the function takes no such value from the attribute lists.
_ACTIVATIONS = {
    "sigmoid": (lambda x, dt, a, b: R.sigmoid(x), None, None),
    "tanh": (lambda x, dt, a, b: R.tanh(x), None, None),
    "relu": (_relu, None, None),
    "affine": (_affine, 1.0, 0.0),
    "leakyrelu": (lambda x, dt, a, b: R.nn.leakyrelu(x, a), 0.01, None),
    "thresholdedrelu": (_thresholded_relu, 1.0, None),
    "scaledtanh": (_scaled_tanh, 1.0, 1.0),
    "hardsigmoid": (_hard_sigmoid, 0.2, 0.5),
    "elu": (_elu, 1.0, None),
    "softsign": (_softsign, None, None),
    "softplus": (_softplus, None, None),
}


@dataclass
class _Activation:
    name: str
    alpha: Optional[float]
    beta: Optional[float]

    def __call__(self, x, dt):
        return _ACTIVATIONS[self.name.lower()][0](x, dt, self.alpha, self.beta)


def _activations(ctx, num_dir: int) -> List[List[_Activation]]:
    """The activation functions of each direction, with their alpha and beta: the attribute
    lists are consumed in order by the functions that take such a value."""
    per_dir = len(_DEFAULT_ACTIVATIONS[ctx.op_type])
    names = ctx.attr("activations")
    if names is None:
        names = list(_DEFAULT_ACTIVATIONS[ctx.op_type]) * num_dir
    names = list(names)
    if len(names) == per_dir and num_dir == 2:
        names = names * 2               # one list for both directions
    if len(names) != per_dir * num_dir:
        raise ctx.error(f"activations {names} should name {per_dir * num_dir} functions "
                        f"({per_dir} per direction)")
    alphas = list(ctx.attr("activation_alpha", []))
    betas = list(ctx.attr("activation_beta", []))
    out = []
    for name in names:
        if name.lower() not in _ACTIVATIONS:
            known = ", ".join(sorted(_ACTIVATIONS))
            raise ctx.unsupported(f"the activation {name!r} (supported: {known})")
        _, alpha, beta = _ACTIVATIONS[name.lower()]
        if alpha is not None and alphas:
            alpha = float(alphas.pop(0))
        if beta is not None and betas:
            beta = float(betas.pop(0))
        out.append(_Activation(name, alpha, beta))
    return [out[d * per_dir:(d + 1) * per_dir] for d in range(num_dir)]


# ---- helpers ------------------------------------------------------------------------------
def _add(a, b):
    """a + b, where None stands for zero."""
    if a is None:
        return b
    return a if b is None else R.add(a, b)


def _mul(a, b):
    """a * b, where None stands for zero."""
    return None if a is None or b is None else R.multiply(a, b)


class _Recurrence:
    """What the three operators share: the attributes, the checks, the input projection, the
    per-direction slices of the weights and states, and the outputs."""

    def __init__(self, ctx):
        self.ctx = ctx
        kind = ctx.op_type
        self.gates = _NUM_GATES[kind]
        direction = ctx.attr("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ctx.error(f"direction {direction!r} is not forward, reverse or bidirectional")
        self.reverse = [direction == "reverse"] if direction != "bidirectional" \
            else [False, True]
        self.num_dir = len(self.reverse)
        self.layout = int(ctx.attr("layout", 0))
        if self.layout not in (0, 1):
            raise ctx.error(f"layout {self.layout} is not 0 or 1")
        self.dt = ctx.dtype(0)
        if not self.dt.startswith("float"):
            raise ctx.error(f"X has element type {self.dt}; {kind} computes in float types")
        shape = ctx.static_shape(0, f"an unrolled {kind}")
        if len(shape) != 3:
            raise ctx.error(f"X should have 3 dims, not shape {shape}")
        self.seq, self.batch, self.input_size = \
            (shape[1], shape[0], shape[2]) if self.layout else shape
        r_shape = ctx.static_shape(2, f"an unrolled {kind}")
        self.hidden = int(ctx.attr("hidden_size", r_shape[-1]))
        gh = self.gates * self.hidden
        self.expect(1, "W", (self.num_dir, gh, self.input_size))
        self.expect(2, "R", (self.num_dir, gh, self.hidden))
        if ctx.has(3):
            self.expect(3, "B", (self.num_dir, 2 * gh))
        self._check_sequence_lens()
        clip = ctx.attr("clip")
        self.clip = None if clip is None else float(clip)
        self.acts = _activations(ctx, self.num_dir)
        self.x = ctx.input(0)
        if self.layout:
            self.x = ctx.emit(R.permute_dims(self.x, (1, 0, 2)))

    def expect(self, i, what, shape):
        got = self.ctx.static_shape(i, f"an unrolled {self.ctx.op_type}")
        if tuple(got) != tuple(shape):
            raise self.ctx.error(f"{what} has shape {tuple(got)}; with direction "
                                 f"{self.ctx.attr('direction', 'forward')!r}, hidden_size "
                                 f"{self.hidden} and input size {self.input_size} it should "
                                 f"be {tuple(shape)}")

    def _check_sequence_lens(self):
        ctx = self.ctx
        if not ctx.has(4):
            return
        if not ctx.is_known(4):
            raise ctx.unsupported("a sequence_lens computed at run time (sequences of "
                                  "different lengths); leave it out when every sequence has "
                                  "the full length")
        lens = np.asarray(ctx.const(4)).reshape(-1)
        if lens.size != self.batch or np.any(lens != self.seq):
            raise ctx.unsupported(f"sequence_lens {lens.tolist()} (only sequences of the full "
                                  f"length {self.seq} are converted)")

    # ---- weights and states ---------------------------------------------------------------
    def direction_slice(self, i, d, width=None, start=0):
        """Input i (dims [num_dir, n] or [num_dir, a, b]) of direction d without its first dim;
        for a 2-D input, its elements [start, start + width)."""
        ctx = self.ctx
        shape = ctx.static_shape(i)
        if len(shape) == 2:
            end = shape[1] if width is None else start + width
            part = R.strided_slice(ctx.input(i), [0, 1], [d, start], [d + 1, end])
            return ctx.emit(R.reshape(part, (end - start,)))
        part = R.strided_slice(ctx.input(i), [0], [d], [d + 1])
        return ctx.emit(R.reshape(part, tuple(shape[1:])))

    def initial_state(self, i, d):
        """The initial state input i of direction d, [batch, hidden] (None when absent)."""
        ctx = self.ctx
        if not ctx.has(i):
            return None
        want = (self.batch, self.num_dir, self.hidden) if self.layout \
            else (self.num_dir, self.batch, self.hidden)
        self.expect(i, ctx.node.input[i], want)
        axis = 1 if self.layout else 0
        part = R.strided_slice(ctx.input(i), [axis], [d], [d + 1])
        return ctx.emit(R.reshape(part, (self.batch, self.hidden)))

    def projection(self, bias):
        """X . W^T + bias of every time step and direction as ONE dense over the whole
        sequence: [seq * batch, num_dir * gates * hidden], rows (t, b), columns (d, gate)
        (bias [num_dir * gates * hidden] or None)."""
        ctx = self.ctx
        x2 = ctx.emit(R.reshape(self.x, (self.seq * self.batch, self.input_size)))
        w2 = ctx.emit(R.reshape(ctx.input(1), (self.num_dir * self.gates * self.hidden,
                                               self.input_size)))
        proj = ctx.emit(R.nn.dense(x2, w2))
        return proj if bias is None else ctx.emit(R.add(proj, bias))

    def input_projections(self, bias):
        """`projection` split per time step and direction: `out[d][t]` is [batch, gates *
        hidden]. The pieces come from one split, so every step reads a tensor of its own and
        the steps share their kernels."""
        ctx = self.ctx
        seq, batch, nd, gh = self.seq, self.batch, self.num_dir, self.gates * self.hidden
        proj = self.projection(bias)
        if nd > 1 and batch > 1:                          # rows (t, d, b)
            proj = R.permute_dims(R.reshape(proj, (seq, batch, nd, gh)), (0, 2, 1, 3))
        proj = ctx.emit(R.reshape(proj, (seq * nd * batch, gh)))
        parts = ctx.emit(R.split(proj, seq * nd, axis=0)) if seq * nd > 1 else None
        return [[proj if parts is None else ctx.emit(parts[t * nd + d]) for t in range(seq)]
                for d in range(nd)]

    def summed_bias(self, last_gate_apart=False):
        """Wb + Rb of every direction, flattened to [num_dir * gates * hidden] (None without B);
        with `last_gate_apart`, the last gate gets only Wb (its Rb is applied elsewhere)."""
        ctx = self.ctx
        if not ctx.has(3):
            return None
        gh = self.gates * self.hidden
        b = ctx.input(3)
        lo = gh - self.hidden if last_gate_apart else gh
        total = R.add(R.strided_slice(b, [1], [0], [lo]),
                      R.strided_slice(b, [1], [gh], [gh + lo]))
        if last_gate_apart:
            total = R.concat([total, R.strided_slice(b, [1], [lo], [gh])], axis=1)
        return ctx.emit(R.reshape(total, (self.num_dir * gh,)))

    def gate(self, x, k):
        """Gate k of `x` [batch, gates * hidden] (columns k * hidden ...)."""
        hid = self.hidden
        return R.strided_slice(x, [1], [k * hid], [(k + 1) * hid])

    def clipped(self, x):
        return x if self.clip is None else R.clip(x, -self.clip, self.clip)

    def times(self, d):
        return range(self.seq - 1, -1, -1) if self.reverse[d] else range(self.seq)

    # ---- outputs ----------------------------------------------------------------------------
    def sequence_output(self, per_dir):
        """Y from the hidden states per direction (each a list indexed by time step):
        [seq, num_dir, batch, hidden] (layout 1: [batch, seq, num_dir, hidden])."""
        b, h = self.batch, self.hidden
        pieces = [R.reshape(per_dir[d][t], (1, b, h))
                  for t in range(self.seq) for d in range(self.num_dir)]
        y = self.ctx.emit(R.concat([self.ctx.emit(p) for p in pieces], axis=0))
        y = R.reshape(y, (self.seq, self.num_dir, b, h))
        return R.permute_dims(self.ctx.emit(y), (2, 0, 1, 3)) if self.layout else y

    def state_output(self, finals):
        """Y_h / Y_c from the last state per direction: [num_dir, batch, hidden] (layout 1:
        [batch, num_dir, hidden])."""
        b, h = self.batch, self.hidden
        pieces = [self.ctx.emit(R.reshape(f, (1, b, h))) for f in finals]
        y = pieces[0] if len(pieces) == 1 else self.ctx.emit(R.concat(pieces, axis=0))
        return R.permute_dims(y, (1, 0, 2)) if self.layout else y


# ---- one operator for the time loop ------------------------------------------------------
def _is_sequence_op(rec) -> bool:
    """Whether the layer's time loop can be nn.gru_sequence / nn.lstm_sequence: float32, the
    default activations of every direction (clip allowed)."""
    default = [n.lower() for n in _DEFAULT_ACTIVATIONS[rec.ctx.op_type]]
    return rec.dt == "float32" and all([a.name.lower() for a in acts] == default
                                       for acts in rec.acts)


def _sequence_inputs(rec, bias):
    """The projected gates [seq, batch, num_dir, gates * hidden] (bias: [num_dir * gates *
    hidden] or None) and the recurrent weight per direction, k-major [num_dir, hidden,
    gates * hidden]."""
    ctx = rec.ctx
    gates = ctx.emit(R.reshape(rec.projection(bias), (rec.seq, rec.batch, rec.num_dir,
                                                       rec.gates * rec.hidden)))
    weight = ctx.emit(R.permute_dims(ctx.input(2), (0, 2, 1)))
    return gates, weight


def _sequence_state(rec, i):
    """Initial state input i as [num_dir, batch, hidden] (zeros when absent)."""
    ctx, shape = rec.ctx, (rec.num_dir, rec.batch, rec.hidden)
    if not ctx.has(i):
        return const(np.zeros(shape), rec.dt)
    want = (rec.batch, rec.num_dir, rec.hidden) if rec.layout else shape
    rec.expect(i, ctx.node.input[i], want)
    return ctx.emit(R.permute_dims(ctx.input(i), (1, 0, 2))) if rec.layout else ctx.input(i)


def _sequence_outputs(rec, out, n_states):
    """The ONNX outputs from the operator's (Y, states...): layout 1 transposes them."""
    ctx, res = rec.ctx, []
    for k in range(1 + n_states):
        if not ctx.output_used(k):
            res.append(None)
            continue
        v = ctx.emit(out[k])
        if rec.layout:
            v = R.permute_dims(v, (2, 0, 1, 3) if k == 0 else (1, 0, 2))
        res.append(v)
    return res


def _direction(rec) -> str:
    return "bidirectional" if rec.num_dir == 2 else \
        ("reverse" if rec.reverse[0] else "forward")


def _gru_sequence(rec, before_reset):
    ctx, nd, gh = rec.ctx, rec.num_dir, rec.gates * rec.hidden
    wb = rb = None
    if ctx.has(3):
        wb = ctx.emit(R.reshape(R.strided_slice(ctx.input(3), [1], [0], [gh]), (nd * gh,)))
        rb = ctx.emit(R.strided_slice(ctx.input(3), [1], [gh], [2 * gh]))
    else:
        rb = const(np.zeros((nd, gh)), rec.dt)
    gates, weight = _sequence_inputs(rec, wb)
    out = ctx.emit(R.nn.gru_sequence(gates, weight, rb, _sequence_state(rec, 5),
                                     _direction(rec), before_reset, rec.clip))
    return _sequence_outputs(rec, out, 1)


def _lstm_sequence(rec):
    ctx, hid = rec.ctx, rec.hidden
    gates, weight = _sequence_inputs(rec, rec.summed_bias())
    peephole = None
    if ctx.has(7):
        rec.expect(7, "P", (rec.num_dir, 3 * hid))
        peephole = ctx.input(7)
    out = ctx.emit(R.nn.lstm_sequence(gates, weight, _sequence_state(rec, 5),
                                      _sequence_state(rec, 6), peephole, _direction(rec),
                                      rec.clip))
    return _sequence_outputs(rec, out, 2)


# ---- the operators ------------------------------------------------------------------------
@converter("LSTM", const_inputs=(4,))
def _lstm(ctx):
    rec = _Recurrence(ctx)
    if int(ctx.attr("input_forget", 0)):
        raise ctx.unsupported("input_forget=1 (coupled input and forget gates)")
    if _is_sequence_op(rec):
        return _lstm_sequence(rec)
    dt, hid = rec.dt, rec.hidden
    if ctx.has(7):
        rec.expect(7, "P", (rec.num_dir, 3 * hid))
    proj = rec.input_projections(rec.summed_bias())
    ys, finals_h, finals_c = [], [], []
    for d in range(rec.num_dir):
        f, g, h_act = rec.acts[d]
        r_d = rec.direction_slice(2, d)
        peep = [rec.direction_slice(7, d, hid, k * hid) if ctx.has(7) else None
                for k in range(3)]     # i, o, f
        h, c = rec.initial_state(5, d), rec.initial_state(6, d)
        y = [None] * rec.seq
        for t in rec.times(d):
            gates = proj[d][t]
            if h is not None:
                gates = ctx.emit(R.add(R.nn.dense(h, r_d), gates))
            gi, go, gf, gc = (rec.gate(gates, k) for k in range(4))
            i = f(rec.clipped(_add(gi, _mul(peep[0], c))), dt)
            fg = f(rec.clipped(_add(gf, _mul(peep[2], c))), dt)
            c = ctx.emit(_add(_mul(fg, c), R.multiply(i, g(rec.clipped(gc), dt))))
            o = f(rec.clipped(_add(go, _mul(peep[1], c))), dt)
            h = ctx.emit(R.multiply(o, h_act(c, dt)))
            y[t] = h
        ys.append(y)
        finals_h.append(h)
        finals_c.append(c)
    return [rec.sequence_output(ys) if ctx.output_used(0) else None,
            rec.state_output(finals_h) if ctx.output_used(1) else None,
            rec.state_output(finals_c) if ctx.output_used(2) else None]


@converter("GRU", const_inputs=(4,))
def _gru(ctx):
    rec = _Recurrence(ctx)
    dt, hid = rec.dt, rec.hidden
    before_reset = int(ctx.attr("linear_before_reset", 0))
    if _is_sequence_op(rec):
        return _gru_sequence(rec, before_reset)
    # with linear_before_reset the recurrent bias of the hidden gate is applied before r
    proj = rec.input_projections(rec.summed_bias(last_gate_apart=bool(before_reset)))
    ys, finals = [], []
    one = scalar(1, dt)
    for d in range(rec.num_dir):
        f, g = rec.acts[d]
        r_d = rec.direction_slice(2, d)
        if before_reset:
            rbh = rec.direction_slice(3, d, hid, 5 * hid) if ctx.has(3) else None
        else:
            r_zr = ctx.emit(R.strided_slice(r_d, [0], [0], [2 * hid]))
            r_h = ctx.emit(R.strided_slice(r_d, [0], [2 * hid], [3 * hid]))
        h = rec.initial_state(5, d)
        y = [None] * rec.seq
        for t in rec.times(d):
            xz, xr, xh = (rec.gate(proj[d][t], k) for k in range(3))
            hz = hr = hh = None
            if h is not None:
                hr_all = ctx.emit(R.nn.dense(h, r_d if before_reset else r_zr))
                hz, hr = rec.gate(hr_all, 0), rec.gate(hr_all, 1)
                hh = rec.gate(hr_all, 2) if before_reset else None
            z = ctx.emit(f(rec.clipped(_add(xz, hz)), dt))
            r = f(rec.clipped(_add(xr, hr)), dt)
            if before_reset:            # r * (H . Rh^T + Rbh)
                cand = _add(xh, _mul(r, _add(hh, rbh)))
            elif h is not None:         # (r * H) . Rh^T
                cand = R.add(xh, R.nn.dense(ctx.emit(R.multiply(r, h)), r_h))
            else:
                cand = xh
            cand = g(rec.clipped(cand), dt)
            h = ctx.emit(_add(R.multiply(R.subtract(one, z), cand), _mul(z, h)))
            y[t] = h
        ys.append(y)
        finals.append(h)
    return [rec.sequence_output(ys) if ctx.output_used(0) else None,
            rec.state_output(finals) if ctx.output_used(1) else None]


@converter("RNN", const_inputs=(4,))
def _rnn(ctx):
    rec = _Recurrence(ctx)
    proj = rec.input_projections(rec.summed_bias())
    ys, finals = [], []
    for d in range(rec.num_dir):
        (f,) = rec.acts[d]
        r_d = rec.direction_slice(2, d)
        h = rec.initial_state(5, d)
        y = [None] * rec.seq
        for t in rec.times(d):
            pre = proj[d][t]
            if h is not None:
                pre = R.add(R.nn.dense(h, r_d), pre)
            h = ctx.emit(f(rec.clipped(pre), rec.dt))
            y[t] = h
        ys.append(y)
        finals.append(h)
    return [rec.sequence_output(ys) if ctx.output_used(0) else None,
            rec.state_output(finals) if ctx.output_used(1) else None]
