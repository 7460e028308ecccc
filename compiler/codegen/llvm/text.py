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
packed by `pack_dtype`, written as its name), up to RAISE_VALUES of those, or REF_SLOT (the
string `ref`, a part many messages share, such as a function's signature). A template is
plain bytes, so a library holds no pointer per part and no load-time relocation for it. It
writes the slots, then calls TVMFFIErrorSetRaisedFromCStrParts(kind, parts, n).

The helpers are `linkonce_odr hidden`: one copy per linked object, merged across objects.
"""
from __future__ import annotations

import llvmlite.binding as llvm

from microruntime.abi import DataTypeCode

from .types import I32, I64, PTR, VOID

HELPERS = {
    "__kiln_i64_to_str": ("__kiln_i64_to_str", VOID, [PTR, I64]),
    "__kiln_dtype_of": ("__kiln_dtype_of", VOID, [PTR, I64]),
    "__kiln_raise": ("__kiln_raise", VOID, [PTR, PTR, I32, I64, I64, PTR]),
}
# The parts and runtime values a `__kiln_raise` template may have; its slots, and the one-byte
# parts that stand for them in a template.
RAISE_PARTS = 16
RAISE_VALUES = 2
VALUE_SLOT, DTYPE_SLOT, REF_SLOT = 0, 1, 2
SLOT_BYTES = {VALUE_SLOT: b"\x01", DTYPE_SLOT: b"\x02", REF_SLOT: b"\x03"}
# Names of the dtype codes as messages spell them ("dtype" for any other code).
DTYPE_PREFIX = {DataTypeCode.INT: "int", DataTypeCode.UINT: "uint", DataTypeCode.FLOAT: "float",
                DataTypeCode.OPAQUE_HANDLE: "handle", DataTypeCode.BFLOAT: "bfloat",
                DataTypeCode.COMPLEX: "complex", DataTypeCode.BOOL: "bool"}


def pack_dtype(code: int, bits: int, lanes: int) -> int:
    """A dtype as one integer for DTYPE_SLOT (and `__kiln_dtype_of`)."""
    return code | bits << 8 | lanes << 16


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


def _declared(module: llvm.ModuleRef, name: str) -> bool:
    try:
        return module.get_function(name).is_declaration
    except NameError:
        return False


def link_helpers(module: llvm.ModuleRef) -> None:
    """Links the helper definitions into `module` when it calls any of them."""
    if not any(_declared(module, name) for name in HELPERS):
        return
    helpers = llvm.parse_assembly(_IR)
    helpers.triple, helpers.data_layout = module.triple, module.data_layout
    helpers.verify()
    module.link_in(helpers)
