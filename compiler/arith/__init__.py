"""Arithmetic: the rule-table simplifier, interval (bound) analysis, the Analyzer, and the
regions bound inference asks for."""
from .analyzer import Analyzer, can_prove
from .interval import IntBound, Interval, bound_of, const_bound
from .region import covered_ranges, eval_region, interval, relax
from .simplify import simplify, simplify_expr, simplify_stmt

__all__ = ["Analyzer", "IntBound", "Interval", "bound_of", "can_prove", "const_bound",
           "covered_ranges", "eval_region", "interval", "relax", "simplify", "simplify_expr",
           "simplify_stmt"]
