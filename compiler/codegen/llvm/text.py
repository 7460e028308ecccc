"""Text for error messages without the C library: integers and dtype names are written by small
helper functions in LLVM IR, linked into a library only when its code calls them, so generated
code needs no `snprintf` (a bare-metal program has no printf family; memcpy/memset and libm are
all a kernel may take from the C library).

    ctx.declare(*HELPERS["__kiln_i64_to_str"])     # void (ptr buf, i64 v): decimal, NUL-ended
    ctx.declare(*HELPERS["__kiln_dtype_name"])     # void (ptr buf, ptr base, i32 bits,
                                                   #       i32 lanes, i1 plain_bool)
    link_helpers(linked_module)                    # defines those the module calls

The helpers are `linkonce_odr hidden`: one copy per linked object, merged across objects.
"""
from __future__ import annotations

import llvmlite.binding as llvm

from .types import I1, I32, I64, PTR, VOID

HELPERS = {
    "__kiln_i64_to_str": ("__kiln_i64_to_str", VOID, [PTR, I64]),
    "__kiln_dtype_name": ("__kiln_dtype_name", VOID, [PTR, PTR, I32, I32, I1]),
}

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
"""


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
