"""DataType: a DLDataType (code, bits, lanes) that is also its canonical name as a str."""
import enum

import numpy as np


class DataTypeCode(enum.IntEnum):
    """DLDataType codes (DLPack 1.x)."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6
    Float8E3M4 = 7
    Float8E4M3 = 8
    Float8E4M3B11FNUZ = 9
    Float8E4M3FN = 10
    Float8E4M3FNUZ = 11
    Float8E5M2 = 12
    Float8E5M2FNUZ = 13
    Float8E8M0FNU = 14
    Float6E2M3FN = 15
    Float6E3M2FN = 16
    Float4E2M1FN = 17


_PREFIXES = [("uint", 1), ("int", 0), ("bfloat", 4), ("float", 2), ("complex", 5)]
# The bit widths each prefix takes (as in TVM: "float33" is no data type). int1/uint1 are the
# boolean of the loop IR, int4/uint4 packed quantized weights.
_WIDTHS = {"int": (1, 4, 8, 16, 32, 64), "uint": (1, 4, 8, 16, 32, 64), "float": (16, 32, 64),
           "bfloat": (16,), "complex": (64, 128)}
# Formats whose name fixes the bit width (no digits follow).
_NAMED = {
    "bool": (6, 8), "handle": (3, 64), "void": (3, 0),
    "float8_e3m4": (7, 8), "float8_e4m3": (8, 8), "float8_e4m3b11fnuz": (9, 8),
    "float8_e4m3fn": (10, 8), "float8_e4m3fnuz": (11, 8), "float8_e5m2": (12, 8),
    "float8_e5m2fnuz": (13, 8), "float8_e8m0fnu": (14, 8), "float6_e2m3fn": (15, 6),
    "float6_e3m2fn": (16, 6), "float4_e2m1fn": (17, 4),
}
_NAME_OF_CODE = {code: name for name, (code, _) in _NAMED.items() if name != "void"}
_PREFIX_OF_CODE = {code: prefix for prefix, code in _PREFIXES}
_DEFAULT_BITS = {"int": 32, "uint": 32, "float": 32, "bfloat": 16, "complex": 64}


def _number(digits):
    """The value of a decimal number written without sign or leading zero, else None."""
    if digits.isdigit() and digits.isascii() and not digits.startswith("0"):
        return int(digits)
    return None


def _parse(text):
    name, lanes = text, 1
    at = text.rfind("x", len("complex") if text.startswith("complex") else 0)
    if at >= 0:
        name, lanes = text[:at], _number(text[at + 1:])
        if not name or lanes is None or lanes > 65535:
            raise _unknown(text, "lanes must be 1 to 65535, as in 'float32x4'")
    if name in _NAMED:
        if name == "void" and lanes != 1:
            raise _unknown(text, "void takes no lanes")
        code, bits = _NAMED[name]
        return code, bits, (0 if name == "void" else lanes)
    for prefix, code in _PREFIXES:
        if name.startswith(prefix):
            rest = name[len(prefix):]
            if rest == "":
                return code, _DEFAULT_BITS[prefix], lanes
            bits = _number(rest)
            if bits in _WIDTHS[prefix]:
                return code, bits, lanes
            *most, last = map(str, _WIDTHS[prefix])
            widths = f"{', '.join(most)} or {last}" if most else last
            raise _unknown(text, f"{prefix} takes {widths} bits")
    raise _unknown(text)


def _unknown(text, why=None):
    detail = f": {why}" if why else ""
    return ValueError(f"unknown data type {text!r}{detail} (expected e.g. 'float32', 'int8', "
                      "'uint1', 'bool', 'bfloat16', 'float16x4', 'handle')")


def _format(code, bits, lanes):
    if code == 3 and bits == 0:
        return "void"
    if code in (3, 6) or code >= 7:
        name = _NAME_OF_CODE.get(code)
        if name is None:
            raise ValueError(f"unknown DLDataType code {code}")
        if code == 6 and bits != 8:
            name = f"bool{bits}"
    elif code in _PREFIX_OF_CODE:
        name = f"{_PREFIX_OF_CODE[code]}{bits}"
    else:
        name = f"custom[{code}]{bits}"
    return name if lanes == 1 else f"{name}x{lanes}"


_CACHE = {}


class DataType(str):
    """A data type: `DataType("float32")`; also a str equal to its canonical name."""

    def __new__(cls, type_str):
        if isinstance(type_str, DataType):
            return type_str
        if not isinstance(type_str, str):
            type_str = _numpy_name(type_str)
        cached = _CACHE.get(type_str)
        if cached is not None:
            return cached
        code, bits, lanes = _parse(type_str)
        self = cls._make(code, bits, lanes)
        if len(_CACHE) < 4096:
            _CACHE[type_str] = self
        return self

    @classmethod
    def _make(cls, code, bits, lanes):
        if not (0 <= code < 256 and 0 <= bits < 256 and 0 <= lanes < 65536):
            raise ValueError(f"DLDataType out of range: code={code} bits={bits} lanes={lanes}")
        self = str.__new__(cls, _format(code, bits, lanes))
        self.type_code = int(code)
        self.bits = int(bits)
        self.lanes = int(lanes)
        return self

    @classmethod
    def from_code(cls, code, bits, lanes=1):
        """The DataType of a DLDataType's fields."""
        key = (code, bits, lanes)
        cached = _CACHE.get(key)
        if cached is None:
            cached = cls._make(code, bits, lanes)
            _CACHE[key] = cached
        return cached

    @property
    def packed(self):
        """The DLDataType as the 32-bit integer it occupies in memory (little-endian)."""
        return self.type_code | (self.bits << 8) | (self.lanes << 16)

    @property
    def itemsize(self):
        """Bytes of one element, lanes included, rounded up to whole bytes."""
        return (self.bits * self.lanes + 7) // 8

    def with_lanes(self, lanes):
        return DataType.from_code(self.type_code, self.bits, lanes)

    def numpy_dtype(self):
        """The numpy dtype of one lane (bfloat16/float8 need the `ml_dtypes` package)."""
        scalar = self.with_lanes(1) if self.lanes != 1 else self
        if self.type_code == DataTypeCode.BOOL:
            return np.dtype(np.bool_)
        try:
            return np.dtype(str.__str__(scalar))
        except TypeError:
            pass
        try:
            import ml_dtypes  # noqa: F401  (registers bfloat16/float8 with numpy)

            return np.dtype(getattr(ml_dtypes, str.__str__(scalar)))
        except (ImportError, AttributeError):
            raise TypeError(f"data type {scalar} has no numpy equivalent "
                            "(install ml_dtypes for bfloat16/float8)") from None

    def __repr__(self):
        return f"DataType({str.__str__(self)!r})"

    def __reduce__(self):
        return (DataType, (str.__str__(self),))


def _numpy_name(value):
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"cannot make a DataType from {value!r}") from None
    if dt == np.bool_:
        return "bool"
    if dt.kind not in "iufcbV" and dt.name not in _NAMED and "float" not in dt.name:
        raise TypeError(f"numpy dtype {dt} has no DataType")
    return dt.name
