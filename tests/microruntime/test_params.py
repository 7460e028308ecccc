import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microruntime as mr
from microruntime import nd

# shared reference §3: {"w": float32 2x3 [0..5], "b": int8 [1,-2,3,-4]} -> 182 bytes
EXPECTED_182 = bytes.fromhex(
    "b79c04054f8de5f7" "0000000000000000"
    "0200000000000000" "0100000000000000" "77" "0100000000000000" "62"
    "0200000000000000"
    "3fa1b496f0405edd" "0000000000000000" "01000000" "00000000" "02000000" "02200100"
    "0200000000000000" "0300000000000000" "1800000000000000"
    + np.arange(6, dtype="<f4").tobytes().hex() +
    "3fa1b496f0405edd" "0000000000000000" "01000000" "00000000" "01000000" "00080100"
    "0400000000000000" "0400000000000000" "01fe03fc")


def example():
    return {"w": nd.array(np.arange(6, dtype="float32").reshape(2, 3)),
            "b": nd.array(np.array([1, -2, 3, -4], "int8"))}


def test_exact_182_byte_example():
    assert len(EXPECTED_182) == 182
    blob = mr.save_param_dict(example())
    assert isinstance(blob, bytearray)
    assert bytes(blob) == EXPECTED_182
    loaded = mr.load_param_dict(EXPECTED_182)
    assert list(loaded) == ["w", "b"]
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(6).reshape(2, 3))
    assert loaded["w"].dtype == "float32" and loaded["b"].dtype == "int8"
    np.testing.assert_array_equal(loaded["b"].numpy(), [1, -2, 3, -4])


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int64", "uint8",
                                   "bool", "int32"])
def test_round_trip(dtype):
    rng = np.random.default_rng(1)
    params = {f"p{i}": (rng.standard_normal(shape) * 9).astype(dtype)
              for i, shape in enumerate([(), (0,), (3,), (2, 5), (1, 2, 3)])}
    loaded = mr.load_param_dict(mr.save_param_dict(params))
    assert list(loaded) == list(params)
    for name, value in params.items():
        assert loaded[name].dtype == dtype and loaded[name].shape == value.shape
        np.testing.assert_array_equal(loaded[name].numpy(), value)
    assert mr.load_param_dict(bytearray(mr.save_param_dict({}))) == {}


def test_names_and_types():
    params = {"ünï": np.ones(2, "float32"), "": np.zeros(1, "int8")}
    assert list(mr.load_param_dict(mr.save_param_dict(params))) == ["ünï", ""]
    with pytest.raises(TypeError):
        mr.save_param_dict({1: np.ones(1)})
    with pytest.raises(TypeError):
        mr.load_param_dict("a string")


@pytest.mark.parametrize("name", ["a\0b", "\0", "w\0"])
def test_names_with_nul_are_refused(name):
    """The C API takes NUL-terminated names: "a\\0b" and "a" would both be saved as "a"."""
    with pytest.raises(ValueError, match="NUL"):
        mr.save_param_dict({"a": np.ones(1, "float32"), name: np.zeros(1, "float32")})


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.integers(0, 3), max_size=5))
def test_names_round_trip_or_are_refused(names):
    params = {name: np.full(size, 1.5, "float32") for name, size in names.items()}
    if any("\0" in name for name in names):
        with pytest.raises(ValueError, match="NUL"):
            mr.save_param_dict(params)
        return
    loaded = mr.load_param_dict(mr.save_param_dict(params))
    assert list(loaded) == list(params)
    for name, value in params.items():
        np.testing.assert_array_equal(loaded[name].numpy(), value)


@pytest.mark.parametrize("device_type", [0, 2, 4, 7, 0x7FFFFFFF])
def test_only_cpu_tensors_load(device_type):
    """TVM saves and loads CPU tensors only (device_type 1 at offset 0x42 of the example)."""
    blob = bytearray(EXPECTED_182)
    blob[0x42:0x46] = device_type.to_bytes(4, "little")
    with pytest.raises(ValueError, match=f"bad device_type {device_type} at offset 66, "
                                         "expected 1"):
        mr.load_param_dict(bytes(blob))
    blob[0x42:0x46] = (1).to_bytes(4, "little")
    blob[0x46:0x4a] = (3).to_bytes(4, "little")  # a device_id is accepted, as in TVM
    assert list(mr.load_param_dict(bytes(blob))) == ["w", "b"]


@pytest.mark.parametrize("blob", [b"", b"\x00" * 16, EXPECTED_182[:-1], EXPECTED_182[:100],
                                  EXPECTED_182[:8], EXPECTED_182 + b"\x00"])
def test_malformed_blobs(blob):
    with pytest.raises(ValueError):
        mr.load_param_dict(blob)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_arbitrary_bytes(blob):
    try:
        mr.load_param_dict(blob)
    except ValueError:
        pass


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 181), st.integers(0, 255)), max_size=6),
       st.integers(0, 182))
def test_fuzz_mutated_valid_blob(edits, cut):
    blob = bytearray(EXPECTED_182)
    for pos, value in edits:
        blob[pos] = value
    try:
        out = mr.load_param_dict(bytes(blob[:cut]))
    except ValueError:
        return
    for arr in out.values():  # whatever loads must be usable, and on the CPU
        assert arr.device.device_type == 1
        arr.numpy()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 181), st.sampled_from([0x00, 0x7F, 0x80, 0xFF]))
def test_fuzz_huge_fields(pos, value):
    blob = bytearray(EXPECTED_182)
    for i in range(pos, min(pos + 8, len(blob))):
        blob[i] = value
    try:
        mr.load_param_dict(bytes(blob))
    except ValueError:
        pass


def _patched(offset, fmt, value):
    """EXPECTED_182 with the field at offset (of struct format fmt) set to value."""
    import struct

    blob = bytearray(EXPECTED_182)
    struct.pack_into(fmt, blob, offset, value)
    return bytes(blob)


# Offsets in EXPECTED_182 of the first tensor record ("w", float32 2x3).
W_NDIM, W_SHAPE0, W_SHAPE1 = 0x4A, 0x52, 0x5A


@pytest.mark.parametrize("offset, fmt, value, message", [
    (W_NDIM, "<i", -1, "bad ndim -1 at offset 74, expected at most 32"),
    (W_SHAPE0, "<q", -3, r"shape\[0\] is -3 at offset 82: a dimension cannot be negative"),
    (W_SHAPE1, "<q", -5, r"shape\[1\] is -5 at offset 90: a dimension cannot be negative"),
    (W_SHAPE1, "<q", 1 << 62, r"tensor of shape \(2, 4611686018427387904\) float32 is too "
                              r"large \(size overflows\)"),
])
def test_errors_name_the_field_and_dimension(offset, fmt, value, message):
    with pytest.raises(ValueError, match=message):
        mr.load_param_dict(_patched(offset, fmt, value))
