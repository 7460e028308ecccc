"""microruntime/abi.py, the one Python table of ABI facts, agrees with the C headers: every
enum value by name, and the layout by what a C compiler computes."""
import os
import re
import subprocess

import pytest

from microruntime import abi
from microruntime import dtype as rt_dtype

INCLUDE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "microruntime", "include")


def _enum(header, prefix):
    """{name without prefix: value} for `prefix<Name> = <int>` lines of a header."""
    with open(os.path.join(INCLUDE, "microruntime", header)) as f:
        text = f.read()
    return {m.group(1): int(m.group(2))
            for m in re.finditer(rf"\b{prefix}(\w+)\s*=\s*(-?\d+)", text)}


_DTYPE_CODES = ("Int", "UInt", "Float", "OpaqueHandle", "Bfloat", "Complex", "Bool")


def _namespace(cls):
    return {k: v for k, v in vars(cls).items() if not k.startswith("_")}


def _squashed(table):
    """Names compared without case or underscores: kTVMFFIDLTensorPtr ~ DLTENSOR_PTR."""
    return {k.replace("_", "").upper(): v for k, v in table.items()}


def test_type_indices_match_c_api_h():
    header = {k: v for k, v in _enum("c_api.h", "kTVMFFI").items()
              if k not in ("Any", "StaticObjectBegin")}
    assert _squashed(_namespace(abi.TypeIndex)) == _squashed(header)
    assert abi.STATIC_OBJECT_BEGIN == _enum("c_api.h", "kTVMFFI")["StaticObjectBegin"]


def test_device_types_match_dlpack_h():
    header = {k: v for k, v in _enum("dlpack.h", "kDL").items() if k not in _DTYPE_CODES}
    assert _squashed(_namespace(abi.DeviceType)) == _squashed(header)
    assert set(abi.DEVICE_NAMES) == set(header.values())


def test_dtype_codes_match_dlpack_h_and_the_runtime_enum():
    header = {k: v for k, v in _enum("dlpack.h", "kDL").items() if k in _DTYPE_CODES}
    assert _squashed(_namespace(abi.DataTypeCode)) == _squashed(header)
    for name, value in _namespace(abi.DataTypeCode).items():
        assert rt_dtype.DataTypeCode[{"OPAQUE_HANDLE": "HANDLE"}.get(name, name)] == value


def test_every_type_index_below_the_dynamic_range_has_a_name():
    named = {v for k, v in _namespace(abi.TypeIndex).items()
             if v < abi.TypeIndex.DYN_OBJECT_BEGIN and k != "OPAQUE_PY_OBJECT"}
    assert named == set(abi.TYPE_NAMES)


def test_layout_matches_the_c_compiler(tmp_path):
    fields = {"data": "data", "device_type": "device.device_type",
              "device_id": "device.device_id", "ndim": "ndim", "dtype_code": "dtype.code",
              "dtype_bits": "dtype.bits", "dtype_lanes": "dtype.lanes", "shape": "shape",
              "strides": "strides", "byte_offset": "byte_offset"}
    lines = [f'  printf("{k} %zu\\n", offsetof(DLTensor, {v}));' for k, v in fields.items()]
    src = tmp_path / "layout.c"
    src.write_text(
        "#include <stddef.h>\n#include <stdio.h>\n#include <microruntime/c_api.h>\n"
        "int main(void) {\n" + "\n".join(lines) + "\n"
        '  printf("DLTensor %zu\\n", sizeof(DLTensor));\n'
        '  printf("TVMFFIObject %zu\\n", sizeof(TVMFFIObject));\n'
        '  printf("TVMFFIAny %zu\\n", sizeof(TVMFFIAny));\n'
        '  printf("any_value %zu\\n", offsetof(TVMFFIAny, v_int64));\n'
        "  return 0;\n}\n")
    exe = tmp_path / "layout"
    cc = os.environ.get("CC", "cc")
    try:
        subprocess.run([cc, "-std=c99", "-I", INCLUDE, "-o", str(exe), str(src)], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        pytest.fail(f"cannot compile the layout probe with {cc}: {err}")
    out = dict(line.split() for line in subprocess.run(
        [str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())
    assert {k: int(out[k]) for k in fields} == abi.DLTENSOR_OFFSETS
    assert int(out["DLTensor"]) == abi.DLTENSOR_BYTES
    assert int(out["TVMFFIObject"]) == abi.OBJECT_HEADER_BYTES
    assert int(out["TVMFFIAny"]) == abi.ANY_BYTES
    assert int(out["any_value"]) == abi.ANY_VALUE_OFFSET
