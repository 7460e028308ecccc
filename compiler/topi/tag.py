"""Operation tags, as TVM's `topi.tag`: schedules and the fusion pass dispatch on them.

Classes of tags, from most to least restrictive: ELEMWISE (out[i] reads in[i]) < BROADCAST
(reads in[f(i)] with broadcast dimensions) < INJECTIVE (any one-to-one-or-fewer index map: pad,
transpose, take...). A tag may carry a suffix after a comma ("injective,pad"): its class is the
part before it.
"""
ELEMWISE = "elemwise"
BROADCAST = "broadcast"
INJECTIVE = "injective"
COMM_REDUCE = "comm_reduce"
COMM_REDUCE_IDX = "comm_reduce_idx"


def _base(tag: str) -> str:
    return tag.split(",", 1)[0]


def is_broadcast(tag: str) -> bool:
    """An elementwise or broadcast tag (fusable into the loop of the op it follows)."""
    return _base(tag) in (ELEMWISE, BROADCAST)


def is_injective(tag: str) -> bool:
    """An elementwise, broadcast or injective tag (a candidate for compute_inline)."""
    return _base(tag) in (ELEMWISE, BROADCAST, INJECTIVE)
