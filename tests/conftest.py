"""Fixtures shared by the compiler and runtime tests."""
import os

import pytest

# The build cache (compiler/build_cache.py) stays off in the tests: a test that changes a
# schedule's tunables in this process would otherwise read kernels lowered before the change.
# Tests of the cache turn it on with a directory of their own.
os.environ["KILN_CACHE_DIR"] = "off"


def _find_cycle(graph, known):
    """One cycle of `graph` ({node: nodes it points to}) through nodes in `known`, as the list
    of its nodes with the first repeated at the end, or None."""
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in known:
                continue
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, stack)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


@pytest.fixture
def find_cycle():
    """`find_cycle(graph, known)`: one cycle of an import graph among the `known` modules
    (the layering tests of the compiler and of the runtime package)."""
    return _find_cycle

# The GPU APIs a model test taking `gpu_api` runs once on each: OpenCL and Vulkan run for real on
# this project's CI machines (PoCL, lavapipe), CUDA where an NVIDIA GPU and its driver are
# present; each is skipped with the reason where the driver or device is missing.
GPU_APIS = ("opencl", "vulkan", "cuda")


class GpuApi:
    """name: the target kind ("opencl", "vulkan"); device(i): the microruntime Device."""

    def __init__(self, name):
        import microruntime

        self.name = name
        self._make = getattr(microruntime, name)
        self.device_type = self._make(0).device_type

    def device(self, index=0):
        return self._make(index)

    def __repr__(self):
        return self.name


@pytest.fixture(params=GPU_APIS)
def gpu_api(request):
    """A GPU API with a device present (the test is skipped otherwise)."""
    import microruntime

    if not microruntime.enabled(request.param):
        pytest.skip(f"no {request.param} device (microruntime.enabled({request.param!r}) is "
                    "False)")
    return GpuApi(request.param)
