"""Builds the model of aot_deploy for the AOT executor: build/model.a (a system library: the
generated run function tvmgen_default_run, its kernels and weights), build/tvmgen_default.h
and build/model_data.h (inputs and the graph executor's outputs, to check against).

    python build_model.py build [target]         (target defaults to "c")
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from compiler import relay  # noqa: E402
from compiler.frontend import from_onnx  # noqa: E402
from compiler.frontend.testing import onnx_models  # noqa: E402
from compiler.relay.backend import Executor, Runtime  # noqa: E402
from compiler.relay.test_vectors import reference_outputs, write_test_vectors  # noqa: E402


def main(out_dir: str, target: str = "c") -> None:
    m = onnx_models.lenet(batch=1)
    mod, params = from_onnx(m.model, shape=m.input_shapes)
    inputs = m.inputs(seed=0)
    factory = relay.build(mod, target, params=params, executor=Executor("aot"),
                          runtime=Runtime("crt", {"system-lib": True}))
    os.makedirs(out_dir, exist_ok=True)
    factory.export_library(os.path.join(out_dir, "model.a"))
    factory.export_header(out_dir)
    expected = reference_outputs(mod, params, inputs, target=target)
    write_test_vectors(os.path.join(out_dir, "model_data.h"), inputs, expected,
                       factory.manifest)
    print(f"wrote {out_dir}/model.a, tvmgen_default.h, model_data.h "
          f"(workspace {factory.plan.workspace_bytes} bytes)")


if __name__ == "__main__":
    main(*sys.argv[1:])
