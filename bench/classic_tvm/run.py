"""Runs classic TVM's TE, target-codegen and runtime unit tests against Kiln.

    python bench/classic_tvm/run.py --tvm-src /tmp/tvm-v0.12

copies the test files that count (see README.md) from a TVM source tree (tag v0.12.0) into a
temporary folder, runs each with pytest with the `tvm` shim (shim/tvm: aliases of Kiln's
packages) first on PYTHONPATH, and prints per file passed/failed/skipped, the overall pass rate
(passed / (passed + failed)) and the failures grouped by the first line of their error.
"""
import argparse
import ast
import collections
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
UNITTEST = pathlib.Path("tests/python/unittest")

# The files that count: TE, the CPU code generators, and the runtime tests that run on a CPU in
# one process.
COUNTED = [
    "test_te_autodiff.py",
    "test_te_build_lower.py",
    "test_te_create_primfunc.py",
    "test_te_group.py",
    "test_te_hybrid_script.py",
    "test_te_schedule.py",
    "test_te_schedule_bound_inference.py",
    "test_te_schedule_bound_inference_tiling.py",
    "test_te_schedule_graph.py",
    "test_te_schedule_lstm.py",
    "test_te_schedule_ops.py",
    "test_te_schedule_tensorize.py",
    "test_te_tag.py",
    "test_te_tensor.py",
    "test_te_tensor_overload.py",
    "test_te_verify_compute.py",
    "test_target_codegen_llvm.py",
    "test_target_codegen_c_host.py",
    "test_runtime_container.py",
    "test_runtime_error.py",
    "test_runtime_extension.py",
    "test_runtime_graph.py",
    "test_runtime_measure.py",
    "test_runtime_module_load.py",
    "test_runtime_module_property.py",
    "test_runtime_trace.py",
]

# Files left out, with the reason (README.md explains each kind).
EXCLUDED = {
    "test_te_schedule_postproc_rewrite_for_tensor_core.py": "GPU (CUDA tensor cores)",
    "test_te_schedule_tensor_core.py": "GPU (CUDA tensor cores)",
    "test_runtime_graph_cuda_graph.py": "GPU (CUDA graphs)",
    "test_runtime_heterogeneous.py": "GPU (CUDA/OpenCL beside the CPU)",
    "test_runtime_rpc.py": "RPC",
    "test_runtime_profiling.py": "RPC and GPU (remote profiling, CUDA counters)",
    "test_runtime_graph_debug.py": "RPC (debug executor over RPC) and Relay IR",
    "test_runtime_module_based_interface.py": "RPC and GPU, Relay IR workloads",
    "test_runtime_module_export.py": "Relay IR workloads (relay.testing)",
    "test_runtime_vm_profiler.py": "Relay IR (relay.vm)",
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tvm-src", required=True, type=pathlib.Path,
                   help="a TVM source tree at tag v0.12.0 (tests/python/unittest is read)")
    p.add_argument("--all", action="store_true",
                   help="also run the files left out (reported apart, never in the rate)")
    p.add_argument("-k", dest="only", default=None, help="run only files whose name has this")
    p.add_argument("--timeout", type=int, default=900, help="seconds per file (default 900)")
    p.add_argument("--groups", type=int, default=30, help="failure groups shown (default 30)")
    p.add_argument("--python", default=sys.executable, help="the Python that runs pytest")
    return p.parse_args(argv)


def first_error_line(case):
    """The first line of a failure's message: the exception line pytest recorded (for an error
    while collecting, the first `E` line of its report)."""
    node = case.find("failure")
    if node is None:
        node = case.find("error")
    message = (node.get("message") or "").strip()
    if message in ("", "collection failure") or message.startswith("failed on setup"):
        raised = [ln[1:].strip() for ln in (node.text or "").splitlines() if ln.startswith("E ")]
        message = next((ln for ln in raised if ln), message or "(no message)")
    return message.splitlines()[0][:160]


def count_tests(path):
    """The test functions a file defines (module level and in Test classes): what a file that
    fails to collect loses."""
    tree = ast.parse(path.read_text())
    count = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            count += 1
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            count += sum(isinstance(n, ast.FunctionDef) and n.name.startswith("test")
                         for n in node.body)
    return max(count, 1)


def run_file(args, work, name):
    """(counts, failures) of one test file: counts by outcome, failures as (test, line)."""
    report = work / (name + ".xml")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE / "shim"), str(ROOT),
                                         env.get("PYTHONPATH", "")])
    cmd = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(work),
           f"--junitxml={report}", str(work / name)]
    try:
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return collections.Counter(failed=1), [(name, f"timed out after {args.timeout} s")]
    if not report.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-1:] or ["(no output)"]
        return collections.Counter(failed=1), [(name, f"pytest crashed: {tail[0][:140]}")]
    counts, failures = collections.Counter(), []
    for case in ET.parse(report).iter("testcase"):
        test = f"{name}::{case.get('name')}"
        if case.find("skipped") is not None:
            counts["skipped"] += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            counts["failed"] += 1
            failures.append((test, first_error_line(case)))
        else:
            counts["passed"] += 1
    if failures and failures[0][0] == f"{name}::{name[:-3]}":  # the file did not collect
        lost = count_tests(work / name)
        return collections.Counter(failed=lost), [(name, failures[0][1])] * lost
    return counts, failures


def print_table(title, results):
    print(f"\n{title}")
    print(f"{'file':52} {'passed':>7} {'failed':>7} {'skipped':>8}")
    total = collections.Counter()
    for name, (counts, _) in results.items():
        total.update(counts)
        print(f"{name:52} {counts['passed']:7} {counts['failed']:7} {counts['skipped']:8}")
    ran = total["passed"] + total["failed"]
    rate = 100.0 * total["passed"] / ran if ran else 0.0
    print(f"{'total':52} {total['passed']:7} {total['failed']:7} {total['skipped']:8}")
    return rate, total


def print_groups(results, limit):
    groups = collections.defaultdict(list)
    for _, failures in results.values():
        for test, line in failures:
            groups[line].append(test)
    print(f"\nfailures by first error line ({len(groups)} groups):")
    for line, tests in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:limit]:
        print(f"  {len(tests):3}  {line}")
        for test in tests[:3]:
            print(f"         {test}")


def main(argv=None):
    args = parse_args(argv)
    source = args.tvm_src / UNITTEST
    if not source.is_dir():
        sys.exit(f"{source} is not a folder: give --tvm-src a TVM source tree at v0.12.0")
    names = [n for n in COUNTED if args.only is None or args.only in n]
    extra = [n for n in EXCLUDED if args.all and (args.only is None or args.only in n)]
    with tempfile.TemporaryDirectory(prefix="classic_tvm_") as tmp:
        work = pathlib.Path(tmp)
        counted, left_out = {}, {}
        for name in names + extra:
            shutil.copy(source / name, work / name)
            result = run_file(args, work, name)
            (counted if name in COUNTED else left_out)[name] = result
            print(f"  {name}: {dict(result[0])}", file=sys.stderr, flush=True)
    rate, total = print_table("counted files (TVM v0.12.0 tests/python/unittest)", counted)
    print_groups(counted, args.groups)
    if left_out:
        print_table("files left out (not in the rate)", left_out)
    print(f"\npass rate: {rate:.1f}% ({total['passed']} of {total['passed'] + total['failed']} "
          f"run; {total['skipped']} skipped)")


if __name__ == "__main__":
    main()
