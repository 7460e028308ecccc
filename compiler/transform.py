"""`PassContext`, as TVM's `tvm.transform.PassContext`: the options `compiler.lower` and
`compiler.build` read while it is entered.

    with compiler.transform.PassContext(opt_level=3, config={"tir.disable_vectorize": True},
                                        disabled_pass=["tir.StorageRewrite"]):
        f = compiler.build(s, [A, B], target="c")

- `config`: the keys of `CONFIG_OPTIONS` (an unknown key is an error naming the valid ones).
  "tir.add_lower_pass" takes `[(phase, pass), ...]`: each pass runs in `lower` at TVM's phase
  (0: on the IR as scheduled, before buffer flattening; 1: after flattening and simplification;
  2: after vectorize, unroll and storage rewrite; 3 or more: at the end). A pass is a function
  IRModule -> IRModule, an object with `__call__`, or a `prim_func_pass` / `module_pass`.
- `disabled_pass`: TVM pass names; the graph pipeline (compiler/relax/pipeline.py) and the
  loop pipeline (compiler/tir/pipeline.py) map them to Kiln's passes (`TVM_PASS_NAMES` in
  each) and leave those out ("FuseOps": one kernel per operator; "winograd_conv2d": no
  Winograd convolutions). Names of passes Kiln does not have are accepted and change
  nothing, as in TVM.
- `opt_level` (default 2) and `required_pass`: a user pass runs when it is not disabled and
  either its name is required or its opt_level is at most the context's. Kiln's own lowering
  passes are not gated by opt_level: TVM registers its TIR lowering passes at opt_level 0.

- `instruments`: pass instrument objects (compiler/instrument.py, as tvm.instrument): their
  hooks run when the context is entered and exited and around every pass run under it.

`PassContext.current()` is the innermost entered context (per thread), else a default one.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .instrument import call_hook, check_instrument
from .ir.errors import CompilerError
from .ir.module import IRModule


class PassContextError(CompilerError):
    """A PassContext option, config key or pass given in it is not valid."""


def _check_bool(key: str, value) -> bool:
    if not isinstance(value, (bool, int)):
        raise PassContextError(f"config {key!r} takes a bool, got {value!r}")
    return bool(value)


def _check_lower_passes(key: str, value) -> Tuple[Tuple[int, Callable], ...]:
    if not isinstance(value, (list, tuple)):
        raise PassContextError(f"config {key!r} takes a list of (phase, pass) pairs, got "
                               f"{type(value).__name__}")
    out = []
    for item in value:
        if not (isinstance(item, (list, tuple)) and len(item) == 2):
            raise PassContextError(f"config {key!r}: each entry is a (phase, pass) pair, got "
                                   f"{item!r}")
        phase, fn = item
        if isinstance(phase, bool) or not isinstance(phase, int) or phase < 0:
            raise PassContextError(f"config {key!r}: the phase of {pass_name(fn)!r} must be an "
                                   f"int >= 0 (TVM's phases 0-3), got {phase!r}")
        if not callable(fn):
            raise PassContextError(f"config {key!r}: the pass of phase {phase} is not callable "
                                   f"(give a function IRModule -> IRModule), got {fn!r}")
        out.append((phase, fn))
    return tuple(out)


# key -> (check and normalise the value, what it does)
CONFIG_OPTIONS: Dict[str, Tuple[Callable[[str, Any], Any], str]] = {
    "tir.disable_vectorize": (_check_bool, "vectorized loops are lowered as serial loops"),
    "tir.disable_storage_rewrite": (_check_bool, "allocations keep their own memory "
                                                 "(tir.StorageRewrite is left out)"),
    "tir.add_lower_pass": (_check_lower_passes, "[(phase, pass), ...]: user passes run by "
                                                "lower at TVM's phases 0-3"),
    "tir.noalias": (_check_bool, "False: the codegens do not assume that tensor arguments "
                                 "point to distinct memory (default True)"),
    "tir.instrument_bound_checkers": (_check_bool, "every buffer access is checked against "
                                                   "the buffer's extent at run time; an "
                                                   "access out of it raises RuntimeError"),
    "tir.disable_assert": (_check_bool, "the run-time checks (AssertStmt) are left out, "
                                        "argument checks included"),
}


def pass_name(p) -> str:
    """The name a pass is known by (disabled_pass/required_pass and the pass runner use it)."""
    info = getattr(p, "info", None)
    if isinstance(info, PassInfo):
        return info.name
    return getattr(p, "__name__", type(p).__name__)


def pass_info(p) -> "PassInfo":
    """The PassInfo of a pass (a plain function: opt_level 0, its name)."""
    info = getattr(p, "info", None)
    return info if isinstance(info, PassInfo) else PassInfo(0, pass_name(p))


def run_instrumented(p, mod: IRModule, apply: Callable[[IRModule], IRModule]) -> IRModule:
    """`apply(mod)` as the pass `p`, with the current context's instruments around it: any
    `should_run` False skips it (the module is returned unchanged)."""
    instruments = PassContext.current().instruments
    if not instruments:
        return apply(mod)
    info = pass_info(p)
    if not all(call_hook(instruments, "should_run", mod, info)):
        return mod
    call_hook(instruments, "run_before_pass", mod, info)
    out = apply(mod)
    call_hook(instruments, "run_after_pass", out, info)
    return out


def pass_opt_level(p) -> int:
    """The opt_level of a pass: its PassInfo's, else 0 (a plain function always runs)."""
    info = getattr(p, "info", None)
    return info.opt_level if isinstance(info, PassInfo) else 0


class PassContext:
    """Options for lowering and building, entered with `with` (see the module doc)."""

    _local = threading.local()

    def __init__(self, opt_level: int = 2, required_pass: Optional[Sequence[str]] = None,
                 disabled_pass: Optional[Sequence[str]] = None, instruments=None,
                 config: Optional[Mapping[str, Any]] = None):
        if isinstance(opt_level, bool) or not isinstance(opt_level, int) or opt_level < 0:
            raise PassContextError(f"PassContext opt_level must be an int >= 0, got "
                                   f"{opt_level!r}")
        instruments = list(instruments or [])
        for inst in instruments:
            check_instrument(inst)
        self.opt_level = opt_level
        self.required_pass = _names("required_pass", required_pass)
        self.disabled_pass = _names("disabled_pass", disabled_pass)
        self.instruments: List[Any] = instruments
        self.config: Dict[str, Any] = {}
        for key, value in dict(config or {}).items():
            if key not in CONFIG_OPTIONS:
                valid = ", ".join(sorted(CONFIG_OPTIONS))
                raise PassContextError(f"unknown PassContext config option {key!r}; the valid "
                                       f"ones are: {valid}")
            self.config[key] = CONFIG_OPTIONS[key][0](key, value)

    @classmethod
    def _stack(cls) -> List["PassContext"]:
        if not hasattr(cls._local, "stack"):
            cls._local.stack = []
        return cls._local.stack

    @staticmethod
    def current() -> "PassContext":
        """The innermost entered PassContext of this thread, else a default one."""
        stack = PassContext._stack()
        return stack[-1] if stack else _DEFAULT

    @staticmethod
    def list_configs() -> Dict[str, Dict[str, str]]:
        """The valid config keys, each with a description of what it does."""
        return {key: {"description": doc} for key, (_, doc) in CONFIG_OPTIONS.items()}

    def __enter__(self) -> "PassContext":
        call_hook(self.instruments, "enter_pass_ctx")
        self._stack().append(self)
        return self

    def __exit__(self, ptype, value, trace) -> None:
        stack = self._stack()
        if not stack or stack[-1] is not self:
            raise PassContextError("PassContext exited out of order")
        stack.pop()
        call_hook(self.instruments, "exit_pass_ctx")

    def override_instruments(self, instruments) -> None:
        """Replaces the instruments (exiting the old ones and entering the new ones when the
        context is entered), as TVM's."""
        instruments = list(instruments or [])
        for inst in instruments:
            check_instrument(inst)
        entered = self in self._stack()
        if entered:
            call_hook(self.instruments, "exit_pass_ctx")
        self.instruments = instruments
        if entered:
            call_hook(self.instruments, "enter_pass_ctx")

    def get(self, key: str, default: Any = None) -> Any:
        """The value of config `key` (a key of CONFIG_OPTIONS), else `default`."""
        if key not in CONFIG_OPTIONS:
            raise PassContextError(f"unknown PassContext config option {key!r}")
        return self.config.get(key, default)

    def pass_enabled(self, name: str, opt_level: int = 0) -> bool:
        """As TVM: not disabled, and required or within the context's opt_level."""
        if name in self.disabled_pass:
            return False
        return name in self.required_pass or opt_level <= self.opt_level

    def lower_passes_of_phase(self, phase: int) -> List[Callable]:
        """The enabled "tir.add_lower_pass" passes of `phase` (3 takes every phase >= 3)."""
        return [fn for ph, fn in self.config.get("tir.add_lower_pass", ())
                if (ph == phase or (phase == 3 and ph > 3))
                and self.pass_enabled(pass_name(fn), pass_opt_level(fn))]


def _names(what: str, names) -> Tuple[str, ...]:
    if names is None:
        return ()
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise PassContextError(f"PassContext {what} is a list of pass names, got {names!r}")
    return tuple(names)


_DEFAULT = PassContext()


# ---- passes with a name and an opt_level (tvm.transform.module_pass / tir.prim_func_pass) ---
@dataclass(frozen=True)
class PassInfo:
    opt_level: int
    name: str
    required: Tuple[str, ...] = ()


class ModulePass:
    """`fn(mod, ctx) -> mod` with its PassInfo; calling it runs it on a module."""

    def __init__(self, fn: Callable, info: PassInfo):
        self.fn, self.info = fn, info
        self.__name__ = info.name

    def __call__(self, mod: IRModule) -> IRModule:
        return run_instrumented(self, mod, self.apply)

    def apply(self, mod: IRModule) -> IRModule:
        """The pass itself (without instruments)."""
        out = self.fn(mod, PassContext.current())
        if not isinstance(out, IRModule):
            raise PassContextError(f"pass {self.info.name!r} returned "
                                   f"{type(out).__name__}, not an IRModule")
        return out


def make_pass(kind, method: str, pass_func, opt_level, name, required):
    """A pass of class `kind` (ModulePass or a subclass) from `pass_func` (a function, or a class
    whose instances' `method` is the pass), as the pass decorators make it."""
    if isinstance(opt_level, bool) or not isinstance(opt_level, int):
        raise PassContextError(f"{kind.__name__} needs opt_level as an int, got {opt_level!r}")

    def create(fn):
        if isinstance(fn, type):  # a class: its instances' `method` is the pass
            cls = fn

            def make(*args, **kwargs):
                return create(getattr(cls(*args, **kwargs), method))

            make.__name__ = cls.__name__
            return make
        info = PassInfo(opt_level, name or getattr(fn, "__name__", type(fn).__name__),
                        tuple(required or ()))
        return kind(fn, info)

    return create(pass_func) if pass_func is not None else create


def module_pass(pass_func=None, opt_level: Optional[int] = None, name: Optional[str] = None,
                required: Optional[Sequence[str]] = None):
    """A pass `pass_func(mod, ctx) -> mod`, as `tvm.transform.module_pass` (also a decorator,
    with or without arguments; on a class, its `transform_module` method)."""
    return make_pass(ModulePass, "transform_module", pass_func, opt_level, name, required)


# ---- the pass runner shared by the graph pipeline (relax/pipeline.py) and tir's ------------
PassNames = Tuple[Tuple[str, ...], bool]


def enabled_passes(passes: Sequence[Callable], names_of: Callable[[Callable], PassNames]
                   ) -> List[Callable]:
    """`passes` less those the current context disables. `names_of(p)` gives the TVM names of
    pass `p` (as `disabled_pass` lists them) and whether Kiln can leave it out; disabling one
    it cannot leave out is an error naming the pass."""
    ctx = PassContext.current()
    out = []
    for p in passes:
        names, optional = names_of(p)
        disabled = [n for n in names if n in ctx.disabled_pass]
        if not disabled:
            out.append(p)
        elif not optional:
            raise PassContextError(
                f"PassContext disables {disabled[0]!r}, but Kiln cannot compile without its "
                f"pass {pass_name(p)} (what follows it needs its result); remove it from "
                "disabled_pass")
    return out


def run_pass_list(mod: IRModule, passes: Sequence[Callable],
                  verify: Optional[Callable[[IRModule], None]] = None) -> IRModule:
    """Runs `passes` in order, each with the context's instruments around it.
    COMPILER_DUMP_IR=1 prints the IR after each pass ("unchanged" when a pass returned its
    input), COMPILER_TIME_PASSES=1 prints each pass's time. `verify` (a checker raising on a
    broken module) runs after every pass with COMPILER_VERIFY=1, never with COMPILER_VERIFY=0,
    else once on the result."""
    dump = os.environ.get("COMPILER_DUMP_IR") == "1"
    timing = os.environ.get("COMPILER_TIME_PASSES") == "1"
    mode = os.environ.get("COMPILER_VERIFY")
    each = verify if mode == "1" else None
    for p in passes:
        name = pass_name(p)
        start = time.perf_counter()
        new = p(mod) if isinstance(p, ModulePass) else run_instrumented(p, mod, p)
        elapsed = time.perf_counter() - start
        if timing:
            print(f"[pass] {name}: {elapsed * 1e3:.2f} ms", file=sys.stderr)
        if dump:
            print(f"unchanged {name}" if new is mod else f"after {name}:\n{new}",
                  file=sys.stderr)
        if each is not None:
            each(new)
        mod = new
    if verify is not None and mode not in ("0", "1") and passes:
        verify(mod)
    return mod
