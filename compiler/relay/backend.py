"""What `relay.build` builds for, as TVM's `tvm.relay.backend` names them:

    Executor("graph")                       the graph executor (graph JSON + params + kernels)
    Executor("graph", {"link-params": True})  ... with the weights as constant data of the
                                            kernel library, read in place (default: on for a
                                            bare-metal -mtriple with --system-lib, else off)
    Executor("aot", {"interface-api": "c"}) one generated run function with its memory plan
                                            baked in (compiler/relax/backend/aot)
    Runtime("cpp") / Runtime("crt", {"system-lib": True})
                                            a loadable library, or a system library that
                                            registers itself when linked into a program

Options are checked here, by name and type, so a typo is an error that lists the known ones.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Union

from ..ir.errors import TargetError
from ..target import Target

# executor / runtime name -> {option: (type, default)}
EXECUTOR_OPTIONS: Dict[str, Dict[str, tuple]] = {
    "graph": {"link-params": (bool, None)},   # None: by the target (see linked_params.py)
    "aot": {"interface-api": (str, "c"), "unpacked-api": (bool, False),
            "link-params": (bool, True), "workspace-byte-alignment": (int, 64)},
}
RUNTIME_OPTIONS: Dict[str, Dict[str, tuple]] = {
    "cpp": {"system-lib": (bool, False)},
    "crt": {"system-lib": (bool, False)},
}


def _checked(what: str, table: Dict[str, Dict[str, tuple]], name: str,
             options: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    if name not in table:
        raise TargetError(f"unknown {what} {name!r}; the {what}s are {', '.join(table)}")
    known = table[name]
    out = {k: default for k, (_, default) in known.items()}
    for key, value in dict(options or {}).items():
        if key not in known:
            raise TargetError(f"{what} {name!r} has no option {key!r}; its options are "
                              f"{', '.join(known)}")
        kind = known[key][0]
        if value is None and known[key][1] is None:
            continue
        if kind is int and isinstance(value, bool) or not isinstance(value, kind):
            raise TargetError(f"{what} {name!r} option {key!r} must be a {kind.__name__}, "
                              f"not {type(value).__name__}")
        out[key] = value
    return out


class Executor:
    """An executor and its options (`Executor("aot", {"interface-api": "c"})`)."""

    def __init__(self, name: str = "graph", options: Optional[Mapping[str, Any]] = None):
        self.name = name
        self.options = _checked("executor", EXECUTOR_OPTIONS, name, options)
        if name == "aot":
            if self.options["interface-api"] != "c":
                raise TargetError("Executor('aot') generates the C interface only: "
                                  "interface-api must be 'c' (tvmgen_<name>_run)")
            if self.options["unpacked-api"]:
                raise TargetError("Executor('aot') calls kernels through the packed API; "
                                  "unpacked-api is not supported")
            if not self.options["link-params"]:
                raise TargetError("Executor('aot') links the weights into the library as "
                                  "constant data: link-params cannot be False")
            if self.options["workspace-byte-alignment"] != 64:
                raise TargetError("Executor('aot') lays out the workspace at 64-byte "
                                  "boundaries (what kernels assume): workspace-byte-alignment "
                                  "must be 64")

    def __getitem__(self, key: str):
        return self.options[key]

    def __repr__(self):
        return f"Executor({self.name!r}, {self.options!r})"


class Runtime:
    """The runtime a build is for (`Runtime("crt", {"system-lib": True})`)."""

    def __init__(self, name: str = "cpp", options: Optional[Mapping[str, Any]] = None):
        self.name = name
        self.options = _checked("runtime", RUNTIME_OPTIONS, name, options)

    def __getitem__(self, key: str):
        return self.options[key]

    def __repr__(self):
        return f"Runtime({self.name!r}, {self.options!r})"


def as_executor(executor: Union[None, str, Executor]) -> Executor:
    """`executor` as an Executor (None: the graph executor; a name: its defaults)."""
    if executor is None:
        return Executor("graph")
    if isinstance(executor, str):
        return Executor(executor)
    if not isinstance(executor, Executor):
        raise TargetError(f"executor must be an Executor or its name, not "
                          f"{type(executor).__name__}")
    return executor


def apply_runtime(target: Optional[Target], runtime: Union[None, str, Runtime]
                  ) -> Optional[Target]:
    """`target` with `--system-lib` added when `runtime` asks for a system library."""
    if runtime is None:
        return target
    runtime = Runtime(runtime) if isinstance(runtime, str) else runtime
    if not isinstance(runtime, Runtime):
        raise TargetError(f"runtime must be a Runtime or its name, not {type(runtime).__name__}")
    if not runtime["system-lib"] or (target is not None and target.system_lib):
        return target
    if target is None:
        raise TargetError("Runtime(..., {'system-lib': True}) needs a target to add "
                          "--system-lib to; give target='llvm' or 'c'")
    return Target(f"{target} --system-lib")


__all__ = ["Executor", "Runtime", "as_executor", "apply_runtime"]
