"""Measuring configs (errors classified, never raised), tuning logs (round trip, resume),
and the searches on the test template, all in this process (InlineExecutor): the kernels
still run in child processes."""
import importlib.util
import json
import random

import numpy as np
import pytest

from compiler import autotvm
from compiler.autotvm import measure as M
from compiler.autotvm.executors import InlineExecutor
from compiler.autotvm.record import Record, decode, encode, load_records
from compiler.autotvm.tuner import GridSearchTuner, RandomTuner, XGBTuner
from compiler.autotvm.tuner.sa import simulated_annealing

FAST = autotvm.measure_option(number=2, repeat=2, min_repeat_ms=0)


def _scale(faults=False, n=64):
    return autotvm.create("testing.scale", (n, "float32", faults), target="llvm")


def test_errors_are_classified_and_tuning_goes_on(tmp_path):
    task = _scale(faults=True)
    log = str(tmp_path / "t.jsonl")
    tuner = GridSearchTuner(task)     # the first 6 points: tile 1 x {none, wrong, crash} x vec
    tuner.tune(6, FAST, executor=InlineExecutor(), measure_default=False,
               callbacks=[autotvm.callback.log_to_file(log)])
    by_fault = {}
    for r in load_records(log):
        by_fault.setdefault(r.config["fault"].val, []).append(r.result)
    assert sorted(by_fault) == ["crash", "none", "wrong"]
    assert all(r.error == M.CRASH and "SIG" in r.message for r in by_fault["crash"])
    assert all(r.error == M.WRONG_RESULT for r in by_fault["wrong"])
    assert all(r.ok and r.mean > 0 for r in by_fault["none"])
    assert tuner.trials == 6 and tuner.best_config["fault"].val == "none"


def test_build_error_and_timeout_are_results():
    task = _scale()
    bad = M.measure(task, {"tile": [-1, 3], "vectorize": False})   # not a point of the space
    assert bad.error == M.BUILD_ERROR and "tile" in bad.message
    slow = M.measure(task, 0, autotvm.measure_option(timeout_s=0.01))
    assert slow.error == M.TIMEOUT


def test_log_round_trip_and_bad_lines(tmp_path):
    task = _scale()
    cfg = task.config_space.get(7)
    res = M.MeasureResult(costs=(1e-6, 2e-6), build_s=0.5, run_s=0.25, timestamp=123.0)
    line = encode(task, cfg, res)
    row = json.loads(line)
    assert row["task"] == ["testing.scale", 64, "float32", False] and row["error"] is None
    back = decode(line)
    assert back.task == task and back.config == cfg and back.result == res
    assert back.gflops == pytest.approx(task.flop / 1.5e-6 / 1e9)
    path = tmp_path / "log.jsonl"
    path.write_text(line + "\n{not json\n" + line[: len(line) // 2] + "\n")
    with pytest.warns(UserWarning) as caught:
        rows = list(load_records(str(path)))
    assert sorted(str(w.message).split(": ")[0][-11:] for w in caught) == \
        ["log.jsonl:2", "log.jsonl:3"]
    assert len(rows) == 1 and rows[0].config.index == 7


def test_resume_from_a_partial_log_measures_only_the_rest(tmp_path):
    task = _scale(n=32)                 # 5 tiles x 2 = 10 points
    log = str(tmp_path / "t.jsonl")
    first = RandomTuner(task, seed=3)     # the default, then 3 configs
    first.tune(4, FAST, executor=InlineExecutor(), callbacks=[autotvm.callback.log_to_file(log)])
    done = {r.config.index for r in load_records(log)}
    assert len(done) == 4 and -1 in done
    again = GridSearchTuner(task)
    assert again.load_history(load_records(log)) == 4
    assert again.best_flops == pytest.approx(first.best_flops)
    assert again.default_result is not None
    measured = []
    again.tune(100, FAST, executor=InlineExecutor(),
               callbacks=[lambda t, ins, res: measured.extend(i.config.index for i in ins)])
    assert sorted(measured) == sorted(set(range(10)) - done)


@pytest.mark.skipif(importlib.util.find_spec("xgboost") is None,
                    reason="xgboost is not installed (pip install 'kiln[tune]')")
def test_model_tuner_covers_a_tiny_space_without_repeats():
    task = _scale(n=32)
    tuner = XGBTuner(task, plan_size=4, n_random=4, seed=0)
    measured = []
    tuner.tune(10, FAST, executor=InlineExecutor(), parallel=2, measure_default=False,
               callbacks=[lambda t, ins, res: measured.extend(i.config.index for i in ins)])
    assert sorted(measured) == list(range(10))
    assert tuner._model is not None and tuner.best_flops > 0


def test_simulated_annealing_finds_the_peak_of_a_score():
    dims = [8, 8, 4]
    peak = 5 * 32 + 2 * 4 + 3

    def score(indices):
        return np.array([-abs(i - peak) for i in indices], dtype="float64")

    best = simulated_annealing(dims, score, n_keep=3, exclude={peak - 1}, rng=random.Random(0),
                               n_chains=8, n_iter=60)
    assert best[0] == peak and peak - 1 not in best and len(best) == 3


def test_early_stopping_and_stop_from_a_callback():
    task = _scale(faults=True)
    tuner = GridSearchTuner(task)     # 0: ok, 1: wrong, 2: crash -> no better config in 2
    tuner.tune(30, FAST, executor=InlineExecutor(), early_stopping=2, parallel=1,
               measure_default=False)
    assert tuner.trials == 3 and tuner.best_config.index == 0
    other = GridSearchTuner(task)
    other.tune(30, FAST, executor=InlineExecutor(), parallel=1, measure_default=False,
               callbacks=[lambda t, ins, res: t.stop()])
    assert other.trials == 1


@pytest.mark.skipif(importlib.util.find_spec("xgboost") is None,
                    reason="xgboost is not installed (pip install 'kiln[tune]')")
def test_model_tuner_transfers_from_another_task_of_the_template():
    """Records of a 64-element task in which wider tiles were faster: the model ranks the
    32-element task's configs from them before any trial of its own."""
    old, new = _scale(n=64), _scale(n=32)
    rows = [Record(old, cfg, M.MeasureResult(costs=(1e-6 / (1 + cfg["tile"].size[1]),)))
            for cfg in old.config_space]
    tuner = XGBTuner(new, plan_size=3, seed=0)
    assert tuner.load_history(rows) == 0            # none of its own
    first = tuner.next_batch(3)                     # the model leads at once
    assert tuner._model is not None
    assert all(new.config_space.get(i)["tile"].size[1] == 16 for i in first[:2])


def _try_lock(path, kind) -> bool:
    import fcntl

    with open(path, "a") as f:
        try:
            fcntl.flock(f, kind | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True


def test_builds_share_the_machine_lock_and_a_timing_run_holds_it_alone(tmp_path):
    import fcntl

    path = str(tmp_path / "machine.lock")
    with M.machine_lock(path, exclusive=False):          # a build
        assert _try_lock(path, fcntl.LOCK_SH)            # another build runs beside it
        assert not _try_lock(path, fcntl.LOCK_EX)        # a timing run waits
    with M.machine_lock(path, exclusive=True):           # a timing run
        assert not _try_lock(path, fcntl.LOCK_SH)        # builds wait
    assert _try_lock(path, fcntl.LOCK_EX)
    with M.machine_lock(None, exclusive=True):           # no lock asked
        pass


def test_progress_bar_shows_trials_best_and_eta():
    import io

    task = _scale(n=2)          # tiles 1, 2 x vectorize: 4 points, and the default
    out = io.StringIO()
    tuner = GridSearchTuner(task)
    tuner.tune(100, FAST, executor=InlineExecutor(), parallel=1,
               callbacks=[autotvm.callback.progress_bar("[scale] ", stream=out)])
    lines = out.getvalue().splitlines()
    assert [line.split("  ")[0] for line in lines] == \
        [f"[scale] trials {k}/5" for k in range(1, 6)]
    assert all(" GFLOP/s " in line and " ETA " in line for line in lines)
    best = float(lines[-1].split("best ")[1].split(" ")[0])
    assert best == pytest.approx(tuner.best_flops, abs=0.01) and best > 0
    assert lines[0].split("ETA ")[1] != "?" and lines[-1].endswith("ETA 0s")
