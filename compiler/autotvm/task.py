"""A tuning task: a template, the arguments of one workload (shapes, dtypes), and a target.

    @register_template("toy.scale")
    def toy(cfg, n, dtype):            # (cfg, *args) -> (schedule, [inputs..., outputs...])
        ...
    task = create("toy.scale", (1024, "float32"), target="llvm")
    len(task.config_space), task.flop
    s, tensors = task.instantiate(task.config_space.get(3))

Tasks are plain values (picklable, hashable): a worker process finds the template by name in
the registry, which `compiler.autotvm` fills when it is imported.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

from ..ir.errors import CompilerError
from ..target import Target
from .space import ConfigSpace, FallbackConfigEntity

TEMPLATES: Dict[str, Callable] = {}


class TemplateError(CompilerError):
    """A task names a template that is not registered, or its arguments do not fit it."""


def register_template(name: str):
    """Decorator: registers `f(cfg, *args) -> (schedule, tensors)` as template `name`."""
    def wrap(f):
        if name in TEMPLATES and TEMPLATES[name] is not f:
            raise TemplateError(f"template {name!r} is registered twice")
        TEMPLATES[name] = f
        return f
    return wrap


def get_template(name: str) -> Callable:
    try:
        return TEMPLATES[name]
    except KeyError:
        raise TemplateError(f"no tuning template {name!r}; registered: "
                            f"{', '.join(sorted(TEMPLATES)) or '(none)'}") from None


def as_tuple(value):
    """Lists (as JSON gives them back) as tuples, recursively: a workload's canonical form."""
    if isinstance(value, (list, tuple)):
        return tuple(as_tuple(v) for v in value)
    return value


def target_key(target) -> str:
    """The canonical text of a target (how logs and dispatch compare targets)."""
    return str(Target(target)) if target is not None else "llvm"


@dataclass(frozen=True)
class Task:
    """Template `name` on workload `args` for `target` (its canonical text)."""
    name: str
    args: tuple
    target: str
    _space: Optional[ConfigSpace] = field(default=None, compare=False, repr=False)

    @property
    def workload(self) -> tuple:
        return (self.name,) + self.args

    @property
    def key(self) -> str:
        """The workload as JSON text: what logs and dispatch look tasks up by."""
        return json.dumps(list(self.workload))

    @property
    def config_space(self) -> ConfigSpace:
        if self._space is None:
            space = ConfigSpace()
            get_template(self.name)(space, *self.args)
            object.__setattr__(self, "_space", space)
        return self._space

    @property
    def flop(self) -> float:
        return self.config_space.flop

    def instantiate(self, config):
        """(schedule, tensors) of the template at `config` (a point, or the fallback)."""
        return get_template(self.name)(config, *self.args)

    def fallback(self) -> FallbackConfigEntity:
        cfg = FallbackConfigEntity()
        cfg.flop = self.flop
        return cfg

    def __reduce__(self):
        return (Task, (self.name, self.args, self.target))

    def __str__(self) -> str:
        return f"{self.name}{self.args}"


def create(name: str, args, target="llvm") -> Task:
    """The task of template `name` on `args` for `target` (its space is declared now, so a
    template that does not fit its arguments fails here)."""
    task = Task(name, as_tuple(args), target_key(target))
    _ = task.config_space
    return task


def from_workload(workload, target) -> Task:
    """The task of a workload as a log records it ([name, *args])."""
    workload = as_tuple(workload)
    return create(workload[0], workload[1:], target)


__all__ = ["TEMPLATES", "Task", "TemplateError", "as_tuple", "create", "from_workload",
           "get_template", "register_template", "target_key"]
