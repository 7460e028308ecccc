import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import microruntime as mr
from microruntime import nd
from microruntime._loader import ffi, lib
from microruntime.base import last_error
from microruntime.convert import DLTENSOR_PTR, fill_any, take_any
from microruntime.ndarray import NDArrayView


@pytest.fixture(scope="module")
def echo():
    mr.register_func("test.echo", lambda *args: args[0] if len(args) == 1 else list(args),
                     override=True)
    return mr.get_global_func("test.echo")


@pytest.mark.parametrize("value", [
    0, 1, -7, 2**62, -(2**63), 1.5, -0.0, float("inf"), True, False, None, "", "hi",
    "a longer string with ünïcödé", b"", b"\x00\x01bytes\xff", mr.DataType("float16x4"),
    mr.DataType("bool"), mr.cpu(0), mr.cuda(3), mr.ShapeTuple([2, 3, 4]), mr.ShapeTuple([]),
])
def test_scalar_round_trips(echo, value):
    out = echo(value)
    if type(value) is str:  # a str comes back as a String (a str holding its object)
        assert isinstance(out, mr.String)
    else:
        assert type(out) is type(value) or (isinstance(value, mr.ShapeTuple) and
                                             isinstance(out, mr.ShapeTuple))
    assert out == value


def test_string_and_container_round_trips(echo):
    assert echo(mr.String("abc")) == "abc"
    assert echo([1, 2.5, "x", [True, None]]) == [1, 2.5, "x", [True, None]]
    assert echo((1, 2)) == [1, 2]
    assert echo([]) == []
    assert echo(1, "a", 2.0) == [1, "a", 2.0]
    assert echo(np.int32(5)) == 5 and echo(np.float32(0.5)) == 0.5 and echo(np.bool_(1)) is True


def test_ndarray_and_numpy_arguments(echo):
    a = nd.array(np.arange(4, dtype="float32"))
    out = echo(a)
    assert isinstance(out, mr.NDArray) and out.same_as(a)
    out = echo(np.arange(3, dtype="int8"))
    assert isinstance(out, mr.NDArray) and out.dtype == "int8"
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2])
    out = echo([a, a])
    assert all(x.same_as(a) for x in out)


def test_functions_and_modules_cross(echo):
    f = echo(lambda x: x + 1)
    assert isinstance(f, mr.PackedFunc) and f(41) == 42
    g = mr.get_global_func("test.echo")
    assert echo(g)(7) == 7


def test_callbacks_calling_each_other_through_c():
    @mr.register_func("test.square", override=True)
    def square(x):
        return x * x

    @mr.register_func("test.sum_of_squares", override=True)
    def sum_of_squares(*xs):
        sq = mr.get_global_func("test.square")
        return sum(sq(x) for x in xs)

    assert square(3) == 9  # the decorator returns the Python function
    assert mr.get_global_func("test.sum_of_squares")(1, 2, 3) == 14
    assert mr.get_global_func("test.sum_of_squares")(0.5) == 0.25

    def apply(f, x):
        return f(x)

    apply_c = mr.convert(apply)
    assert apply_c(lambda v: v * 10, 4) == 40
    assert apply_c(mr.get_global_func("test.square"), 5) == 25


def test_ndarray_mutation_in_callback():
    def fill(t, value):
        assert isinstance(t, mr.NDArray)
        t.copyfrom(np.full(t.shape, value, dtype=t.dtype.numpy_dtype()))

    f = mr.convert(fill)
    a = nd.empty((3,), "float32")
    f(a, 2.5)
    np.testing.assert_array_equal(a.numpy(), [2.5, 2.5, 2.5])
    b = np.zeros(5, "int32")
    f(b, 3)  # a numpy argument: the result lands in it whether zero-copy or copied
    np.testing.assert_array_equal(b, 3)


def test_register_forms_and_registry():
    @mr.register_func
    def kiln_test_decorated(x):
        return x - 1

    assert mr.get_global_func("kiln_test_decorated")(1) == 0
    mr.register_func("test.plain", lambda: "plain", override=True)
    assert mr.get_global_func("test.plain")() == "plain"
    assert "test.plain" in mr.list_global_func_names()
    with pytest.raises(Exception, match="test.plain"):
        mr.register_func("test.plain", lambda: 1)
    mr.register_func("test.plain", lambda: "again", override=True)
    assert mr.get_global_func("test.plain")() == "again"
    assert mr.get_global_func("test.no_such_function", allow_missing=True) is None
    with pytest.raises(ValueError, match="test.no_such_function"):
        mr.get_global_func("test.no_such_function")
    mr.remove_global_func("test.plain")
    assert mr.get_global_func("test.plain", allow_missing=True) is None


class CustomError(Exception):
    pass


@pytest.mark.parametrize("exc", [ValueError("bad value"), TypeError("bad type"),
                                 IndexError("out"), KeyError("k"), AttributeError("attr"),
                                 RuntimeError("rt"), ZeroDivisionError("div"),
                                 CustomError("mine")])
def test_python_exceptions_cross_c(exc):
    def raiser():
        raise exc

    f = mr.convert(raiser)
    with pytest.raises(type(exc)) as info:
        f()
    assert info.value is exc

    # through two levels of C: Python -> C -> Python -> C -> Python
    outer = mr.convert(lambda g: g())
    with pytest.raises(type(exc)):
        outer(f)


class TwoArgError(Exception):
    def __init__(self, text, code):
        super().__init__(text, code)


@pytest.mark.parametrize("exc", [CustomError("x" * 5000), ValueError("é" * 3000),
                                 TwoArgError("y" * 4096, 7), KeyError("z" * 9000),
                                 CustomError("before\0after" + "w" * 5000),
                                 type("E" * 80, (Exception,), {})("long kind")])
def test_long_python_exceptions_keep_their_identity(exc):
    """The runtime keeps 4 KB of a message (and 63 bytes of a kind): a longer one still comes
    back as the very exception raised, not a truncated copy of another type."""
    def raiser():
        raise exc

    f = mr.convert(raiser)
    with pytest.raises(BaseException) as info:
        f()
    assert info.value is exc
    with pytest.raises(BaseException) as info:
        mr.convert(lambda g: g())(f)
    assert type(info.value) is type(exc)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=6000), st.sampled_from([ValueError, CustomError, TwoArgError]))
def test_python_exceptions_of_any_message_cross_c(text, cls):
    exc = cls(text, 1) if cls is TwoArgError else cls(text)

    def raiser():
        raise exc

    with pytest.raises(BaseException) as info:
        mr.convert(raiser)()
    assert info.value is exc


def test_exception_kind_reconstructed_from_message():
    def raiser():
        raise KeyError("missing key")

    def catcher():
        try:
            mr.convert(raiser)()
        except KeyError as e:
            raise ValueError(f"wrapped: {e}") from e

    with pytest.raises(ValueError, match="wrapped: 'missing key'"):
        mr.convert(catcher)()


def _call_from_c(func, args=None, num_args=0):
    """Calls `func` the way C code does: (status, result slot); the error stays recorded."""
    result = ffi.new("TVMFFIAny*")
    return lib.TVMFFIFunctionCall(func._handle, args or ffi.NULL, num_args, result), result


@pytest.mark.parametrize("ret", ["\ud800", ["ok", "\ud800"]])
def test_callback_failing_after_writing_result_leaves_none(ret):
    status, result = _call_from_c(mr.convert(lambda: ret))
    assert status == -1
    assert result.type_index == 0 and result.v_int64 == 0
    assert isinstance(last_error(True), UnicodeEncodeError)


def test_callback_returning_tensor_view_leaves_none():
    a = nd.array(np.arange(3, dtype="float32"))
    args = ffi.new("TVMFFIAny*")
    fill_any(args, NDArrayView(a._dl), [])
    status, result = _call_from_c(mr.convert(lambda x: x), args, 1)
    assert status == -1 and result.type_index == 0
    with pytest.raises(TypeError, match="tensor view cannot be returned"):
        raise last_error(True)


def test_stale_python_exception_not_reraised_for_a_later_error():
    stale = ValueError("same message")

    def raiser():
        raise stale

    f = mr.convert(raiser)
    assert _call_from_c(f)[0] == -1
    lib.mr_error_clear()  # a C caller handles the error and goes on
    lib.TVMFFIErrorSetRaisedFromCStr(b"ValueError", b"same message")  # a new, unrelated one
    fresh = last_error(True)
    assert isinstance(fresh, ValueError) and str(fresh) == "same message"
    assert fresh is not stale
    # The very occurrence still comes back as itself.
    assert _call_from_c(f)[0] == -1
    assert last_error(True) is stale


def test_dltensor_result_is_copied_into_an_owned_ndarray():
    expected = np.arange(6, dtype="float32").reshape(2, 3)
    src = nd.array(expected)
    slot = ffi.new("TVMFFIAny*")
    slot.type_index = DLTENSOR_PTR
    slot.v_ptr = src._dl
    out = take_any(slot)
    assert slot.type_index == 0
    assert type(out) is mr.NDArray and out._handle is not None
    src.copyfrom(np.zeros((2, 3), dtype="float32"))
    del src
    np.testing.assert_array_equal(out.numpy(), expected)
    slot.type_index = DLTENSOR_PTR
    slot.v_ptr = ffi.NULL
    with pytest.raises(TypeError, match="NULL DLTensor"):
        take_any(slot)


@pytest.mark.parametrize("make", [
    lambda: np.broadcast_to(np.float32(1), (4,)),
    lambda: np.frombuffer(b"\0" * 16, dtype="float32"),
    lambda: np.arange(8, dtype="int8")[::2].view(),
])
def test_read_only_numpy_arguments_are_refused(echo, make):
    """A function may write any tensor argument; a read-only array's writes would be lost."""
    arr = make()
    arr.flags.writeable = False
    with pytest.raises(BufferError, match="read-only numpy array.*nd.array"):
        echo(arr)
    out = echo(mr.nd.array(arr))  # an explicit copy is fine
    np.testing.assert_array_equal(out.numpy(), arr)
    assert echo(arr.copy()).shape == arr.shape


def test_bad_arguments():
    f = mr.convert(lambda *a: None)
    with pytest.raises(TypeError, match="cannot pass a value of type object"):
        f(object())
    with pytest.raises(OverflowError):
        f(2**64)
    with pytest.raises(TypeError, match="cannot pass a value of type object"):
        f({"a": object()})  # a dict is a Map: its values must be passable too
    assert f() is None


def test_many_arguments_and_reentrancy(echo):
    count = mr.convert(lambda *a: len(a))
    assert count(*range(100)) == 100
    assert count() == 0
    nested = mr.convert(lambda n: 0 if n == 0 else 1 + nested_c(n - 1))
    nested_c = nested
    assert nested(20) == 20


def test_threads_share_a_function():
    add = mr.convert(lambda a, b: a + b)
    errors = []

    def worker(k):
        try:
            for i in range(300):
                assert add(i, k) == i + k
        except BaseException as e:  # noqa: B036
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_convert_and_objects():
    arr = mr.convert(["a", "b", "c"])
    assert isinstance(arr, mr.Array) and len(arr) == 3 and arr[1] == "b" and arr[-1] == "c"
    assert arr == ["a", "b", "c"] and list(arr) == ["a", "b", "c"]
    # numbers become IR constants where a compiler registered node._const, else stay numbers
    assert [int(x) for x in mr.convert([1, 2, 3])] == [1, 2, 3]
    with pytest.raises(IndexError):
        arr[3]
    assert mr.convert_to_object("s") == "s" and isinstance(mr.convert("s"), mr.String)
    assert isinstance(mr.convert(lambda: 1), mr.PackedFunc)

    class Gen(mr.ObjectGeneric):
        def asobject(self):
            return mr.convert(["seven"])

    assert mr.convert(Gen()) == ["seven"]
    assert mr.convert(lambda x: x)(Gen()) == ["seven"]
    c = mr.const(3)
    assert c.dtype == "int32" and c.numpy() == 3
    assert mr.const(2.0).dtype == "float32" and mr.const(True).dtype == "bool"
    assert mr.const(1, "int8").dtype == "int8" and mr.const(2**40).dtype == "int64"


def test_objects_alive_at_interpreter_exit_leave_quietly():
    import subprocess
    import sys

    script = ("import microruntime as mr\n"
              "f = mr.convert(lambda *a: 0)\n"
              "g = mr.get_global_func('ffi.SystemLib')\n"
              "m = mr.system_lib()\n"
              "a = mr.nd.array([1.0])\n"
              "fs = [mr.convert(lambda i=i: i) for i in range(20)]\n")
    for _ in range(3):  # module teardown order varies from run to run
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stderr == ""
