"""GPU schedules, after TVM's `topi.cuda` (used for every GPU target: cuda, opencl, metal,
vulkan). Each takes the output tensors of a possibly fused group and binds every computed
stage to blockIdx / threadIdx; tunables are module-level constants of the files
(dense.BLOCK_M, conv2d.BLOCK_F, reduction.REDUCE_THREADS, ...). The thread budget is the
current target's max_num_threads (`with Target("opencl"):`), else common.DEFAULT_MAX_THREADS.
"""
from .batch_matmul import schedule_batch_matmul  # noqa: F401
from .conv2d import (  # noqa: F401
    direct_conv2d,
    schedule_conv2d_nchw,
    schedule_conv2d_transpose_nchw,
    schedule_depthwise_conv2d_nchw,
    schedule_group_conv2d_nchw,
)
from .dense import (  # noqa: F401
    schedule_dense,
    schedule_dense_large_batch,
    schedule_dense_small_batch,
    schedule_matmul,
    tiled_gemm,
)
from .fused import schedule_fused  # noqa: F401
from .fused import schedule_fused as schedule_conv3d_ncdhw  # noqa: F401  (by anchor tag)
from .injective import (  # noqa: F401
    schedule_broadcast,
    schedule_elemwise,
    schedule_injective,
    schedule_injective_from_existing,
)
from .pooling import schedule_adaptive_pool, schedule_pool  # noqa: F401
from .reduction import schedule_layer_norm, schedule_lrn, schedule_reduce  # noqa: F401
from .softmax import schedule_softmax  # noqa: F401
