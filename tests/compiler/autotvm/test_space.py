"""Search spaces: knobs, the numbering of points, applying a point, the fallback."""
import pytest

from compiler import te
from compiler.autotvm.space import ConfigSpace, FallbackConfigEntity, SpaceError, SplitEntity
from compiler.te.schedule_ops import schedule_to_primfunc
from compiler.tir.functor import IRVisitor


def _space():
    cfg = ConfigSpace()
    cfg.define_split("tile", 12, num_outputs=3)
    cfg.define_knob("unroll", [0, 4, 8])
    cfg.define_reorder("order", 3, [[0, 1, 2], [2, 1, 0]])
    return cfg


def test_split_factors_and_power2():
    cfg = ConfigSpace()
    cfg.define_split("a", 12, num_outputs=2)
    cfg.define_split("b", 12, policy="power2", num_outputs=2)
    cfg.define_split("c", 12, num_outputs=3, max_factor=4)
    assert [e.size for e in cfg.knobs["a"].entities] == [(-1, d) for d in (1, 2, 3, 4, 6, 12)]
    assert [e.size[1] for e in cfg.knobs["b"].entities] == [1, 2, 4, 8]
    for e in cfg.knobs["c"].entities:     # both inner factors <= 4 and their product | 12
        assert max(e.size[1:]) <= 4 and 12 % (e.size[1] * e.size[2]) == 0
    assert (-1, 3, 4) in [e.size for e in cfg.knobs["c"].entities]


def test_points_round_trip_through_index_and_values():
    cfg = _space()
    n_tile = len(cfg.knobs["tile"])
    assert len(cfg) == n_tile * 3 * 2
    seen = set()
    for i, point in enumerate(cfg):
        assert point.index == i
        assert cfg.from_values(point.values()).index == i
        seen.add(tuple(map(str, point.values().values())))
    assert len(seen) == len(cfg)
    last = cfg.get(len(cfg) - 1)     # the first knob varies slowest
    assert last["tile"] == cfg.knobs["tile"].entities[-1] and last["unroll"].val == 8
    assert last["order"].perm == (2, 1, 0)
    with pytest.raises(SpaceError, match="outside the space"):
        cfg.get(len(cfg))
    with pytest.raises(SpaceError, match="no value"):
        cfg.from_values({**last.values(), "unroll": 5})


def _loop_extents(s, args):
    extents = []

    class V(IRVisitor):
        def visit_For(self, loop):
            extents.append(loop.extent.value)
            self.generic_visit(loop)

    V().visit(schedule_to_primfunc(s, args, "f", None).body)
    return extents


def test_split_and_reorder_apply_to_a_stage():
    a = te.placeholder((12, 8), name="A")
    b = te.compute((12, 8), lambda i, j: a[i, j] + 1, name="B")
    s = te.create_schedule(b.op)
    axes = SplitEntity((-1, 2, 3)).apply(s, b, b.op.axis[0])
    assert len(axes) == 3
    assert _loop_extents(s, [a, b]) == [2, 2, 3, 8]
    cfg = _space()
    point = cfg.get(len(cfg) - 1)
    assert point["order"].apply(s, b, axes) == axes[::-1]
    assert _loop_extents(s, [a, b]) == [3, 2, 2, 8]


def test_fallback_reads_defaults_and_space_reads_first_values():
    fb = FallbackConfigEntity()
    fb.define_split("tile", 12, num_outputs=3)
    fb.define_knob("unroll", [0, 4, 8], default=4)
    fb.define_reorder("order", 3, [[2, 1, 0]])
    assert fb.is_fallback and fb["tile"].size == (-1, 1, 1) and fb["unroll"].val == 4
    assert fb["order"].perm == (0, 1, 2)
    cfg = _space()
    assert cfg["unroll"].val == 0 and cfg["order"].perm == (0, 1, 2)


def test_mistakes_are_errors():
    cfg = ConfigSpace()
    cfg.define_knob("k", [1, 2])
    with pytest.raises(SpaceError, match="defined twice"):
        cfg.define_knob("k", [3])
    with pytest.raises(SpaceError, match="not a permutation"):
        cfg.define_reorder("r", 2, [[0, 0]])
    with pytest.raises(SpaceError, match="policy"):
        cfg.define_split("s", 8, policy="odd")
    with pytest.raises(SpaceError, match="no knob"):
        cfg.get(0)["missing"]
