"""Graph-level build for the graph executor (TVM's `relay` names): `build(mod, target, params)`
(build_module) and the factory module it returns and exports (executor_factory)."""
from .build_module import build, build_from_plan, optimize, plan
from .executor_factory import GraphExecutorFactoryModule, make_manifest, write_payload

__all__ = ["build", "build_from_plan", "optimize", "plan", "GraphExecutorFactoryModule",
           "make_manifest",
           "write_payload"]
