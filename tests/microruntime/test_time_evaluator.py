import numpy as np
import pytest

import microruntime as mr
from microruntime import nd
from microruntime.profiling import BenchmarkResult, time_evaluator


def counter():
    calls = []
    return calls, mr.convert(lambda *args: calls.append(args))


@pytest.mark.parametrize("number, repeat", [(1, 1), (3, 4), (10, 2)])
def test_call_counts(number, repeat):
    calls, f = counter()
    pre_calls, pre = counter()
    timer = time_evaluator(f, mr.cpu(0), number=number, repeat=repeat, f_preproc=pre)
    res = timer(1, "x")
    assert len(calls) == 1 + number * repeat
    assert len(pre_calls) == repeat and pre_calls[0] == (1, "x")
    assert all(c == (1, "x") for c in calls)
    assert isinstance(res, BenchmarkResult) and len(res.results) == repeat
    assert all(r >= 0 for r in res.results)


def test_min_repeat_ms_raises_number():
    calls, f = counter()
    res = time_evaluator(f, mr.cpu(0), number=1, repeat=2, min_repeat_ms=5)(0)
    assert len(calls) > 1 + 2
    assert min(res.results) > 0


def test_module_time_evaluator(kernels):
    mod = mr.load_module(kernels.so("add"))
    pre_calls = []
    mr.register_func("test.te_preproc", lambda *a: pre_calls.append(len(a)), override=True)
    A, B, C = (nd.array(np.ones(64, "float32")) for _ in range(3))
    ftimer = mod.time_evaluator("add", mr.cpu(0), number=5, repeat=3,
                                f_preproc="test.te_preproc")
    res = ftimer(A, B, C)
    assert len(res.results) == 3 and pre_calls == [3, 3, 3]
    np.testing.assert_array_equal(C.numpy(), 2)
    assert 0 < res.mean < 0.1
    with pytest.raises(AttributeError, match="nope"):
        mod.time_evaluator("nope", mr.cpu(0))


def test_kernel_error_inside_timer(kernels):
    mod = mr.load_module(kernels.so("add"))
    A = nd.empty((4,), "float32")
    with pytest.raises(ValueError, match="Mismatched shape"):
        mod.time_evaluator("add", mr.cpu(0))(A, A, nd.empty((5,), "float32"))


def test_benchmark_result_statistics():
    data = [1e-3, 2e-3, 4e-3, 8e-3]
    res = BenchmarkResult(data)
    assert res.results == tuple(data)
    assert res.mean == pytest.approx(np.mean(data)) and res.std == pytest.approx(np.std(data))
    assert res.median == pytest.approx(np.median(data))
    assert res.min == 1e-3 and res.max == 8e-3
    assert repr(res).startswith("BenchmarkResult(min=0.001, mean=0.00375, median=0.003, ")
    lines = str(res).split("\n")
    assert lines[0] == "Execution time summary:"
    assert lines[1] == (f"{'mean (ms)':^12} {'median (ms)':^12} {'max (ms)':^12} "
                        f"{'min (ms)':^12} {'std (ms)':^12}")
    assert lines[2].split() == ["3.7500", "3.0000", "8.0000", "1.0000",
                                f"{np.std(data) * 1000:.4f}"]


def test_bad_arguments():
    _, f = counter()
    with pytest.raises(ValueError):
        time_evaluator(f, mr.cpu(0), number=0)
    with pytest.raises(ValueError, match="cache_flush_bytes"):
        time_evaluator(f, mr.cpu(0), cache_flush_bytes=1024)


def test_benchmark_result_is_named_by_the_module_module_too():
    from microruntime.module import BenchmarkResult as ModuleBenchmarkResult
    assert ModuleBenchmarkResult is BenchmarkResult
    r = ModuleBenchmarkResult([1, 2, 2, 5])
    assert (r.mean, r.median, r.min, r.max, r.std) == (2.5, 2.0, 1.0, 5.0, 1.5)
