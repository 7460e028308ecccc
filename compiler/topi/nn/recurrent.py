"""The time loop of a GRU or LSTM layer as one kernel (`te.extern` over an ir_builder body):
`gru_sequence` and `lstm_sequence` take the input projection of every step (X . W^T + Wb, one
dense before them) and run the recurrence of every direction.

Tensors (seq steps, nd directions, batch rows, hidden units h, G gates: GRU 3, LSTM 4):
    gates   [seq, batch, nd, G * h]   the input projection of each step, gates in ONNX order
                                      (GRU z, r, h; LSTM i, o, f, c)
    weight  [nd, h, G * h]            the recurrent weight R^T, k-major: row k holds what hidden
                                      unit k adds to every gate of every unit
    bias    [nd, G * h]               GRU: the recurrent bias Rb (LSTM: summed into `gates`)
    h0, c0  [nd, batch, h]            the initial states
    peephole [nd, 3 * h]              LSTM's P (i, o, f), optional
Outputs: Y [seq, nd, batch, h] (the hidden state after each step, in time order also for a
reverse direction), Y_h [nd, batch, h] (the last state), and for LSTM Y_c [nd, batch, h].
Direction d runs backwards in time when `reverse[d]`. With `clip` every gate's pre-activation
is clipped to [-clip, clip]. GRU's `linear_before_reset` selects r * (H . Rh^T + Rbh) (1) or
(r * H) . Rh^T + Rbh (0).

The kernel: one (direction, batch row) per iteration of a parallel loop; a serial loop over
time; per step, the hidden units in chunks of a few vector registers: the gates' accumulators
of a chunk start at its biases (LSTM: its projected inputs), gather H[k] * weight[k, chunk]
over k (a broadcast times a contiguous row, vectorized), then the chunk's gates and its new
state are computed at once. The previous state is a copy of its own, so the chunks may write
the new one as they go. At batch 1 a step is bound by reading the weight from the cache (a
64-unit GRU direction: 48 KiB per step), not by the multiply-adds.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ... import te
from ...target.isa import vector_isa
from ...tir import expr as E
from ...tir import ir_builder


def _chunk_width(hidden: int, dtype: str) -> int:
    """Hidden units per chunk: two vector registers per gate (8 accumulators at most), all
    the units of a smaller layer."""
    return max(1, min(2 * vector_isa().lanes(dtype), hidden))


class _Kernel:
    """What both kernels share: the builder, the loop over (direction, batch row), the chunked
    units and the vector helpers."""

    def __init__(self, ins, outs, reverse: Sequence[bool], clip: Optional[float], gates: int):
        self.ib = ir_builder.create()
        self.ins = ins
        self.outs = outs
        self.reverse = list(reverse)
        self.clip = clip
        self.G = gates
        seq, batch, nd, gh = (int(d) for d in ins[0].shape)
        self.seq, self.batch, self.nd, self.h = seq, batch, nd, gh // gates
        self.dtype = str(ins[0].dtype)
        self.width = _chunk_width(self.h, self.dtype)

    def const(self, v):
        return E.make_const(self.dtype, v)

    def clipped(self, x):
        if self.clip is None:
            return x
        return E.Min(E.Max(x, self.const(-self.clip)), self.const(self.clip))

    def sigmoid(self, x):
        return te.sigmoid(self.clipped(x))

    def tanh(self, x):
        return te.tanh(self.clipped(x))

    def is_reverse(self, d):
        """Whether direction d (a loop variable) runs backwards, as a boolean expression."""
        if all(self.reverse):
            return E.const(True)
        if not any(self.reverse):
            return E.const(False)
        return d == self.reverse.index(True)

    def time(self, d, t):
        """The time index of step t of direction d."""
        if all(self.reverse):
            return self.seq - 1 - t
        if not any(self.reverse):
            return t
        return te.select(self.is_reverse(d), self.seq - 1 - t, t)

    def for_units(self, body):
        """Calls `body(first, width)` for each chunk of units: a loop over the full chunks,
        then the rest."""
        ib = self.ib
        full, rest = divmod(self.h, self.width)
        if full == 1:
            body(E.const(0), self.width)
        elif full > 1:
            with ib.for_range(0, full, name="chunk") as c:
                body(c * self.width, self.width)
        if rest:
            body(E.const(full * self.width), rest)

    def accumulate(self, acc, hvec, weight, d, gates, first, width, inits):
        """acc[g, 0:width] = inits[g](j) + sum_k hvec[k] * weight[d, k, gates[g] * h + first +
        j] for each g of `gates` (the accumulators stay in registers)."""
        ib, h = self.ib, self.h
        for g, init in enumerate(inits):
            with ib.for_range(0, width, name="j", kind="vectorize") as j:
                acc[g * self.width + j] = init(j)
        with ib.for_range(0, h, name="k") as k:
            hk = hvec[k]
            for g, gate in enumerate(gates):
                with ib.for_range(0, width, name="j", kind="vectorize") as j:
                    acc[g * self.width + j] = acc[g * self.width + j] + \
                        hk * weight[d, k, gate * h + first + j]

    def run(self, step, h0, init_extra=None):
        """The loops: (direction, batch row) in parallel, the state copied in from buffer `h0`
        (and `init_extra(d, b)`), the steps, the last state copied out.
        `step(d, b, tt, hprev, acc)` emits one step."""
        ib, h = self.ib, self.h
        h0 = ib.buffer_ptr(h0)
        y_h = ib.buffer_ptr(self.outs[1])
        with ib.for_range(0, self.nd * self.batch, name="db", kind="parallel") as db:
            d, b = db // self.batch, db % self.batch
            hprev = ib.allocate(self.dtype, (h,), name="hprev", scope="local")
            acc = ib.allocate(self.dtype, (self.G * self.width,), name="acc", scope="local")
            with ib.for_range(0, h, name="u", kind="vectorize") as u:
                hprev[u] = h0[d, b, u]
            if init_extra is not None:
                init_extra(d, b)
            with ib.for_range(0, self.seq, name="t") as t:
                tt = self.time(d, t)
                step(d, b, tt, hprev, acc)
            with ib.for_range(0, h, name="u", kind="vectorize") as u:
                y_h[d, b, u] = hprev[u]
        return ib.get()


def _gru_body(ins, outs, reverse, linear_before_reset, clip):
    k = _Kernel(ins, outs, reverse, clip, 3)
    ib, h, w = k.ib, k.h, k.width
    gates, weight, bias = (ib.buffer_ptr(t) for t in ins[:3])
    y = ib.buffer_ptr(outs[0])
    one = k.const(1)

    def step_before_reset(d, b, tt, hprev, acc):
        def chunk(first, width):
            inits = [lambda j, g=g: bias[d, g * h + first + j] for g in range(3)]
            k.accumulate(acc, hprev, weight, d, (0, 1, 2), first, width, inits)
            with ib.for_range(0, width, name="j", kind="vectorize") as j:
                u = first + j
                z = k.sigmoid(gates[tt, b, d, u] + acc[j])
                r = k.sigmoid(gates[tt, b, d, h + u] + acc[w + j])
                cand = k.tanh(gates[tt, b, d, 2 * h + u] + r * acc[2 * w + j])
                y[tt, d, b, u] = (one - z) * cand + z * hprev[u]
        k.for_units(chunk)
        with ib.for_range(0, h, name="u", kind="vectorize") as u:
            hprev[u] = y[tt, d, b, u]

    scratch = {}

    def allocate_scratch(d, b):
        scratch["z"] = ib.allocate(k.dtype, (h,), name="z", scope="local")
        scratch["rh"] = ib.allocate(k.dtype, (h,), name="rh", scope="local")

    def step_after_reset(d, b, tt, hprev, acc):
        zs, rh = scratch["z"], scratch["rh"]

        def gates_zr(first, width):
            inits = [lambda j, g=g: bias[d, g * h + first + j] for g in range(2)]
            k.accumulate(acc, hprev, weight, d, (0, 1), first, width, inits)
            with ib.for_range(0, width, name="j", kind="vectorize") as j:
                u = first + j
                zs[u] = k.sigmoid(gates[tt, b, d, u] + acc[j])
                rh[u] = k.sigmoid(gates[tt, b, d, h + u] + acc[w + j]) * hprev[u]

        def candidate(first, width):
            inits = [lambda j: bias[d, 2 * h + first + j]]
            k.accumulate(acc, rh, weight, d, (2,), first, width, inits)
            with ib.for_range(0, width, name="j", kind="vectorize") as j:
                u = first + j
                z = zs[u]
                cand = k.tanh(gates[tt, b, d, 2 * h + u] + acc[j])
                y[tt, d, b, u] = (one - z) * cand + z * hprev[u]
        k.for_units(gates_zr)
        k.for_units(candidate)
        with ib.for_range(0, h, name="u", kind="vectorize") as u:
            hprev[u] = y[tt, d, b, u]

    if linear_before_reset:
        return k.run(step_before_reset, ins[3])
    return k.run(step_after_reset, ins[3], init_extra=allocate_scratch)


def gru_sequence(gates: te.Tensor, weight: te.Tensor, bias: te.Tensor, h0: te.Tensor,
                 reverse: Sequence[bool], linear_before_reset: int = 0,
                 clip: Optional[float] = None):
    """[Y, Y_h] of a GRU layer (default activations, sigmoid and tanh); see the module
    docstring for the tensors."""
    seq, batch, nd, gh = (int(d) for d in gates.shape)
    h = gh // 3
    return te.extern([(seq, nd, batch, h), (nd, batch, h)], [gates, weight, bias, h0],
                     lambda ins, outs: _gru_body(ins, outs, reverse, linear_before_reset,
                                                 clip),
                     name="gru_sequence", tag="gru_sequence")


def _lstm_body(ins, outs, reverse, clip):
    k = _Kernel(ins, outs, reverse, clip, 4)
    ib, h, w = k.ib, k.h, k.width
    gates, weight = ib.buffer_ptr(ins[0]), ib.buffer_ptr(ins[1])
    c0 = ib.buffer_ptr(ins[3])
    peep = ib.buffer_ptr(ins[4]) if len(ins) > 4 else None
    y, y_c = ib.buffer_ptr(outs[0]), ib.buffer_ptr(outs[2])

    def init_cell(d, b):
        with ib.for_range(0, h, name="u", kind="vectorize") as u:
            y_c[d, b, u] = c0[d, b, u]

    def step(d, b, tt, hprev, acc):
        def chunk(first, width):
            inits = [lambda j, g=g: gates[tt, b, d, g * h + first + j] for g in range(4)]
            k.accumulate(acc, hprev, weight, d, (0, 1, 2, 3), first, width, inits)
            with ib.for_range(0, width, name="j", kind="vectorize") as j:
                u = first + j
                c = y_c[d, b, u]
                pre_i, pre_o, pre_f = acc[j], acc[w + j], acc[2 * w + j]
                if peep is not None:
                    pre_i = pre_i + peep[d, u] * c
                    pre_f = pre_f + peep[d, 2 * h + u] * c
                c_new = k.sigmoid(pre_f) * c + k.sigmoid(pre_i) * k.tanh(acc[3 * w + j])
                if peep is not None:
                    pre_o = pre_o + peep[d, h + u] * c_new
                # the new state first: the expressions read the old cell state
                y[tt, d, b, u] = k.sigmoid(pre_o) * te.tanh(c_new)
                y_c[d, b, u] = c_new
        k.for_units(chunk)
        with ib.for_range(0, h, name="u", kind="vectorize") as u:
            hprev[u] = y[tt, d, b, u]

    return k.run(step, ins[2], init_extra=init_cell)


def lstm_sequence(gates: te.Tensor, weight: te.Tensor, h0: te.Tensor, c0: te.Tensor,
                  peephole: Optional[te.Tensor], reverse: Sequence[bool],
                  clip: Optional[float] = None):
    """[Y, Y_h, Y_c] of an LSTM layer (default activations: sigmoid, tanh, tanh; no coupled
    input and forget gates); see the module docstring for the tensors."""
    seq, batch, nd, gh = (int(d) for d in gates.shape)
    h = gh // 4
    ins = [gates, weight, h0, c0] + ([peephole] if peephole is not None else [])
    return te.extern([(seq, nd, batch, h), (nd, batch, h), (nd, batch, h)], ins,
                     lambda i, o: _lstm_body(i, o, reverse, clip),
                     name="lstm_sequence", tag="lstm_sequence")
