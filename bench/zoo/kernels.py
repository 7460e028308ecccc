"""Where a zoo model's time goes: Kiln's kernels, grouped, beside ONNX Runtime's operators.

Runs build/zoo/<name>/kiln.so (compiled by check.py) kernel by kernel with the graph executor
(each node timed as the mean of --number calls) at MR_NUM_THREADS threads, groups the calls by
function and argument shapes, and prints the --top groups: calls, total ms, share of the model.
Kernels that read only weights (a weight transformed at load) run once after loading, not in
every run: they are left out of the table and their total is printed apart.
With --ort it also runs ONNX Runtime's profiler (the same thread count, in its own process) on
the same inputs and prints its time per operator type, so a kernel that loses can be found.

    MR_NUM_THREADS=1 .venv/bin/python bench/zoo/kernels.py squeezenet1_1 [--top 20] [--ort]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ORT = r"""
import json, sys, numpy as np, onnxruntime as ort
o = ort.SessionOptions(); o.intra_op_num_threads = int(sys.argv[3])
o.enable_profiling = True; o.profile_file_prefix = sys.argv[4]
s = ort.InferenceSession(sys.argv[1], o, providers=["CPUExecutionProvider"])
x = np.load(sys.argv[2]); feeds = {k: x[k] for k in x.files}
for _ in range(int(sys.argv[5]) + 1):
    s.run(None, feeds)
print(s.end_profiling())
"""


def kiln_groups(lib, inputs, number):
    """[(name, shapes, calls, total us)] of Kiln's kernels, largest first, and the total us."""
    import numpy as np

    import microruntime as mr
    from microruntime import graph_executor
    gm = graph_executor.GraphModule(mr.load_module(lib)["default"](mr.cpu()))
    x = np.load(inputs)
    for k in x.files:
        gm.set_input(k, x[k])
    gm.run()
    report = gm.profile(number=number)
    at_load = _load_once_nodes(json.loads(gm.module["get_graph_json"]()), set(x.files))
    groups = collections.defaultdict(lambda: [0, 0.0])
    once = 0.0
    for call in report.calls:
        if call["Node"] in at_load:
            once += float(call["Duration (us)"].microseconds)
            continue
        key = (call["Name"], call["Argument Shapes"])
        groups[key][0] += 1
        groups[key][1] += float(call["Duration (us)"].microseconds)
    rows = sorted(((n, s, c, us) for (n, s), (c, us) in groups.items()), key=lambda r: -r[3])
    return rows, sum(r[3] for r in rows), once


def _load_once_nodes(graph, inputs):
    """Names of the op nodes that read weights alone (or what such nodes computed): the graph
    executor runs them once, after loading."""
    nodes, row_ptr = graph["nodes"], graph["node_row_ptr"]
    of_params, names = set(), set()
    for nid, node in enumerate(nodes):
        if node["op"] == "null":
            if node["name"] not in inputs:
                of_params.add(row_ptr[nid])
        elif node["inputs"] and all(row_ptr[i] + j in of_params for i, j, *_ in node["inputs"]):
            names.add(node["name"])
            of_params.update(range(row_ptr[nid], row_ptr[nid + 1]))
    return names


def ort_by_op(onnx_path, inputs, threads, runs):
    """{op type: mean us per run} from ONNX Runtime's profiler, and the mean total."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, "-c", ORT, onnx_path, inputs, str(threads),
                              os.path.join(tmp, "ort"), str(runs)], env=env,
                             capture_output=True, text=True, check=True)
        events = json.load(open(out.stdout.strip().splitlines()[-1]))
    per_op = collections.Counter()
    for ev in events:
        if ev.get("cat") == "Node" and ev["name"].endswith("_kernel_time"):
            per_op[ev["args"]["op_name"]] += ev["dur"]
    # the first run is a warm-up: scale the sum over runs + 1 to one run
    return {op: us / (runs + 1) for op, us in per_op.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--number", type=int, default=5, help="calls per kernel, averaged")
    ap.add_argument("--ort", action="store_true", help="also ONNX Runtime's time per op type")
    args = ap.parse_args()
    d = os.path.join(args.zoo, args.name)
    lib, inputs = os.path.join(d, "kiln.so"), os.path.join(d, "inputs.npz")
    if not os.path.exists(lib):
        sys.exit(f"{lib} is missing: run bench/zoo/check.py --only {args.name} first")
    rows, total, once = kiln_groups(lib, inputs, args.number)
    print(f"{args.name}: Kiln {total / 1e3:.2f} ms in {sum(r[2] for r in rows)} kernel calls "
          f"({os.environ.get('MR_NUM_THREADS', 'default')} threads; at load, once: "
          f"{once / 1e3:.2f} ms)")
    print(f"{'ms':>8s} {'%':>6s} {'calls':>5s}  kernel  [argument shapes]")
    for name, shapes, calls, us in rows[:args.top]:
        print(f"{us / 1e3:8.3f} {100 * us / total:6.1f} {calls:5d}  {name}  [{shapes}]")
    if args.ort:
        threads = int(os.environ.get("MR_NUM_THREADS", "1"))
        per_op = ort_by_op(os.path.join(d, "model.onnx"), inputs, threads, args.number)
        ort_total = sum(per_op.values())
        print(f"ONNX Runtime: {ort_total / 1e3:.2f} ms in its operators ({threads} threads)")
        for op, us in sorted(per_op.items(), key=lambda kv: -kv[1]):
            print(f"{us / 1e3:8.3f} {100 * us / ort_total:6.1f}  {op}")


if __name__ == "__main__":
    main()
