"""The compiler's errors: a user's mistake raises a specific CompilerError subclass whose message
names the thing and the fix; a broken invariant of the compiler itself raises InternalError.
Both are RuntimeErrors, as TVM's TVMError and InternalError are (and as the runtime's errors
are), so TVM code that catches RuntimeError catches them."""


class CompilerError(RuntimeError):
    """Base of every error caused by what the user asked for."""


class ScheduleError(CompilerError):
    """A schedule primitive was applied where it cannot be (names the stage and the axis)."""


class TargetError(CompilerError):
    """An unknown target, an unknown option, or a target that cannot build this module."""


class UnsupportedOpError(CompilerError):
    """A model or expression uses an operator the compiler does not support."""


class BuildError(CompilerError):
    """The host compiler or linker failed; the message carries its output."""


class IRError(CompilerError):
    """Malformed IR given by the user (wrong types, undefined variables, bad arguments)."""


class HybridScriptError(IRError, ValueError):
    """A hybrid script (`te.hybrid.script`) uses Python that the hybrid language does not have,
    or uses it wrongly (names the construct and the line). A ValueError too, as TVM's."""


class TypeInferenceError(IRError):
    """Graph-level struct-info inference failed: an operator's arguments do not fit it (names
    the operator, the argument and the mismatch)."""


class InternalError(RuntimeError):
    """A compiler invariant does not hold: a bug in the compiler, not in the user's program."""


# The base class classic TVM code catches (`except tvm.error.TVMError`): every error of the
# compiler and of the runtime is a RuntimeError.
TVMError = RuntimeError
