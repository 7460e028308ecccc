"""Tensor expressions and schedules, after TVM's classic `te` API:

    n = te.var("n")
    A = te.placeholder((n,), name="A")
    C = te.compute(A.shape, lambda i: A[i] * 2, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
"""
from ..tir.expr import IterVar, Range, Var  # noqa: F401
from ..tir.op import (  # noqa: F401
    div,
    floordiv,
    floormod,
    indexdiv,
    indexmod,
    truncdiv,
    truncmod,
)
from . import hybrid  # noqa: F401,E402
from .autodiff import gradient  # noqa: F401
from .create_prim_func import create_prim_func  # noqa: F401
from .group import GroupStage  # noqa: F401
from .intrin import *  # noqa: F401,F403
from .intrin import abs, all, any, if_then_else, max_value, min_value, power, select  # noqa: F401
from .operation import (  # noqa: F401
    compute,
    const,
    extern,
    placeholder,
    reduce_axis,
    size_var,
    thread_axis,
    var,
)
from .reduction import comm_reducer, max, min, sum  # noqa: F401
from .scan import ScanOp, scan  # noqa: F401
from .schedule import Schedule, create_schedule  # noqa: F401
from .stage import Stage  # noqa: F401
from .tag import NestedTagError, TagScope, tag_scope  # noqa: F401
from .tensor import (  # noqa: F401
    ComputeOp,
    ExternOp,
    Operation,
    PlaceholderOp,
    Tensor,
    TensorLoad,
    TensorSlice,
)
from .tensor_intrin import TensorIntrin, decl_tensor_intrin  # noqa: F401
