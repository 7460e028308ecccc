"""The printer's text of a small function."""
from compiler.tir import (
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    PrimFunc,
    Var,
    const,
    decl_buffer,
    to_text,
)


def test_print_small_function():
    n = Var("n")
    A = decl_buffer((n,), "float32", "A")
    B = decl_buffer((n,), "float32", "B")
    i, i2 = Var("i"), Var("i")
    body = For(i, const(0), n, ForKind.SERIAL,
               IfThenElse(i < n - 1, BufferStore(B, A[i] + A[i + 1], (i,))))
    body2 = For(i2, const(1), const(4), ForKind.PARALLEL, BufferStore(B, const(0.0), (i2 // 2,)))
    from compiler.tir import seq
    f = PrimFunc((A.data, B.data), seq(body, body2), ((A.data, A), (B.data, B)),
                 {"global_symbol": "add"})
    assert to_text(f) == "\n".join([
        "def add(A: Buffer(float32, [n]), B: Buffer(float32, [n])):",
        "  for i in range(n):",
        "    if i < n - 1:",
        "      B[i] = A[i] + A[i + 1]",
        "  for i_1 in range(1, 5):  # parallel",
        "    B[i_1 // 2] = 0.0",
    ])
