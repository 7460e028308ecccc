"""Identifiers a variable of the generated C-family code must not take.

A variable's C name comes from its IR name (an input called `x` is the C variable `x`), so an
input named `float`, `NULL`, `int32_t` or `DLTensor` would print code that does not compile.
The printer gives such a variable another name (`float` -> `float_1`): these are the C99 and
C++ keywords (CUDA, Metal and OpenCL are C++ or C dialects), the typedefs and macros of the
standard headers the prelude includes, the libm functions the printer calls, the types and
functions of the runtime ABI, and the device dialects' built-in names. Names beginning with a
prefix of the prelude's own identifiers (`kiln_`, `KILN_`, `TVM`, `DL`) or with `__` (reserved
to C implementations) are renamed too.
"""
from __future__ import annotations

_C_KEYWORDS = """auto break case char const continue default do double else enum extern float for
goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic
_Generic _Noreturn _Static_assert _Thread_local"""

_CXX_KEYWORDS = """alignas alignof and and_eq asm bitand bitor bool catch char16_t char32_t class
compl concept consteval constexpr constinit const_cast co_await co_return co_yield decltype
delete dynamic_cast explicit export false friend mutable namespace new noexcept not not_eq
nullptr operator or or_eq private protected public reinterpret_cast requires static_assert
static_cast template this thread_local throw true try typeid typename using virtual wchar_t xor
xor_eq"""

_STANDARD = """NULL INFINITY NAN HUGE_VAL HUGE_VALF EOF errno assert offsetof size_t ptrdiff_t
intptr_t uintptr_t intmax_t uintmax_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t
uint64_t INT8_MIN INT8_MAX INT16_MIN INT16_MAX INT32_MIN INT32_MAX INT64_MIN INT64_MAX
UINT8_MAX UINT16_MAX UINT32_MAX UINT64_MAX FLT_MAX FLT_MIN DBL_MAX DBL_MIN isnan isinf
isfinite signbit fpclassify main memcpy memset malloc free abs labs llabs"""

_LIBM = """exp exp2 log log2 log10 log1p expm1 sqrt tanh erf fabs floor ceil round trunc nearbyint
sin cos tan asin acos atan sinh cosh asinh acosh atanh pow atan2 fmod copysign hypot ldexp fma
fmax fmin rsqrt"""

_DEVICE = """threadIdx blockIdx blockDim gridDim warpSize half half2 float2 float4 int2 int4
uchar ushort uint ulong get_global_id get_local_id get_group_id get_local_size
get_global_size barrier kernel global local constant private device threadgroup
thread_position_in_grid"""

_RUNTIME = """DLTensor DLDevice DLDataType DLDataTypeCode DLDeviceType TVMFFIAny TVMFFIObject
TVMParallelGroupEnv FTVMParallelLambda TVMFFIErrorSetRaisedFromCStr
TVMFFIErrorSetRaisedFromCStrParts TVMFFIFunctionCall TVMFFIEnvModLookupFromImports
TVMFFIHandleInitOnce TVMFFIEnvGetStream TVMFFIEnvModRegisterSystemLibSymbol
TVMBackendAllocWorkspace TVMBackendFreeWorkspace TVMBackendParallelLaunch
TVMBackendParallelBarrier"""

RESERVED = frozenset(" ".join((_C_KEYWORDS, _CXX_KEYWORDS, _STANDARD, _RUNTIME, _DEVICE)).split()
                     + [f + suffix for f in _LIBM.split() for suffix in ("", "f", "l")])

RESERVED_PREFIXES = ("kiln_", "KILN_", "TVM", "DL", "__")


def is_reserved(name: str) -> bool:
    """Whether a variable of the generated code may not be called `name`."""
    return name in RESERVED or name.startswith(RESERVED_PREFIXES)
