"""Pass instruments, as `tvm.instrument`: objects given to
`PassContext(instruments=[...])` whose hooks the pass runner calls around every pass run under
that context (Kiln's own lowering passes and user passes alike).

    @compiler.instrument.pass_instrument
    class Count:
        def __init__(self):
            self.names = []

        def run_before_pass(self, mod, info):
            self.names.append(info.name)

    with compiler.transform.PassContext(instruments=[Count()]):
        compiler.build(s, [A, B])

Hooks (each optional): `enter_pass_ctx()` / `exit_pass_ctx()` when the context is entered /
exited; `should_run(mod, info) -> bool` (any False skips the pass); `run_before_pass(mod,
info)` and `run_after_pass(mod, info)` around each pass; `info` has `name`, `opt_level` and
`required` (compiler.transform.PassInfo).
"""
from __future__ import annotations

import time
from typing import Dict, List, Tuple

from .ir.errors import CompilerError

HOOKS = ("enter_pass_ctx", "exit_pass_ctx", "should_run", "run_before_pass", "run_after_pass")


class PassInstrumentError(CompilerError):
    """An object given as a pass instrument has none of the instrument hooks."""


class PassInstrument:
    """Base class of instruments: every hook does nothing (subclasses override some)."""

    def enter_pass_ctx(self) -> None:
        pass

    def exit_pass_ctx(self) -> None:
        pass

    def should_run(self, mod, info) -> bool:
        return True

    def run_before_pass(self, mod, info) -> None:
        pass

    def run_after_pass(self, mod, info) -> None:
        pass


def pass_instrument(pi_cls=None):
    """Makes a class with some of the hooks an instrument class (a subclass of it and of
    PassInstrument), as `tvm.instrument.pass_instrument`; with or without parentheses."""

    def create(cls):
        if not isinstance(cls, type):
            raise PassInstrumentError(f"pass_instrument decorates a class, got {cls!r}")
        if not any(hasattr(cls, h) for h in HOOKS):
            raise PassInstrumentError(f"class {cls.__name__} has none of the instrument hooks "
                                      f"({', '.join(HOOKS)})")
        if issubclass(cls, PassInstrument):
            return cls
        return type(cls.__name__, (cls, PassInstrument),
                    {"__doc__": cls.__doc__, "__module__": cls.__module__,
                     "__qualname__": cls.__qualname__})

    return create(pi_cls) if pi_cls is not None else create


def check_instrument(obj) -> None:
    """Raises PassInstrumentError unless `obj` is an instrument object (an instance)."""
    if isinstance(obj, type) or not any(callable(getattr(obj, h, None)) for h in HOOKS):
        what = f"the class {obj.__name__} (pass an instance)" if isinstance(obj, type) else \
            repr(obj)
        raise PassInstrumentError(f"PassContext instruments must be pass instrument objects "
                                  f"with some of the hooks {', '.join(HOOKS)}; got {what}")


def call_hook(instruments, hook: str, *args) -> List:
    """Calls `hook(*args)` on every instrument that has it; their results, in order."""
    out = []
    for inst in instruments:
        fn = getattr(inst, hook, None)
        if fn is not None:
            out.append(fn(*args))
    return out


class PassTimingInstrument(PassInstrument):
    """Times every pass run in its context; `render()` is the table (name, total ms, count),
    as tvm.instrument.PassTimingInstrument."""

    def __init__(self):
        self.profile: Dict[str, Tuple[float, int]] = {}
        self._start: List[float] = []

    def enter_pass_ctx(self) -> None:
        self.profile = {}

    def run_before_pass(self, mod, info) -> None:
        self._start.append(time.perf_counter())

    def run_after_pass(self, mod, info) -> None:
        spent = time.perf_counter() - self._start.pop()
        total, count = self.profile.get(info.name, (0.0, 0))
        self.profile[info.name] = (total + spent, count + 1)

    def render(self) -> str:
        lines = ["Pass timing (ms, runs):"]
        for name, (total, count) in self.profile.items():
            lines.append(f"  {name}: {total * 1e3:.3f}ms, {count}")
        return "\n".join(lines)


class PrintBeforeAll(PassInstrument):
    """Prints the module before every pass."""

    def run_before_pass(self, mod, info) -> None:
        print(f"Before running pass: {info.name}\n{mod}")


class PrintAfterAll(PassInstrument):
    """Prints the module after every pass."""

    def run_after_pass(self, mod, info) -> None:
        print(f"After running pass: {info.name}\n{mod}")
