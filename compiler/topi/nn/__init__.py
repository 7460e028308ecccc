"""Neural-network operators (TVM's `topi.nn`)."""
from . import qnn  # noqa: F401
from .batch_matmul import batch_matmul  # noqa: F401
from .conv2d import conv2d, conv2d_nchw, depthwise_conv2d_nchw, group_conv2d_nchw  # noqa: F401
from .conv2d_nchwc import (  # noqa: F401
    channel_block,
    conv2d_NCHWc,
    depthwise_conv2d_NCHWc,
    kernel_blocks,
)
from .conv2d_transpose import conv2d_transpose_nchw  # noqa: F401
from .conv3d import conv3d_ncdhw, get_pad_tuple3d  # noqa: F401
from .conv3d_ncdhwc import channel_block3d, conv3d_NCDHWc, kernel_blocks3d  # noqa: F401
from .dense import dense, dense_pack_weight, dense_packed, matmul  # noqa: F401
from .elemwise import gelu, leaky_relu, prelu, relu  # noqa: F401
from .flatten import flatten  # noqa: F401
from .layout import layout_transform  # noqa: F401
from .normalization import batch_norm, layer_norm, lrn  # noqa: F401
from .pad import pad  # noqa: F401
from .pooling import adaptive_pool, adaptive_pool3d, global_pool, pool2d, pool3d  # noqa: F401
from .pooling_nchwc import global_pool_NCHWc, pool2d_NCHWc  # noqa: F401
from .recurrent import gru_sequence, lstm_sequence  # noqa: F401
from .softmax import log_softmax, softmax  # noqa: F401
from .utils import get_pad_tuple  # noqa: F401
from .winograd import (  # noqa: F401
    conv2d_winograd_NCHWc,
    winograd_matrices,
    winograd_weight_transform,
    winograd_weight_transform_compute,
)
