"""The graph level (as tvm.relax): expressions and struct info, operators with shape/type
inference (`relax.op`), the BlockBuilder, a printer, structural equality rules, functors and
a numpy reference interpreter. Functions live in a `compiler.ir.IRModule` beside loop-IR
PrimFuncs.

    from compiler import relax
    from compiler.relax import op, script as R
    x = relax.Var("x", R.Tensor((n, 784), "float32"))

Passes (`relax.transform`) and back ends come on top of this API.
"""
# The loop IR first: compiler.tir and compiler.arith import each other, and only loading
# compiler.tir first binds compiler.tir.ir_builder's `simplify` to the function.
from .. import tir as _tir  # noqa: F401, I001
from ..ir.module import IRModule
from . import interpreter, op, script
from . import printer as _printer  # registers the graph level's printer
from . import structural_equal as _structural_equal_rules  # registers the graph level's rules
from .attrs import Attrs
from .block_builder import BlockBuilder
from .expr import (
    Binding,
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    DataTypeImm,
    Expr,
    ExternFunc,
    Function,
    GlobalVar,
    If,
    MatchCast,
    Op,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
    VarBinding,
    const,
)
from .functor import ExprMutator, ExprVisitor, post_order_visit
from .model_builder import ModelBuilder
from .op.base import call_dps_packed, call_tir, shape_of
from .struct_info import (
    FuncStructInfo,
    ObjectStructInfo,
    PrimStructInfo,
    ShapeStructInfo,
    StructInfo,
    TensorStructInfo,
    TupleStructInfo,
)

from .vm_build import Executable, build  # noqa: E402 - relax.build: the VM build
