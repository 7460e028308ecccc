"""Helpers for tests and benchmarks of the graph level: `models` (whole models with numpy
references)."""
from . import models
