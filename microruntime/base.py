"""Errors crossing the C boundary, in both directions.

A C failure carries a kind ("TypeError", "ValueError", ...) and a message; it surfaces in Python
as the exception class of that name (builtin, or registered with `register_error`), else
`RuntimeError`. A Python exception that crossed C (a Python callback called from C) comes back
as the very same exception object when the error reaching Python is the one it recorded.
"""
import builtins
import threading

from ._loader import ffi, lib
from .abi import OBJECT_HEADER_BYTES

_ERROR_CLASSES = {}
# The base class of the errors classic TVM code catches (`tvm._ffi.base.TVMError`): every error
# raised through the runtime, and every error of the compiler, is a RuntimeError.
TVMError = RuntimeError
_tls = threading.local()
# The C runtime keeps at most this many bytes of an error's kind and message, NUL included
# (MR_MAX_ERROR_KIND and MR_MAX_ERROR_MESSAGE in microruntime/src/config.h).
_MAX_ERROR_KIND = 64
_MAX_ERROR_MESSAGE = 4096


def register_error(cls, name=None):
    """Makes C errors of kind `name` (default: the class name) raise `cls`; usable as decorator."""
    _ERROR_CLASSES[name or cls.__name__] = cls
    return cls


def error_class(kind):
    """The Python exception class for a C error kind."""
    cls = _ERROR_CLASSES.get(kind)
    if cls is None:
        cls = getattr(builtins, kind, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        return cls
    return RuntimeError


def make_error(kind, message, serial=None):
    """The exception to raise for a C error (kind, message).

    `serial` (mr_last_error_serial() of the error being consumed) identifies the occurrence:
    a Python exception recorded for that very occurrence comes back as itself. Consuming any
    C error drops the recorded one, so it is never re-raised for a later error.
    """
    if serial is not None:
        pending = getattr(_tls, "pending", None)
        _tls.pending = None
        if (pending is not None and pending[1] == serial
                and (kind, message) == _as_recorded(pending[0])):
            return pending[0]
    cls = error_class(kind)
    try:
        exc = cls(message)
    except Exception:  # an exception class whose constructor wants other arguments
        exc = RuntimeError(f"{kind}: {message}")
    return exc


def remember_python_error(exc):
    """Records `exc`, raised by a Python callback, so that it is re-raised as itself.

    Call it right after recording the C error for `exc`: it is tied to that occurrence.
    """
    _ERROR_CLASSES.setdefault(type(exc).__name__, type(exc))
    _tls.pending = (exc, lib.mr_last_error_serial())


def _as_recorded(exc):
    """(kind, message) of `exc` as the C runtime holds them once recorded: cut at a NUL and at
    the runtime's limits (so a long message still identifies its exception), then decoded."""
    def clip(data, limit):
        return data.split(b"\0", 1)[0][:limit - 1].decode("utf-8", "replace")

    kind, message = exc_kind_and_message(exc)
    return clip(kind, _MAX_ERROR_KIND), clip(message, _MAX_ERROR_MESSAGE)


def _exc_message(exc):
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return str(exc.args[0])
    return str(exc)


def exc_kind_and_message(exc):
    """What a Python exception becomes in C: (kind, message) as bytes."""
    return type(exc).__name__.encode(), _exc_message(exc).encode("utf-8", "replace")


def _decode(data, size):
    if data == ffi.NULL:
        return ""
    return ffi.unpack(data, size).decode("utf-8", "replace")


def error_object_parts(err):
    """(kind, message) of an Error object (`err` borrowed)."""
    cell = ffi.cast("TVMFFIErrorCell*", ffi.cast("char*", err) + OBJECT_HEADER_BYTES)
    return _decode(cell.kind.data, cell.kind.size), _decode(cell.message.data, cell.message.size)


def raised_error():
    """Moves the error a callee recorded with TVMFFIErrorSetRaised* out; None if there is none."""
    out = ffi.new("TVMFFIObjectHandle*")
    serial = lib.mr_last_error_serial()
    lib.TVMFFIErrorMoveFromRaised(out)
    err = out[0]
    if err == ffi.NULL:
        return None
    try:
        kind, message = error_object_parts(err)
    finally:
        lib.mr_object_release(ffi.cast("TVMFFIObject*", err))
    return make_error(kind or "RuntimeError", message, serial)


def last_error(from_call=False):
    """The exception for the last failure on this thread.

    `from_call`: the failure came from calling a Function, which records its error with
    TVMFFIErrorSetRaised*; mr_* functions record theirs for mr_last_error().
    """
    exc = raised_error() if from_call else None
    if exc is not None:
        return exc
    kind = lib.mr_last_error_kind()
    msg = lib.mr_last_error()
    serial = lib.mr_last_error_serial()
    kind = ffi.string(kind).decode() if kind != ffi.NULL else ""
    msg = ffi.string(msg).decode("utf-8", "replace") if msg != ffi.NULL else ""
    lib.mr_error_clear()
    if not msg:
        exc = None if from_call else raised_error()
        if exc is not None:
            return exc
        msg = "unknown error (the callee returned -1 without recording an error)"
    return make_error(kind or "RuntimeError", msg, serial)


def check_call(status):
    """Raises the recorded error when a C call returned non-zero."""
    if status != 0:
        raise last_error()


def c_str(text):
    """A Python str as NUL-terminated UTF-8 bytes for a `const char*` parameter."""
    if isinstance(text, bytes):
        return text
    return str(text).encode("utf-8")
