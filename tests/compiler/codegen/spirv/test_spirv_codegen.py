"""SPIR-V code generation for target "vulkan": every kernel of GPUs part 1 gives shaders that
spirv-val accepts; the module's payload has TVM's VulkanModule layout; get_source shows the
disassembly; what SPIR-V cannot express fails with the fix."""
import shutil
import struct

import pytest
from spirv_check import (
    bool_select,
    conv2d,
    matmul,
    row_reduce,
    softmax,
    spirv_val,
    validate_module,
    vector_add,
    vulkan_module,
)

import compiler
from compiler import te
from compiler.codegen.spirv import builder as B
from compiler.ir.errors import UnsupportedOpError
from compiler.target import Target

KERNELS = {
    "vadd": vector_add,
    "mm": matmul,
    "rowred": lambda: row_reduce(threads=48),
    "rowmax": lambda: row_reduce(threads=32, op="max"),
    "softmax": softmax,
    "conv": conv2d,
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_passes_spirv_val(name):
    _, dev = vulkan_module(*KERNELS[name](), name)
    validate_module(dev)
    words = struct.unpack("<5I", next(iter(dev.shaders.values()))[:20])
    assert words[0] == B.MAGIC and words[1] == B.VERSION


def _disassembly(dev) -> str:
    """get_source() as spirv-dis prints it (operands by name); skips without spirv-tools."""
    if shutil.which("spirv-dis") is None:
        pytest.skip("spirv-dis (spirv-tools) is not installed: get_source() lists raw operands")
    return dev.get_source()


def test_shared_memory_and_barriers_in_the_matmul():
    _, dev = vulkan_module(*matmul(), "mm")
    text = _disassembly(dev)
    assert "Workgroup" in text and "OpControlBarrier" in text
    assert "LocalSize" in text and "OpLoopMerge" in text


def test_cross_thread_reduction_barriers():
    _, dev = vulkan_module(*row_reduce(threads=64), "rowred")
    text = dev.get_source("spirv")
    assert text.count("OpControlBarrier") == 7  # as many as the OpenCL kernel's barriers


def test_softmax_uses_glsl_exp_and_conv_padding_is_a_phi():
    assert "Exp" in _disassembly(vulkan_module(*softmax(), "sm")[1])
    text = _disassembly(vulkan_module(*conv2d(), "conv")[1])
    assert "OpPhi" in text and "OpSelectionMerge" in text


def test_scalar_arguments_are_push_constants():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B_ = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B_.op)
    bx, tx = s[B_].split(B_.op.axis[0], factor=32)
    s[B_].bind(bx, te.thread_axis("blockIdx.x"))
    s[B_].bind(tx, te.thread_axis("threadIdx.x"))
    _, dev = vulkan_module(s, [A, B_], "scale")
    validate_module(dev)
    text = dev.get_source()
    assert "PushConstant" in text
    info = dev.function_infos[0]
    assert info.arg_types == ((3, 64, 1), (3, 64, 1), (0, 32, 1))
    assert info.launch_param_tags == ("blockIdx.x", "threadIdx.x")


def _read_str(data, pos):
    (n,) = struct.unpack_from("<Q", data, pos)
    return data[pos + 8:pos + 8 + n].decode(), pos + 8 + n


def test_payload_is_tvms_vulkan_layout():
    _, dev = vulkan_module(*vector_add(), "vadd")
    data = dev.payload
    fmt, pos = _read_str(data, 0)
    assert fmt == "vulkan"
    (nfuncs,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    assert nfuncs == 1
    key, pos = _read_str(data, pos)
    name, pos = _read_str(data, pos)
    assert key == name == "vadd_kernel"
    (nargs,) = struct.unpack_from("<Q", data, pos)
    pos += 8 + 4 * nargs
    (ntags,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    for _ in range(ntags):
        _, pos = _read_str(data, pos)
    (nextra,) = struct.unpack_from("<Q", data, pos)
    pos += 8 + 4 * nextra
    (nshaders,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    key, pos = _read_str(data, pos)
    flag, nwords = struct.unpack_from("<IQ", data, pos)
    pos += 12
    assert (nshaders, key, flag) == (1, "vadd_kernel", 0)
    assert data[pos:pos + 4 * nwords] == dev.shaders["vadd_kernel"]
    assert pos + 4 * nwords == len(data)


def test_builder_dedups_types_and_constants():
    b = B.Builder()
    assert b.type_int(32, True) == b.type_int(32, True) != b.type_int(32, False)
    f32 = b.type_float(32)
    assert b.const(f32, "float", 32, 1.5) == b.const(f32, "float", 32, 1.5)
    assert b.const(f32, "float", 32, 0.0) != b.const(f32, "float", 32, -0.0)
    assert B.string_words("abc") == [0x00636261]
    assert B.string_words("abcd") == [0x64636261, 0]
    b.type_int(64, True)
    assert B.CAP["Int64"] in b.capabilities


def test_listing_without_spirv_dis():
    _, dev = vulkan_module(*vector_add(), "vadd")
    words = struct.unpack(f"<{len(dev.shaders['vadd_kernel']) // 4}I",
                          dev.shaders["vadd_kernel"])
    text = B.listing(words)
    assert "OpEntryPoint" in text and "OpFAdd" in text


def test_float64_and_int64_kernels_validate():
    A = te.placeholder((64,), name="A", dtype="float64")
    C = te.compute((64,), lambda i: te.sqrt(A[i]) + te.floor(A[i]).astype("int64")
                   .astype("float64"), name="C")
    s = te.create_schedule(C.op)
    s[C].bind(C.op.axis[0], te.thread_axis("threadIdx.x"))
    _, dev = vulkan_module(s, [A, C], "f64")
    validate_module(dev)
    assert "Float64" in dev.get_source() and "Int64" in dev.get_source()


def _bound(n=64, dtype="float32"):
    A = te.placeholder((n,), name="A", dtype=dtype)
    B_ = te.compute((n,), lambda i: A[i] + A[i], name="B")
    s = te.create_schedule(B_.op)
    return A, B_, s


def test_vectorized_kernel_is_refused_with_the_fix():
    A, B_, s = _bound(256)
    bx, tx = s[B_].split(B_.op.axis[0], factor=16)
    tx, vi = s[B_].split(tx, factor=4)
    s[B_].bind(bx, te.thread_axis("blockIdx.x"))
    s[B_].bind(tx, te.thread_axis("threadIdx.x"))
    s[B_].vectorize(vi)
    with pytest.raises(UnsupportedOpError, match="do not vectorize"):
        compiler.build(s, [A, B_], target="vulkan", target_host="llvm", name="vec")


@pytest.mark.parametrize("dtype, caps", [
    ("int8", ["StorageBuffer8BitAccess", "Int8"]),
    ("uint8", ["StorageBuffer8BitAccess", "Int8"]),
    ("int16", ["StorageBuffer16BitAccess", "Int16"]),
    ("float16", ["StorageBuffer16BitAccess", "Float16"]),
])
def test_narrow_buffers_declare_their_storage_capabilities(dtype, caps):
    A, B_, s = _bound(64, dtype)
    s[B_].bind(B_.op.axis[0], te.thread_axis("threadIdx.x"))
    _, dev = vulkan_module(s, [A, B_], "narrow")
    validate_module(dev)
    text = dev.get_source()
    for cap in caps:
        assert f"OpCapability {cap}\n" in text, text[:400]
    assert ('OpExtension "SPV_KHR_8bit_storage"' in text) == (dtype.endswith("int8"))


def test_narrow_buffers_refused_when_the_target_says_no():
    A, B_, s = _bound(64, "int8")
    s[B_].bind(B_.op.axis[0], te.thread_axis("threadIdx.x"))
    with pytest.raises(UnsupportedOpError, match="supports_int8"):
        compiler.build(s, [A, B_], target="vulkan -supports_int8=0", target_host="llvm",
                       name="i8")


def test_bool_buffers_are_stored_as_bytes():
    _, dev = vulkan_module(*bool_select(), "bsel")
    validate_module(dev)
    text = _disassembly(dev)
    assert "OpCapability StorageBuffer8BitAccess" in text and "OpTypeBool" in text


def test_vulkan_target_attributes():
    t = Target("vulkan -supports_float16=1 -max_num_threads=128")
    assert t.kind.name == "vulkan" and t.kind.device_type == 7
    assert t.get("max_num_threads") == 128 and t.get("thread_warp_size") == 1
    assert t.get("supports_float16") is True


def test_int64_refused_when_the_target_says_no():
    A, B_, s = _bound(64, "int64")
    s[B_].bind(B_.op.axis[0], te.thread_axis("threadIdx.x"))
    with pytest.raises(UnsupportedOpError, match="supports_int64"):
        compiler.build(s, [A, B_], target="vulkan -supports_int64=0", target_host="llvm",
                       name="i64")


def test_spirv_val_catches_a_broken_module():
    b = B.Builder()
    b.entry_point(12345, "k", [], [1, 1, 1])  # an entry point naming no function
    with pytest.raises(AssertionError, match="spirv-val rejects"):
        spirv_val(b.binary())
