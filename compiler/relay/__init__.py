"""Graph-level build for the graph executor (TVM's `relay` names): `build(mod, target, params)`
(build_module), the factory module it returns and exports (executor_factory), and test
vectors for an app on a device (test_vectors)."""
from .build_module import build, build_from_plan, optimize, plan
from .executor_factory import GraphExecutorFactoryModule, make_manifest, write_payload
from .test_vectors import reference_outputs, write_test_vectors

__all__ = ["build", "build_from_plan", "optimize", "plan", "GraphExecutorFactoryModule",
           "make_manifest",
           "write_payload", "reference_outputs", "write_test_vectors"]
