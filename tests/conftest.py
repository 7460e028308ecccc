"""Fixtures shared by the compiler and runtime tests."""
import pytest

# The GPU APIs that run for real on this project's CI machines (PoCL, lavapipe): a model test
# taking `gpu_api` runs once on each, skipped with the reason where the driver or device is
# missing.
GPU_APIS = ("opencl", "vulkan")


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
