"""The loop IR, with the names of `tvm.tir`: expressions (Var, IntImm, FloatImm, Select, Call,
...), statements, Buffer/decl_buffer, PrimFunc, functors, the verifier and the reference
interpreter; `pipeline.py` (the one flat pass list) and `transform/` (one pass per file) are
imported as submodules."""
from . import ir_builder  # noqa: F401
from . import structural_equal as _structural_equal_rules  # registers the loop IR's rules
from .buffer import Buffer, decl_buffer
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    CommReducer,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterKind,
    IterVar,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Range,
    Reduce,
    Select,
    SizeVar,
    StringImm,
    Sub,
    Var,
    cast,
    const,
    convert,
    is_const_int,
    make_const,
)
from .function import PrimFunc
from .functor import (
    IRMutator,
    IRVisitor,
    collect_vars,
    free_vars,
    post_order_visit,
    rebuild,
    substitute,
)
from .op import call_packed
from .printer import to_text
from .stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Return,
    SeqStmt,
    Stmt,
    While,
    no_op,
    seq,
)
from .verifier import verify
