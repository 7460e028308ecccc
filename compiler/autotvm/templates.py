"""The tunable templates: the knobs of the operator library's CPU schedules, and the
anchors of a fused kernel (graph-level operators) they tune.

A library template is one `ScheduleTemplate` row: how to compute the workload in TE, which knobs
it has (`declare`), and the table from the keyword arguments of its topi schedule function to
the knob values (`keywords`). The schedule is either a stage tiler `schedule(s, C, **kw)` (the
anchor's stage; the row makes the fused group's schedule around it) or, for a topi schedule
that takes a fused group itself, `schedule_outs(outs, **kw) -> Schedule`. Registering the row
makes two things:

- the template `(cfg, *args) -> (schedule, tensors)` that the tuner measures (the anchor
  alone), registered under the row's name;
- `fused_schedule(task, cfg, outs)`: the schedule of a fused kernel (anchor + what was fused
  around it) with the anchor tuned: its producers inlined, the anchor a stage of its own with
  the tuned keywords, the epilogue (bias, activation, ...) an injective stage after it.

A new topi template with keyword knobs plugs in with one row here and, on the operator's strategy
(compiler/relax/strategy), the workload naming it.
Rows: dense.x86 / matmul.x86 (topi.x86.tile_gemm), conv2d_NCHWc.x86 and
depthwise_conv2d_NCHWc.x86 (topi.x86.schedule_conv2d_NCHWc, the blocked layout that
convert_layout_nchwc gives a CPU build's convolutions), conv2d_winograd_NCHWc.x86
(topi.x86.schedule_conv2d_winograd_NCHWc, the 3x3 convolutions winograd_conv2d makes).
`testing.scale` is a pure-TE template with a tiny space for the tuner's own tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from .. import te, topi
from ..ir.dtype import DType
from ..target.isa import vector_isa
from ..topi.utils import divisor_at_most
from ..topi.x86 import conv2d_nchwc as conv_nchwc
from ..topi.x86 import conv2d_winograd as conv_winograd
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
    schedule: Optional[Callable] = None           # (s, C, **keywords): a stage tiler
    schedule_outs: Optional[Callable] = None      # (outs, **keywords) -> Schedule

    def keyword_args(self, cfg) -> dict:
        """The keywords of `cfg` (none for the fallback: the library's own defaults)."""
        if cfg.is_fallback:
            return {}
        return {kw: get(cfg) for kw, get in self.keywords.items()}

    def __call__(self, cfg, *args):
        inputs, out = self.compute(*args)
        self.declare(cfg, *args)
        if self.schedule_outs is not None:
            s = self.schedule_outs([out], **self.keyword_args(cfg))
        else:
            s = te.create_schedule(out.op)
            self.schedule(s, out, **self.keyword_args(cfg))
        return s, list(inputs) + [out]

    def fused(self, cfg, outs):
        """The schedule of a fused kernel computing `outs` around this template's anchor."""
        kwargs = self.keyword_args(cfg)
        if self.schedule_outs is not None:
            return self.schedule_outs(outs, **kwargs)

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


# ---- convolutions in NCHW[x]c: topi.x86.schedule_conv2d_NCHWc(outs, band_rows=, oc_blocks=,
#      ow_tile=, channel_chunk=, unroll_channels=, depthwise_ow_tile=, parallel_min_macs=) --
#
# Workload: (data shape [N, C/c, H, W, c], kernel shape (6-d), strides, padding (top, left,
# bottom, right), dilation, dtype, out_dtype): what legalize sees after convert_layout_nchwc.

def _divisors(n: int, limit: int) -> list:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def _conv_compute(data_shape, kernel_shape, strides, padding, dilation, dtype, out_dtype):
    data = te.placeholder(tuple(data_shape), dtype=dtype, name="data")
    kernel = te.placeholder(tuple(kernel_shape), dtype=dtype, name="kernel")
    out = topi.nn.conv2d_NCHWc(data, kernel, list(strides), list(padding), list(dilation),
                               out_dtype)
    return [data, kernel], out


def _depthwise_compute(data_shape, kernel_shape, strides, padding, dilation, dtype, out_dtype):
    data = te.placeholder(tuple(data_shape), dtype=dtype, name="data")
    kernel = te.placeholder(tuple(kernel_shape), dtype=dtype, name="kernel")
    out = topi.nn.depthwise_conv2d_NCHWc(data, kernel, list(strides), list(padding),
                                         list(dilation), out_dtype)
    return [data, kernel], out


def _conv_size(out, kernel_shape):
    """(output channel blocks, output width, multiply-adds) of a blocked convolution."""
    n, ocb, oh, ow, ob = (int(d) for d in out.shape)
    _, icb, kh, kw, ib, _ = kernel_shape
    return ocb, ow, n * ocb * oh * ow * ob * icb * kh * kw * ib


def _parallel_knob(cfg, macs: int) -> None:
    # parallel or serial (n, block, row) loop: the library decides by PARALLEL_MIN_MACS
    cfg.define_knob("parallel", [True, False], default=macs >= conv_nchwc.PARALLEL_MIN_MACS)


def _conv_knobs(cfg, data_shape, kernel_shape, *rest):
    _, out = _conv_compute(data_shape, kernel_shape, *rest)
    ocb, ow, macs = _conv_size(out, kernel_shape)
    out_shape = tuple(int(d) for d in out.shape)
    oh, icb = out_shape[2], kernel_shape[1]
    band, dob, dt, chunk = conv_nchwc.conv_tiling(out_shape, tuple(kernel_shape),
                                                   DType(out.dtype).bytes,
                                                   vector_isa().registers,
                                                   stem=conv_nchwc.is_stem(kernel_shape))
    # bands of rows (divisors of the height) or row tiles (0); the register tile: oc_blocks
    # channel blocks (dividing them) by ow_tile pixels (up to 8, or dividing the width, for
    # rows); input-channel blocks per pass of a band (dividing them, up to 16)
    cfg.define_knob("band_rows", sorted(set([0] + _divisors(oh, oh)) | {band}), default=band)
    cfg.define_knob("oc_blocks", sorted(set(_divisors(ocb, conv_nchwc.MAX_OC_BLOCKS)) | {dob}),
                    default=dob)
    tiles = set(range(1, min(ow * oh, 8) + 1)) | set(_divisors(ow, conv_nchwc.MAX_OW_TILE))
    cfg.define_knob("ow_tile", sorted(tiles | {dt}), default=dt)
    cfg.define_knob("channel_chunk", sorted(set(_divisors(icb, 16)) | {chunk}), default=chunk)
    cfg.define_knob("unroll_channels", [False, True], default=False)
    _parallel_knob(cfg, macs)
    cfg.add_flop(2.0 * macs)


def _depthwise_knobs(cfg, data_shape, kernel_shape, *rest):
    _, out = _depthwise_compute(data_shape, kernel_shape, *rest)
    _, ow, _ = _conv_size(out, kernel_shape)
    n, cb, oh, _, c = (int(d) for d in out.shape)
    macs = n * cb * oh * ow * c * kernel_shape[2] * kernel_shape[3]
    default = divisor_at_most(ow, conv_nchwc.DEPTHWISE_OW_TILE)
    limit = max(2 * conv_nchwc.DEPTHWISE_OW_TILE, default)
    cfg.define_knob("depthwise_ow_tile", sorted(set(_divisors(ow, limit)) | {default}),
                    default=default)
    _parallel_knob(cfg, macs)
    cfg.add_flop(2.0 * macs)


def _parallel_min_macs(cfg):
    return 0 if cfg["parallel"].val else 1 << 62


CONV_KEYWORDS: Dict[str, Callable] = {
    "band_rows": lambda cfg: cfg["band_rows"].val,
    "oc_blocks": lambda cfg: cfg["oc_blocks"].val,
    "ow_tile": lambda cfg: cfg["ow_tile"].val,
    "channel_chunk": lambda cfg: cfg["channel_chunk"].val,
    "unroll_channels": lambda cfg: cfg["unroll_channels"].val,
    "parallel_min_macs": _parallel_min_macs,
}
DEPTHWISE_KEYWORDS: Dict[str, Callable] = {
    "depthwise_ow_tile": lambda cfg: cfg["depthwise_ow_tile"].val,
    "parallel_min_macs": _parallel_min_macs,
}

CONV2D_NCHWC = register_schedule_template(ScheduleTemplate(
    "conv2d_NCHWc.x86", ("conv2d_NCHWc",), _conv_compute, _conv_knobs, CONV_KEYWORDS,
    schedule_outs=conv_nchwc.schedule_conv2d_NCHWc))
DEPTHWISE_CONV2D_NCHWC = register_schedule_template(ScheduleTemplate(
    "depthwise_conv2d_NCHWc.x86", ("depthwise_conv2d_NCHWc",), _depthwise_compute,
    _depthwise_knobs, DEPTHWISE_KEYWORDS,
    schedule_outs=conv_nchwc.schedule_depthwise_conv2d_NCHWc))


# ---- Winograd convolutions: topi.x86.schedule_conv2d_winograd_NCHWc(outs, oc_blocks=,
#      tile_count=) -----------------------------------------------------------------------
#
# Workload: (data shape [N, C/c, H, W, c], transformed weight shape [a*a, O/o, C, o], tile
# size, padding (top, left, bottom, right), dtype, out_dtype): winograd_conv2d's operator.

def _winograd_compute(data_shape, weight_shape, tile_size, padding, dtype, out_dtype):
    data = te.placeholder(tuple(data_shape), dtype=dtype, name="data")
    weight = te.placeholder(tuple(weight_shape), dtype=dtype, name="weight")
    out = topi.nn.conv2d_winograd_NCHWc(data, weight, tile_size, list(padding), out_dtype)
    return [data, weight], out


def _winograd_knobs(cfg, data_shape, weight_shape, tile_size, *rest):
    _, out = _winograd_compute(data_shape, weight_shape, tile_size, *rest)
    n, ocb, oh, ow, ob = (int(d) for d in out.shape)
    tiles = n * -(-oh // tile_size) * -(-ow // tile_size)
    dob, dt = conv_winograd.gemm_tile(ocb, tiles, vector_isa().registers)
    # the product's register tile: output-channel blocks by tiles (divisors of each)
    cfg.define_knob("oc_blocks", sorted(set(_divisors(ocb, conv_nchwc.MAX_OC_BLOCKS)) | {dob}),
                    default=dob)
    cfg.define_knob("tile_count",
                    sorted(set(_divisors(tiles, conv_winograd.MAX_TILE_COUNT)) | {dt}),
                    default=dt)
    cfg.add_flop(2.0 * n * ocb * ob * oh * ow * weight_shape[2] * 9)   # the direct count


WINOGRAD_KEYWORDS: Dict[str, Callable] = {
    "oc_blocks": lambda cfg: cfg["oc_blocks"].val,
    "tile_count": lambda cfg: cfg["tile_count"].val,
}

CONV2D_WINOGRAD_NCHWC = register_schedule_template(ScheduleTemplate(
    "conv2d_winograd_NCHWc.x86", ("conv2d_winograd_NCHWc",), _winograd_compute,
    _winograd_knobs, WINOGRAD_KEYWORDS,
    schedule_outs=conv_winograd.schedule_conv2d_winograd_NCHWc))


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


__all__ = ["CONV2D_NCHWC", "CONV2D_WINOGRAD_NCHWC", "CONV_KEYWORDS", "DENSE",
           "DEPTHWISE_CONV2D_NCHWC", "DEPTHWISE_KEYWORDS", "GEMM_KEYWORDS", "LIBRARY", "MATMUL",
           "ScheduleTemplate", "fused_schedule", "register_schedule_template", "scale_template",
           "template_names", "WINOGRAD_KEYWORDS"]
