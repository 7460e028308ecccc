"""What every IR level shares: DType, the node base, IRModule, printing, structural equality,
JSON save/load and the compiler's error classes. The loop IR is compiler.tir."""
from . import container  # noqa: F401
from .dtype import DType, as_dtype
from .errors import (
    BuildError,
    CompilerError,
    InternalError,
    IRError,
    ScheduleError,
    TargetError,
    TypeInferenceError,
    UnsupportedOpError,
)
from .module import IRModule
from .node import Node
from .printer import register_printer, to_text
from .serialization import load_json, save_json
from .structural_equal import (
    ObjectPath,
    ObjectPathPair,
    assert_structural_equal,
    first_mismatch,
    structural_equal,
    structural_hash,
)
