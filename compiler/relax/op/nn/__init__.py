"""Neural-network operators (`relax.op.nn`, as tvm.relax.op.nn)."""
from .activation import (
    gelu,
    gelu_tanh,
    leakyrelu,
    log_softmax,
    prelu,
    relu,
    silu,
    softmax,
)
from .convolution import (
    contrib_conv2d_winograd_weight_transform,
    contrib_conv2d_winograd_without_weight_transform,
    conv2d,
    conv2d_transpose,
    conv3d,
)
from .linear import contrib_dense_pack, contrib_dense_pack_weight_transform, dense
from .normalization import batch_norm, layer_norm, lrn
from .padding import pad
from .pooling import (
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool2d,
    avg_pool3d,
    max_pool2d,
    max_pool3d,
)
from .recurrent import gru_sequence, lstm_sequence
