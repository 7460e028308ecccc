"""Tests of the compiler run the IR verifier after every pass."""
import os

os.environ["COMPILER_VERIFY"] = "1"

import pytest  # noqa: E402


def _targets():
    from compiler.codegen import host_codegen_available

    return ["c"] + (["llvm"] if host_codegen_available("llvm") else [])


@pytest.fixture(params=_targets())
def target(request):
    """Every build test runs on each available host target: "c", and "llvm" when
    compiler.codegen.llvm imports."""
    return request.param


@pytest.fixture
def registered():
    """Registers Python functions as global functions for a test; removes them afterwards."""
    import microruntime

    names = []

    def register(name, fn):
        microruntime.register_func(name, fn, override=True)
        names.append(name)

    yield register
    for name in names:
        microruntime.remove_global_func(name)
