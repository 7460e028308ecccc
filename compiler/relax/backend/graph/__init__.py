"""The graph executor back end: a legalized `main` -> memory plan (plan_memory.py) and graph
JSON + params + manifest (codegen.py)."""
