"""Graph-level passes (one per file, each IRModule -> IRModule; the docstring of each says what
holds after it). compiler/relax/pipeline.py runs them in order: bind_params, lambda_lift,
decompose_recurrent, quantize_to_integer, fold_constant, fold_batch_norm, eliminate_dead_code,
trim_conv_taps, transpose_dense_weight, combine_parallel_matmul, convert_layout_nchwc,
convert_layout_ncdhwc, qnn_layout_nchwc, split_dilated_conv, winograd_conv2d, split_args,
fuse_ops, legalize (kernels; legalize_gpu for a GPU target, legalize_ops for the operators'
computations). graph_functions.py applies a rewrite to each graph-level function."""
from .bind_params import bind_params
from .eliminate_dead_code import eliminate_dead_code
from .fold_batch_norm import fold_batch_norm
from .fold_constant import fold_constant
from .fuse_ops import fuse_ops

__all__ = ["bind_params", "eliminate_dead_code", "fold_batch_norm", "fold_constant", "fuse_ops"]
