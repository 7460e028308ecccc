"""Golden text of the generated kernel frames (the contract with each runtime: signature,
qualifiers, argument order, launch-index reads). Regenerate with KILN_UPDATE_GOLDEN=1."""
import os

import pytest
from gpu_harness import build
from test_gpu_vector_add import vector_add

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


@pytest.mark.parametrize("target,ext", [("metal", "metal"), ("opencl", "cl"), ("cuda", "cu")])
def test_vector_add_kernel_text(target, ext):
    text = build(*vector_add(), target, "vadd").imported_modules[0].get_source()
    path = os.path.join(GOLDEN, f"vadd.{ext}")
    if os.environ.get("KILN_UPDATE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        expected = f.read()
    assert text == expected, f"generated {target} differs from {path}; if intended, " \
                             "regenerate with KILN_UPDATE_GOLDEN=1"
