"""Back ends of the graph level: graph executor JSON + params (graph_executor_codegen)."""
