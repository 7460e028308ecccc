"""A model's dense kernels tuned end to end on a local process pool, on a Dask LocalCluster
and on a local Ray instance, then built by relay.build inside apply_history_best: the tuned
configs are applied and the results match numpy. Tasks absent from the log keep the
defaults."""
import importlib.util

import numpy as np
import pytest

import microruntime as mr
from compiler import autotvm, relay
from compiler.autotvm.executors import dask_executor, local_executor
from compiler.autotvm.extract import extract_from_program
from compiler.autotvm.record import load_records
from compiler.autotvm.tuner import GridSearchTuner, RandomTuner
from microruntime import graph_executor

FAST = autotvm.measure_option(number=2, repeat=2, min_repeat_ms=0)
TOL = dict(rtol=1e-4, atol=1e-5)


def _tune(tasks, executor, log, trials=3):
    """Tunes without measuring the defaults: every task's best is then a tuned config (a
    faster default would leave the library's schedule in place)."""
    for task in tasks:
        RandomTuner(task, seed=1).tune(trials, FAST, executor=executor, measure_default=False,
                                       callbacks=[autotvm.callback.log_to_file(log)])


def _build_and_check(model, log):
    with autotvm.apply_history_best(log) as ctx:
        lib = relay.build(model.mod, target="llvm", params=model.params)
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    inputs = model.inputs(seed=2)
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), model.reference(inputs), **TOL)
    return ctx


def test_tasks_of_a_model(tiny_mlp):
    tasks = extract_from_program(tiny_mlp.mod, tiny_mlp.params, target="llvm")
    # the dense layers' constant weights are transposed at compile time: matmuls by W.T
    assert [t.args for t in tasks] == [((2, 8), (8, 4), "float32", "float32"),
                                       ((2, 4), (4, 2), "float32", "float32")]
    # mr in {1, 2} x parallel in {True, False}: the other knobs have one value at this size
    assert [len(t.config_space) for t in tasks] == [4, 4]
    assert all(t.name == "matmul.x86" and t.flop > 0 for t in tasks)


def test_tuned_on_the_local_pool_and_applied(tiny_mlp, tmp_path):
    tasks = extract_from_program(tiny_mlp.mod, tiny_mlp.params, target="llvm")
    log = str(tmp_path / "tune.jsonl")
    with local_executor(2) as pool:
        _tune(tasks, pool, log)
    records = list(load_records(log))
    assert len(records) == 6 and all(r.result.ok for r in records)
    ctx = _build_and_check(tiny_mlp, log)
    assert sorted(ctx.applied) == sorted(t.key for t in tasks)


def test_tasks_not_in_the_log_or_slower_than_default_keep_the_default(tiny_mlp, tmp_path):
    first, second = extract_from_program(tiny_mlp.mod, tiny_mlp.params, target="llvm")
    log = str(tmp_path / "tune.jsonl")
    # a config of the first task that the default schedule does not use
    cfg = first.config_space.from_values({**first.config_space.get(0).values(),
                                          "parallel": False})
    slow, fast = autotvm.MeasureResult(costs=(2e-6,)), autotvm.MeasureResult(costs=(1e-6,))
    with open(log, "w") as f:
        f.write(autotvm.record.encode(first, cfg, fast) + "\n")
        f.write(autotvm.record.encode(first, first.fallback(), slow) + "\n")
    ctx = _build_and_check(tiny_mlp, log)
    assert ctx.applied == [first.key]     # the second task is not in the log
    with open(log, "a") as f:             # now the default of the first is the fastest
        f.write(autotvm.record.encode(first, first.fallback(), autotvm.MeasureResult(
            costs=(0.5e-6,))) + "\n")
    assert _build_and_check(tiny_mlp, log).applied == []


def _skip_without(module: str):
    return pytest.mark.skipif(importlib.util.find_spec(module) is None,
                              reason=f"{module} is not installed (pip install 'kiln[tune]')")


@_skip_without("distributed")
def test_tuned_on_a_dask_local_cluster(tiny_mlp, tmp_path):
    from distributed import LocalCluster

    tasks = extract_from_program(tiny_mlp.mod, tiny_mlp.params, target="llvm")
    log = str(tmp_path / "tune.jsonl")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        ex = dask_executor(cluster)
        try:
            _tune(tasks[:1], ex, log, trials=4)
        finally:
            ex.shutdown()
    records = list(load_records(log))
    assert len(records) == 4 and all(r.result.ok for r in records)
    assert _build_and_check(tiny_mlp, log).applied == [tasks[0].key]


@_skip_without("ray")
def test_tuned_on_a_local_ray_instance(tiny_mlp, tmp_path):
    from compiler.autotvm.executors import RayExecutor

    tasks = extract_from_program(tiny_mlp.mod, tiny_mlp.params, target="llvm")
    log = str(tmp_path / "tune.jsonl")
    ex = RayExecutor(num_cpus=2)
    try:
        GridSearchTuner(tasks[1]).tune(3, FAST, executor=ex, measure_default=False,
                                       callbacks=[autotvm.callback.log_to_file(log)])
    finally:
        ex.shutdown()
    records = list(load_records(log))
    assert [r.config.index for r in records] and len(records) == 3
    assert all(r.result.ok for r in records)
    assert _build_and_check(tiny_mlp, log).applied == [tasks[1].key]
