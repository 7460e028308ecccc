"""Data types of the IR: a code (int, uint, float, bfloat, bool, handle), bits and vector lanes.

`DType` is an immutable value and a `str` subclass: `DType.parse("float32x4") == "float32x4"`.
Every IR node that has a type carries a DType; Python strings are accepted wherever a dtype is
expected and converted with `as_dtype`.
"""
from __future__ import annotations

import re
from typing import Optional, Union

from microruntime.abi import DataTypeCode

from .errors import IRError

# DLPack type codes (the same numbers the runtime uses).
INT, UINT, FLOAT, BFLOAT, BOOL = (DataTypeCode.INT, DataTypeCode.UINT, DataTypeCode.FLOAT,
                                 DataTypeCode.BFLOAT, DataTypeCode.BOOL)
HANDLE = DataTypeCode.OPAQUE_HANDLE

_NAMES = {INT: "int", UINT: "uint", FLOAT: "float", HANDLE: "handle", BFLOAT: "bfloat",
          BOOL: "bool"}
_PATTERN = re.compile(r"^(int|uint|float|bfloat|handle|bool)(\d*)(?:x(\d+))?$")


class DType(str):
    """A dtype that *is* its name: `DType.parse("float32") == "float32"`, it hashes as the str,
    so it works as a dict key next to plain names and wherever TVM code expects a str
    (`np.zeros(n, dtype=A.dtype)`, `A.dtype == "float32"`); `type(d) is str` is False (it is a
    subclass). `code`, `bits` and `lanes` are read-only fields; `DType("float32")` parses."""

    __slots__ = ("code", "bits", "lanes")

    def __new__(cls, code, bits: Optional[int] = None, lanes: int = 1) -> "DType":
        if isinstance(code, str):
            if bits is not None:
                raise IRError(f"DType({code!r}, ...): give a name alone or (code, bits, lanes)")
            return code if type(code) is cls else cls.parse(code)
        if code not in _NAMES or bits is None:
            raise IRError(f"DType({code!r}, {bits!r}, {lanes!r}): unknown type code")
        self = str.__new__(cls, _name(code, bits, lanes))
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "lanes", lanes)
        return self

    def __setattr__(self, key, value):
        raise AttributeError(f"DType is immutable (cannot set {key!r})")

    def __reduce__(self):
        return (DType, (self.code, self.bits, self.lanes))

    def __copy__(self) -> "DType":
        return self

    def __deepcopy__(self, memo) -> "DType":
        return self

    @staticmethod
    def parse(text: str) -> "DType":
        m = _PATTERN.match(text.strip())
        if not m:
            raise IRError(f"unknown dtype {text!r}; expected e.g. 'float32', 'int8', 'bool', "
                          "'float16x4', 'handle'")
        name, bits, lanes = m.group(1), m.group(2), m.group(3)
        code = {v: k for k, v in _NAMES.items()}[name]
        if name == "bool":
            nbits = 1
        elif name == "handle":
            nbits = 64
        elif bits:
            nbits = int(bits)
        else:
            nbits = 32
        if name == "bfloat" and nbits != 16:
            raise IRError(f"unknown dtype {text!r}: bfloat only exists as bfloat16")
        if name == "float" and nbits not in (16, 32, 64):
            raise IRError(f"unknown dtype {text!r}: floats are 16, 32 or 64 bits")
        if name in ("int", "uint") and nbits not in (1, 8, 16, 32, 64):
            raise IRError(f"unknown dtype {text!r}: integers are 1, 8, 16, 32 or 64 bits")
        return DType(code, nbits, int(lanes) if lanes else 1)

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"DType({str.__repr__(self)})"

    # ---- queries ---------------------------------------------------------------------------
    @property
    def is_int(self) -> bool:
        return self.code == INT

    @property
    def is_uint(self) -> bool:
        return self.code == UINT

    @property
    def is_integer(self) -> bool:
        """int or uint (not bool)."""
        return self.code in (INT, UINT)

    @property
    def is_float(self) -> bool:
        """float16/32/64 or bfloat16."""
        return self.code in (FLOAT, BFLOAT)

    @property
    def is_bfloat(self) -> bool:
        return self.code == BFLOAT

    @property
    def is_bool(self) -> bool:
        return self.code == BOOL

    @property
    def is_handle(self) -> bool:
        return self.code == HANDLE

    @property
    def is_scalar(self) -> bool:
        return self.lanes == 1

    @property
    def is_vector(self) -> bool:
        return self.lanes > 1

    @property
    def bytes(self) -> int:
        """Bytes of one element, all lanes, rounded up (bool takes a byte)."""
        return (self.bits * self.lanes + 7) // 8

    def with_lanes(self, lanes: int) -> "DType":
        return DType(self.code, self.bits, lanes)

    def element_of(self) -> "DType":
        return DType(self.code, self.bits, 1)

    def with_bits(self, bits: int) -> "DType":
        return DType(self.code, bits, self.lanes)


def _name(code: int, bits: int, lanes: int) -> str:
    if code == BOOL:
        base = "bool"
    elif code == HANDLE:
        base = "handle"
    else:
        base = f"{_NAMES[code]}{bits}"
    return base if lanes == 1 else f"{base}x{lanes}"


DTypeLike = Union[DType, str]


def as_dtype(value: DTypeLike) -> DType:
    """A DType from a DType or its name."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        return DType.parse(value)
    raise IRError(f"expected a dtype (e.g. 'float32'), got {value!r}")


int32 = DType(INT, 32)
int64 = DType(INT, 64)
float32 = DType(FLOAT, 32)
boolean = DType(BOOL, 1)
handle = DType(HANDLE, 64)
