"""The tunable templates: the knobs of the operator library's CPU schedules, and the
anchors of a fused kernel (graph-level operators) they tune.

A library template is one `ScheduleTemplate` row: how to compute the workload in TE, which knobs
it has (`declare`), and the table from the keyword arguments of its topi schedule function to
the knob values (`keywords`). Registering the row makes two things:

- the template `(cfg, *args) -> (schedule, tensors)` that the tuner measures (the anchor
  alone), registered under the row's name;
- `fused_schedule(task, cfg, outs)`: the schedule of a fused kernel (anchor + what was fused
  around it) with the anchor tuned: its producers inlined, the anchor a stage of its own with
  the tuned keywords, the epilogue (bias, activation, ...) an injective stage after it.

A new topi template with keyword knobs plugs in with one row and one `ANCHOR_WORKLOADS` entry.
`testing.scale` is a pure-TE template with a tiny space for the tuner's own tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from .. import te, topi
from ..target.isa import vector_isa
from ..topi.x86.anchored import schedule_anchored
from ..topi.x86.gemm import GEMM_MC, GEMM_NC, register_tile, tile_gemm
from ..topi.x86.injective import schedule_injective_from_existing
from .task import Task, register_template


@dataclass(frozen=True)
class ScheduleTemplate:
    """A topi schedule with keyword knobs, as a tuning template (see the module docstring)."""
    name: str
    anchor_tags: Tuple[str, ...]                  # te tags of the anchor op
    compute: Callable                             # (*args) -> (inputs, output)
    declare: Callable                             # (cfg, *args): defines the knobs
    keywords: Dict[str, Callable]                 # topi keyword -> (cfg -> value)
    schedule: Callable                            # (s, C, **keywords): the topi schedule

    def keyword_args(self, cfg) -> dict:
        """The keywords of `cfg` (none for the fallback: the library's own defaults)."""
        if cfg.is_fallback:
            return {}
        return {kw: get(cfg) for kw, get in self.keywords.items()}

    def __call__(self, cfg, *args):
        inputs, out = self.compute(*args)
        self.declare(cfg, *args)
        s = te.create_schedule(out.op)
        self.schedule(s, out, **self.keyword_args(cfg))
        return s, list(inputs) + [out]

    def fused(self, cfg, outs):
        """The schedule of a fused kernel computing `outs` around this template's anchor."""
        kwargs = self.keyword_args(cfg)

        def tile(s, anchor, out_op):
            self.schedule(s, anchor.output(0), **kwargs)
            if out_op is not anchor:
                schedule_injective_from_existing(s, out_op.output(0))

        return schedule_anchored(outs, lambda t: t in self.anchor_tags, tile)


LIBRARY: Dict[str, ScheduleTemplate] = {}


def register_schedule_template(row: ScheduleTemplate) -> ScheduleTemplate:
    LIBRARY[row.name] = row
    register_template(row.name)(row)
    return row


def fused_schedule(task: Task, cfg, outs):
    """The schedule of the fused kernel `outs` whose anchor is `task`'s, with `cfg`."""
    return LIBRARY[task.name].fused(cfg, outs)


# ---- GEMM: topi.x86.tile_gemm(s, anchor, out, mr=, nr=, mc=, nc=, parallel=) ---------------

def _upto(candidates, limit, default):
    """The candidates not above `limit` (at least the smallest), and the default among them
    (else the largest)."""
    kept = sorted({c for c in candidates if c <= limit} or {min(candidates)})
    return kept, default if default in kept else kept[-1]


def _gemm_knobs(cfg, m: int, n: int) -> None:
    lanes = vector_isa().lanes("float32")
    dmr, dnr = register_tile()
    # the register tile: mr rows (unrolled) by nr columns (vectors)
    mrs, mr = _upto((1, 2, 3, 4, 6, 8, dmr), m, min(dmr, m))
    nrs, nr = _upto([lanes * v for v in (1, 2, 3, 4)], max(n, lanes), dnr)
    # the parallel blocks: mc rows by nc columns
    mcs, mc = _upto((24, 48, 96, 192), max(m, 24), GEMM_MC)
    ncs, nc = _upto((64, 128, 256, 512), max(n, 64), GEMM_NC)
    cfg.define_knob("mr", mrs, default=mr)
    cfg.define_knob("nr", nrs, default=nr)
    cfg.define_knob("mc", mcs, default=mc)
    cfg.define_knob("nc", ncs, default=nc)
    cfg.define_knob("parallel", [True, False], default=True)


# each knob is the tile_gemm keyword of its name
GEMM_KEYWORDS: Dict[str, Callable] = {
    name: (lambda cfg, name=name: cfg[name].val)
    for name in ("mr", "nr", "mc", "nc", "parallel")}


def _tile_gemm(s, C, **knobs):
    """topi.x86.tile_gemm of the GEMM stage C computed on its own."""
    return tile_gemm(s, C.op, C.op, **knobs)


def _dense_compute(data_shape, weight_shape, dtype, out_dtype):
    a = te.placeholder(tuple(data_shape), dtype=dtype, name="data")
    w = te.placeholder(tuple(weight_shape), dtype=dtype, name="weight")
    return [a, w], topi.nn.dense(a, w, None, out_dtype)


def _dense_knobs(cfg, data_shape, weight_shape, dtype, out_dtype):
    (m, k), (n, _) = data_shape, weight_shape
    _gemm_knobs(cfg, m, n)
    cfg.add_flop(2.0 * m * n * k)


def _matmul_compute(a_shape, b_shape, dtype, out_dtype):
    a = te.placeholder(tuple(a_shape), dtype=dtype, name="A")
    b = te.placeholder(tuple(b_shape), dtype=dtype, name="B")
    return [a, b], topi.nn.matmul(a, b, None, out_dtype)


def _matmul_knobs(cfg, a_shape, b_shape, dtype, out_dtype):
    (m, k), (_, n) = a_shape, b_shape
    _gemm_knobs(cfg, m, n)
    cfg.add_flop(2.0 * m * n * k)


DENSE = register_schedule_template(ScheduleTemplate(
    "dense.x86", ("dense",), _dense_compute, _dense_knobs, GEMM_KEYWORDS, _tile_gemm))
MATMUL = register_schedule_template(ScheduleTemplate(
    "matmul.x86", ("matmul",), _matmul_compute, _matmul_knobs, GEMM_KEYWORDS, _tile_gemm))


# ---- graph-level anchors -> workloads -------------------------------------------------------

def _static_2d(arg) -> Optional[tuple]:
    sinfo = getattr(arg, "struct_info", None)
    shape = getattr(sinfo, "shape", None)
    if shape is None or len(shape) != 2 or not all(isinstance(d, int) for d in shape):
        return None
    return tuple(shape)


def _gemm_workload(template: str):
    def workload(call) -> Optional[tuple]:
        a, b = (_static_2d(x) for x in call.args[:2])
        if a is None or b is None or len(call.args) != 2:
            return None
        dtype = call.args[0].struct_info.dtype
        out_dtype = getattr(call.attrs, "out_dtype", None)
        out_dtype = dtype if out_dtype in (None, "", "void") else str(out_dtype)
        return (template, a, b, str(dtype), out_dtype)
    return workload


# graph-level operator name -> (anchor call -> workload (template, *args), or None when no
# template takes that call); duck-typed on the call (op.name, args' struct_info, attrs)
ANCHOR_WORKLOADS: Dict[str, Callable] = {
    "relax.nn.dense": _gemm_workload("dense.x86"),
    "relax.matmul": _gemm_workload("matmul.x86"),
}


def workload_of(call) -> Optional[tuple]:
    """The workload (template name, *args) that tunes the anchor operator `call`, or None."""
    op = getattr(getattr(call, "op", None), "name", None)
    make = ANCHOR_WORKLOADS.get(op)
    return make(call) if make is not None else None


# ---- a pure-TE template for the tuner's tests ---------------------------------------------

TOY_CRASH_OFFSET = 1 << 30


@register_template("testing.scale")
def scale_template(cfg, n: int, dtype: str = "float32", faults: bool = False):
    """B = A * 2 + 1 over n elements: the loop split by a power of two, the inner loop
    vectorized or not. With `faults`, a knob "fault" whose "wrong" value computes A * 2 + 2
    and whose "crash" value reads far outside A (the kernel dies on a fault)."""
    a = te.placeholder((n,), dtype=dtype, name="A")
    cfg.define_split("tile", n, policy="power2", num_outputs=2, max_factor=16)
    cfg.define_knob("vectorize", [False, True])
    fault = "none"
    if faults:
        cfg.define_knob("fault", ["none", "wrong", "crash"])
        fault = cfg["fault"].val
    if fault == "crash":
        b = te.compute((n,), lambda i: a[i + TOY_CRASH_OFFSET] * 2 + 1, name="B")
    elif fault == "wrong":
        b = te.compute((n,), lambda i: a[i] * 2 + 2, name="B")
    else:
        b = te.compute((n,), lambda i: a[i] * 2 + 1, name="B")
    cfg.add_flop(2.0 * n)
    s = te.create_schedule(b.op)
    outer, inner = cfg["tile"].apply(s, b, b.op.axis[0])
    if cfg["vectorize"].val and not cfg.is_fallback:
        s[b].vectorize(inner)
    return s, [a, b]


def template_names() -> List[str]:
    return sorted(LIBRARY)


__all__ = ["ANCHOR_WORKLOADS", "DENSE", "GEMM_KEYWORDS", "LIBRARY", "MATMUL",
           "ScheduleTemplate", "fused_schedule", "register_schedule_template", "scale_template",
           "template_names", "workload_of"]
