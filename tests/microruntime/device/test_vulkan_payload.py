"""Vulkan device modules (kind "vulkan", TVM's VulkanModule layout: the function map, then a
shader map of SPIR-V words) load without a driver; the loader checks each shader's magic,
version and word counts before any driver could see it, and a malformed payload is a
ValueError naming the problem."""
import struct

import pytest
from devmod_bytes import FLOAT32, HANDLE, INT32, function_info, string, u64

import microruntime as mr

OP_CAPABILITY, CAP_SHADER = 17, 1


def spirv(words_after_header=None, magic=0x07230203, version=0x00010300, bound=5):
    body = words_after_header if words_after_header is not None else [
        (2 << 16) | OP_CAPABILITY, CAP_SHADER]
    return struct.pack(f"<{5 + len(body)}I", magic, version, 0, bound, 0, *body)


def vulkan_payload(funcs, shaders, flag=0):
    """funcs: (name, arg_types, tags); shaders: (key, SPIR-V bytes)."""
    out = string("vulkan") + u64(len(funcs))
    for f in funcs:
        out += string(f[0]) + function_info(*f)
    out += u64(len(shaders))
    for key, code in shaders:
        out += string(key) + struct.pack("<IQ", flag, len(code) // 4) + code
    return out


FUNCS = [("k", [HANDLE, INT32, FLOAT32], ["blockIdx.x", "threadIdx.x"]),
         ("k2", [HANDLE], ["threadIdx.x"])]
GOOD = vulkan_payload(FUNCS, [("k2", spirv()), ("k", spirv())])  # any order, as TVM's map


def load(data):
    return mr.get_global_func("ffi.Module.load_from_bytes.vulkan")(data)


def test_good_payload_loads_without_a_driver():
    mod = load(GOOD)
    assert mod.type_key == "vulkan"
    assert mod.implements_function("k") and mod.implements_function("k2")
    assert not mod.implements_function("k3")


def test_every_truncation_is_an_error():
    for n in range(len(GOOD)):
        with pytest.raises(ValueError, match="vulkan module: "):
            load(GOOD[:n])


@pytest.mark.parametrize("code, phrase", [
    (spirv(magic=0x12345678), "magic number 0x12345678, not 0x07230203"),
    (spirv(version=0x00020000), "version word 0x00020000"),
    (spirv(bound=0), "id bound 0"),
    (spirv([(9 << 16) | OP_CAPABILITY, CAP_SHADER]), "instruction of 9 words at word 5"),
    (spirv([OP_CAPABILITY]), "instruction of 0 words"),
    (spirv()[:16], "fewer than its 5-word header"),
])
def test_corrupt_spirv_is_refused_at_load(code, phrase):
    with pytest.raises(ValueError, match=phrase):
        load(vulkan_payload(FUNCS[1:], [("k2", code)]))


@pytest.mark.parametrize("data, phrase", [
    (vulkan_payload(FUNCS, [("k", spirv())]), "nshaders 1 .* differs from nfuncs"),
    (vulkan_payload(FUNCS[1:], [("zz", spirv())]), "shader 'zz' is no function"),
    (vulkan_payload(FUNCS, [("k", spirv()), ("k", spirv())]), "shader 'k' appears twice"),
    (vulkan_payload(FUNCS[1:], [("k2", spirv())], flag=1), "only push-constant scalars"),
    (string("cl") + u64(0) + u64(0), "code format 'cl' is not one a vulkan module can hold"),
    (vulkan_payload(FUNCS[1:], [])[:-8] + u64(1) + string("k2") + struct.pack("<IQ", 0, 1 << 40),
     "SPIR-V word count .* is more than the bytes left"),
])
def test_malformed_shader_map(data, phrase):
    with pytest.raises(ValueError, match=phrase):
        load(data)
