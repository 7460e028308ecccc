"""tir.ir_builder, as TVM's `tvm.tir.ir_builder` (tests/python/unittest/test_tir_ir_builder.py):
the statements it builds, then te.extern bodies written with it, lowered, built on both host
targets, run and compared with numpy (and with the reference interpreter of the loop IR)."""
import numpy as np
import pytest

import compiler
import microruntime
from compiler import te, tir
from compiler.ir import IRModule
from compiler.ir.errors import IRError
from compiler.target import Target
from compiler.tir import interpreter
from compiler.tir.transform.split_host_device import split_host_device


# ---- the statements built -------------------------------------------------------------------
def test_for_nests_allocate_loop_and_inner_loop():
    ib = tir.ir_builder.create()
    n = te.size_var("n")
    A = ib.allocate("float32", n, name="A", scope="global")
    with ib.for_range(0, n, name="i") as i:
        A[i] = A[i] + 1
        with ib.for_range(0, 10, name="j") as j:
            A[j] = A[j] + 2
    body = ib.get()
    assert isinstance(body, tir.Allocate) and body.buffer.shape == (n,)
    loop = body.body
    assert isinstance(loop, tir.For) and loop.loop_var is i and loop.extent is n
    assert loop.kind == tir.ForKind.SERIAL
    assert isinstance(loop.body, tir.SeqStmt) and isinstance(loop.body.seq[1], tir.For)
    store = loop.body.seq[0]
    assert isinstance(store, tir.BufferStore) and store.buffer is A.buffer
    assert store.indices[0] is i and store.value.dtype == "float32"


def test_if_else_and_default_loop_names():
    ib = tir.ir_builder.create()
    n = te.size_var("n")
    A = ib.allocate("float32", (n,), name="A")
    with ib.for_range(0, n) as i:
        with ib.if_scope(i % 2 == 0):
            A[i] = A[i] + 1
        with ib.else_scope():
            A[0] = A[i] + 2
        with ib.for_range(0, 2) as j:
            A[j] = 0.0
    assert (i.name, j.name) == ("i", "j")
    loop = ib.get().body
    branch = loop.body.seq[0]
    assert isinstance(branch, tir.IfThenElse) and isinstance(branch.condition, tir.EQ)
    assert branch.then_case.indices[0] is i
    assert branch.else_case.indices[0].value == 0


def test_let_scope_attr_and_new_scope_wrap_the_rest_of_their_scope():
    ib = tir.ir_builder.create()
    x = ib.allocate("int32", (4,), name="x", scope="local")
    with ib.new_scope():
        ib.scope_attr(x.buffer.data, "pragma_hint", 1)
        v = ib.let("v", x[1] * 2)
        x[0] = v
    x[2] = 3
    body = ib.get()
    assert isinstance(body, tir.Allocate) and body.buffer.scope == "local"
    first, second = body.body.seq
    assert isinstance(first, tir.AttrStmt) and first.key == "pragma_hint"
    assert isinstance(first.body, tir.LetStmt) and first.body.var is v
    assert isinstance(first.body.body, tir.BufferStore)
    assert isinstance(second, tir.BufferStore) and second.value.value == 3


def test_emit_wraps_a_call_in_evaluate():
    ib = tir.ir_builder.create()
    buf = tir.decl_buffer((4,), "float32", "B")
    ib.emit(tir.call_packed("kiln_test.f", buf))
    body = ib.get()
    assert isinstance(body, tir.Evaluate) and body.value.op == "tir.call_packed"


def test_for_range_from_a_nonzero_begin_is_a_loop_from_zero():
    ib = tir.ir_builder.create()
    A = ib.allocate("int32", (10,), name="A")
    with ib.for_range(3, 8, name="k") as k:
        A[k] = k
    loop = ib.get().body
    assert loop.min.value == 0 and loop.extent.value == 5
    store = loop.body
    assert isinstance(store.indices[0], tir.Add) and store.indices[0].a is k


def test_linear_index_into_a_2d_buffer_unravels_it():
    B = tir.decl_buffer((3, 5), "float32", "B")
    ib = tir.ir_builder.create()
    b = ib.buffer_ptr(B)
    load = b[7]
    assert load.buffer is B and len(load.indices) == 2
    from compiler.arith import simplify
    assert [int(simplify(i)) for i in load.indices] == [1, 2]


def test_vector_content_type_loads_and_stores_ramps():
    ib = tir.ir_builder.create()
    v = ib.allocate("float32x4", (8,), name="v", scope="local")
    v[1] = v[0] + v[2]
    store = ib.get().body
    assert store.buffer.shape[0].value == 32 and store.buffer.dtype == "float32"
    assert isinstance(store.indices[0], tir.Ramp) and store.indices[0].lanes == 4
    assert store.value.dtype == "float32x4"


@pytest.mark.parametrize("make, phrase", [
    (lambda ib: ib.for_range(0, 4, kind="bogus"), "kind 'bogus' is unknown"),
    (lambda ib: ib.else_scope(), "else_scope must follow an if_scope"),
    (lambda ib: ib.buffer_ptr(np.zeros(3)), "buffer_ptr takes a Buffer"),
    (lambda ib: ib.emit(3.5j), "ir_builder.emit takes a statement"),
    (lambda ib: ib.scope_attr(te.var("x"), "thread_extent", 4), "needs a thread IterVar"),
])
def test_mistakes_raise_ir_error(make, phrase):
    with pytest.raises(IRError, match=phrase):
        make(tir.ir_builder.create())


def test_store_of_another_dtype_and_wrong_index_count_are_errors():
    ib = tir.ir_builder.create()
    a = ib.allocate("float32", (2, 3), name="a")
    with pytest.raises(IRError, match="store of a int32 value into buffer 'a' of float32"):
        a[0] = te.var("n")
    with pytest.raises(IRError, match="has 2 dimensions but is indexed with 3 indices"):
        a[0, 1, 2] = 1.0
    k = ib.allocate("int32", (2,), name="k")
    with pytest.raises(IRError, match="store of a float32 value into buffer 'k' of int32"):
        k[0] = 0.5
    k[1] = 7  # a Python int takes the buffer's type, as does an int into a float buffer
    a[1, 2] = 0


def test_get_inside_an_open_scope_is_an_error():
    ib = tir.ir_builder.create()
    with pytest.raises(IRError, match="inside an open scope"):
        with ib.for_range(0, 3):
            ib.get()


def test_thread_extent_makes_a_thread_binding_loop():
    ib = tir.ir_builder.create()
    tx = te.thread_axis("threadIdx.x")
    ib.scope_attr(tx, "thread_extent", 32)
    a = ib.allocate("float32", (32,), name="a", scope="shared")
    a[tx.var] = 1.0
    loop = ib.get()
    assert isinstance(loop, tir.For) and loop.kind == tir.ForKind.THREAD_BINDING
    assert loop.thread_binding is tx and loop.loop_var is tx.var and loop.extent.value == 32


# ---- te.extern bodies built and run ---------------------------------------------------------
def _run(f, *arrays):
    nds = [microruntime.nd.array(a) for a in arrays]
    f(*nds)
    return [x.numpy() for x in nds]


def _check_interpreter(s, args, arrays, expected, index=-1):
    """The lowered function run by the reference interpreter gives `expected` too."""
    func = compiler.lower(s, args, name="main")["main"]
    arrays = [a.copy() for a in arrays]
    interpreter.run(func, *arrays)
    np.testing.assert_allclose(arrays[index], expected, rtol=1e-5, atol=1e-5)


def test_extern_vector_add(target):
    n = 1024
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")

    def vector_add(A, B, C):
        ib = tir.ir_builder.create()
        a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
        with ib.for_range(0, A.shape[0], name="i") as i:
            c[i] = a[i] + b[i]
        return ib.get()

    C = te.extern(A.shape, [A, B], lambda ins, outs: vector_add(ins[0], ins[1], outs[0]),
                  name="vector_add", dtype="float32")
    s = te.create_schedule(C.op)
    f = compiler.build(s, [A, B, C], target=target)
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    *_, c = _run(f, a, b, np.zeros(n, "float32"))
    np.testing.assert_allclose(c, a + b)


def test_while_vectorize(target):
    n, num_iter = 64, 10

    def while_ir(A, B, C):
        ib = tir.ir_builder.create()
        n = C.shape[0]
        A, B, C = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
        i = ib.allocate("int32", (1,), name="i", scope="local")
        i[0] = 0
        with ib.for_range(0, n) as j:
            C[j] = 0.0
        with ib.while_loop(i[0] < num_iter):
            with ib.for_range(0, n, kind="vectorize") as j:
                C[j] += A[j] + B[j]
            i[0] += 1
        return ib.get()

    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.extern((n,), [A, B], lambda ins, outs: while_ir(ins[0], ins[1], outs[0]),
                  name="while_vectorize", dtype="float32")
    s = te.create_schedule(C.op)
    f = compiler.build(s, [A, B, C], target=target)
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    *_, c = _run(f, a, b, np.zeros(n, "float32"))
    np.testing.assert_allclose(c, num_iter * (a + b), rtol=1e-5, atol=1e-5)
    _check_interpreter(s, [A, B, C], [a, b, np.zeros(n, "float32")], num_iter * (a + b))


def _collatz_steps(n):
    steps = 0
    while n > 1:
        n = 3 * n + 1 if n % 2 == 1 else n // 2
        steps += 1
    return steps


def test_while_collatz_in_a_parallel_loop(target):
    def collatz(ib, n, C):
        i = ib.allocate("int32", (1,), name="i", scope="local")
        a = ib.allocate("int32", (1,), name="a", scope="local")
        i[0] = 0
        a[0] = n
        with ib.while_loop(a[0] > 1):
            with ib.if_scope(a[0] % 2 == 1):
                a[0] = 3 * a[0] + 1
            with ib.else_scope():
                a[0] = a[0] // 2
            i[0] += 1
        C[n] = i[0]

    def collatz_ir(C):
        ib = tir.ir_builder.create()
        n = C.shape[0]
        C = ib.buffer_ptr(C)
        with ib.for_range(0, n, name="i", kind="parallel") as i:
            collatz(ib, i, C)
        return ib.get()

    n = 30
    C = te.extern((n,), [], lambda ins, outs: collatz_ir(outs[0]), name="collatz",
                  dtype="int32")
    s = te.create_schedule(C.op)
    f = compiler.build(s, [C], target=target)
    c, = _run(f, np.zeros(n, "int32"))
    ref = np.array([_collatz_steps(i) for i in range(n)])
    np.testing.assert_array_equal(c, ref)
    _check_interpreter(s, [C], [np.zeros(n, "int32")], ref)


def test_while_mandel_2d_output(target):
    n, t = 16, 300
    shape = (n * 2, n)
    c_re, c_im = -0.8, float(np.cos(t)) * 0.2

    def mandel_ref():
        pixels = np.zeros(shape)
        for i in range(shape[0]):
            for j in range(shape[1]):
                z = np.array([i / n - 1, j / n - 0.5]) * 2
                iterations = 0
                while np.linalg.norm(z) < 20 and iterations < 50:
                    z = np.array([z[0] ** 2 - z[1] ** 2 + c_re, z[1] * z[0] * 2 + c_im])
                    iterations += 1
                pixels[i, j] = 1 - iterations * 0.02
        return pixels

    def mandel(ib, i, j, pixels):
        z = ib.allocate("float32", (2,), name="z", scope="local")
        tmp = ib.allocate("float32", (1,), name="tmp", scope="local")
        iterations = ib.allocate("int32", (1,), name="iterations", scope="local")
        z[0] = (i / float(n) - 1) * 2
        z[1] = (j / float(n) - 0.5) * 2
        iterations[0] = 0

        def norm(z):
            return te.sqrt(z[0] * z[0] + z[1] * z[1])

        with ib.while_loop(te.all(norm(z) < 20, iterations[0] < 50)):
            tmp[0] = z[0]
            z[0] = z[0] * z[0] - z[1] * z[1] + c_re
            z[1] = z[1] * tmp[0] * 2 + c_im
            iterations[0] += 1
        pixels[i, j] = 1 - iterations[0] * 0.02

    def mandel_ir(C):
        ib = tir.ir_builder.create()
        ny, nx = C.shape
        C = ib.buffer_ptr(C)
        with ib.for_range(0, ny, name="i", kind="parallel") as i:
            with ib.for_range(0, nx, name="j") as j:
                mandel(ib, i, j, C)
        return ib.get()

    C = te.extern(shape, [], lambda ins, outs: mandel_ir(outs[0]), name="mandel_ir",
                  dtype="float32")
    s = te.create_schedule(C.op)
    f = compiler.build(s, [C], target=target)
    c, = _run(f, np.zeros(shape, "float32"))
    np.testing.assert_allclose(c, mandel_ref(), rtol=1e-5, atol=1e-5)


def test_while_binary_search(target):
    def binary_search(ib, n, i, Aptr, Bptr, Cptr):
        lo = ib.allocate("int32", (1,), name="lo", scope="local")
        hi = ib.allocate("int32", (1,), name="hi", scope="local")
        lo[0] = 0
        hi[0] = n
        v = Bptr[i]
        with ib.while_loop(lo[0] < hi[0]):
            mid = lo[0] + (hi[0] - lo[0]) // 2
            with ib.if_scope(Aptr[mid] < v):
                lo[0] = mid + 1
            with ib.else_scope():
                hi[0] = mid
        Cptr[i] = lo[0]

    def searchsorted_ir(A, B, C, n):
        ib = tir.ir_builder.create()
        Aptr, Bptr, Cptr = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
        with ib.for_range(0, n, name="i", kind="parallel") as i:
            binary_search(ib, n, i, Aptr, Bptr, Cptr)
        return ib.get()

    n = 1024
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.extern(A.shape, [A, B], lambda ins, outs: searchsorted_ir(ins[0], ins[1], outs[0], n),
                  name="searchsorted_ir", dtype="int32")
    s = te.create_schedule(C.op)
    f = compiler.build(s, [A, B, C], target=target)
    a = np.sort(np.random.rand(n).astype("float32"))
    b = np.random.rand(n).astype("float32")
    *_, c = _run(f, a, b, np.zeros(n, "int32"))
    np.testing.assert_array_equal(c, np.searchsorted(a, b))


def test_let_and_unrolled_loop_with_nonzero_begin(target):
    n = 12

    def body(A, B):
        ib = tir.ir_builder.create()
        a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
        with ib.for_range(0, n // 4, name="o") as o:
            base = ib.let("base", o * 4)
            with ib.for_range(1, 5, name="k", kind="unroll") as k:
                b[base + k - 1] = a[base + k - 1] * k.astype("float32")
        return ib.get()

    A = te.placeholder((n,), name="A")
    B = te.extern((n,), [A], lambda ins, outs: body(ins[0], outs[0]), name="B")
    s = te.create_schedule(B.op)
    f = compiler.build(s, [A, B], target=target)
    a = np.random.rand(n).astype("float32")
    _, b = _run(f, a, np.zeros(n, "float32"))
    np.testing.assert_allclose(b, a * np.tile(np.arange(1, 5, dtype="float32"), n // 4))


def test_extern_body_reads_a_2d_input_through_a_linear_index_and_a_view(target):
    A = te.placeholder((4, 6), name="A")
    P = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name="P")

    def body(P, C):
        ib = tir.ir_builder.create()
        p, c = ib.buffer_ptr(P), ib.buffer_ptr(C)
        pv = ib.buffer_ptr(P, shape=(3, 8))
        with ib.for_range(0, 24, name="i") as i:
            c[i] = p[i] + pv[i // 8, i % 8]
        return ib.get()

    C = te.extern((24,), [P], lambda ins, outs: body(ins[0], outs[0]), name="C")
    s = te.create_schedule(C.op)
    f = compiler.build(s, [A, C], target=target)
    a = np.random.rand(4, 6).astype("float32")
    _, c = _run(f, a, np.zeros(24, "float32"))
    np.testing.assert_allclose(c, 4 * a.reshape(-1), rtol=1e-6)


def test_gpu_style_body_splits_into_a_kernel_that_computes_the_sum():
    """TVM's test_gpu body: thread_extent scopes become thread-bound loops; the host/device
    split makes them a kernel, which the interpreter runs over the whole grid."""
    n = te.size_var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")

    def device_ir(A, B, C):
        n = A.shape[0]
        max_threads = 32
        ib = tir.ir_builder.create()
        bx = te.thread_axis("blockIdx.x")
        tx = te.thread_axis("threadIdx.x")
        ib.scope_attr(bx, "thread_extent", (n + max_threads - 1) // max_threads)
        ib.scope_attr(tx, "thread_extent", max_threads)
        idx = bx.var * max_threads + tx.var
        Aptr, Bptr, Cptr = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
        with ib.if_scope(ib.likely(idx < n)):
            Cptr[idx] = Aptr[idx] + Bptr[idx]
        return ib.get()

    C = te.extern(A.shape, [A, B], lambda ins, outs: device_ir(ins[0], ins[1], outs[0]),
                  name="vector_add", dtype="float32")
    s = te.create_schedule(C.op)
    mod = compiler.lower(s, [A, B, C], name="vadd")
    cuda = Target("cuda", host="llvm")
    split = split_host_device(IRModule({g: f.with_attr("target", cuda) for g, f in mod.items()}))
    kernel = split["vadd_kernel"]
    assert kernel.attrs["calling_conv"] == "device_kernel"
    size = 100
    a, b = np.random.rand(size).astype("float32"), np.random.rand(size).astype("float32")
    arrays = {"A": a, "B": b, "vector_add": np.zeros(size, "float32"), "n": size}
    interpreter.run(kernel, *[arrays[p.name] for p in kernel.params])
    np.testing.assert_allclose(arrays["vector_add"], a + b)
