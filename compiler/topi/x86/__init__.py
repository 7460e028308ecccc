"""x86 (any CPU, "llvm" and "c" targets) schedules, after TVM's `topi.x86`. Each takes the
output tensors of a possibly fused group. Tunables are module-level constants of the files
(dense.DENSE_ROWS, conv2d.CONV_CHANNEL_BLOCK, injective.VECTOR_LANES, ...)."""
from .batch_matmul import schedule_batch_matmul  # noqa: F401
from .conv2d import (  # noqa: F401
    schedule_conv2d_nchw,
    schedule_conv2d_transpose_nchw,
    schedule_depthwise_conv2d_nchw,
    schedule_group_conv2d_nchw,
)
from .conv2d_nchwc import (  # noqa: F401
    schedule_conv2d_NCHWc,
    schedule_depthwise_conv2d_NCHWc,
)
from .conv2d_winograd import schedule_conv2d_winograd_NCHWc  # noqa: F401
from .conv3d import schedule_conv3d_ncdhw  # noqa: F401
from .conv3d_ncdhwc import schedule_conv3d_NCDHWc  # noqa: F401
from .dense import (  # noqa: F401
    blocked_gemm,
    dense_pack,
    schedule_dense,
    schedule_dense_pack,
    schedule_matmul,
)
from .dense_pack_weight import schedule_dense_pack_weight_transform  # noqa: F401
from .fused import schedule_fused  # noqa: F401
from .gemm import (  # noqa: F401
    gemm_packed,
    matmul_packed,
    matmul_prepacked,
    pack_b_numpy,
    packed_matmul_applies,
    register_tile,
    schedule_gemm_packed,
)
from .injective import schedule_injective, schedule_injective_from_existing  # noqa: F401
from .normalization import schedule_layer_norm  # noqa: F401
from .pooling import schedule_adaptive_pool, schedule_pool  # noqa: F401
from .qnn import schedule_qnn_conv2d_nchw, schedule_qnn_matmul  # noqa: F401
from .reduction import schedule_lrn, schedule_reduce  # noqa: F401
from .resize import schedule_resize2d  # noqa: F401
from .softmax import schedule_softmax  # noqa: F401
