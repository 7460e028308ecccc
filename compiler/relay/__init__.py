"""Graph-level build for the graph executor (TVM's `relay` names): the factory module that
`build` returns and exports (`executor_factory`)."""
from .executor_factory import GraphExecutorFactoryModule, make_manifest, write_payload

__all__ = ["GraphExecutorFactoryModule", "make_manifest", "write_payload"]
