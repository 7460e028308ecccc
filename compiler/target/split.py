"""`split_targets`: the kernels' target and the host target of a build, from the forms
`relay.build` and `relax.build` take: a str or Target ("opencl", "llvm -mcpu=..."), or a dict
{kind or Target: ...} naming at most one device target and at most one CPU target (TVM's
heterogeneous form), with an optional separate `target_host`."""
from __future__ import annotations

from ..ir.errors import IRError
from .target import Target


def split_targets(target, target_host=None):
    """(the kernels' target, the host target). A device target's host is `target_host`, else the
    dict's CPU target, else its own host (None: the default CPU). A CPU target is its own host.
    `target` None gives (None, target_host)."""
    if target is None:
        return None, target_host
    if isinstance(target, dict):
        tgts = [Target(k if isinstance(k, Target) or not isinstance(v, (str, Target)) else v)
                for k, v in target.items()]
        devices = [t for t in tgts if not t.kind.is_host]
        hosts = [t for t in tgts if t.kind.is_host]
        if len(devices) > 1 or len(hosts) > 1:
            raise IRError(f"build: target {target!r} names {len(devices)} device and "
                          f"{len(hosts)} CPU targets; give at most one of each")
        if not devices:
            return hosts[0] if hosts else None, target_host
        host = target_host if target_host is not None else (hosts[0] if hosts else None)
        target = devices[0]
    else:
        target = Target(target)
        host = target_host
    if target.kind.is_host:
        return target, target_host
    host = Target(host) if host is not None else target.host
    return (target.with_host(host) if host is not None else target), host


__all__ = ["split_targets"]
