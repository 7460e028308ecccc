"""`Target`: what to generate code for, parsed from a string or a dict, as in TVM.

    Target("llvm -mcpu=znver4 -mattr=+avx2 --system-lib")
    Target({"kind": "cuda", "arch": "sm_80"}, host="llvm")
    with Target("c"):
        Target.current()          # -> Target("c -keys=cpu")

Options are `-name=value` or `--name=value`; a bare `-flag` sets a boolean option. Unknown kinds
and options raise TargetError naming them and listing what is valid. `str(target)` is canonical:
kind, then `-keys=...`, then the other set options in sorted order, so
`Target(str(t)) == t`.
"""
from __future__ import annotations

import re
import shlex
import threading
from typing import Any, Dict, List, Optional, Union

from ..ir.errors import TargetError
from .kinds import ALIASES, HOST_KINDS, KINDS, TargetKind

TargetLike = Union["Target", str, Dict[str, Any]]

_STACK = threading.local()


def _stack() -> List["Target"]:
    if not hasattr(_STACK, "items"):
        _STACK.items = []
    return _STACK.items


class Target:
    """A parsed target, with TVM's fields: `kind` (a TargetKind: `target.kind.name == "llvm"`),
    `attrs` (option name -> parsed value, TVM's option names: "mcpu", "mattr", "system-lib",
    ...), `keys` (dispatch keys: the `-keys` option or the kind's default keys) and `host` (the
    Target that runs the host code of a device target, or None)."""

    __slots__ = ("kind", "attrs", "host")

    def __init__(self, target: TargetLike, host: Optional[TargetLike] = None):
        if isinstance(target, Target):
            self.kind, self.attrs = target.kind, dict(target.attrs)
            host = host if host is not None else target.host
        elif isinstance(target, str):
            self.kind, self.attrs = _parse_string(target)
        elif isinstance(target, dict):
            target = dict(target)
            if host is None and "host" in target:
                host = target.pop("host")
            self.kind, self.attrs = _parse_dict(target)
        else:
            raise TargetError(f"a target is a string, a dict or a Target, not {target!r}")
        self.host: Optional[Target] = Target(host) if host is not None else None
        if self.host is not None and self.host.kind.name not in HOST_KINDS:
            raise TargetError(f"target host {self.host.kind.name!r} cannot run host code; use "
                              "'llvm' or 'c'")

    # ---- queries -----------------------------------------------------------------------------
    @property
    def keys(self) -> List[str]:
        return list(self.attrs.get("keys") or self.kind.keys)

    @property
    def device_type(self) -> int:
        return self.kind.device_type

    @property
    def system_lib(self) -> bool:
        return bool(self.attrs.get("system-lib")) or "system-lib-prefix" in self.attrs

    @property
    def system_lib_prefix(self) -> Optional[str]:
        """The system-lib prefix ("" by default) or None when not building a system library."""
        return self.attrs.get("system-lib-prefix", "") if self.system_lib else None

    @property
    def mcpu(self) -> Optional[str]:
        return self.attrs.get("mcpu")

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.attrs:
            return self.attrs[name]
        return self.kind.defaults.get(name, default)

    def with_host(self, host: Optional[TargetLike]) -> "Target":
        """This target with `host` as its host (a copy of it when `host` is None)."""
        return Target(self, host=host) if host is not None else Target(self)

    def without_host(self) -> "Target":
        """This target alone, its host dropped (what a device kernel is compiled for)."""
        out = Target(self)
        out.host = None
        return out

    def export(self) -> Dict[str, Any]:
        """The dict form (accepted back by Target)."""
        out: Dict[str, Any] = {"kind": self.kind.name, "keys": self.keys, **self.attrs}
        if self.host is not None:
            out["host"] = self.host.export()
        return out

    # ---- value semantics ---------------------------------------------------------------------
    def __str__(self) -> str:
        parts = [self.kind.name, "-keys=" + ",".join(self.keys)]
        for name in sorted(self.attrs):
            if name == "keys":
                continue
            value = self.attrs[name]
            dash = "--" if name.startswith("system-lib") else "-"
            if isinstance(value, bool):
                if value:
                    parts.append(f"{dash}{name}")
            elif isinstance(value, (list, tuple)):
                parts.append(f"{dash}{name}=" + ",".join(str(v) for v in value))
            else:
                parts.append(f"{dash}{name}={value}")
        return " ".join(shlex.quote(p) if " " in p else p for p in parts)

    def __repr__(self) -> str:
        host = f", host={str(self.host)!r}" if self.host is not None else ""
        return f"Target({str(self)!r}{host})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Target(other)
        return isinstance(other, Target) and str(self) == str(other) and \
            str(self.host) == str(other.host)

    def __hash__(self) -> int:
        return hash((str(self), str(self.host)))

    # ---- context -----------------------------------------------------------------------------
    def __enter__(self) -> "Target":
        _stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        _stack().pop()

    @staticmethod
    def current(allow_none: bool = True) -> Optional["Target"]:
        """The innermost target of enclosing `with Target(...)` blocks."""
        stack = _stack()
        if stack:
            return stack[-1]
        if not allow_none:
            raise TargetError("no target is set: pass target=... or use `with Target(...)`")
        return None

    @staticmethod
    def list_kinds() -> List[str]:
        return sorted(KINDS)


# ---- parsing --------------------------------------------------------------------------------
# A system-lib prefix starts C symbol names (`__tvm_ffi_<prefix><name>`,
# `kiln_system_lib_<prefix>register`), so it is what may start a C identifier: ASCII letters,
# digits and '_', not a digit first. Empty is allowed.
_SYSTEM_LIB_PREFIX = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*)?")


def check_system_lib_prefix(prefix: Any) -> str:
    """`prefix` when it is a valid system-lib prefix; TargetError naming it and the rule
    otherwise. Everything that writes a prefix into generated code checks it here first."""
    if not isinstance(prefix, str) or not _SYSTEM_LIB_PREFIX.fullmatch(prefix):
        raise TargetError(f"invalid --system-lib-prefix {prefix!r}: it becomes part of C symbol "
                          "names, so it may hold only ASCII letters, digits and '_' and may not "
                          "start with a digit (e.g. 'model_'), or be empty")
    return prefix


def _kind(name: str) -> TargetKind:
    name = ALIASES.get(name, name)
    if name not in KINDS:
        raise TargetError(f"unknown target kind {name!r}; valid kinds: "
                          f"{', '.join(sorted(KINDS))}")
    return KINDS[name]


def _convert(kind: TargetKind, name: str, value: Any) -> Any:
    options = kind.options
    if name not in options:
        raise TargetError(f"unknown option {name!r} for target kind {kind.name!r}; valid options: "
                          f"{', '.join(sorted(options))}")
    typ = options[name]
    try:
        if typ is bool:
            if isinstance(value, str):
                if value.lower() not in ("1", "0", "true", "false"):
                    raise ValueError(value)
                return value.lower() in ("1", "true")
            return bool(value)
        if typ is int:
            return int(value)
        if typ is list:
            if isinstance(value, str):
                return [v for v in value.split(",") if v]
            return [str(v) for v in value]
        if name == "system-lib-prefix":
            return check_system_lib_prefix(str(value))
        return str(value)
    except (TypeError, ValueError) as err:
        raise TargetError(f"option {name!r} of target {kind.name!r} takes a {typ.__name__}, got "
                          f"{value!r}") from err


def _parse_string(text: str):
    words = shlex.split(text.strip())
    if not words:
        raise TargetError("empty target string; valid kinds: " + ", ".join(sorted(KINDS)))
    kind = _kind(words[0])
    attrs: Dict[str, Any] = {}
    for word in words[1:]:
        if not word.startswith("-"):
            raise TargetError(f"cannot parse {word!r} in target {text!r}: options look like "
                              "-name=value or -flag")
        name, eq, value = word.lstrip("-").partition("=")
        if not eq:
            if kind.options.get(name) not in (bool, None):
                raise TargetError(f"option {name!r} of target {kind.name!r} needs a value: "
                                  f"-{name}=...")
            value = True
        attrs[name] = _convert(kind, name, value)
    return kind, attrs


def _parse_dict(spec: Dict[str, Any]):
    if "kind" not in spec:
        raise TargetError(f"a target dict needs a 'kind'; valid kinds: "
                          f"{', '.join(sorted(KINDS))}")
    kind = _kind(str(spec["kind"]))
    attrs = {name.replace("_", "-") if name.replace("_", "-") in kind.options
             and name not in kind.options else name: value
             for name, value in spec.items() if name != "kind"}
    return kind, {name: _convert(kind, name, value) for name, value in attrs.items()}


def as_target(target: Optional[TargetLike], host: Optional[TargetLike] = None) -> Target:
    """A Target from a Target, string or dict; None means `Target.current()` or "llvm"/"c"."""
    if target is None:
        target = Target.current()
        if target is None:
            raise TargetError("no target given: pass target='c' or 'llvm' (or use "
                              "`with Target(...)`)")
    t = Target(target)
    return t.with_host(host) if host is not None else t
