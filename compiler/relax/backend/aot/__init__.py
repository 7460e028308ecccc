"""The AOT executor back end: from the graph back end's plan (graph/codegen.py, its storage
from graph/plan_memory.py) to one generated C run function that calls the kernels in order
with the memory plan baked in, a C header describing it (TVM's tvmgen_<name>_run interface),
and the weights linked in as constant data: plan.py (where each tensor lives), codegen.py (the
C), factory.py (the module relay.build returns), build.py (the driver)."""
