"""Helpers shared by the benchmark scripts: the per-call timer, and finding a Python that can
import Apache TVM (which always runs in its own process: both runtimes export the same C
symbols)."""
import json
import os
import subprocess
import sys

# Source text, so that subprocess scripts (ours and TVM's) time calls the same way.
PER_CALL_US = r"""
import statistics, time
def per_call_us(f, a, b, c, calls, repeat=7):
    f(a, b, c)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            f(a, b, c)
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times) * 1e6
"""


def find_tvm_python(explicit=None):
    """`explicit`, $KILN_TVM_PYTHON or this interpreter, whichever first imports tvm; or None."""
    for py in (explicit, os.environ.get("KILN_TVM_PYTHON"), sys.executable):
        try:
            if py and subprocess.run([py, "-c", "import tvm"], capture_output=True).returncode == 0:
                return py
        except OSError:
            continue
    return None


def run_per_thread_count(child_source, spec, threads, root):
    """{t: the JSON the script `child_source` prints} for each thread count `t`, each run in a
    process of its own with MR_NUM_THREADS=t, given `spec` (JSON) and t as its arguments."""
    results = {}
    for t in threads:
        env = dict(os.environ, MR_NUM_THREADS=str(t), PYTHONPATH=root)
        out = subprocess.run([sys.executable, "-c", child_source, json.dumps(spec), str(t)],
                             env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
        results[t] = json.loads(out)
    return results
