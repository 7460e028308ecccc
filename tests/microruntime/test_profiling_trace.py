"""Report.to_chrome_trace / save_trace and `python -m microruntime run --trace`: a Chrome trace
(Trace Event Format) with one complete event per kernel call of the profiled run."""
import json
import os
import subprocess
import sys

import pytest

from microruntime.profiling import Count, Duration, Percent, Report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Runs the command line in a fresh process that never imports the compiler.
DRIVER = ("import sys; from microruntime.__main__ import main; rc = main(sys.argv[1:]); "
          "bad = [m for m in sys.modules if m == 'compiler' or m.startswith('compiler.')]; "
          "assert not bad, bad; sys.exit(rc)")


def cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-c", DRIVER, *args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)


def kernel_events(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def check_trace(trace, names):
    """The trace is valid: complete events in the order of `names`, end to end on one lane."""
    events = kernel_events(trace)
    assert [e["name"] for e in events] == names
    end = 0.0
    for e in events:
        assert set(e) >= {"name", "ph", "ts", "dur", "pid", "tid", "args"}
        assert e["dur"] >= 0 and e["ts"] >= end - 1e-3
        end = e["ts"] + e["dur"]
    assert len({(e["pid"], e["tid"]) for e in events}) == 1
    lanes = [e for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
    assert [lane["args"]["name"] for lane in lanes] == ["calling thread"]


def test_report_to_chrome_trace():
    calls = [{"Name": n, "Duration (us)": Duration(d), "Percent": Percent(p), "Count": Count(1),
              "Device": "cpu0", "Argument Shapes": "float32[2, 3]"}
             for n, d, p in (("f", 2.5, 25.0), ("g", 7.5, 75.0), ("f", 0.0, 0.0))]
    trace = Report(calls, {"cpu0": {"Duration (us)": Duration(10)}},
                   {"Number of threads": Count(2)}).to_chrome_trace()
    check_trace(trace, ["f", "g", "f"])
    events = kernel_events(trace)
    assert [(e["ts"], e["dur"]) for e in events] == [(0.0, 2.5), (2.5, 7.5), (10.0, 0.0)]
    assert events[1]["args"] == {"Percent": 75.0, "Count": 1, "Device": "cpu0",
                                 "Argument Shapes": "float32[2, 3]"}
    assert trace["otherData"] == {"Number of threads": 2}
    json.dumps(trace)  # plain JSON values only


def test_save_trace_writes_json(tmp_path):
    report = Report([{"Name": "k", "Duration (us)": Duration(1.25)}], {}, {})
    path = tmp_path / "t.json"
    report.save_trace(str(path))
    trace = json.loads(path.read_text())
    check_trace(trace, ["k"])
    assert trace["displayTimeUnit"] == "ms"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    sys.path.insert(0, ROOT)
    from compiler import relay
    from compiler.frontend import from_onnx
    from compiler.frontend.testing import onnx_models

    m = onnx_models.mlp(batch=3)
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    d = tmp_path_factory.mktemp("trace")
    so = str(d / "mlp.so")
    relay.build(mod, target="llvm", params=params).export_library(so)
    return d, so


def profile_rows(stdout):
    """(name, duration) of each row of the profile table (unsorted order not needed)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Name "))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("-" * 10):
            break
        name, duration = line.split()[:2]
        rows.append((name, float(duration.replace(",", ""))))
    return rows


def test_cli_trace_has_one_event_per_kernel_call(model):
    d, so = model
    path = d / "trace.json"
    r = cli("run", so, "--profile", "--trace", str(path))
    assert r.returncode == 0, r.stderr
    rows = profile_rows(r.stdout)
    assert rows and f"trace of {len(rows)} kernel calls saved to {path}" in r.stdout
    trace = json.loads(path.read_text())
    events = kernel_events(trace)
    check_trace(trace, [e["name"] for e in events])
    assert sorted(e["name"] for e in events) == sorted(name for name, _ in rows)
    assert all(e["name"].startswith("fused_") and "Argument Shapes" in e["args"]
               for e in events)


def test_cli_trace_without_profile_prints_no_table(model):
    d, so = model
    path = d / "alone.json"
    r = cli("run", so, "--trace", str(path))
    assert r.returncode == 0, r.stderr
    assert "Duration (us)" not in r.stdout and "kernel calls saved to" in r.stdout
    assert kernel_events(json.loads(path.read_text()))


def test_cli_trace_into_a_missing_directory_is_one_line(model):
    d, so = model
    r = cli("run", so, "--trace", str(d / "nodir" / "t.json"))
    assert r.returncode == 1
    assert r.stderr.strip() == f"error: --trace {d / 'nodir' / 't.json'}: no such directory " \
                               f"{d / 'nodir'}"


def test_cli_trace_of_a_vm_model(tmp_path):
    sys.path.insert(0, ROOT)
    import onnx
    from onnx import TensorProto, helper

    from compiler.cli import main as compile_main

    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 4]) for n in "aby"]
    graph = helper.make_graph([helper.make_node("Sub", ["a", "b"], ["y"])], "sub", vi[:2],
                              vi[2:])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(tmp_path / "sub.onnx"))
    so = str(tmp_path / "sub.so")
    assert compile_main(["compile", str(tmp_path / "sub.onnx"), "-o", so, "-q"]) == 0
    path = tmp_path / "vm.json"
    r = cli("run", so, "--input-shape", "a:2,4", "--input-shape", "b:2,4", "--profile",
            "--trace", str(path))
    assert r.returncode == 0, r.stderr
    trace = json.loads(path.read_text())
    names = [e["name"] for e in kernel_events(trace)]
    check_trace(trace, names)
    assert names and sorted(names) == sorted(n for n, _ in profile_rows(r.stdout))
    assert trace["otherData"]["Executor"] == "VM"
