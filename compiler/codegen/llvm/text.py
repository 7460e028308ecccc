"""Text for error messages without the C library: integers and dtype names are written by small
helper functions in LLVM IR, linked into a library only when its code calls them, so generated
code needs no `snprintf` (a bare-metal program has no printf family; memcpy/memset and libm are
all a kernel may take from the C library).

    ctx.declare(*HELPERS["__kiln_i64_to_str"])     # void (ptr buf, i64 v): decimal, NUL-ended
    ctx.declare(*HELPERS["__kiln_dtype_of"])       # void (ptr buf, i64 packed dtype): its name
    ctx.declare(*HELPERS["__kiln_raise"])          # void (ptr kind, ptr template, i32 n,
                                                   #       i64 v0, i64 v1, ptr ref): raises
    link_helpers(linked_module)                    # defines those the module calls

`__kiln_raise` keeps a failed check small at its call site (the argument checks of a packed
function are most of its code): the message is a constant template, one string holding its n
parts one after another, each ended by a NUL. A part that is one of the SLOT_BYTES stands for
a runtime slot: VALUE_SLOT (the next value in decimal), DTYPE_SLOT (the next value is a dtype
packed by make_packed_api.pack_dtype, written as its name), up to RAISE_VALUES of those, or
REF_SLOT (the string `ref`, a part many messages share, such as a function's signature). A
template is plain bytes, so a library holds no pointer per part and no load-time relocation for
it. It writes the slots, then calls TVMFFIErrorSetRaisedFromCStrParts(kind, parts, n).

`__kiln_check_tensor` (i1 (i32 type index, ptr DLTensor, i32 device id, ptr table, ptr name,
ptr device text, ptr signature)) is `tir.check_tensor_arg`: every check make_packed_api makes
of a tensor of static shape, against a table of int64 words (make_packed_api.
check_tensor_table), raising the same messages; one copy serves all of a library's tensors.

The helpers are `linkonce_odr hidden`, each in a COMDAT group of its name (ELF, COFF): one copy
per linked object, and one in a library of many objects.
"""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from microruntime.abi import DTYPE_CODE_NAMES, DataTypeCode, TypeIndex

from ...tir.transform.make_packed_api import CHECK_HEADER
from .types import I1, I32, I64, PTR, VOID

HELPERS = {
    "__kiln_i64_to_str": ("__kiln_i64_to_str", VOID, [PTR, I64]),
    "__kiln_dtype_of": ("__kiln_dtype_of", VOID, [PTR, I64]),
    "__kiln_raise": ("__kiln_raise", VOID, [PTR, PTR, I32, I64, I64, PTR]),
    "__kiln_check_tensor": ("__kiln_check_tensor", I1, [I32, PTR, I32, PTR, PTR, PTR, PTR]),
}
# The parts and runtime values a `__kiln_raise` template may have; its slots, and the one-byte
# parts that stand for them in a template.
RAISE_PARTS = 16
RAISE_VALUES = 2
VALUE_SLOT, DTYPE_SLOT, REF_SLOT = 0, 1, 2
SLOT_BYTES = {VALUE_SLOT: b"\x01", DTYPE_SLOT: b"\x02", REF_SLOT: b"\x03"}
# Names of the dtype codes as messages spell them ("dtype" for any other code).
DTYPE_PREFIX = DTYPE_CODE_NAMES


def _dtype_of_ir() -> str:
    """`__kiln_dtype_of(buf, packed)`: the name of a packed dtype through __kiln_dtype_name."""
    names = "".join(
        f'@__kiln_dtype.{c} = private unnamed_addr constant [{len(t) + 1} x i8] c"{t}\\00"\n'
        for c, t in [*((int(c), t) for c, t in DTYPE_PREFIX.items()), ("other", "dtype")])
    chain, base = [], "@__kiln_dtype.other"
    for i, code in enumerate(int(c) for c in DTYPE_PREFIX):
        chain.append(f"  %is{i} = icmp eq i64 %code, {code}\n"
                     f"  %base{i} = select i1 %is{i}, ptr @__kiln_dtype.{code}, ptr {base}\n")
        base = f"%base{i}"
    return names + f"""
define linkonce_odr hidden void @__kiln_dtype_of(ptr %buf, i64 %packed) nounwind noinline cold {{
entry:
  %code = and i64 %packed, 255
  %b = lshr i64 %packed, 8
  %b8 = and i64 %b, 255
  %bits = trunc i64 %b8 to i32
  %l = lshr i64 %packed, 16
  %l16 = and i64 %l, 65535
  %lanes = trunc i64 %l16 to i32
{"".join(chain)}  %is_bool = icmp eq i64 %code, {int(DataTypeCode.BOOL)}
  %is_8 = icmp eq i32 %bits, 8
  %plain_bool = and i1 %is_bool, %is_8
  call void @__kiln_dtype_name(ptr %buf, ptr {base}, i32 %bits, i32 %lanes, i1 %plain_bool)
  ret void
}}
"""


_IR = r"""
; Copies the NUL-terminated %src to %dst without the NUL; returns the end of the copy.
define linkonce_odr hidden ptr @__kiln_append_str(ptr %dst, ptr %src) nounwind noinline cold {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %body]
  %s = getelementptr inbounds i8, ptr %src, i64 %i
  %c = load i8, ptr %s, align 1
  %end = icmp eq i8 %c, 0
  br i1 %end, label %done, label %body
body:
  %d = getelementptr inbounds i8, ptr %dst, i64 %i
  store i8 %c, ptr %d, align 1
  %i1 = add i64 %i, 1
  br label %loop
done:
  %e = getelementptr inbounds i8, ptr %dst, i64 %i
  ret ptr %e
}

; Writes the decimal digits of %v at %dst (no NUL); returns the end.
define linkonce_odr hidden ptr @__kiln_append_u64(ptr %dst, i64 %v) nounwind noinline cold {
entry:
  %tmp = alloca [20 x i8], align 1
  br label %digits
digits:
  %n = phi i64 [0, %entry], [%n1, %digits]
  %u = phi i64 [%v, %entry], [%q, %digits]
  %q = udiv i64 %u, 10
  %r = urem i64 %u, 10
  %r8 = trunc i64 %r to i8
  %ch = add i8 %r8, 48
  %slot = getelementptr inbounds [20 x i8], ptr %tmp, i64 0, i64 %n
  store i8 %ch, ptr %slot, align 1
  %n1 = add i64 %n, 1
  %more = icmp ne i64 %q, 0
  br i1 %more, label %digits, label %copy
copy:
  %k = phi i64 [%n1, %digits], [%k1, %copy]
  %o = phi i64 [0, %digits], [%o1, %copy]
  %k1 = sub i64 %k, 1
  %src = getelementptr inbounds [20 x i8], ptr %tmp, i64 0, i64 %k1
  %c = load i8, ptr %src, align 1
  %d = getelementptr inbounds i8, ptr %dst, i64 %o
  store i8 %c, ptr %d, align 1
  %o1 = add i64 %o, 1
  %left = icmp ne i64 %k1, 0
  br i1 %left, label %copy, label %done
done:
  %e = getelementptr inbounds i8, ptr %dst, i64 %o1
  ret ptr %e
}

; The decimal text of the signed %v at %buf (at least 21 bytes), NUL-terminated.
define linkonce_odr hidden void @__kiln_i64_to_str(ptr %buf, i64 %v) nounwind noinline cold {
entry:
  %neg = icmp slt i64 %v, 0
  br i1 %neg, label %minus, label %digits
minus:
  store i8 45, ptr %buf, align 1
  %after = getelementptr inbounds i8, ptr %buf, i64 1
  br label %digits
digits:
  %start = phi ptr [%buf, %entry], [%after, %minus]
  %negv = sub i64 0, %v
  %mag = select i1 %neg, i64 %negv, i64 %v
  %e = call ptr @__kiln_append_u64(ptr %start, i64 %mag)
  store i8 0, ptr %e, align 1
  ret void
}

; A dtype's name at %buf (at least 32 bytes): %base ("float", "int", ...), then the bits
; unless %plain_bool, then "x<lanes>" when lanes != 1; NUL-terminated.
define linkonce_odr hidden void @__kiln_dtype_name(ptr %buf, ptr %base, i32 %bits, i32 %lanes,
                                                   i1 %plain_bool) nounwind noinline cold {
entry:
  %p = call ptr @__kiln_append_str(ptr %buf, ptr %base)
  br i1 %plain_bool, label %lanes_check, label %with_bits
with_bits:
  %b64 = zext i32 %bits to i64
  %p1 = call ptr @__kiln_append_u64(ptr %p, i64 %b64)
  br label %lanes_check
lanes_check:
  %q = phi ptr [%p, %entry], [%p1, %with_bits]
  %vector = icmp ne i32 %lanes, 1
  br i1 %vector, label %with_lanes, label %done
with_lanes:
  store i8 120, ptr %q, align 1
  %q1 = getelementptr inbounds i8, ptr %q, i64 1
  %l64 = zext i32 %lanes to i64
  %q2 = call ptr @__kiln_append_u64(ptr %q1, i64 %l64)
  br label %done
done:
  %e = phi ptr [%q, %lanes_check], [%q2, %with_lanes]
  store i8 0, ptr %e, align 1
  ret void
}
""" + _dtype_of_ir() + r"""
declare void @TVMFFIErrorSetRaisedFromCStrParts(ptr, ptr, i32)

; The byte after the NUL that ends the string at %s ("no-builtins": not made a strlen call).
define linkonce_odr hidden ptr @__kiln_skip_str(ptr %s) nounwind noinline cold "no-builtins" {
entry:
  br label %loop
loop:
  %p = phi ptr [%s, %entry], [%p1, %loop]
  %c = load i8, ptr %p, align 1
  %p1 = getelementptr inbounds i8, ptr %p, i64 1
  %end = icmp eq i8 %c, 0
  br i1 %end, label %done, label %loop
done:
  ret ptr %p1
}

; Raises %kind: the %n parts of %tmpl (see the module docstring), its VALUE_SLOT and
; DTYPE_SLOT parts written from %v0 then %v1, its REF_SLOT part being %ref.
define linkonce_odr hidden void @__kiln_raise(ptr %kind, ptr %tmpl, i32 %n, i64 %v0, i64 %v1,
                                              ptr %ref) nounwind noinline cold {
entry:
  %parts = alloca [RAISE_PARTS x ptr], align 8
  %bufs = alloca [RAISE_VALUES x [32 x i8]], align 8
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%i1, %next]
  %slot = phi i32 [0, %entry], [%slot1, %next]
  %cur = phi ptr [%tmpl, %entry], [%after, %next]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %done
body:
  %c0 = load i8, ptr %cur, align 1
  %c0m1 = add i8 %c0, -1
  %low = icmp ult i8 %c0m1, 3
  br i1 %low, label %marker_check, label %text
marker_check:
  %at1 = getelementptr inbounds i8, ptr %cur, i64 1
  %c1 = load i8, ptr %at1, align 1
  %single = icmp eq i8 %c1, 0
  br i1 %single, label %marker, label %text
marker:
  %is_ref = icmp eq i8 %c0, REF_BYTE
  br i1 %is_ref, label %next, label %value
value:
  %first = icmp eq i32 %slot, 0
  %v = select i1 %first, i64 %v0, i64 %v1
  %buf = getelementptr inbounds [RAISE_VALUES x [32 x i8]], ptr %bufs, i32 0, i32 %slot
  %is_dtype = icmp eq i8 %c0, DTYPE_BYTE
  br i1 %is_dtype, label %dtype, label %int
int:
  call void @__kiln_i64_to_str(ptr %buf, i64 %v)
  br label %written
dtype:
  call void @__kiln_dtype_of(ptr %buf, i64 %v)
  br label %written
written:
  %slot.w = add i32 %slot, 1
  br label %next
text:
  br label %next
next:
  %part = phi ptr [%cur, %text], [%buf, %written], [%ref, %marker]
  %slot1 = phi i32 [%slot, %text], [%slot.w, %written], [%slot, %marker]
  %to = getelementptr inbounds [RAISE_PARTS x ptr], ptr %parts, i32 0, i32 %i
  store ptr %part, ptr %to, align 8
  %i1 = add i32 %i, 1
  %after = call ptr @__kiln_skip_str(ptr %cur)
  br label %loop
done:
  call void @TVMFFIErrorSetRaisedFromCStrParts(ptr %kind, ptr %parts, i32 %n)
  ret void
}
""".replace("RAISE_PARTS", str(RAISE_PARTS)).replace("RAISE_VALUES", str(RAISE_VALUES)) \
    .replace("DTYPE_BYTE", str(SLOT_BYTES[DTYPE_SLOT][0])) \
    .replace("REF_BYTE", str(SLOT_BYTES[REF_SLOT][0]))


def _text_constants(texts) -> str:
    out = []
    for name, text in texts.items():
        data = text.encode() + b"\0"
        body = "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}"
                       for c in data)
        out.append(f'@.kc.{name} = private unnamed_addr constant [{len(data)} x i8] c"{body}"')
    return "\n".join(out) + "\n"


_MISMATCH_PARTS = ["mis", "%name", "%what", "%kpart", "%close", "onarg", "%abuf", "calling",
                   "%sig", "expected", "%ep", "%et", "butgot", "%gp", "%gt"]
_NULL_PARTS = ["%name", "isnull", "%abuf", "calling", "%sig", "tick"]


def _store_parts(parts, var: str) -> str:
    lines = []
    for i, p in enumerate(parts):
        v = p if p.startswith("%") else f"@.kc.{p}"
        lines.append(f"  %{var}{i} = getelementptr inbounds [{len(parts)} x ptr], ptr %{var}, "
                     f"i32 0, i32 {i}\n  store ptr {v}, ptr %{var}{i}, align 8\n")
    return "".join(lines)


# The ValueErrors of __kiln_check_tensor that compare two integers share one block: (block
# that fails, what, k or -1, expected's prefix, expected, got).
_VALUE_FAILURES = [("ndim_check", "ndim", "-1", "empty", "%ndim", "%nd"),
                   ("shape_body", "shape", "%k", "empty", "%want", "%got"),
                   ("stride_body", "strides", "%j", "compact", "%cs", "%st"),
                   ("offset_check", "offset", "-1", "empty", "%want_off", "%off"),
                   ("devid_cmp", "devid", "-1", "empty", "%want_id", "%id64")]


def _bad_value_block() -> str:
    def phi(name, ty, column, const=False):
        arms = ", ".join(f"[{'@.kc.' + f[column] if const else f[column]}, %{f[0]}]"
                         for f in _VALUE_FAILURES)
        return f"  %bv.{name} = phi {ty} {arms}\n"
    return ("bad_value:\n" + phi("what", "ptr", 1, True) + phi("k", "i64", 2) +
            phi("ep", "ptr", 3, True) + phi("want", "i64", 4) + phi("got", "i64", 5) +
            "  call void @__kiln_i64_to_str(ptr %ebuf, i64 %bv.want)\n"
            "  call void @__kiln_i64_to_str(ptr %gbuf, i64 %bv.got)\n"
            "  call void @__kiln_arg_mismatch(ptr @.kc.ValueError, ptr %name, ptr %bv.what,\n"
            "      i64 %bv.k, i64 %arg, ptr %sig, ptr %bv.ep, ptr %ebuf, ptr @.kc.empty,\n"
            "      ptr %gbuf)\n"
            "  ret i1 false\n")


_CHECK_IR = _text_constants({
    "mis": "Mismatched ", "empty": "", "close": "]", "onarg": " on argument #",
    "calling": " when calling:\n  `", "expected": "`,\n  expected ", "butgot": ", but got ",
    "type": "type", "Tensor": "Tensor", "typeindex": "type index ", "ndim": ".ndim",
    "dtype": ".dtype", "shape": ".shape[", "strides": ".strides[", "compact": "compact stride ",
    "offset": ".byte_offset", "devtype": ".device_type", "devid": ".device_id",
    "isnull": ".data is NULL on argument #", "tick": "`", "TypeError": "TypeError",
    "ValueError": "ValueError"}) + f"""
%__kiln_dltensor = type {{ ptr, {{ i32, i32 }}, i32, {{ i8, i8, i16 }}, ptr, ptr, i64 }}

; Raises %kind: "Mismatched <name><what>[<k>] on argument #<arg> when calling: `<sig>`,
; expected <ep><et>, but got <gp><gt>", a newline and two spaces before each backquote and
; "expected" (no "[<k>]" when %k < 0).
define linkonce_odr hidden void @__kiln_arg_mismatch(ptr %kind, ptr %name, ptr %what, i64 %k,
    i64 %arg, ptr %sig, ptr %ep, ptr %et, ptr %gp, ptr %gt) nounwind noinline cold {{
entry:
  %parts = alloca [{len(_MISMATCH_PARTS)} x ptr], align 8
  %kbuf = alloca [32 x i8], align 8
  %abuf = alloca [32 x i8], align 8
  call void @__kiln_i64_to_str(ptr %abuf, i64 %arg)
  %has_k = icmp sge i64 %k, 0
  br i1 %has_k, label %with_k, label %fill
with_k:
  call void @__kiln_i64_to_str(ptr %kbuf, i64 %k)
  br label %fill
fill:
  %kpart = phi ptr [@.kc.empty, %entry], [%kbuf, %with_k]
  %close = phi ptr [@.kc.empty, %entry], [@.kc.close, %with_k]
{_store_parts(_MISMATCH_PARTS, "parts")}  call void @TVMFFIErrorSetRaisedFromCStrParts(
      ptr %kind, ptr %parts, i32 {len(_MISMATCH_PARTS)})
  ret void
}}

; Raises ValueError "<name>.data is NULL on argument #<arg> when calling: `<sig>`" (a newline
; and two spaces before the backquote).
define linkonce_odr hidden void @__kiln_null_data(ptr %name, i64 %arg, ptr %sig)
    nounwind noinline cold {{
entry:
  %parts = alloca [{len(_NULL_PARTS)} x ptr], align 8
  %abuf = alloca [32 x i8], align 8
  call void @__kiln_i64_to_str(ptr %abuf, i64 %arg)
{_store_parts(_NULL_PARTS, "parts")}  call void @TVMFFIErrorSetRaisedFromCStrParts(
      ptr @.kc.ValueError, ptr %parts, i32 {len(_NULL_PARTS)})
  ret void
}}

; Whether the argument of type index %t is the tensor %d describes (the table, CHECK_HEADER);
; the device id equals %devid where flags & 1; data is not NULL unless flags & 2. Else the
; error is raised (make_packed_api's messages) and the result is false.
define linkonce_odr hidden i1 @__kiln_check_tensor(i32 %t, ptr %h, i32 %devid, ptr %d,
    ptr %name, ptr %devtext, ptr %sig) nounwind noinline {{
entry:
  %ebuf = alloca [32 x i8], align 8
  %gbuf = alloca [32 x i8], align 8
  %arg = load i64, ptr %d, align 8
  %ndim.p = getelementptr inbounds i64, ptr %d, i64 1
  %ndim = load i64, ptr %ndim.p, align 8
  %flags.p = getelementptr inbounds i64, ptr %d, i64 2
  %flags = load i64, ptr %flags.p, align 8
  %is_dl = icmp eq i32 %t, {int(TypeIndex.DLTENSOR_PTR)}
  %is_obj = icmp eq i32 %t, {int(TypeIndex.TENSOR)}
  %type_ok = or i1 %is_dl, %is_obj
  br i1 %type_ok, label %ndim_check, label %bad_type
bad_type:
  %t64 = sext i32 %t to i64
  call void @__kiln_i64_to_str(ptr %gbuf, i64 %t64)
  call void @__kiln_arg_mismatch(ptr @.kc.TypeError, ptr @.kc.empty, ptr @.kc.type, i64 -1,
      i64 %arg, ptr %sig, ptr @.kc.empty, ptr @.kc.Tensor, ptr @.kc.typeindex, ptr %gbuf)
  ret i1 false
ndim_check:
  %nd.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 2
  %nd32 = load i32, ptr %nd.p, align 4
  %nd = sext i32 %nd32 to i64
  %ndim_ok = icmp eq i64 %nd, %ndim
  br i1 %ndim_ok, label %dtype_check, label %bad_value
dtype_check:
  %want_dt.p = getelementptr inbounds i64, ptr %d, i64 3
  %want_dt = load i64, ptr %want_dt.p, align 8
  %code.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 3, i32 0
  %code8 = load i8, ptr %code.p, align 1
  %code = zext i8 %code8 to i64
  %bits.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 3, i32 1
  %bits8 = load i8, ptr %bits.p, align 1
  %bits = zext i8 %bits8 to i64
  %bits.s = shl i64 %bits, 8
  %lanes.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 3, i32 2
  %lanes16 = load i16, ptr %lanes.p, align 2
  %lanes = zext i16 %lanes16 to i64
  %lanes.s = shl i64 %lanes, 16
  %dt0 = or i64 %code, %bits.s
  %got_dt = or i64 %dt0, %lanes.s
  %dt_ok = icmp eq i64 %got_dt, %want_dt
  br i1 %dt_ok, label %shape_start, label %bad_dtype
bad_dtype:
  call void @__kiln_dtype_of(ptr %ebuf, i64 %want_dt)
  call void @__kiln_dtype_of(ptr %gbuf, i64 %got_dt)
  call void @__kiln_arg_mismatch(ptr @.kc.TypeError, ptr %name, ptr @.kc.dtype, i64 -1,
      i64 %arg, ptr %sig, ptr @.kc.empty, ptr %ebuf, ptr @.kc.empty, ptr %gbuf)
  ret i1 false
shape_start:
  %shape.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 4
  %shape = load ptr, ptr %shape.p, align 4
  %dims = getelementptr inbounds i64, ptr %d, i64 {CHECK_HEADER}
  br label %shape_loop
shape_loop:
  %k = phi i64 [0, %shape_start], [%k1, %shape_next]
  %k_more = icmp slt i64 %k, %ndim
  br i1 %k_more, label %shape_body, label %strides_start
shape_body:
  %want.p = getelementptr inbounds i64, ptr %dims, i64 %k
  %want = load i64, ptr %want.p, align 8
  %got.p = getelementptr inbounds i64, ptr %shape, i64 %k
  %got = load i64, ptr %got.p, align 4
  %dim_ok = icmp eq i64 %got, %want
  br i1 %dim_ok, label %shape_next, label %bad_value
shape_next:
  %k1 = add i64 %k, 1
  br label %shape_loop
strides_start:
  %strides.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 5
  %strides = load ptr, ptr %strides.p, align 4
  %compact = getelementptr inbounds i64, ptr %dims, i64 %ndim
  %no_strides = icmp eq ptr %strides, null
  br i1 %no_strides, label %offset_check, label %stride_loop
stride_loop:
  %j = phi i64 [0, %strides_start], [%j1, %stride_next]
  %j_more = icmp slt i64 %j, %ndim
  br i1 %j_more, label %stride_body, label %offset_check
stride_body:
  %cs.p = getelementptr inbounds i64, ptr %compact, i64 %j
  %cs = load i64, ptr %cs.p, align 8
  %st.p = getelementptr inbounds i64, ptr %strides, i64 %j
  %st = load i64, ptr %st.p, align 4
  %dj.p = getelementptr inbounds i64, ptr %dims, i64 %j
  %dj = load i64, ptr %dj.p, align 8
  %st_eq = icmp eq i64 %st, %cs
  %unit = icmp eq i64 %dj, 1
  %st_ok = or i1 %st_eq, %unit
  br i1 %st_ok, label %stride_next, label %bad_value
stride_next:
  %j1 = add i64 %j, 1
  br label %stride_loop
offset_check:
  %want_off.p = getelementptr inbounds i64, ptr %d, i64 5
  %want_off = load i64, ptr %want_off.p, align 8
  %off.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 6
  %off = load i64, ptr %off.p, align 4
  %off_ok = icmp eq i64 %off, %want_off
  br i1 %off_ok, label %devtype_check, label %bad_value
devtype_check:
  %want_dev.p = getelementptr inbounds i64, ptr %d, i64 4
  %want_dev = load i64, ptr %want_dev.p, align 8
  %dev.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 1, i32 0
  %dev32 = load i32, ptr %dev.p, align 4
  %dev = sext i32 %dev32 to i64
  %dev_ok = icmp eq i64 %dev, %want_dev
  br i1 %dev_ok, label %devid_check, label %bad_devtype
bad_devtype:
  call void @__kiln_i64_to_str(ptr %gbuf, i64 %dev)
  call void @__kiln_arg_mismatch(ptr @.kc.ValueError, ptr %name, ptr @.kc.devtype, i64 -1,
      i64 %arg, ptr %sig, ptr @.kc.empty, ptr %devtext, ptr @.kc.empty, ptr %gbuf)
  ret i1 false
devid_check:
  %chk = and i64 %flags, 1
  %do_chk = icmp ne i64 %chk, 0
  br i1 %do_chk, label %devid_cmp, label %data_check
devid_cmp:
  %id.p = getelementptr inbounds %__kiln_dltensor, ptr %h, i32 0, i32 1, i32 1
  %id = load i32, ptr %id.p, align 4
  %id_ok = icmp eq i32 %id, %devid
  %want_id = sext i32 %devid to i64
  %id64 = sext i32 %id to i64
  br i1 %id_ok, label %data_check, label %bad_value
{_bad_value_block()}data_check:
  %empty = and i64 %flags, 2
  %may_be_empty = icmp ne i64 %empty, 0
  br i1 %may_be_empty, label %ok, label %data_cmp
data_cmp:
  %data = load ptr, ptr %h, align 4
  %null = icmp eq ptr %data, null
  br i1 %null, label %bad_data, label %ok
bad_data:
  call void @__kiln_null_data(ptr %name, i64 %arg, ptr %sig)
  ret i1 false
ok:
  ret i1 true
}}
"""


def _declared(module: llvm.ModuleRef, name: str) -> bool:
    try:
        return module.get_function(name).is_declaration
    except NameError:
        return False


def _in_comdats(ir_text: str) -> str:
    """`ir_text` with each linkonce_odr function in a COMDAT group of its own name: a linker
    keeps one copy of the group, where a bare linkonce_odr (weak) definition resolves to one
    copy but leaves the code of every object's in the library."""
    names = []

    def grouped(m):
        names.append(m.group(2))
        return m.group(1) + "comdat {"

    text = re.sub(r"(define linkonce_odr hidden [^@]*@([\w.]+)\([^{]*?)\{", grouped, ir_text)
    return "".join(f"${n} = comdat any\n" for n in names) + text


def link_helpers(module: llvm.ModuleRef) -> None:
    """Links the helper definitions into `module` when it calls any of them."""
    if not any(_declared(module, name) for name in HELPERS):
        return
    text = _IR + _CHECK_IR
    if not any(os in module.triple for os in ("apple", "darwin")):   # Mach-O has no COMDAT
        text = _in_comdats(text)
    helpers = llvm.parse_assembly(text)
    helpers.triple, helpers.data_layout = module.triple, module.data_layout
    helpers.verify()
    module.link_in(helpers)
