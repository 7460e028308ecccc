"""Arithmetic: the rule-table simplifier, interval (bound) analysis and the Analyzer."""
from .analyzer import Analyzer
from .interval import IntBound, Interval, bound_of, const_bound, eval_region
from .simplify import simplify, simplify_expr, simplify_stmt

__all__ = ["Analyzer", "IntBound", "Interval", "bound_of", "const_bound", "eval_region",
           "simplify", "simplify_expr", "simplify_stmt"]
