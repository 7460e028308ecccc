"""A build's worker processes (compiler/build_jobs.py): how many, and that a model lowered and
compiled by forked workers (legalize's kernels, the LLVM modules) is the one built alone; the
library blob written as assembler (`.incbin`) holds the blob's bytes."""
import ctypes
import functools
import json
import os

import numpy as np
import pytest

import microruntime as mr
from compiler import relay
from compiler import build_jobs as jobs
from compiler.build_jobs import build_jobs, fork_pool, forked_map
from compiler.contrib import cc
from compiler.export import library_bin_asm_source
from compiler.ir.errors import BuildError
from compiler.relax.testing import models
from compiler.relay.build_module import plan
from microruntime import graph_executor


def test_build_jobs_from_the_environment(monkeypatch):
    monkeypatch.setenv("KILN_BUILD_JOBS", "3")
    assert build_jobs() == 3
    monkeypatch.setenv("KILN_BUILD_JOBS", "0")
    assert build_jobs() == 1
    assert fork_pool(1) is None
    monkeypatch.setenv("KILN_BUILD_JOBS", "two")
    with pytest.raises(BuildError, match="KILN_BUILD_JOBS='two'"):
        build_jobs()
    monkeypatch.delenv("KILN_BUILD_JOBS")
    assert build_jobs() >= 1


def test_forked_map_in_order_with_errors(monkeypatch):
    monkeypatch.setenv("KILN_BUILD_JOBS", "2")
    pids = list(forked_map([os.getpid] * 4))
    assert os.getpid() not in pids
    squares = forked_map([functools.partial(pow, i, 2) for i in range(7)])
    assert list(squares) == [i * i for i in range(7)]
    failing = forked_map([functools.partial(int, "3"), functools.partial(int, "x")])
    assert next(failing) == 3
    with pytest.raises(ValueError, match="'x'"):
        next(failing)
    monkeypatch.setenv("KILN_BUILD_JOBS", "1")
    assert forked_map([os.getpid]) is None


def _built(monkeypatch, n_jobs):
    """(kernel texts, graph JSON, progress calls, output) of a 6-kernel model at `n_jobs`,
    and how many worker pools it forked."""
    monkeypatch.setenv("KILN_BUILD_JOBS", str(n_jobs))
    pools = []
    real = jobs.fork_pool
    monkeypatch.setattr(jobs, "fork_pool", lambda n: pools.append(real(n)) or pools[-1])
    m = models.conv_bn_relu_pool_dense()
    calls = []
    mod, _ = plan(m.mod, m.params, progress=lambda k, n, name: calls.append((k, n, name)))
    kernels = {name: str(f) for name, f in mod.items() if name != "main"}
    lib = relay.build(m.mod, target="llvm", params=m.params)
    gm = graph_executor.GraphModule(lib["default"](mr.cpu()))
    inputs = m.inputs(seed=2)
    gm.run(**inputs)
    np.testing.assert_allclose(gm.get_output(0).numpy(), m.reference(inputs), rtol=1e-4,
                               atol=1e-5)
    ll = lib.get_lib().get_source("ll")
    assert all(f"__tvm_ffi_{name}" in ll for name in kernels)
    forked = sum(p is not None for p in pools)
    return kernels, json.loads(lib.get_graph_json()), calls, gm.get_output(0).numpy(), forked


def test_workers_build_what_one_process_builds(monkeypatch):
    alone = _built(monkeypatch, 1)
    workers = _built(monkeypatch, 2)
    assert len(alone[0]) >= 4            # enough kernels for the workers
    # alone: no pool; with workers: plan's legalize, build's legalize and its llvm codegen
    assert alone[4] == 0 and workers[4] == 3
    assert workers[0] == alone[0] and workers[1] == alone[1]
    assert workers[2] == alone[2] == [(k + 1, len(alone[0]), name)
                                      for k, (_, _, name) in enumerate(alone[2])]
    np.testing.assert_array_equal(workers[3], alone[3])


def test_blob_assembled_from_its_file(tmp_path):
    blob = bytes(range(256)) * 3 + b"\x00tail"
    (tmp_path / "blob.bin").write_bytes(blob)
    source = tmp_path / "blob.s"
    source.write_text(library_bin_asm_source(str(tmp_path / "blob.bin")))
    lib = str(tmp_path / "blob.so")
    cc.create_shared(lib, [str(source)])
    data = (ctypes.c_ubyte * len(blob)).in_dll(ctypes.CDLL(lib), "__tvm_ffi__library_bin")
    assert bytes(data) == blob
