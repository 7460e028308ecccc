"""The `onnx_full` marker: ONNX's whole node test suite, run by `make test-onnx` (with
KILN_ONNX_FULL=1) and left out of the normal test run."""
import os


def pytest_configure(config):
    config.addinivalue_line("markers", "onnx_full: the whole ONNX node test suite (make "
                                       "test-onnx)")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("KILN_ONNX_FULL") == "1":
        return
    dropped = [i for i in items if i.get_closest_marker("onnx_full")]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if not i.get_closest_marker("onnx_full")]
