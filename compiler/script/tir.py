"""The `T` namespace of TVMScript (`from tvm.script import tir as T`): `T.prim_func` and the names
a parsed function may use.

Calls in a parsed body run as Python calls of these names. Expressions (`T.float32(1)`,
`T.if_then_else`, `T.call_extern`, math) return loop-IR expressions at once; names that shape
statements (`T.serial`, `T.grid`, `T.Buffer`, `T.allocate`, `T.launch_thread`, `T.func_attr`,
...) return a description that parser.py turns into the statement around the rest of the body.
"""
from __future__ import annotations

import builtins
from typing import Optional

from ..ir.dtype import as_dtype
from ..te import intrin as _intrin
from ..tir import expr as E
from ..tir import op as _op
from ..tir.block import BufferRegion
from ..tir.stmt import Evaluate, ForKind
from .frames import (
    AllocateDecl,
    AttrDecl,
    AxisDecl,
    BlockDecl,
    BlockPartDecl,
    BufferDecl,
    DTypeName,
    FuncAttrDecl,
    GridDecl,
    InitDecl,
    LaunchDecl,
    LetDecl,
    ScriptError,
    StackArray,
    StackShape,
    loop,
)
from .parser import parse_prim_func

__all__ = ["prim_func", "ScriptError"]


def prim_func(func=None, *, check_well_formed: bool = True):
    """Parses the decorated Python function as TVMScript into a `tir.PrimFunc`: its parameters
    annotated `T.Buffer(shape, dtype)` become tensor arguments, `T.handle` / `T.int32` ones
    handle and scalar arguments; the body becomes the function's statement."""
    if func is None:
        return lambda f: parse_prim_func(f)
    return parse_prim_func(func)


# ---- dtypes: T.float32(1.5) is a constant, T.float32(x) a cast; as an annotation a var -----
_g = globals()
for _bits in (8, 16, 32, 64):
    for _kind in ("int", "uint"):
        _g[f"{_kind}{_bits}"] = DTypeName(f"{_kind}{_bits}")
        for _lanes in (4, 8, 16):
            _g[f"{_kind}{_bits}x{_lanes}"] = DTypeName(f"{_kind}{_bits}x{_lanes}")
for _bits in (16, 32, 64):
    _g[f"float{_bits}"] = DTypeName(f"float{_bits}")
    for _lanes in (2, 4, 8, 16):
        _g[f"float{_bits}x{_lanes}"] = DTypeName(f"float{_bits}x{_lanes}")
bfloat16 = DTypeName("bfloat16")
boolean = DTypeName("bool")
_g["bool"] = boolean
handle = DTypeName("handle")


def ptr(dtype, storage_scope: str = "global") -> DTypeName:
    """`T.Ptr(dtype)`: a pointer parameter (a handle variable)."""
    return handle


Ptr = ptr


# ---- buffers --------------------------------------------------------------------------------
def _buffer_decl(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="", axis_separators=None,
                 **kwargs) -> BufferDecl:
    if kwargs:
        raise ScriptError(f"T.Buffer: unsupported argument(s) {', '.join(sorted(kwargs))}")
    if axis_separators:
        raise ScriptError("T.Buffer: axis_separators are not supported")
    if isinstance(shape, (int, E.PrimExpr)):
        shape = (shape,)
    return BufferDecl(tuple(shape), str(as_dtype(dtype)), data, tuple(strides or ()),
                      elem_offset, scope, align, offset_factor)


class _BufferName:
    """`T.Buffer((4, 4), "float32")` (also `T.Buffer[(4, 4), "float32"]`)."""

    def __call__(self, *args, **kwargs) -> BufferDecl:
        return _buffer_decl(*args, **kwargs)

    def __getitem__(self, key) -> BufferDecl:
        return _buffer_decl(*(key if isinstance(key, tuple) else (key,)))


Buffer = _BufferName()


def match_buffer(param, shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None) -> BufferDecl:
    """Binds the handle parameter `param` to a buffer of `shape` (a tensor argument)."""
    if not (isinstance(param, E.Var) and param.dtype.is_handle):
        raise ScriptError(f"T.match_buffer: the first argument must be a T.handle parameter, "
                          f"got {param!r}")
    decl = _buffer_decl(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                        axis_separators=axis_separators)
    decl.match = param
    return decl


def decl_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                scope="global", align=-1, offset_factor=0, buffer_type="",
                axis_separators=None) -> BufferDecl:
    """A buffer declared in the body; without `data` it allocates its own memory."""
    decl = _buffer_decl(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                        axis_separators=axis_separators)
    decl.allocates = data is None
    return decl


def allocate(extents, dtype, scope="global", condition=True, annotations=None) -> AllocateDecl:
    if not isinstance(extents, (list, tuple)):
        extents = (extents,)
    return AllocateDecl(tuple(extents), str(as_dtype(dtype)), scope or "global",
                        None if condition is True else condition)


# ---- loops ----------------------------------------------------------------------------------
serial = loop(ForKind.SERIAL)
parallel = loop(ForKind.PARALLEL)
vectorized = loop(ForKind.VECTORIZED)
unroll = loop(ForKind.UNROLLED)


def thread_binding(start, stop=None, thread: Optional[str] = None, *, annotations=None):
    """A loop over a GPU thread axis `thread` ("threadIdx.x", ...)."""
    if thread is None and isinstance(stop, str):
        start, stop, thread = 0, start, stop
    if not thread:
        raise ScriptError("T.thread_binding needs thread=\"threadIdx.x\" (or another tag)")
    return loop(ForKind.THREAD_BINDING)(start, stop, thread=thread, annotations=annotations)


def grid(*extents) -> GridDecl:
    return GridDecl(tuple(E.convert(e) for e in extents))


# ---- scoped statements ---------------------------------------------------------------------
def func_attr(attrs: dict) -> FuncAttrDecl:
    """The function's attributes ("global_symbol", "tir.noalias", ...)."""
    if not isinstance(attrs, dict):
        raise ScriptError(f"T.func_attr takes a dict, got {attrs!r}")
    return FuncAttrDecl(dict(attrs))


def env_thread(thread_tag: str) -> E.IterVar:
    """A thread axis ("blockIdx.x", ...) that `T.launch_thread` launches."""
    return E.IterVar(None, E.Var(thread_tag, "int32"), E.IterKind.THREAD, thread_tag)


def launch_thread(thread, extent) -> LaunchDecl:
    if isinstance(thread, str):
        thread = env_thread(thread)
    elif isinstance(thread, E.Var):
        thread = env_thread(thread.name) if thread.name in _THREAD_TAGS else None
    if not isinstance(thread, E.IterVar):
        raise ScriptError("T.launch_thread needs a thread tag or a T.env_thread axis")
    return LaunchDecl(thread, E.convert(extent))


_THREAD_TAGS = {f"{k}.{a}" for k in ("blockIdx", "threadIdx", "vthread") for a in "xyz"}


def attr(node, attr_key: str, value) -> AttrDecl:
    """`with T.attr(node, key, value):` an AttrStmt around the block."""
    return AttrDecl(node, attr_key, E.convert(value))


def let(var, value) -> LetDecl:
    """`with T.let(v, value):` binds `v` around the block."""
    return LetDecl(var, E.convert(value))


def evaluate(value) -> Evaluate:
    """Evaluates an expression for its effect."""
    return Evaluate(E.convert(value))


def assume(cond) -> E.Call:
    """A fact the optimizer may use (`tir.assume`); it has no run-time effect."""
    return E.Call(as_dtype("bool"), "tir.assume", (E.convert(cond),))


# ---- expressions ----------------------------------------------------------------------------
def Cast(dtype, value):  # noqa: N802
    return E.cast(dtype, value)


cast = Cast


def ramp(base, stride, lanes: int):
    return E.Ramp(E.convert(base), E.convert(stride), int(lanes))


def broadcast(value, lanes: int):
    return E.Broadcast(E.convert(value), int(lanes))


Ramp, Broadcast = ramp, broadcast


def Select(cond, t, f):  # noqa: N802
    return _intrin.select(cond, t, f)


builtins_max = builtins.max


def max(a, b):  # noqa: A001
    return E.binary(E.Max, a, b)


def min(a, b):  # noqa: A001
    return E.binary(E.Min, a, b)


def _extern_args(args, dtype):
    """(dtype, name, args) of `T.call_extern(dtype, name, *args)` or of the newer spelling
    `T.call_extern(name, *args, dtype=...)`."""
    if dtype is not None:
        return dtype, args[0], args[1:]
    return args[0], args[1], args[2:]


def call_extern(*args, dtype=None):
    dtype, name, rest = _extern_args(args, dtype)
    return _op.call_extern(dtype, name, *rest)


def call_pure_extern(*args, dtype=None):
    dtype, name, rest = _extern_args(args, dtype)
    return _op.call_pure_extern(dtype, name, *rest)


def call_intrin(dtype, func_name, *args):
    return _op.call_intrin(dtype, func_name, *args)


def call_packed(func_name, *args):
    return _op.call_packed(func_name, *args)


def tvm_call_packed(func_name, *args, dtype="int32"):
    """`T.tvm_call_packed(name, *args)`: tir.call_packed (a `T.tvm_stack_make_array` of a
    whole buffer is that buffer, see parser.py)."""
    return _op.call_packed(func_name, *args)


def tvm_stack_make_shape(*dims, dtype="handle"):
    """The shape array of a DLTensor made on the stack (an argument of
    `T.tvm_stack_make_array`)."""
    return StackShape(tuple(E.convert(d) for d in dims))


def tvm_stack_make_array(data, shape, strides, ndim, type_value, elem_offset, dtype="handle"):
    """A DLTensor on the stack describing a buffer: in Kiln, an argument of call_packed that is
    a whole Buffer. The parser replaces this description by the buffer whose data, shape,
    offset and element type it names (StackArray)."""
    return StackArray(data, shape, strides, ndim, type_value, elem_offset)


# ---- blocks ---------------------------------------------------------------------------------
def block(name: str = "", no_realize: bool = False) -> BlockDecl:
    """`with T.block(name):` a TensorIR block around the statements of the `with`."""
    return BlockDecl(name, no_realize)


def init() -> InitDecl:
    """`with T.init():` what the enclosing reduction block stores before its first update."""
    return InitDecl()


def _as_range(dom) -> E.Range:
    if isinstance(dom, E.Range):
        return dom
    if isinstance(dom, (list, tuple)):
        lo, hi = E.convert(dom[0]), E.convert(dom[1])
        return E.Range(lo, hi - lo if not E.is_const_int(lo, 0) else hi)
    dom = E.convert(dom)
    return E.Range(E.make_const(dom.dtype, 0), dom)


def _axis(kind):
    def make(dom, binding, dtype="int32"):
        rng = _as_range(dom)
        bits = builtins_max(rng.min.dtype.bits, rng.extent.dtype.bits, as_dtype(dtype).bits)
        return AxisDecl(kind, rng, E.convert(binding), as_dtype(dtype).with_bits(bits))

    make.__name__ = kind
    return make


class axis:  # noqa: N801 - TVM's name
    """`T.axis.spatial / reduce / scan / opaque(dom, binding)` and `T.axis.remap(kinds,
    loop_vars)`: iteration variables of the block being read."""

    spatial = staticmethod(_axis(E.IterKind.DATA_PAR))
    S = spatial
    reduce = staticmethod(_axis(E.IterKind.REDUCE))
    R = reduce
    scan = staticmethod(_axis(E.IterKind.ORDERED))
    opaque = staticmethod(_axis(E.IterKind.OPAQUE))

    @staticmethod
    def remap(kinds: str, bindings, dtype="int32"):
        """One axis per letter of `kinds` ("S" spatial, "R" reduce), each over the range of
        the loop whose variable it is bound to (parser.py fills the range in)."""
        if len(kinds) != len(bindings):
            raise ScriptError(f"T.axis.remap: {len(kinds)} kinds for {len(bindings)} bindings")
        out = []
        for k, b in zip(kinds, bindings):
            if k not in "SR":
                raise ScriptError(f"T.axis.remap: unknown axis kind {k!r} (use S or R)")
            if not isinstance(b, E.Var):
                raise ScriptError("T.axis.remap binds loop variables only")
            kind = E.IterKind.DATA_PAR if k == "S" else E.IterKind.REDUCE
            out.append(AxisDecl(kind, None, b, b.dtype))
        return out


def reads(*regions) -> BlockPartDecl:
    """The buffer regions the block reads (`A[i, 0:4]`, or a list of them)."""
    return BlockPartDecl("reads", _regions(regions))


def writes(*regions) -> BlockPartDecl:
    """The buffer regions the block writes."""
    return BlockPartDecl("writes", _regions(regions))


def _regions(items):
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        items = items[0]
    out = []
    for r in items:
        if isinstance(r, E.BufferLoad):
            r = BufferRegion.from_point(r.buffer, r.indices)
        if not isinstance(r, BufferRegion):
            raise ScriptError(f"T.reads/T.writes take buffer regions such as A[i, 0:4], got "
                              f"{r!r}")
        out.append(r)
    return tuple(out)


def block_attr(attrs: dict) -> BlockPartDecl:
    """Annotations of the block."""
    if not isinstance(attrs, dict):
        raise ScriptError(f"T.block_attr takes a dict, got {attrs!r}")
    return BlockPartDecl("annotations", dict(attrs))


def where(predicate) -> BlockPartDecl:
    """The block runs only where `predicate` holds."""
    return BlockPartDecl("predicate", E.convert(predicate))


def alloc_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None) -> BufferDecl:
    """A buffer the enclosing block allocates (at the top of a function: the root block)."""
    decl = _buffer_decl(shape, dtype, data, strides, elem_offset, scope, align, offset_factor,
                        axis_separators=axis_separators)
    decl.block_alloc = True
    return decl


def call_llvm_intrin(dtype, name, *args):
    return _op.call_llvm_intrin(dtype, name, *args)


def call_llvm_pure_intrin(dtype, name, *args):
    return _op.call_llvm_pure_intrin(dtype, name, *args)


def reinterpret(dtype, value):
    return E.Call(as_dtype(dtype), "tir.reinterpret", (E.convert(value),))


def shift_left(a, b):
    return E.shift(E.SHIFT_LEFT, a, b)


def shift_right(a, b):
    return E.shift(E.SHIFT_RIGHT, a, b)


def _typed(fn):
    """`fn` also taking TVMScript's `dtype=` keyword: the dtype of the result."""
    def call(*args, dtype=None):
        value = fn(*args)
        if dtype is not None and value.dtype != as_dtype(dtype):
            value = E.cast(dtype, value)
        return value

    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


if_then_else = _typed(_intrin.if_then_else)
likely = _op.likely
floordiv, floormod = _op.floordiv, _op.floormod
truncdiv, truncmod = _op.truncdiv, _op.truncmod
abs = _intrin.abs  # noqa: A001
max_value, min_value = _intrin.max_value, _intrin.min_value
all, any = _intrin.all, _intrin.any  # noqa: A001
for _n in ("exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh",
           "sigmoid", "erf", "fabs", "floor", "ceil", "round", "trunc", "nearbyint", "sin",
           "cos", "tan", "isnan", "isinf", "isfinite", "pow", "fmod", "atan2", "copysign"):
    _g[_n] = _typed(getattr(_intrin, _n))
