"""ExecBuilder and the VM executable format: byte round trips, register renumbering, checks."""
import struct

import numpy as np
import pytest

from compiler.relax import vm_format as F
from compiler.relax.exec_builder import ExecBuilder, SpecialReg, VMFuncKind
from compiler.relax.vm_format import VMExecutableBytes, VMFormatError
from microruntime import DataType, ShapeTuple


def _sample():
    eb = ExecBuilder()
    eb.declare_function("helper", VMFuncKind.VM_FUNC)
    with eb.function("main", num_inputs=2, param_names=["x", "y"]):
        eb.emit_call("vm.builtin.check_tensor_info",
                     args=[eb.r(0), eb.imm(2), DataType("float32"),
                           eb.convert_constant("ErrorContext(fn=main, loc=param[0])")])
        eb.emit_call("add", args=[eb.r(0), eb.r(1)], dst=eb.r(10))
        eb.emit_call("vm.builtin.reshape", args=[eb.r(10), (3, 2)], dst=eb.r(7))
        eb.emit_call("vm.builtin.read_if_cond", args=[eb.r(1)], dst=eb.r(12))
        eb.emit_if(eb.r(12), 3)
        eb.emit_call("helper", args=[eb.r(7)], dst=eb.r(20))
        eb.emit_goto(2)
        eb.emit_call("vm.builtin.copy", args=[eb.r(7)], dst=eb.r(20))
        eb.emit_call("vm.builtin.make_tuple",
                     args=[eb.r(20), eb.c(eb_idx(eb, np.arange(6, dtype="float32"))),
                           eb.convert_constant(1 << 60), eb.convert_constant(2.5),
                           eb.f("helper")], dst=eb.r(21))
        eb.emit_ret(eb.r(21))
    with eb.function("helper", num_inputs=1):
        eb.emit_ret(eb.r(0))
    return eb.get()


def eb_idx(eb, value):
    kind, idx = F.split_arg(eb.convert_constant(value))
    assert kind == F.ArgKind.CONST_IDX
    return idx


def test_round_trip_bytes():
    ex = _sample()
    data = ex.to_bytes()
    assert struct.unpack_from("<Q", data)[0] == F.MAGIC
    back = VMExecutableBytes.from_bytes(data)
    assert back.to_bytes() == data
    assert [f.name for f in back.func_table] == [f.name for f in ex.func_table]
    tensors = [c for c in back.constants if isinstance(c, np.ndarray)]
    np.testing.assert_array_equal(tensors[0], np.arange(6, dtype="float32"))
    tags = sorted({F.constant_tag(c) for c in back.constants})
    assert tags == [1, 3, 5, 65, 69, 70]
    old = VMExecutableBytes(ex.func_table, ex.constants, ex.instr_offset, ex.instr_data,
                            magic=F.MAGIC_NO_SCOPE)
    assert VMExecutableBytes.from_bytes(old.to_bytes()).magic == F.MAGIC_NO_SCOPE


def test_registers_renumbered_and_sized():
    ex = _sample()
    main = ex.func_table[ex.func_map["main"]]
    assert main.num_args == 2 and main.param_names == ["x", "y"]
    # r10, r7, r12, r20, r21 become r2.. r6 in order of definition
    assert main.register_file_size == 7
    ins = ex.get_instruction(main.start_instr + 1)
    assert ins.dst == 2
    assert ex.get_instruction(main.end_instr - 1).result == 6
    helper = ex.func_table[ex.func_map["helper"]]
    assert helper.kind == VMFuncKind.VM_FUNC and helper.register_file_size == 1
    packed = ex.func_table[ex.func_map["add"]]
    assert packed.kind == 0 and packed.num_args == -2


def test_constants_dedup_and_immediates():
    eb = ExecBuilder()
    a = eb.convert_constant((1, 2))
    assert eb.convert_constant(ShapeTuple([1, 2])) == a
    assert eb.convert_constant(np.ones(3, "float32")) == eb.convert_constant(np.ones(3, "float32"))
    assert eb.convert_constant(np.ones(3, "float32")) != eb.convert_constant(np.ones(3, "int32"))
    assert F.split_arg(eb.convert_constant(5)) == (F.ArgKind.IMMEDIATE, 5)
    assert F.split_arg(eb.convert_constant(-(2**55 - 1))) == (F.ArgKind.IMMEDIATE, -(2**55 - 1))
    assert F.split_arg(eb.convert_constant(2**55))[0] == F.ArgKind.CONST_IDX
    assert F.split_arg(eb.imm(-3)) == (F.ArgKind.IMMEDIATE, -3)
    assert F.split_arg(eb.vm_state()) == (0, SpecialReg.VM_STATE)
    with pytest.raises(VMFormatError, match="immediate"):
        eb.imm(2**56)
    with pytest.raises(VMFormatError, match="VM constant"):
        eb.convert_constant(object())


def test_text_and_stats():
    ex = _sample()
    text = ex.as_text()
    assert "@main(x, y)" in text and "vm.builtin.reshape" in text and "c[" in text
    assert "%void" in text and "if" in text and "goto" in text
    st = ex.stats()
    assert "Constant pool" in st and "main" in st and "Tensor([6], float32)" in st


@pytest.mark.parametrize("build, message", [
    (lambda eb: eb.emit_ret(eb.r(5)), "never defined"),
    (lambda eb: eb.emit_call("f", args=[eb.c(3)]), "constant index 3"),
    (lambda eb: (eb.emit_goto(5), eb.emit_ret(eb.r(0))), "jump target"),
])
def test_builder_checks(build, message):
    eb = ExecBuilder()
    with eb.function("main", num_inputs=1):
        build(eb)
    with pytest.raises(VMFormatError, match=message):
        eb.get()


def test_builder_misuse():
    eb = ExecBuilder()
    with pytest.raises(VMFormatError, match="function scope"):
        eb.emit_ret(eb.r(0))
    with pytest.raises(VMFormatError, match="parameter names"):
        eb.function("g", num_inputs=2, param_names=["a"])
    with eb.function("main", num_inputs=1):
        eb.emit_ret(eb.r(0))
    with pytest.raises(VMFormatError, match="already defined"):
        eb.function("main", num_inputs=1)
    with pytest.raises(VMFormatError, match="cannot find"):
        eb.f("nope")


def test_from_bytes_errors():
    data = _sample().to_bytes()
    with pytest.raises(VMFormatError, match="magic"):
        VMExecutableBytes.from_bytes(b"\0" * 8 + data[8:])
    bad_version = data[:8] + struct.pack("<Q", 4) + b"0.13" + data[20:]
    with pytest.raises(VMFormatError, match="version '0.13'"):
        VMExecutableBytes.from_bytes(bad_version)
    for cut in (3, 15, len(data) // 2, len(data) - 1):
        with pytest.raises(VMFormatError, match="truncated"):
            VMExecutableBytes.from_bytes(data[:cut])
    with pytest.raises(VMFormatError, match="unexpected bytes"):
        VMExecutableBytes.from_bytes(data + b"\0")
    # an old-style tag (71: Shape in TVM 0.21) is named in the error
    eb = ExecBuilder()
    with eb.function("main", num_inputs=1):
        eb.emit_call("f", args=[(1, 2)], dst=eb.r(1))
        eb.emit_ret(eb.r(1))
    raw = bytearray(eb.get().to_bytes())
    pos = raw.index(struct.pack("<iQ", 69, 2))
    raw[pos:pos + 4] = struct.pack("<i", 71)
    with pytest.raises(VMFormatError, match="unknown constant tag 71"):
        VMExecutableBytes.from_bytes(bytes(raw))
