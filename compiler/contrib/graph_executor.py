"""The runtime's graph executor where classic TVM code imports it from
(`from tvm.contrib import graph_executor`): microruntime.graph_executor's names."""
from microruntime.graph_executor import (  # noqa: F401
    GraphExecutorError,
    GraphModule,
    create,
    get_device,
)
