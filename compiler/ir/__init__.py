"""The loop IR: dtypes, expressions, statements, buffers, PrimFunc and IRModule."""
from .buffer import Buffer, decl_buffer
from .dtype import DType, as_dtype
from .expr import (EQ, GE, GT, LE, LT, NE, Add, And, BinaryOp, Broadcast, BufferLoad, Call,
                   Cast, CmpOp, CommReducer, Div, FloatImm, FloorDiv, FloorMod, IntImm, IterKind,
                   IterVar, Let, Max, Min, Mod, Mul, Node, Not, Or, PrimExpr, Ramp, Range, Reduce,
                   Select, SizeVar, StringImm, Sub, Var, cast, const, convert, is_const_int,
                   make_const)
from .function import IRModule, PrimFunc
from .functor import (IRMutator, IRVisitor, collect_vars, free_vars, post_order_visit, rebuild,
                      substitute)
from .printer import to_text
from .stmt import (Allocate, AssertStmt, AttrStmt, BufferStore, Evaluate, For, ForKind,
                   IfThenElse, LetStmt, Return, SeqStmt, Stmt, While, no_op, seq)
from .structural_equal import (ObjectPath, ObjectPathPair, assert_structural_equal,
                               structural_equal, structural_hash)
from .verifier import verify
