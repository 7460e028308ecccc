"""Strategies of the operators whose kernels have their own schedules: convolutions, dense and
matmul, pooling, softmax, layer_norm, resize2d. Each names its schedule in the target's schedule
module (`schedules`: topi.x86 or topi.cuda, which use the same names) and, on a CPU, the tuning
workload of the call — `(template name, *args)` for the autotvm template of that name
(compiler/autotvm/templates.py), or None when the call's shapes are not static.

conv2d decides its compute and schedule together, from the call's layout and groups: a
blocked layout (NCHW[x]c data, 6-d weights: convert_layout_nchwc's, CPU only) computes
conv2d_NCHWc (with its groups when they are whole blocks) or depthwise_conv2d_NCHWc (groups
within blocks: one channel, or a few, per group); NCHW/OIHW computes conv2d_nchw, or
group_conv2d_nchw when groups > 1. conv3d likewise: NCDHW[x]c data (convert_layout_ncdhwc's,
CPU only) computes conv3d_NCDHWc, NCDHW/OIDHW conv3d_ncdhw.
"""
from __future__ import annotations

from typing import Optional

from ... import topi
from ...ir.errors import UnsupportedOpError
from ...topi.x86.dense_pack_weight import schedule_dense_pack_weight_transform
from ...topi.x86.winograd_weight import schedule_winograd_weight_transform
from ..op.nn.convolution import is_grouped_in_block
from .op_strategy import OpStrategy, compute_of, default_strategy, is_cpu, register_strategy


def _out_dtype(call) -> Optional[str]:
    d = call.attrs.out_dtype
    return None if d in ("void", "", None) else str(d)


def _static(arg, ndim: int) -> Optional[tuple]:
    shape = getattr(getattr(arg, "struct_info", None), "shape", None)
    if shape is None or len(shape) != ndim or not all(isinstance(d, int) for d in shape):
        return None
    return tuple(int(d) for d in shape)


def _ints(values) -> tuple:
    return tuple(int(v) for v in values)


def _dtypes(call) -> tuple:
    dtype = str(call.args[0].struct_info.dtype)
    return dtype, _out_dtype(call) or dtype


# ---- workloads (CPU templates) ----------------------------------------------------------------

def _gemm_workload(call, template: str) -> Optional[tuple]:
    a, b = (_static(x, 2) for x in call.args[:2])
    if a is None or b is None or len(call.args) != 2:
        return None
    return (template, a, b, *_dtypes(call))


def _conv2d_nchwc_workload(call, template: str) -> Optional[tuple]:
    at = call.attrs
    data, kernel = _static(call.args[0], 5), _static(call.args[1], 6)
    if data is None or kernel is None or len(call.args) != 2:
        return None
    padding = _ints(at.padding)
    if len(padding) in (1, 2):
        padding = padding * (4 // len(padding))
    return (template, data, kernel, _ints(at.strides), padding, _ints(at.dilation),
            *_dtypes(call))


def _winograd_workload(call) -> Optional[tuple]:
    at = call.attrs
    data, weight = _static(call.args[0], 5), _static(call.args[1], 4)
    if data is None or weight is None:
        return None
    return ("conv2d_winograd_NCHWc.x86", data, weight, int(at.tile_size), _ints(at.padding),
            *_dtypes(call))


# ---- strategies -------------------------------------------------------------------------------

def conv2d(call, target, schedules) -> OpStrategy:
    at = call.attrs
    args = (list(at.strides), list(at.padding), list(at.dilation))
    if at.data_layout != "NCHW":
        if not is_cpu(target):
            raise UnsupportedOpError(f"relax.nn.conv2d: the blocked layout {at.data_layout} "
                                     f"has kernels on CPU targets only, not {target.kind.name}")
        if at.groups > 1 and not is_grouped_in_block(at):
            return OpStrategy("conv2d_NCHWc", lambda c, a: topi.nn.conv2d_NCHWc(
                a[0], a[1], *args, _out_dtype(c), groups=at.groups),
                schedules.schedule_conv2d_NCHWc)
        name = "depthwise_conv2d_NCHWc" if at.groups > 1 else "conv2d_NCHWc"
        fn = getattr(topi.nn, name)
        return OpStrategy(name, lambda c, a: fn(a[0], a[1], *args, _out_dtype(c)),
                          schedules.schedule_conv2d_NCHWc,
                          _conv2d_nchwc_workload(call, name + ".x86"))
    if at.kernel_layout != "OIHW":
        raise UnsupportedOpError(f"relax.nn.conv2d: layout {at.data_layout}/{at.kernel_layout} "
                                 "has no kernel; use NCHW/OIHW")
    if at.groups == 1:
        return OpStrategy("conv2d_nchw",
                          lambda c, a: topi.nn.conv2d_nchw(a[0], a[1], *args, _out_dtype(c)),
                          schedules.schedule_conv2d_nchw)
    return OpStrategy("group_conv2d_nchw",
                      lambda c, a: topi.nn.group_conv2d_nchw(a[0], a[1], *args, at.groups,
                                                             _out_dtype(c)),
                      schedules.schedule_group_conv2d_nchw)


def conv3d(call, target, schedules) -> OpStrategy:
    """A blocked layout (NCDHW[x]c data, 7-d weights: convert_layout_ncdhwc's, CPU only)
    computes conv3d_NCDHWc; NCDHW/OIDHW conv3d_ncdhw (the operator's own compute)."""
    at = call.attrs
    if at.data_layout == "NCDHW":
        return OpStrategy("conv3d_ncdhw", compute_of(call), schedules.schedule_conv3d_ncdhw)
    if not is_cpu(target):
        raise UnsupportedOpError(f"relax.nn.conv3d: the blocked layout {at.data_layout} has "
                                 f"kernels on CPU targets only, not {target.kind.name}")
    args = (list(at.strides), list(at.padding), list(at.dilation))
    return OpStrategy("conv3d_NCDHWc",
                      lambda c, a: topi.nn.conv3d_NCDHWc(a[0], a[1], *args, _out_dtype(c)),
                      schedules.schedule_conv3d_NCDHWc)


def conv2d_winograd(call, target, schedules) -> OpStrategy:
    return OpStrategy("conv2d_winograd_NCHWc", compute_of(call),
                      schedules.schedule_conv2d_winograd_NCHWc,
                      _winograd_workload(call) if is_cpu(target) else None)


def winograd_weight_transform(call, target, schedules) -> OpStrategy:
    """A CPU runs the transform once, at load: its schedule keeps the kernel small to compile
    (topi/x86/winograd_weight.py); a GPU schedules it by its pattern."""
    if schedules is topi.x86:
        return OpStrategy("winograd_weight_transform", compute_of(call),
                          schedule_winograd_weight_transform)
    return default_strategy(call, target, schedules)


def _packed(call, name: str) -> bool:
    """Whether a CPU's dense / matmul `call` takes the packed GEMM (topi.x86.matmul_packed): a
    2-d B, A [M, K] or [..., K] (its leading dimensions the rows), enough rows
    (topi.x86.packed_matmul_applies)."""
    if len(call.args) != 2:
        return False
    x, y = call.args
    a = _static(x, getattr(x.struct_info, "ndim", -1))
    b = _static(y, 2)
    if name == "dense":
        if a is None or len(a) != 2 or b is None:
            return False
        b = b[::-1]
    return (_out_dtype(call) in (None, "float32")
            and topi.x86.packed_matmul_applies(a, b, str(x.struct_info.dtype))
            and str(y.struct_info.dtype) == "float32")


def gemm(name: str):
    """dense / matmul: on a CPU, a GEMM with enough rows and a 2-d B takes the packed GEMM
    (`_packed`); else a 2-d one `schedule_<name>`, tuned
    by template `<name>.x86`, and a batched matmul (an operand not 2-d)
    schedule_batch_matmul."""
    def strategy(call, target, schedules) -> OpStrategy:
        if is_cpu(target) and _packed(call, name):
            return OpStrategy("matmul_packed",
                              lambda c, a: topi.x86.matmul_packed(
                                  a[0], a[1], _out_dtype(c), transpose_b=name == "dense"),
                              schedules.schedule_gemm_packed)
        if any(a.struct_info.ndim != 2 for a in call.args):
            return OpStrategy("batch_matmul", compute_of(call), schedules.schedule_batch_matmul)
        workload = _gemm_workload(call, name + ".x86") if is_cpu(target) else None
        return OpStrategy(name, compute_of(call), getattr(schedules, "schedule_" + name),
                          workload)
    return strategy


def dense_pack(call, target, schedules) -> OpStrategy:
    """A dense by a packed constant weight (pack_dense_weight): on a CPU the packed GEMM
    without its packing of B (topi.x86.matmul_prepacked); elsewhere its plain compute."""
    if is_cpu(target) and _static(call.args[0], call.args[0].struct_info.ndim) is not None:
        return OpStrategy("matmul_prepacked",
                          lambda c, a: topi.x86.matmul_prepacked(a[0], a[1], c.attrs.units,
                                                                 _out_dtype(c)),
                          schedules.schedule_gemm_packed)
    return default_strategy(call, target, schedules)


def dense_pack_weight_transform(call, target, schedules) -> OpStrategy:
    """A CPU packs the weight once, at load (topi/x86/dense_pack_weight.py)."""
    if is_cpu(target):
        return OpStrategy("dense_pack_weight_transform", compute_of(call),
                          schedule_dense_pack_weight_transform)
    return default_strategy(call, target, schedules)


def named(schedule: str):
    """The operator's compute, scheduled by `schedule` of the target's module."""
    def strategy(call, target, schedules) -> OpStrategy:
        return OpStrategy(schedule, compute_of(call), getattr(schedules, schedule))
    return strategy


def layer_norm(call, target, schedules) -> OpStrategy:
    """A CPU has a layer_norm schedule; a GPU schedules it by its pattern."""
    if schedules is topi.x86:
        return OpStrategy("layer_norm", compute_of(call), schedules.schedule_layer_norm)
    return default_strategy(call, target, schedules)


def resize2d(call, target, schedules) -> OpStrategy:
    """A CPU upsamples bilinearly in two separable stages (topi.x86.schedule_resize2d); other
    methods and targets compute it in one injective stage."""
    compute = compute_of(call)
    if schedules is topi.x86 and call.attrs.method in ("linear", "bilinear"):
        return OpStrategy("resize2d", lambda c, args: compute(c, args, separable=True),
                          schedules.schedule_resize2d)
    return default_strategy(call, target, schedules)


STRATEGIES = {
    "relax.nn.conv2d": conv2d,
    "relax.nn.contrib_conv2d_winograd_without_weight_transform": conv2d_winograd,
    "relax.nn.contrib_conv2d_winograd_weight_transform": winograd_weight_transform,
    "relax.nn.conv2d_transpose": named("schedule_conv2d_transpose_nchw"),
    "relax.nn.conv3d": conv3d,
    "relax.nn.dense": gemm("dense"),
    "relax.matmul": gemm("matmul"),
    "relax.nn.contrib_dense_pack": dense_pack,
    "relax.nn.contrib_dense_pack_weight_transform": dense_pack_weight_transform,
    "relax.nn.max_pool2d": named("schedule_pool"),
    "relax.nn.avg_pool2d": named("schedule_pool"),
    "relax.nn.max_pool3d": named("schedule_pool"),
    "relax.nn.avg_pool3d": named("schedule_pool"),
    "relax.nn.adaptive_avg_pool2d": named("schedule_adaptive_pool"),
    "relax.nn.adaptive_max_pool2d": named("schedule_adaptive_pool"),
    "relax.nn.adaptive_avg_pool3d": named("schedule_adaptive_pool"),
    "relax.nn.adaptive_max_pool3d": named("schedule_adaptive_pool"),
    "relax.nn.softmax": named("schedule_softmax"),
    "relax.nn.log_softmax": named("schedule_softmax"),
    "relax.nn.layer_norm": layer_norm,
    "relax.image.resize2d": resize2d,
}

for _name, _strategy in STRATEGIES.items():
    register_strategy(_name, _strategy)


__all__ = ["STRATEGIES", "conv2d", "conv2d_winograd", "conv3d", "dense_pack",
           "dense_pack_weight_transform", "gemm", "layer_norm", "named", "resize2d",
           "winograd_weight_transform"]
