"""Searches over a task's space: random and grid (baselines) and model-guided (xgboost on
loop-nest features + simulated annealing), sharing one measuring loop (tuner.py)."""
from . import callback
from .grid_tuner import GridSearchTuner
from .random_tuner import RandomTuner
from .tuner import Tuner
from .xgb_tuner import CostModelError, XGBTuner

TUNERS = {"xgb": XGBTuner, "random": RandomTuner, "grid": GridSearchTuner}

__all__ = ["CostModelError", "GridSearchTuner", "RandomTuner", "TUNERS", "Tuner", "XGBTuner",
           "callback"]
