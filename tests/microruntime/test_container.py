"""microruntime.container (tvm.runtime.container): ADT and tuple_object over Array objects,
String keeping its Str object through a function, ShapeTuple equal to lists and tuples, and
both through pickle."""
import pickle

import numpy as np
import pytest

import microruntime as mr
from microruntime import container


@pytest.fixture(scope="module")
def echo():
    mr.register_func("test.container_echo", lambda x: x, override=True)
    return mr.get_global_func("test.container_echo")


def test_adt_reads_its_fields_and_tag():
    a = mr.nd.array(np.arange(3, dtype="float32"))
    b = mr.nd.array(np.ones((2, 2), dtype="int32"))
    adt = container.ADT(3, [a, b])
    assert isinstance(adt, container.ADT) and isinstance(adt, mr.Array)
    assert adt.tag == 3 and len(adt) == 2
    np.testing.assert_array_equal(adt[0].numpy(), np.arange(3, dtype="float32"))
    np.testing.assert_array_equal(adt[-1].numpy(), np.ones((2, 2), dtype="int32"))
    assert [x.shape for x in adt[0:2]] == [(3,), (2, 2)]
    with pytest.raises(IndexError):
        adt[2]


def test_adt_tag_must_be_a_non_negative_int():
    for tag in (-1, 1.0, True, "0"):
        with pytest.raises(TypeError, match="ADT tag"):
            container.ADT(tag, [])


def test_tuple_object_crosses_a_function_as_an_array(echo):
    fields = [mr.nd.array(np.array(11, dtype="int64")), mr.nd.array(np.array(12, dtype="int64"))]
    tup = container.tuple_object(fields)
    assert tup.tag == 0 and len(tup) == 2
    out = echo(tup)
    assert [int(x.numpy()) for x in out] == [11, 12]
    assert len(container.tuple_object()) == 0


def test_string_is_the_same_object_after_a_round_trip(echo):
    s = mr.String("xyz")
    assert isinstance(s, str) and s.startswith("xy") and s + "1" == "xyz1"
    y = echo(s)
    assert isinstance(y, mr.String) and y == "xyz"
    assert s.__tvm_object__.same_as(y.__tvm_object__)
    z = pickle.loads(pickle.dumps(y))
    assert isinstance(z, mr.String) and z == s
    assert not z.__tvm_object__.same_as(s.__tvm_object__)


def test_plain_str_comes_back_as_a_string(echo):
    out = echo("ünï")
    assert isinstance(out, mr.String) and out == "ünï"


def test_shape_tuple_equals_lists_and_tuples():
    shape = [3, -2, 0, 7]
    st = container.ShapeTuple(shape)
    assert st == shape and st == tuple(shape) and st == container.ShapeTuple(shape)
    assert st != [3, -2, 0] and st != [3, -2, 0, 8] and not st == [3, -2, 0, 8]
    assert hash(st) == hash(tuple(shape))
    z = pickle.loads(pickle.dumps(st))
    assert isinstance(z, mr.ShapeTuple) and z == st
