"""Back ends of the graph level, after the one graph pipeline (compiler/relax/pipeline.py):
graph/ (the graph executor: memory plan, graph JSON, params) and vm/ (the Relax VM: device
copies, storage, shapes, bytecode). names.py: the kernel and input names both use."""
