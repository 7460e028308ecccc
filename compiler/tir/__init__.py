"""The loop IR, with the names of `tvm.tir`: expressions (Var, IntImm, FloatImm, Select, Call,
...), statements, Buffer/decl_buffer, PrimFunc, functors, the verifier and the reference
interpreter; `pipeline.py` (the one flat pass list) and `transform/` (one pass per file) are
imported as submodules."""
from . import ir_builder, stmt_functor  # noqa: F401
from . import structural_equal as _structural_equal_rules  # registers the loop IR's rules
from .block import Block, BlockRealize, BufferRegion, MatchBufferRegion
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
from .op import (  # noqa: A004 - tvm.tir.all / any
    all,
    any,
    call_extern,
    call_intrin,
    call_llvm_intrin,
    call_llvm_pure_intrin,
    call_packed,
    call_pure_extern,
    div,
    floordiv,
    floormod,
    if_then_else,
    indexdiv,
    indexmod,
    likely,
    trace,
    truncdiv,
    truncmod,
)
from .printer import to_text
from .schedule import BlockRV, LoopRV, Schedule, ScheduleError
from .shuffle import Shuffle
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
