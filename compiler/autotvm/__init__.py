"""Tuning the operator library's schedules, after TVM's AutoTVM: templates with knobs, a
search over them (random, grid, or guided by a cost model), measurement on any
concurrent.futures executor (a local process pool, Dask, Ray; or `RemoteRunner`: built here,
timed by the engine's workers on other machines), tuning logs, and the best configs applied
when a model is built.

    from compiler import autotvm
    tasks = autotvm.extract.extract_from_program(mod, params, target="llvm")
    for task in tasks:
        tuner = autotvm.tuner.XGBTuner(task)
        tuner.tune(n_trial=64, callbacks=[autotvm.callback.log_to_file("tune.jsonl")])
    with autotvm.apply_history_best("tune.jsonl"):
        lib = relay.build(mod, target="llvm", params=params)

Task extraction (`compiler.autotvm.extract`) reads graph-level modules; it is imported on
its own (the graph level's kernels consult this package's dispatch context).
"""
from . import dispatch, executors, measure, record, remote, space, task, templates, tuner
from .dispatch import ApplyConfig, ApplyHistoryBest, DispatchContext, apply_history_best
from .executors import RayExecutor, dask_executor, local_executor
from .measure import MeasureInput, MeasureOption, MeasureResult, measure_option
from .remote import RemoteRunner
from .space import ConfigEntity, ConfigSpace, FallbackConfigEntity
from .task import Task, create, register_template
from .templates import register_schedule_template
from .tuner import GridSearchTuner, RandomTuner, XGBTuner, callback

template = register_template

__all__ = ["ApplyConfig", "ApplyHistoryBest", "ConfigEntity", "ConfigSpace", "DispatchContext",
           "FallbackConfigEntity", "GridSearchTuner", "MeasureInput", "MeasureOption",
           "MeasureResult", "RandomTuner", "RayExecutor", "RemoteRunner", "Task", "XGBTuner",
           "apply_history_best", "callback", "create", "dask_executor", "dispatch",
           "executors", "local_executor", "measure", "measure_option", "record",
           "register_schedule_template", "register_template", "space", "task", "template",
           "templates", "tuner"]
