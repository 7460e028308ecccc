"""`python -m compiler tune` (a log, resumed) and `compile --tuning-log` (its configs applied,
results as ONNX Runtime's)."""
import importlib.util
import json
import re

import numpy as np
import onnx
import pytest

import microruntime as mr
from compiler.cli import main
from compiler.frontend.testing import onnx_models
from microruntime import graph_executor


@pytest.fixture(scope="module")
def mlp_onnx(tmp_path_factory):
    m = onnx_models.mlp(batch=2)
    path = str(tmp_path_factory.mktemp("tune_cli") / "mlp.onnx")
    onnx.save(m.model, path)
    return m, path


def _tasks(log):
    rows = [json.loads(line) for line in open(log)]
    return [json.dumps(r["task"]) for r in rows], rows


def test_tune_resume_and_compile_with_the_log(mlp_onnx, tmp_path, capsys):
    import onnxruntime as ort

    m, path = mlp_onnx
    log = str(tmp_path / "tune.jsonl")
    argv = ["tune", path, "--log", log, "--workers", "2", "--tuner", "random",
            "--input-shape", "x:2,32", "--number", "2", "--repeat", "2"]
    assert main(argv + ["--trials", "2"]) == 0
    out = capsys.readouterr()
    assert "2 tasks" in out.out and "trials 2/2" in out.err and "GFLOP/s" in out.err
    tasks, _ = _tasks(log)
    assert len(tasks) == 4 and len(set(tasks)) == 2
    assert main(argv + ["--trials", "3", "-q"]) == 0      # resumes: one more per task
    out = capsys.readouterr()
    assert "(2 from the log)" in out.out and out.err == ""
    tasks, rows = _tasks(log)
    assert sorted(tasks.count(t) for t in set(tasks)) == [3, 3]
    for t in set(tasks):            # no config measured twice
        configs = [json.dumps(r["config"]["knobs"]) for r in rows if json.dumps(r["task"]) == t]
        assert len(set(configs)) == 3

    # another log, its cost model trained first on the records of the other task in `log`
    if importlib.util.find_spec("xgboost") is not None:
        fresh = str(tmp_path / "fresh.jsonl")
        assert main(argv[:2] + ["--log", fresh] + argv[4:6] + argv[8:] +
                    ["--tuner", "xgb", "--trials", "1", "-q", "--transfer-log", log]) == 0
        out = capsys.readouterr().out
        assert out.count("2 records of other tasks transferred") == 2, out   # not defaults
        assert len(_tasks(fresh)[0]) == 2

    so = str(tmp_path / "mlp.so")
    assert main(["compile", path, "-o", so, "--input-shape", "x:2,32", "--tuning-log", log,
                 "-q"]) == 0
    # a task whose default measured fastest keeps it: 0 to 2 anchors tuned
    assert re.search(r"tuned:    [012] kernel anchors from .*\(2 tuned in the log\)",
                     capsys.readouterr().out)
    gm = graph_executor.GraphModule(mr.load_module(so)["default"](mr.cpu()))
    x = m.inputs(seed=3)["x"]
    gm.set_input("x", x)
    gm.run()
    want, = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-5, atol=1e-6)


def test_tune_mistakes(mlp_onnx, tmp_path, capsys):
    _, path = mlp_onnx
    log = str(tmp_path / "t.jsonl")
    assert main(["compile", path, "-o", str(tmp_path / "m.so"), "--input-shape", "x:2,32",
                 "--tuning-log", str(tmp_path / "none.jsonl")]) == 1
    assert "error: --tuning-log" in capsys.readouterr().err
    assert main(["tune", path, "--log", log, "--input-shape", "x:2,32", "--transfer-log",
                 str(tmp_path / "none.jsonl")]) == 1
    assert "--transfer-log" in capsys.readouterr().err
    assert main(["tune", path, "--log", log, "--trials", "0"]) == 1
    assert "--trials 0" in capsys.readouterr().err
    assert main(["tune", path, "--log", log]) == 0      # symbolic batch: nothing to tune
    assert "--input-shape" in capsys.readouterr().out
    assert main(["tune", path, "--log", log, "--input-shape", "x:2,32", "--remote"]) == 1
    assert "--remote times on the workers of a cluster" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["tune", path, "--log", log, "--dask", "a", "--ray", "b"])
    assert exit_.value.code == 2
