"""The convolution templates: tasks of a model's blocked convolutions (what legalize sees after
convert_layout_nchwc), knobs bounded by the problem with the library's defaults, and a small
conv model tuned end to end on a local pool, its best configs applied by relay.build and
relax.build with results matching numpy."""
import numpy as np
import pytest

import microruntime as mr
from compiler import autotvm, build, relax, relay
from compiler.autotvm.executors import local_executor
from compiler.autotvm.extract import extract_from_program
from compiler.autotvm.record import encode, load_records
from compiler.autotvm.tuner import RandomTuner
from compiler.lower import lower
from compiler.relax.testing import models
from compiler.target.isa import vector_isa
from compiler.transform import PassContext
from microruntime import graph_executor
from microruntime.relax_vm import VirtualMachine

FAST = autotvm.measure_option(number=2, repeat=2, min_repeat_ms=0)
TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def dw_block():
    """depthwise 3x3/2 (8 channels, 8x8 -> 4x4) + bn + relu, pointwise 1x1 to 16 + relu."""
    return models.depthwise_separable_block(batch=2, channels=8, size=8, filters=16)


def _tasks(model):
    return {t.name: t for t in extract_from_program(model.mod, model.params, target="llvm")}


def _lowered(task, cfg) -> str:
    s, tensors = task.instantiate(cfg)
    return str(lower(s, tensors, name="k")["k"])


def test_blocked_conv_tasks_of_a_model(dw_block):
    tasks = _tasks(dw_block)
    assert sorted(tasks) == ["conv2d_NCHWc.x86", "depthwise_conv2d_NCHWc.x86"]
    block = min(8, vector_isa().lanes("float32"))
    dw, pw = tasks["depthwise_conv2d_NCHWc.x86"], tasks["conv2d_NCHWc.x86"]
    # data [N, C/c, H, W, c], weights 6-d, strides, padding (t, l, b, r), dilation, dtypes
    assert dw.args == ((2, 8 // block, 8, 8, block), (8 // block, 1, 3, 3, 1, block), (2, 2),
                       (1, 1, 1, 1), (1, 1), "float32", "float32")
    assert pw.args[0] == (2, 8 // block, 4, 4, block) and len(pw.args[1]) == 6
    assert dw.flop == 2 * 2 * 8 * 4 * 4 * 9
    assert pw.flop == 2 * 2 * 16 * 4 * 4 * 8


def test_knobs_are_bounded_by_the_problem():
    m = models.residual_block(batch=1, channels=32, size=14)
    with PassContext(disabled_pass=["winograd_conv2d"]):     # the direct convolutions
        task, = _tasks(m).values()
    _, ocb, _, ow, _ = task.instantiate(task.fallback())[1][-1].shape
    _, icb, oh = task.args[0][:3]
    space = task.config_space

    def values(knob):
        return {space.get(i)[knob].val for i in range(len(space))}

    obs, tiles, bands, chunks = (values(k) for k in ("oc_blocks", "ow_tile", "band_rows",
                                                     "channel_chunk"))
    assert obs and all(int(ocb) % b == 0 for b in obs)
    assert tiles and all(int(ow) % t == 0 or t <= 8 for t in tiles)
    assert 0 in bands and all(b == 0 or oh % b == 0 for b in bands)
    assert chunks and all(icb % c == 0 for c in chunks)
    assert len(space) == len(obs) * len(tiles) * len(bands) * len(chunks) * 2 * 2


def test_winograd_tasks_and_their_knobs():
    """32 channels at 14 x 14: the 3x3 convolutions are Winograd F(2, 3) ones (49 tiles of
    2 x 2); their knobs divide the problem, and other points compute what the default does."""
    m = models.residual_block(batch=1, channels=32, size=14)
    task, = _tasks(m).values()
    assert task.name == "conv2d_winograd_NCHWc.x86"
    data, weight, tile_size = task.args[:3]
    assert tile_size == 2 and weight[0] == 16 and weight[2] == 32
    assert task.flop == 2 * 32 * 14 * 14 * 32 * 9
    space = task.config_space
    points = [space.get(i) for i in range(len(space))]
    ocb = weight[1]
    assert {p["oc_blocks"].val for p in points} <= {b for b in range(1, 5) if ocb % b == 0}
    assert {p["tile_count"].val for p in points} == {1, 7}    # the divisors of 49 up to 8
    rng = np.random.default_rng(0)
    shapes = [tuple(int(d) for d in t.shape) for t in task.instantiate(task.fallback())[1]]
    args = [mr.nd.array(rng.random(shape, dtype="float32")) for shape in shapes[:-1]]
    outs = []
    for cfg in (task.fallback(), points[0], points[-1]):
        s, tensors = task.instantiate(cfg)
        out = mr.nd.array(np.zeros(shapes[-1], "float32"))
        build(s, tensors, target="llvm", name="k")["k"](*args, out)
        outs.append(out.numpy())
    for o in outs[1:]:
        np.testing.assert_allclose(o, outs[0], **TOL)


def test_the_default_point_is_the_library_schedule():
    """The knobs' defaults make the same loop nest as the schedule without keywords; another
    point makes another."""
    m = models.residual_block(batch=1, channels=16, size=14)
    task, = _tasks(m).values()
    fallback = task.fallback()
    default_text = _lowered(task, fallback)
    values = {name: fallback[name].val for name in task.config_space.get(0).values()}
    assert _lowered(task, task.config_space.from_values(values)) == default_text
    other = {**values, "unroll_channels": not values["unroll_channels"]}
    assert _lowered(task, task.config_space.from_values(other)) != default_text


def _check_builds(model, log):
    """relay.build and relax.build inside apply_history_best; both checked against numpy.
    Returns the task keys applied by each."""
    inputs = model.inputs(seed=4)
    want = model.reference(inputs)
    with autotvm.apply_history_best(log) as graph_ctx:
        lib = relay.build(model.mod, target="llvm", params=model.params)
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, **TOL)
    with autotvm.apply_history_best(log) as vm_ctx:
        ex = relax.build(model.mod, "llvm", params=model.params)
    got = VirtualMachine(ex, mr.cpu())["main"](mr.nd.array(inputs["x"]))
    np.testing.assert_allclose(got.numpy(), want, **TOL)
    return sorted(set(graph_ctx.applied)), sorted(set(vm_ctx.applied))


def test_conv_tasks_tuned_on_the_local_pool_and_applied(dw_block, tmp_path):
    tasks = list(_tasks(dw_block).values())
    log = str(tmp_path / "tune.jsonl")
    with local_executor(2) as pool:
        for task in tasks:     # no default measured: the best is a tuned config, applied
            RandomTuner(task, seed=5).tune(3, FAST, executor=pool, measure_default=False,
                                           callbacks=[autotvm.callback.log_to_file(log)])
    records = list(load_records(log))
    assert len(records) == 6 and all(r.result.ok for r in records), \
        [r.result.message for r in records]
    keys = sorted(t.key for t in tasks)
    assert _check_builds(dw_block, log) == (keys, keys)


def test_every_non_default_knob_applied_stays_correct(dw_block, tmp_path):
    """The last point of each space (widest tiles, channels unrolled, serial) as the best
    record of a log: both builds apply it and stay correct."""
    log = str(tmp_path / "last.jsonl")
    tasks = list(_tasks(dw_block).values())
    with open(log, "w") as f:
        for task in tasks:
            last = task.config_space.get(len(task.config_space) - 1)
            assert last["parallel"].val is False
            f.write(encode(task, last, autotvm.MeasureResult(costs=(1e-6,))) + "\n")
    keys = sorted(t.key for t in tasks)
    assert _check_builds(dw_block, log) == (keys, keys)
