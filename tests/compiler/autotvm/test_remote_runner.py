"""RemoteRunner: kernels built here, timed by a worker through the engine (only numpy and the
microruntime there); errors classified as for a local trial; the timing slot of a cluster
that declares one."""
import importlib.util
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import microruntime as mr
from compiler import autotvm, relay
from compiler.autotvm import measure as M
from compiler.autotvm.executors import (
    ExecutorError,
    InlineExecutor,
    dask_executor,
    timing_executor,
)
from compiler.autotvm.extract import extract_from_program
from compiler.autotvm.record import load_records
from compiler.autotvm.remote import RUNNER_SOURCE, RemoteRunner, build_payload
from compiler.autotvm.tuner import GridSearchTuner, RandomTuner
from compiler.relax.testing import models
from microruntime import graph_executor

FAST = autotvm.measure_option(number=2, repeat=2, min_repeat_ms=0)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _scale(faults=False, n=64):
    return autotvm.create("testing.scale", (n, "float32", faults), target="llvm")


def test_the_worker_side_needs_no_compiler(tmp_path):
    """The payload runs in a Python where importing the compiler fails."""
    (tmp_path / "compiler").mkdir()
    (tmp_path / "compiler" / "__init__.py").write_text(
        "raise ImportError('the worker must not import the compiler')\n")
    payload, _, _ = build_payload(_scale(), 3, FAST)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]))
    proc = subprocess.run([sys.executable, "-c", RUNNER_SOURCE, "-"], input=payload,
                          capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-500:]
    assert b'"costs"' in proc.stdout


def test_errors_are_classified_on_any_executor(tmp_path):
    task = _scale(faults=True)
    log = str(tmp_path / "t.jsonl")
    with ThreadPoolExecutor(2) as pool:
        runner = RemoteRunner(pool, build_executor=InlineExecutor())
        assert runner.run_executor is pool          # no cluster, no timing resource
        GridSearchTuner(task).tune(6, FAST, executor=runner, measure_default=False,
                                   callbacks=[autotvm.callback.log_to_file(log)])
        with pytest.raises(ExecutorError, match="trials only"):
            runner.submit(print, task, 0)
    by_fault = {}
    for r in load_records(log):
        by_fault.setdefault(r.config["fault"].val, []).append(r.result)
    assert all(r.error == M.CRASH and "SIG" in r.message for r in by_fault["crash"])
    assert all(r.error == M.WRONG_RESULT for r in by_fault["wrong"])
    assert all(r.ok and r.mean > 0 and r.build_s > 0 for r in by_fault["none"])
    bad = runner.submit(M.measure, task, {"tile": [-1, 3], "vectorize": False,
                                           "fault": "none"}).result()
    assert bad.error == M.BUILD_ERROR


def test_a_timing_slot_is_required_only_when_asked():
    class Client:
        def scheduler_info(self):
            return {"workers": {"w": {"nthreads": 1, "resources": {}}}}

    class DaskLike(InlineExecutor):
        _client = Client()
        _kwargs = {}

    ex = DaskLike()
    assert timing_executor(ex) is ex
    with pytest.raises(ExecutorError, match="--resources timing=1"):
        timing_executor(ex, required=True)


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask.distributed is not installed (pip install 'kiln[tune]')")
def test_conv_task_timed_on_dask_workers_and_applied(tmp_path):
    from distributed import LocalCluster

    model = models.depthwise_separable_block(batch=2, channels=8, size=8, filters=16)
    tasks = extract_from_program(model.mod, model.params, target="llvm")
    log = str(tmp_path / "remote.jsonl")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, resources={"timing": 1}) as cluster:
        ex = dask_executor(cluster)
        runner = RemoteRunner(ex, build_executor=InlineExecutor(), timing_slot=True)
        try:
            assert runner.run_executor._kwargs["resources"] == {"timing": 1}
            for task in tasks:
                RandomTuner(task, seed=2).tune(2, FAST, executor=runner,
                                               measure_default=False,
                                               callbacks=[autotvm.callback.log_to_file(log)])
        finally:
            runner.shutdown()
            ex.shutdown()
    records = list(load_records(log))
    assert len(records) == 4 and all(r.result.ok for r in records), \
        [r.result.message for r in records]
    with autotvm.apply_history_best(log) as ctx:
        lib = relay.build(model.mod, target="llvm", params=model.params)
    assert sorted(set(ctx.applied)) == sorted(t.key for t in tasks)
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    inputs = model.inputs(seed=6)
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), model.reference(inputs), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                    reason="ray is not installed (pip install 'kiln[tune]')")
def test_remote_runner_on_ray_holds_the_timing_resource():
    from compiler.autotvm.executors import RayExecutor

    ex = RayExecutor(num_cpus=2, timing_slot=True)
    try:
        runner = RemoteRunner(ex, build_executor=InlineExecutor(), timing_slot=True)
        assert runner.run_executor._options["resources"] == {"timing": 1}
        results = [runner.submit(M.measure, _scale(), i, FAST) for i in (1, 2)]
        assert all(f.result(timeout=300).ok for f in results), [f.result() for f in results]
    finally:
        ex.shutdown()
