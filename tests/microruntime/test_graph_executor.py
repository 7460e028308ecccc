"""The graph executor from Python: a hand-written graph (add, relu, dense, relu with shared
storage slots) over kernels compiler.build makes for "c" and "llvm", checked against numpy,
through every GraphModule method."""
import graph_model as gm
import numpy as np
import pytest

import microruntime as mr
from microruntime import graph_executor

TOL = dict(rtol=1e-5, atol=1e-5)


def _targets():
    from compiler.codegen import host_codegen_available

    return ["c"] + (["llvm"] if host_codegen_available("llvm") else [])


@pytest.fixture(scope="module", params=_targets())
def lib(request):
    return gm.kernels(request.param)


@pytest.fixture
def gmod(lib):
    return graph_executor.create(gm.graph_json(), lib, mr.cpu())


def _ready(gmod, seed=0):
    x, y, w = gm.data(seed)
    gmod.set_input("x", x)
    gmod.set_input("y", y)
    gmod.load_params(mr.save_param_dict({"w": w}))
    return x, y, w


def test_run_matches_numpy(gmod):
    x, y, w = _ready(gmod)
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), gm.reference(x, y, w), **TOL)
    # A second run with new inputs (slots are reused across runs).
    x2, y2, _ = gm.data(1)
    gmod.run(x=x2, y=y2)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), gm.reference(x2, y2, w), **TOL)


def test_counts_indices_and_info(gmod):
    assert gmod.get_num_inputs() == 3 and gmod.get_num_outputs() == 1
    assert [gmod.get_input_index(n) for n in ("x", "y", "w", "nope")] == [0, 1, 2, -1]
    shapes, dtypes = gmod.get_input_info()
    assert shapes == {"x": (2, 8), "y": (2, 8), "w": (4, 8)}
    _ready(gmod)
    shapes, dtypes = gmod.get_input_info()   # w is a parameter now
    assert shapes == {"x": (2, 8), "y": (2, 8)} and dtypes == {"x": "float32", "y": "float32"}


def test_get_input_and_output_into_arrays(gmod):
    x, y, w = _ready(gmod)
    np.testing.assert_array_equal(gmod.get_input("w").numpy(), w)
    np.testing.assert_array_equal(gmod.get_input(1).numpy(), y)
    out = mr.nd.empty((2, 8), "float32")
    assert gmod.get_input("x", out) is out
    np.testing.assert_array_equal(out.numpy(), x)
    gmod.run()
    res = mr.nd.empty((2, 4), "float32")
    gmod.get_output(0, res)
    np.testing.assert_allclose(res.numpy(), gm.reference(x, y, w), **TOL)
    assert gmod["get_num_outputs"]() == 1


def test_set_input_kwargs_skip_names_not_in_graph(gmod):
    x, y, w = gm.data(2)
    gmod.set_input(x=x, y=y, w=w, not_an_input=np.zeros(3, "float32"))
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), gm.reference(x, y, w), **TOL)


def test_zero_copy_input_and_output(gmod):
    x, y, w = _ready(gmod)
    xin = mr.nd.array(x)
    out = mr.nd.empty((2, 4), "float32")
    gmod.set_input_zero_copy("x", xin)
    gmod.set_output_zero_copy(0, out)
    gmod.run()
    np.testing.assert_allclose(out.numpy(), gm.reference(x, y, w), **TOL)
    xin.copyfrom(-x)  # the graph reads the caller's array in place
    gmod.run()
    np.testing.assert_allclose(out.numpy(), gm.reference(-x, y, w), **TOL)
    assert gmod.get_output(0).same_as(out)
    with pytest.raises(graph_executor.GraphExecutorError, match="expects \\[2, 4\\] float32"):
        gmod.set_output_zero_copy(0, mr.nd.empty((4, 2), "float32"))


def test_debug_outputs(gmod):
    x, y, w = _ready(gmod)
    relu0 = gmod.debug_get_output("relu0")
    np.testing.assert_allclose(relu0.numpy(), np.maximum(x + y, 0), **TOL)
    out = mr.nd.empty((2, 4), "float32")
    gmod.debug_get_output(5, out)  # dense0
    np.testing.assert_allclose(out.numpy(), np.maximum(x + y, 0) @ w.T, **TOL)
    gmod.run()
    np.testing.assert_allclose(gmod["get_node_output"](6, 0).numpy(), gm.reference(x, y, w),
                               **TOL)
    with pytest.raises(graph_executor.GraphExecutorError, match="no node named 'nope'"):
        gmod.debug_get_output("nope")


def test_share_params(lib, gmod):
    x, y, w = _ready(gmod)
    other = graph_executor.create(gm.graph_json(), lib, mr.cpu())
    other.share_params(gmod, mr.save_param_dict({"w": w}))
    assert other.get_input_info()[0] == {"x": (2, 8), "y": (2, 8)}
    other.run(x=y, y=x)
    np.testing.assert_allclose(other.get_output(0).numpy(), gm.reference(y, x, w), **TOL)
    gmod.set_input("w", 2 * w)   # copied into the shared memory
    other.run()
    np.testing.assert_allclose(other.get_output(0).numpy(), gm.reference(y, x, 2 * w), **TOL)
    fresh = graph_executor.create(gm.graph_json(), lib, mr.cpu())
    with pytest.raises(graph_executor.GraphExecutorError, match="'w' is not set"):
        other.share_params(fresh, mr.save_param_dict({"w": w}))


def test_benchmark(gmod):
    x, y, w = _ready(gmod)
    res = gmod.benchmark(mr.cpu(), repeat=3, number=2)
    assert len(res.results) == 3 and res.min <= res.median <= res.max and res.std >= 0
    assert res.mean > 0
    res = gmod.benchmark(mr.cpu(), repeat=2, number=1, end_to_end=True, x=x, y=y)
    assert len(res.results) == 2
    np.testing.assert_allclose(gmod.get_output(0).numpy(), gm.reference(x, y, w), **TOL)


def test_profile_report(gmod):
    _ready(gmod)
    report = gmod.profile()
    assert [c["Name"] for c in report.calls] == list(gm.FUNCS)
    assert [c["Node"] for c in report.calls] == ["add0", "relu0", "dense0", "relu1"]
    dense = report.calls[2]
    assert dense["Argument Shapes"] == "float32[2, 8], float32[4, 8], float32[2, 4]"
    assert dense["Device"] == "cpu0" and dense["Count"].value == 1
    assert all(c["Duration (us)"].microseconds >= 0 for c in report.calls)
    assert sum(c["Percent"].percent for c in report.calls) == pytest.approx(100, abs=1e-6)
    total = report.device_metrics["cpu0"]["Duration (us)"].microseconds
    assert total == pytest.approx(sum(c["Duration (us)"].microseconds for c in report.calls))
    table = report.table()
    assert table.splitlines()[0].split()[:3] == ["Name", "Duration", "(us)"]
    assert "dense" in table and "Sum" in table and "Executor: Graph" in table
    again = mr.Report.from_json(report.json())
    assert [c["Name"] for c in again.calls] == [c["Name"] for c in report.calls]
    assert again.calls[0]["Duration (us)"].microseconds == \
        report.calls[0]["Duration (us)"].microseconds
    csv = report.csv().splitlines()
    assert csv[0].split(",")[:2] == ["Argument Shapes", "Count"] and len(csv) == 5


# ---- errors ---------------------------------------------------------------------------------
def test_bad_inputs(gmod):
    x, _, _ = gm.data()
    with pytest.raises(graph_executor.GraphExecutorError,
                       match="no input named 'z' \\(inputs: 'x', 'y', 'w'\\)"):
        gmod.set_input("z", x)
    with pytest.raises(RuntimeError, match="input 'x' expects \\[2, 8\\] float32, got "
                                           "\\[8, 2\\] float32"):
        gmod.set_input("x", x.T.copy())
    with pytest.raises(RuntimeError, match="expects \\[2, 8\\] float32, got \\[2, 8\\] float64"):
        gmod.set_input("x", x.astype("float64"))
    with pytest.raises(RuntimeError, match="input index 7 is out of range"):
        gmod.set_input(7, x)
    with pytest.raises(RuntimeError, match="output index 1 is out of range"):
        gmod.get_output(1)


def test_missing_input_at_run(gmod):
    x, y, _ = gm.data()
    gmod.set_input("x", x)
    gmod.set_input("y", y)
    with pytest.raises(graph_executor.GraphExecutorError, match="input 'w' was never set"):
        gmod.run()


def test_misaligned_zero_copy(gmod):
    buf = mr.nd.empty((2 * 8 + 1,), "float32")
    with pytest.raises(RuntimeError, match="expects \\[2, 8\\] float32"):
        gmod.set_input_zero_copy("x", buf)


@pytest.mark.parametrize("text, phrase", [
    ("{", "graph JSON: expected a string key at offset 1"),
    ("", "graph JSON: unexpected end of text at offset 0"),
    ('{"nodes": [1,]}', "unexpected character at offset 13"),
    ("[]", "the graph must be a JSON object"),
])
def test_corrupt_json(lib, text, phrase):
    with pytest.raises(graph_executor.GraphExecutorError, match=phrase.replace("[", "\\[")):
        graph_executor.create(text, lib, mr.cpu())


def _broken(**override):
    g = gm.graph()
    for key, value in override.items():
        node, field = key.split("__") if "__" in key else (None, key)
        if node is None:
            g["attrs"][field] = value
        else:
            g["nodes"][int(node[1:])][field] = value
    return g


@pytest.mark.parametrize("graph, phrase", [
    (_broken(n3__inputs=[[5, 0, 0], [1, 0, 0]]),
     "node 3 ('add0'): field 'inputs': each input must be [node, output(, version)] of a node "
     "before this one"),
    (_broken(n4__op="conv"), "node 4 ('relu0'): field 'op': must be \"null\" or \"tvm_op\""),
    (_broken(n5__attrs={"func_name": "dense", "num_inputs": "3", "num_outputs": "1",
                        "flatten_data": "0"}),
     "node 5 ('dense0'): field 'num_inputs': differs from the length of 'inputs'"),
    (_broken(storage_id=["list_int", [0, 1, 2, 3, 4, 3, 9]]),
     "storage_id of entry 6 must be in [0, 7)"),
    (_broken(dltype=["list_str", ["float32"] * 6 + ["floaty"]]),
     "dltype of entry 6 is not a valid data type"),
    (_broken(shape=["list_shape", [[2, 8]] * 6]), "'shape' must be [\"list_shape\", a list of 7"),
])
def test_malformed_graphs(lib, graph, phrase):
    import json

    with pytest.raises(graph_executor.GraphExecutorError) as err:
        graph_executor.create(json.dumps(graph), lib, mr.cpu())
    assert phrase in str(err.value)


def test_unknown_function(lib):
    g = gm.graph()
    g["nodes"][4]["attrs"]["func_name"] = "no_such_kernel"
    import json

    with pytest.raises(graph_executor.GraphExecutorError,
                       match="node 4 \\('relu0'\\): function 'no_such_kernel' is not in the "
                             "module"):
        graph_executor.create(json.dumps(g), lib, mr.cpu())


def test_kernel_error_names_the_node(lib):
    # relu_nk is given a [2, 4] tensor: the kernel's own check fails, the node is named.
    g = gm.graph()
    g["nodes"][6]["attrs"]["func_name"] = "relu_nk"
    import json

    gmod = graph_executor.create(json.dumps(g), lib, mr.cpu())
    _ready(gmod)
    with pytest.raises(Exception, match="node 6 \\('relu1', function 'relu_nk'\\)"):
        gmod.run()


# ---- the storage plan ---------------------------------------------------------------------
def test_overlapping_storage_is_refused(lib):
    # relu0 in the slot of add0, its own input: it would overwrite what it reads.
    import json

    g = _broken(storage_id=["list_int", [0, 1, 2, 3, 3, 4, 4]])
    with pytest.raises(graph_executor.GraphExecutorError) as err:
        graph_executor.create(json.dumps(g), lib, mr.cpu())
    assert ("attrs: storage_id: entry 3 (output 0 of node 3 'add0') and entry 4 (output 0 of "
            "node 4 'relu0') are live at the same time but share storage slot 3") in str(err.value)


@pytest.fixture(scope="module")
def exported_mlp(tmp_path_factory):
    from compiler import relay
    from compiler.frontend import from_onnx
    from compiler.frontend.testing import onnx_models

    m = onnx_models.mlp(batch=3)
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    path = str(tmp_path_factory.mktemp("plan") / "mlp.so")
    relay.build(mod, target="llvm", params=params).export_library(path)
    return mr.load_module(path), m.inputs(seed=1)["x"]


def test_swapped_storage_ids_of_an_exported_model(exported_mlp):
    import json

    lib, _ = exported_mlp
    graph = json.loads(lib["get_graph_json"]())
    graph_executor.create(json.dumps(graph), lib, mr.cpu())   # the planner's own plan loads
    # The last kernel's output and its input's swapped: every slot keeps its size, but the
    # input would be written into a slot still live.
    sid = graph["attrs"]["storage_id"][1]
    last, prev = len(sid) - 1, len(sid) - 2
    sid[last], sid[prev] = sid[prev], sid[last]
    with pytest.raises(graph_executor.GraphExecutorError,
                       match=r"entry \d+ \(output 0 of node \d+ '\w+'\) and entry \d+ \(output 0 "
                             r"of node \d+ '\w+'\) are live at the same time but share storage "
                             r"slot \d+"):
        graph_executor.create(json.dumps(graph), lib, mr.cpu())


# ---- threads --------------------------------------------------------------------------------
def _threads_run(gmod, step, threads=4, runs=50):
    """`threads` threads call step(gmod, x, y) `runs` times each with inputs of their own; the
    outputs that differ from numpy's, counted."""
    import threading

    _, _, w = _ready(gmod)
    wrong, start = [], threading.Barrier(threads)

    def work(t):
        start.wait()
        for r in range(runs):
            x, y, _ = gm.data(100 * t + r)
            out = step(gmod, x, y)
            if not np.allclose(out, gm.reference(x, y, w), **TOL):
                wrong.append((t, r))

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    return len(wrong)


def test_threads_share_one_module_with_infer(gmod):
    assert _threads_run(gmod, lambda g, x, y: g.infer(x=x, y=y)[0]) == 0


def test_threads_share_one_module_under_its_lock(gmod):
    def step(g, x, y):
        with g.lock:
            g.set_input("x", x)
            g.set_input("y", y)
            g.run()
            return g.get_output(0).numpy()

    assert _threads_run(gmod, step) == 0


def test_one_module_per_thread(lib):
    import json
    import threading

    mods = {}

    def step(_, x, y):
        me = threading.get_ident()
        if me not in mods:
            mods[me] = graph_executor.create(json.dumps(gm.graph()), lib, mr.cpu())
            mods[me].load_params(mr.save_param_dict({"w": gm.data(0)[2]}))
        mods[me].run(x=x, y=y)
        return mods[me].get_output(0).numpy()

    assert _threads_run(graph_executor.create(gm.graph_json(), lib, mr.cpu()), step) == 0
