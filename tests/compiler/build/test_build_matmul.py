"""A scheduled matmul (split / reorder / vectorize / parallel) agrees with numpy."""
import numpy as np
import pytest
from sample_kernels import matmul

import compiler
import microruntime


@pytest.mark.parametrize("parallel,vectorize", [(True, True), (False, True), (True, False)])
def test_matmul_schedule(target, parallel, vectorize):
    s, args = matmul(64, parallel=parallel, vectorize=vectorize)
    m = compiler.build(s, args, target=target, name="mm")
    a = np.random.rand(64, 64).astype("float32")
    b = np.random.rand(64, 64).astype("float32")
    c = microruntime.nd.array(np.zeros((64, 64), "float32"))
    m["mm"](microruntime.nd.array(a), microruntime.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)


def test_matmul_c_source_outlines_parallel_loop():
    s, args = matmul(64)
    src = compiler.build(s, args, target="c", name="mm").get_source("c")
    assert "static int mm_compute_0(int task_id, TVMParallelGroupEnv* penv" in src
    assert "kiln_parallel_launch(mm_compute_0, &kiln_closure, 0)" in src
