"""The C-family printer: statements over the expression printer of printer_expr.py.

One mapping from IR statements to C-like text for every C dialect (host C now; CUDA, OpenCL and
Metal later override the hooks marked "dialect": parallel loops, error raising, allocation).
Statements print flat: a LetStmt / AssertStmt chain stays at one indentation level.
"""
from __future__ import annotations

from typing import Any, List

from ...ir.errors import UnsupportedOpError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.functor import post_order_visit
from ...tir.transform.lower_workspace import FREE_ON_ERROR
from .printer_expr import CExprPrinter, NotVectorForm, is_contiguous

# Past this many chunks a vector statement prints as a loop over its chunks, not straight-line
# (its chunks could not all stay in registers anyway: AVX2 has 16 vector registers).
MAX_STRAIGHT_CHUNKS = 16


class CFamilyPrinter(CExprPrinter):
    """Prints one function body; `print_body(stmt)` fills `self.lines`."""

    restrict = "restrict"

    # ---- entry -------------------------------------------------------------------------------
    def prepare(self, body: S.Stmt) -> None:
        """Records, for each handle Var used as buffer data, the element type it points to, so
        pointers are declared typed (`float* restrict A`) instead of `void*`."""
        seen: dict = {}

        def visit(node: Any) -> None:
            buffer = getattr(node, "buffer", None)
            if isinstance(node, (E.BufferLoad, S.BufferStore, S.Allocate)) and buffer is not None:
                key = id(buffer.data)
                storage = self.storage_type(buffer.dtype)
                if key not in seen:
                    seen[key] = (storage, buffer.dtype.element_of())
                elif seen[key] and seen[key][0] != storage:
                    seen[key] = None

        post_order_visit(body, visit)
        self.pointer_types = {k: v[1] for k, v in seen.items() if v}

    def print_body(self, body: S.Stmt) -> None:
        self.error_frees: List[str] = []  # frees of the workspaces live at this point
        self.prepare(body)
        self.stmt(body)

    def block(self, body: S.Stmt) -> None:
        self.level += 1
        self.stmt(body)
        self.level -= 1

    def stmt(self, s: S.Stmt) -> None:
        s = self.chain(s)
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise UnsupportedOpError(f"C codegen cannot print the statement {type(s).__name__}")
        method(s)

    def chain(self, s: S.Stmt) -> S.Stmt:
        """Prints the heads of a LetStmt / AssertStmt chain (long in packed prologues)
        iteratively, flat; returns the statement that ends it."""
        while isinstance(s, (S.LetStmt, S.AssertStmt)):
            if isinstance(s, S.LetStmt):
                self.let_head(s)
            else:
                self.assert_head(s)
            s = s.body
        return s

    # ---- statements --------------------------------------------------------------------------
    def stmt_SeqStmt(self, s: S.SeqStmt) -> None:
        for item in s.seq:
            self.stmt(item)

    def stmt_Evaluate(self, s: S.Evaluate) -> None:
        if isinstance(s.value, (E.IntImm, E.FloatImm)):
            return
        self.emit(f"{self.expr(s.value)};")

    def stmt_Return(self, s: S.Return) -> None:
        self.emit(f"return {self.expr(s.value)};")

    def stmt_AttrStmt(self, s: S.AttrStmt) -> None:
        if s.key != FREE_ON_ERROR:
            self.stmt(s.body)
            return
        self.error_frees.append(self.expr(s.value))
        try:
            self.stmt(s.body)
        finally:
            self.error_frees.pop()

    def emit_error_return(self, status: str = "-1") -> None:
        """Returns `status` (an error) from the function: first frees the workspaces live here,
        innermost first (see compiler/tir/transform/lower_workspace.py)."""
        for free in reversed(self.error_frees):
            self.emit(f"(void){free};")
        self.emit(f"return {status};")

    def let_head(self, s: S.LetStmt) -> None:
        var = s.var
        if var.dtype.lanes > 1:
            self.declare_vector(var, s.value)
        elif var.dtype.is_handle and id(var) in self.pointer_types:
            elem = self.storage_type(self.pointer_types[id(var)])
            qualifier = f" {self.restrict}" if self.is_restrict(var) else ""
            self.emit(f"{elem}*{qualifier} {self.name_of(var)} = "
                      f"({elem}*)({self.expr(s.value)});")
        else:
            self.emit(f"{self.value_type(var.dtype)} {self.name_of(var)} = {self.expr(s.value)};")

    def is_restrict(self, var: E.Var) -> bool:
        """Whether pointer `var` is declared `restrict`: it is the only way to the memory it
        points to (dialect; the base knows of no such pointer)."""
        return False

    def declare_vector(self, var: E.Var, value: E.PrimExpr) -> None:
        """A vector variable is an array of its lanes in both forms."""
        lanes = var.dtype.lanes
        name = self.name_of(var)
        self.emit(f"{self.value_type(var.dtype.element_of())} {name}[{lanes}];")
        self.vector_or_lanes(
            lanes, var.dtype,
            lambda vt: f"{vt}_store(&{name}[{self.lane}], {self.vexpr(value, vt)});",
            lambda: self.lane_loop(lanes, lambda: self.emit(
                f"{name}[{self.lane}] = {self.expr(value)};")))
        self.vector_vars.add(id(var))

    def vector_or_lanes(self, lanes: int, dtype, vector, lanes_form) -> None:
        """A vector statement of `lanes` lanes of `dtype`. Under `#if KILN_VECTOR_EXT`, one
        `vector(type)` statement per chunk (`self.lane` is the chunk's first lane; NotVectorForm
        when there is none), straight-line at constant offsets or, past MAX_STRAIGHT_CHUNKS, in
        a loop over the chunks; under `#else`, `lanes_form()` for compilers without vector
        extensions. Without a vector form, `lanes_form()` alone."""
        outer = (self.lane, self.vector_lanes)
        self.vector_lanes, loop, texts = lanes, None, []
        try:
            vt = self.vector_type(dtype)
            chunk = self.vector_chunk(dtype)
            if lanes // chunk > MAX_STRAIGHT_CHUNKS:
                loop = self.fresh("lane")
            for offset in [loop] if loop else range(0, lanes, chunk):
                self.lane = str(offset)
                texts.append(vector(vt))
        except NotVectorForm:
            texts = []
            if loop:
                self.taken.discard(loop)
        finally:
            self.lane, self.vector_lanes = outer
        if not texts:
            lanes_form()
            return
        self.lines.append("#if KILN_VECTOR_EXT")
        if loop:
            self.emit(f"for (int32_t {loop} = 0; {loop} < {lanes}; {loop} += {chunk}) {{")
            self.emit(self.indent_unit + texts[0])
            self.emit("}")
        else:
            for text in texts:
                self.emit(text)
        self.lines.append("#else")
        lanes_form()
        self.lines.append("#endif")

    def vector_store(self, s: S.BufferStore, vt: str) -> str:
        """One chunk of a store of a whole vector to contiguous elements, or NotVectorForm."""
        t = s.buffer.dtype
        if (len(s.indices) != 1 or not is_contiguous(s.indices[0]) or t.is_bool
                or (t.is_float and t.bits == 16)):
            raise NotVectorForm(str(s))
        value = self.vexpr(s.value, vt)
        return f"{vt}_store(&{self.element(s.buffer, s.indices)}, {value});"

    def lane_loop(self, lanes: int, body) -> None:
        outer, self.lane = self.lane, self.fresh("lane")
        self.emit(f"for (int32_t {self.lane} = 0; {self.lane} < {lanes}; ++{self.lane}) {{")
        self.level += 1
        body()
        self.level -= 1
        self.emit("}")
        self.lane = outer

    def assert_head(self, s: S.AssertStmt) -> None:
        self.emit(f"if (!{self.expr(s.condition)}) {{")
        self.level += 1
        if not s.message:  # the condition recorded the error (tir.check_tensor_arg)
            self.emit_error_return()
            self.level -= 1
            self.emit("}")
            return
        parts: List[str] = []
        for part in s.message:
            if isinstance(part, str):
                parts.append(self.expr(E.StringImm(part)))
            else:
                parts.append(self.message_part(part))
        self.emit(f"const char* kiln_parts[{len(parts)}] = {{{', '.join(parts)}}};")
        self.emit(self.raise_error(s.kind, "kiln_parts", len(parts)))
        self.emit_error_return()
        self.level -= 1
        self.emit("}")

    def message_part(self, part: E.PrimExpr) -> str:
        """A `const char*` for a non-literal message part; declares a scratch buffer."""
        buf = self.fresh("kiln_msg")
        if isinstance(part, E.Call) and part.op == "tir.dtype_name":
            self.helpers.add("dtype_name")
            self.emit(f"char {buf}[32];")
            code, bits, lanes = (self.expr(a) for a in part.args)
            return f"kiln_dtype_name({buf}, {code}, {bits}, {lanes})"
        if part.dtype.is_handle:
            return f"(const char*)({self.expr(part)})"
        self.helpers.add("i64_to_str")
        self.emit(f"char {buf}[24];")
        return f"kiln_i64_to_str({buf}, (int64_t)({self.expr(part)}))"

    def raise_error(self, kind: str, parts: str, n: int) -> str:
        """The statement that records an error of `kind` from message parts (dialect)."""
        return f"TVMFFIErrorSetRaisedFromCStrParts(\"{kind}\", {parts}, {n});"

    def stmt_BufferStore(self, s: S.BufferStore) -> None:
        lanes = max([s.value.dtype.lanes] + [i.dtype.lanes for i in s.indices])
        if lanes == 1:
            value = self.stored_value(s.buffer, self.expr(s.value))
            self.emit(f"{self.element(s.buffer, s.indices)} = {value};")
            return
        self.vector_or_lanes(lanes, s.value.dtype, lambda vt: self.vector_store(s, vt),
                             lambda: self.store_lanes(s, lanes))

    def store_lanes(self, s: S.BufferStore, lanes: int) -> None:
        """The lane form of a vector store: a loop over the lanes."""
        if self._reads_other_lanes(s):
            # Vector semantics read every lane before writing any: stage through a temporary.
            tmp = self.fresh("kiln_vec")
            self.emit(f"{self.value_type(s.value.dtype.element_of())} {tmp}[{lanes}];")
            self.lane_loop(lanes, lambda: self.emit(
                f"{tmp}[{self.lane}] = {self.expr(s.value)};"))
            self.lane_loop(lanes, lambda: self.emit(
                f"{self.element(s.buffer, s.indices)} = "
                f"{self.stored_value(s.buffer, f'{tmp}[{self.lane}]')};"))
            return
        self.lane_loop(lanes, lambda: self.emit(
            f"{self.element(s.buffer, s.indices)} = "
            f"{self.stored_value(s.buffer, self.expr(s.value))};"))

    def _reads_other_lanes(self, s: S.BufferStore) -> bool:
        """Whether the stored value loads the stored memory at other indices than the store
        (then lane-by-lane execution could read a lane already written)."""
        loads: List[E.BufferLoad] = []
        post_order_visit(s.value, lambda n: loads.append(n) if isinstance(n, E.BufferLoad)
                         and n.buffer.data is s.buffer.data else None)
        if not loads:
            return False
        outer, self.lane = self.lane, "l"
        try:
            target = [self.expr(i) for i in s.indices]
            return any([self.expr(i) for i in load.indices] != target for load in loads)
        finally:
            self.lane = outer

    def stmt_For(self, s: S.For) -> None:
        if s.kind == S.ForKind.PARALLEL:
            self.for_parallel(s)
            return
        if s.kind == S.ForKind.THREAD_BINDING:
            raise UnsupportedOpError(f"loop {s.loop_var.name} is bound to a GPU thread axis; "
                                     "the C host codegen cannot run it")
        if s.kind == S.ForKind.UNROLLED and isinstance(s.extent, E.IntImm):
            self.emit(f"#pragma GCC unroll {s.extent.value}")
        self.serial_loop(s.loop_var, s.min, s.extent, s.body)

    def serial_loop(self, var: E.Var, start, extent, body: S.Stmt) -> None:
        name = self.name_of(var)
        begin = self.expr(start)
        if isinstance(start, E.IntImm) and start.value == 0:
            end = self.expr(extent)
        else:
            end = f"({begin} + {self.expr(extent)})"
        self.emit(f"for ({self.value_type(var.dtype)} {name} = {begin}; {name} < {end}; "
                  f"++{name}) {{")
        self.block(body)
        self.emit("}")

    def for_parallel(self, s: S.For) -> None:
        """A parallel loop (dialect); the base prints it serially."""
        self.serial_loop(s.loop_var, s.min, s.extent, s.body)

    def stmt_IfThenElse(self, s: S.IfThenElse) -> None:
        self.emit(f"if ({self.expr(s.condition)}) {{")
        self.block(s.then_case)
        if s.else_case is not None:
            self.emit("} else {")
            self.block(s.else_case)
        self.emit("}")

    def stmt_While(self, s: S.While) -> None:
        self.emit(f"while ({self.expr(s.condition)}) {{")
        self.block(s.body)
        self.emit("}")

    def stmt_Allocate(self, s: S.Allocate) -> None:
        """A stack allocation (lower_workspace left only small constant ones) (dialect)."""
        buf = s.buffer
        size = None
        for extent in buf.shape:
            size = extent if size is None else size * extent
        count = self.expr(size) if size is not None else "1"
        self.pointer_types[id(buf.data)] = buf.dtype.element_of()
        self.emit(f"{self.storage_type(buf.dtype)} {self.name_of(buf.data)}[{count}];")
        self.stmt(s.body)
