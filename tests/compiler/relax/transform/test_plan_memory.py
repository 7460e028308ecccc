"""plan_memory: slots are shared only between values whose lifetimes don't overlap."""
from compiler.relax.backend.graph.plan_memory import Step, plan_memory


def _live_ranges(steps, outputs):
    first, last = {}, {}
    for i, s in enumerate(steps):
        for v in s.writes:
            first.setdefault(v, i)
            last.setdefault(v, i)
        for v in s.reads:
            last[v] = i
    for v in outputs:
        last[v] = len(steps)
    return first, last


def _check_no_overlap(steps, plan, outputs):
    first, last = _live_ranges(steps, outputs)
    values = list(first)
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            if plan.storage_id[a] == plan.storage_id[b]:
                # one must die strictly before the other is written (no in-place reuse)
                assert last[a] < first[b] or last[b] < first[a], (a, b)


def test_chain_reuses_two_slots():
    steps = [Step(["x"], ["a"]), Step(["a"], ["b"]), Step(["b"], ["c"]), Step(["c"], ["d"])]
    sizes = {"x": 64, "a": 100, "b": 100, "c": 80, "d": 40}
    plan = plan_memory(steps, sizes, pinned=["x"], outputs=["d"])
    _check_no_overlap(steps, plan, ["d"])
    inner = {plan.storage_id[v] for v in "abc"}
    assert len(inner) == 2
    assert plan.storage_id["x"] not in inner
    # d is written after b's last read: it takes b's slot; two 100-byte slots in all
    assert plan.total_bytes == 64 + 100 + 100


def test_slot_grows_to_its_largest_user():
    steps = [Step(["x"], ["a"]), Step(["a"], ["b"]), Step(["b"], ["c"])]
    sizes = {"x": 4, "a": 10, "b": 10, "c": 30}
    plan = plan_memory(steps, sizes, pinned=["x"], outputs=["c"])
    _check_no_overlap(steps, plan, ["c"])
    assert plan.storage_id["c"] == plan.storage_id["a"]
    assert plan.slot_bytes[plan.storage_id["c"]] == 30


def test_outputs_and_pinned_values_are_never_shared():
    steps = [Step(["x", "w"], ["a"]), Step(["a"], ["out1"]), Step(["out1"], ["b"]),
             Step(["b"], ["out2"])]
    sizes = dict(x=8, w=8, a=8, out1=8, b=8, out2=8)
    plan = plan_memory(steps, sizes, pinned=["x", "w"], outputs=["out1", "out2"])
    _check_no_overlap(steps, plan, ["out1", "out2"])
    for v in ("x", "w", "out1", "out2"):
        assert [k for k, s in plan.storage_id.items() if s == plan.storage_id[v]] == [v]


def test_two_readers_keep_a_value_alive():
    steps = [Step(["x"], ["a"]), Step(["a"], ["b"]), Step(["b"], ["c"]), Step(["a", "c"], ["d"])]
    sizes = dict(x=8, a=8, b=8, c=8, d=8)
    plan = plan_memory(steps, sizes, pinned=["x"], outputs=["d"])
    _check_no_overlap(steps, plan, ["d"])
    assert plan.storage_id["a"] not in (plan.storage_id["b"], plan.storage_id["c"])
