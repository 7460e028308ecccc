"""The runtime's containers under the names classic TVM code imports from
`tvm.runtime.container`: String, ShapeTuple, ADT and tuple_object.

An ADT (algebraic data type value) is a tag and a list of fields. Its fields live in an Array
object, which is what crosses a function call: a tuple (tag 0) is passed as that Array, the way
the Relax VM and compiled functions take tuples. The tag is kept on the Python side only.
"""
from .object import ShapeTuple, String
from .object_generic import Array, convert, make_array


class ADT(Array):
    """An algebraic data type value: `tag` and a sequence of fields (runtime values), read as
    an Array is (len, index, slices, iteration)."""

    __slots__ = ("tag",)

    def __init__(self, tag, fields):
        super().__init__(None)
        if isinstance(tag, bool) or not isinstance(tag, int) or tag < 0:
            raise TypeError(f"an ADT tag is a non-negative int, not {tag!r}")
        array = make_array([convert(f) for f in fields])
        self._handle, array._handle = array._handle, None  # the reference moves into this object
        self.tag = tag

    def __repr__(self):
        return f"ADT(tag={self.tag}, fields={list(self)!r})"


def tuple_object(fields=None):
    """A tuple of runtime values: an ADT of tag 0."""
    return ADT(0, list(fields or ()))


__all__ = ["ADT", "ShapeTuple", "String", "tuple_object"]
