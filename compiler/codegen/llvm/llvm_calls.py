"""Calls of LLVM intrinsics by ID (`tir.call_llvm_intrin`), `tir.prefetch`, `tir.atomic_add` and
`Shuffle` vectors → LLVM, for the LLVM host codegen (a mixin of FunctionEmitter).

An intrinsic is declared under its base name plus a suffix unique to the call's types; LLVM's
parser renames the declaration to the intrinsic's proper overload (`llvm.ctpop.v8i8`). Types no
version of the intrinsic takes are a BuildError, found first in a child process (once per
signature): LLVM may abort the process that parses such a declaration.
"""
from __future__ import annotations

import functools
import re
import subprocess
import sys

from llvmlite import ir

from ... import tir as kir
from ...ir.dtype import as_dtype
from ...ir.errors import BuildError, InternalError
from ...target.llvm_intrinsics import base_name, is_overloaded
from ...tir.op import is_void
from .types import I32, PTR, VOID, TextConstant, llvm_type

# The prefix of the temporary names of overloaded intrinsic declarations.
OVERLOAD_TAG = "kiln_overload"


_CHECK = ("import sys, llvmlite.binding as llvm\n"
          "llvm.parse_assembly(sys.argv[1]).verify()\n")


def _is_int(ty: str) -> bool:
    return re.fullmatch(r"i\d+", ty) is not None


@functools.lru_cache(maxsize=None)
def _signature_problem(symbol: str, signature: str) -> str:
    """'' when LLVM accepts a call of the intrinsic declared as `symbol` with `signature`
    (`i32 (i64)`), else LLVM's complaint; asked of a child process."""
    ret, params = signature.split(" (", 1)
    types = [p for p in params[:-1].split(", ") if p]
    # integers as constants (an intrinsic may want immediates), the rest as parameters
    names = ", ".join(f"{t} %a{k}" for k, t in enumerate(types) if not _is_int(t))
    uses = ", ".join(f"{t} 0" if _is_int(t) else f"{t} %a{k}" for k, t in enumerate(types))
    call = f"call {ret} @\"{symbol}\"({uses})"
    text = (f"declare {ret} @\"{symbol}\"({', '.join(types)})\n"
            f"define void @kiln_check({names}) {{\n  {call}\n  ret void\n}}\n")
    try:
        proc = subprocess.run([sys.executable, "-c", _CHECK, text], capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as err:
        return f"cannot check: {err}"
    if proc.returncode == 0:
        return ""
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"LLVM stopped with status {proc.returncode}"


class LLVMCallEmitter:
    """LLVM-intrinsic half of the function emitter."""

    def _llvm_intrinsic(self, e):
        ident = e.args[0].value
        name = base_name(ident)
        if name is None:
            raise InternalError(f"llvm codegen: {ident} is not the ID of an LLVM intrinsic looked "
                                "up in this process (llvm_lookup_intrinsic_id)")
        args = [self.expr(a) for a in e.args[2:]]
        ret = VOID if is_void(e.dtype) or name == "llvm.prefetch" else llvm_type(e.dtype)
        return self._call_intrinsic(name, ret, args, overloaded=is_overloaded(ident),
                                    void_result=e.dtype)

    def _call_intrinsic(self, name, ret, args, overloaded=True, void_result=None):
        types = [a.type for a in args]
        if overloaded:
            key = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(str(t) for t in [ret] + types))
            symbol = f"{name}.{OVERLOAD_TAG}.{key}"
        else:
            symbol = name
        problem = _signature_problem(symbol, str(ir.FunctionType(ret, types)))
        if problem:
            raise BuildError(f"{name} is called with types it does not take: "
                             f"{ir.FunctionType(ret, types)} ({problem}); check the dtype and "
                             "the arguments of call_llvm_intrin")
        fn = self.ctx.declare(symbol, ret, types)
        value = self.b.call(fn, args)
        if ret == VOID and void_result is not None and not is_void(as_dtype(void_result)):
            return ir.Constant(llvm_type(as_dtype(void_result)), 0)  # TVM's int32 prefetch
        return value

    def intrin_call_llvm_intrin(self, e):
        return self._llvm_intrinsic(e)

    def intrin_call_llvm_pure_intrin(self, e):
        return self._llvm_intrinsic(e)

    def intrin_prefetch(self, e):
        """llvm.prefetch(address, rw, locality, cache type); the value is 0."""
        address = self.expr(e.args[0])
        flags = [self._int32(a) for a in e.args[1:]]
        return self._call_intrinsic("llvm.prefetch", VOID, [address] + flags,
                                    void_result=e.dtype)

    def _int32(self, a):
        value = a.value if isinstance(a, kir.IntImm) else a
        if not isinstance(value, int) or isinstance(value, bool):
            raise InternalError(f"llvm codegen: prefetch needs constant flags, got {a}")
        return ir.Constant(I32, value)

    def intrin_atomic_add(self, e):
        """`atomicrmw add` (fadd for floats) on the element at the address, sequentially
        consistent; the value is the element before the addition."""
        address, value = self.expr(e.args[0]), self.expr(e.args[1])
        if address.type != PTR:
            raise InternalError(f"llvm codegen: atomic_add needs an address, got {e.args[0]}")
        op = "fadd" if e.args[1].dtype.is_float else "add"
        return self.b.atomic_rmw(op, address, value, "seq_cst")

    def expr_Shuffle(self, e):
        """The lanes, inserted one by one (LLVM folds the inserts into shufflevectors)."""
        values = {}
        lanes = []
        for lane in range(e.dtype.lanes):
            vector, k = e.lane_source(lane)
            if id(vector) not in values:
                values[id(vector)] = self.expr(vector)
            value = values[id(vector)]
            if vector.dtype.lanes > 1:
                value = self.b.extract_element(value, ir.Constant(I32, k))
            lanes.append(value)
        if e.dtype.lanes == 1:
            return lanes[0]
        out = TextConstant(llvm_type(e.dtype), "poison")
        for lane, value in enumerate(lanes):
            out = self.b.insert_element(out, value, ir.Constant(I32, lane))
        return out
