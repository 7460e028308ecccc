"""The VM executable format against Apache TVM 0.27: the bytes TVM's ExecBuilder writes are the
bytes Kiln's ExecBuilder writes for the same program, Kiln parses TVM's, and TVM loads Kiln's."""
import os
import subprocess

import numpy as np
from tvm_subprocess import TVM_PYTHON, requires_tvm

from compiler.relax.exec_builder import ExecBuilder, VMFuncKind
from compiler.relax.vm_format import VMExecutableBytes
from microruntime import DataType, ShapeTuple

HERE = os.path.dirname(os.path.abspath(__file__))
pytestmark = requires_tvm


def _kiln_program():
    """The program tests/interop/tvm_vm_exec.py builds with TVM's builder."""
    eb = ExecBuilder()
    eb.declare_function("helper", VMFuncKind.VM_FUNC)
    with eb.function("main", num_inputs=1, param_names=["x"]):
        eb.emit_call("vm.builtin.read_if_cond", args=[eb.r(0)], dst=eb.r(1))
        eb.emit_if(eb.r(1), 3)
        eb.emit_call("helper", args=[eb.r(0)], dst=eb.r(2))
        eb.emit_goto(2)
        eb.emit_call("vm.builtin.copy", args=[eb.r(0)], dst=eb.r(2))
        eb.emit_call("vm.builtin.make_tuple", args=[
            eb.r(2), eb.convert_constant(np.arange(6, dtype="float32")),
            eb.convert_constant(ShapeTuple([2, 3])), eb.convert_constant("hello"),
            eb.convert_constant(1 << 60), eb.convert_constant(2.5),
            eb.convert_constant(DataType("float16")), eb.imm(-7)], dst=eb.r(3))
        eb.emit_ret(eb.r(3))
    with eb.function("helper", num_inputs=1, param_names=["y"]):
        eb.emit_ret(eb.r(0))
    return eb.get()


def test_same_bytes_both_ways(tmp_path):
    kiln = _kiln_program().to_bytes()
    (tmp_path / "kiln.bin").write_bytes(kiln)
    proc = subprocess.run([TVM_PYTHON, os.path.join(HERE, "tvm_vm_exec.py"), str(tmp_path),
                           str(tmp_path / "kiln.bin")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tvm_bytes = (tmp_path / "tvm_exec.bin").read_bytes()
    parsed = VMExecutableBytes.from_bytes(tvm_bytes)
    assert parsed.to_bytes() == tvm_bytes
    assert kiln == tvm_bytes
    assert [f.name for f in parsed.func_table][:2] == ["helper", "main"]
    np.testing.assert_array_equal(parsed.constants[0], np.arange(6, dtype="float32"))
    assert parsed.constants[1:] == [(2, 3), "hello", 1 << 60, 2.5, DataType("float16")]
    text = (tmp_path / "kiln.txt").read_text()   # TVM's listing of Kiln's bytes
    assert "vm.builtin.make_tuple" in text and "i-7" in text
