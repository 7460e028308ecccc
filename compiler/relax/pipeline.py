"""The graph-level pipeline: one flat pass list, the same for both executors, from a model as
the frontends make it to graph-level functions calling kernels (`R.call_tir` of PrimFuncs).
`relay.build` (the graph executor, compiler/relax/backend/graph) and `relax.build` (the VM,
compiler/relax/backend/vm) run it, then their back end.

The passes run through the runner tir's pipeline uses (compiler.transform.run_pass_list):
COMPILER_DUMP_IR=1 prints the module after each pass, COMPILER_TIME_PASSES=1 each pass's
time, COMPILER_VERIFY=1 checks the module after each (well_formed.py; by default, once at the
end), the current PassContext's instruments run around each, and `disabled_pass` leaves out a
pass by its TVM name (`TVM_PASS_NAMES`); disabling "FuseOps" makes every operator a kernel of
its own, as in TVM. Disabling a pass Kiln cannot compile without is an error.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional

from ..ir.module import IRModule
from ..target import Target
from ..transform import PassContext, PassNames, enabled_passes, run_pass_list
from .transform.bind_params import bind_params
from .transform.combine_parallel_matmul import combine_parallel_matmul
from .transform.convert_layout_ncdhwc import convert_layout_ncdhwc
from .transform.convert_layout_nchwc import convert_layout_nchwc
from .transform.decompose_recurrent import decompose_recurrent
from .transform.eliminate_dead_code import eliminate_dead_code
from .transform.fold_batch_norm import fold_batch_norm
from .transform.fold_constant import fold_constant
from .transform.fold_quantize_scale import fold_quantize_scale
from .transform.fuse_ops import MAX_FUSE_DEPTH, fuse_ops
from .transform.lambda_lift import lambda_lift
from .transform.legalize import legalize
from .transform.pack_dense_weight import pack_dense_weight
from .transform.qnn_layout_nchwc import qnn_layout_nchwc
from .transform.quantize_to_integer import quantize_to_integer
from .transform.split_args import split_args
from .transform.split_dilated_conv import split_dilated_conv
from .transform.transpose_dense_weight import transpose_dense_weight
from .transform.trim_conv_taps import trim_conv_taps
from .transform.winograd_conv2d import winograd_conv2d
from .well_formed import verify

Pass = Callable[[IRModule], IRModule]

# TVM's names for the graph passes, as `PassContext(disabled_pass=[...])` gives them, and
# whether Kiln can leave the pass out (False: what follows needs its result).
TVM_PASS_NAMES: Dict[str, PassNames] = {
    "bind_params": ((), False),
    "lambda_lift": (("LambdaLift",), False),
    "decompose_recurrent": ((), False),
    "quantize_to_integer": (("FakeQuantizationToInteger",), True),
    "fold_constant": (("FoldConstant",), True),
    "fold_batch_norm": (("SimplifyInference", "FoldScaleAxis"), True),
    "fold_quantize_scale": (("FoldScaleAxis",), True),
    "eliminate_dead_code": (("DeadCodeElimination",), True),
    "trim_conv_taps": ((), True),
    "transpose_dense_weight": (("AlterOpLayout",), True),
    "combine_parallel_matmul": (("CombineParallelDense", "CombineParallelMatmul"), True),
    "pack_dense_weight": (("AlterOpLayout", "pack_dense_weight"), True),
    "convert_layout_nchwc": (("AlterOpLayout", "ConvertLayout"), True),
    "convert_layout_ncdhwc": (("AlterOpLayout", "ConvertLayout"), True),
    "qnn_layout_nchwc": (("AlterOpLayout",), True),
    "split_dilated_conv": ((), True),
    "winograd_conv2d": (("AlterOpLayout", "winograd_conv2d"), True),
    "split_args": ((), False),         # a device's kernels cannot take more arguments
    "fuse_ops": ((), True),            # "FuseOps" disabled: one operator per kernel (below)
    "legalize": (("LegalizeOps",), False),
}


def named(fn: Callable, **kwargs: Any) -> Pass:
    """`fn(mod, **kwargs)` as a pass named as `fn` (the runner prints, times and disables
    passes by name)."""
    if not kwargs:
        return fn

    def run(mod: IRModule) -> IRModule:
        return fn(mod, **kwargs)

    run.__name__ = run.__qualname__ = fn.__name__
    return run


def optimize_passes(target: Optional[Target] = None,
                    params: Optional[Mapping[str, Any]] = None,
                    weights_at_load: bool = False) -> List[Pass]:
    """The passes before kernels are made, in order, for the kernels' `target` (None: a CPU):
    weights bound and folded, layouts chosen, operators fused into primitive functions.
    `weights_at_load`: weight transforms that would grow the file (Winograd's, a tied
    weight's packing) stay kernels on the original weight, for an executor that runs such
    calls once after loading (the graph executor); else they are computed now."""
    unfused = "FuseOps" in PassContext.current().disabled_pass
    return _enabled([
        named(bind_params, params=dict(params or {})),  # weights become constants
        lambda_lift,             # local functions -> module functions, closures
        named(decompose_recurrent, target=target),  # GPU: recurrent time loops unrolled
        quantize_to_integer,     # dequantize -> float op -> quantize on integers
        fold_constant,           # constant subgraphs computed now
        fold_batch_norm,         # batch norms into scale/shift, then into weights
        fold_quantize_scale,     # float scale/shift between dequantize and quantize folded
        eliminate_dead_code,     # what folding left unused
        trim_conv_taps,          # kernel taps that only read padding cut (dilated convs)
        transpose_dense_weight,  # dense by a constant W -> matmul by W.T [K, N]
        combine_parallel_matmul,  # matmuls of one x by constants -> one, sliced
        named(pack_dense_weight, target=target, at_load=weights_at_load),  # CPU: GEMM panels
        named(convert_layout_nchwc, target=target),  # CPU: conv regions in NCHW[x]c
        named(convert_layout_ncdhwc, target=target),  # CPU: conv3d regions in NCDHW[x]c
        named(qnn_layout_nchwc, target=target),  # CPU: integer convs blocked (VNNI)
        split_dilated_conv,      # CPU: dilated convs mostly over padding, tap by tap
        named(winograd_conv2d, target=target, at_load=weights_at_load),  # CPU: 3x3 convs
        named(split_args, target=target),  # GPU: concats of more inputs than a kernel takes
        named(fuse_ops, max_depth=1 if unfused else MAX_FUSE_DEPTH, target=target),  # kernels
    ])


def kernel_passes(target: Optional[Target] = None,
                  progress: Optional[Callable[[int, int, str], None]] = None) -> List[Pass]:
    """The pass that makes kernels: primitive functions -> PrimFuncs called by R.call_tir,
    scheduled for `target`; `progress(k, total, name)` as each is lowered."""
    return _enabled([named(legalize, target=target, progress=progress)])


def graph_passes(target: Optional[Target] = None, params: Optional[Mapping[str, Any]] = None,
                 progress: Optional[Callable[[int, int, str], None]] = None) -> List[Pass]:
    """The whole graph-level pass list: `optimize_passes` then `kernel_passes`."""
    return optimize_passes(target, params) + kernel_passes(target, progress)


def _enabled(passes: List[Pass]) -> List[Pass]:
    return enabled_passes(passes, lambda p: TVM_PASS_NAMES.get(p.__name__, ((), True)))


def run(mod: IRModule, passes: List[Pass]) -> IRModule:
    """Runs `passes` on `mod` through the shared runner, the graph-level functions verified
    (compiler/relax/well_formed.py)."""
    return run_pass_list(mod, passes, verify)


__all__ = ["TVM_PASS_NAMES", "graph_passes", "kernel_passes", "named", "optimize_passes",
           "run"]
