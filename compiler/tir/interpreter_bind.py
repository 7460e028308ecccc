"""Binding numpy arguments to a PrimFunc's parameters for the interpreter, the way the packed
API binds DLTensors: symbolic shape/stride/offset Vars take the array's values, constants are
checked, and each buffer's data Var maps to a flat view of the array's memory."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from ..ir.errors import IRError
from . import expr as E
from .interpreter_ops import np_dtype


def _bind(env: Dict[int, Any], e, value: int, what: str) -> None:
    if isinstance(e, E.Var):
        if id(e) in env and int(env[id(e)]) != value:
            raise IRError(f"interpreter: {what} is {value} but {e.name} = {int(env[id(e)])}")
        env[id(e)] = np_dtype(e.dtype).type(value)
    elif isinstance(e, E.IntImm) and e.value != value:
        raise IRError(f"interpreter: {what} is {value}, expected {e.value}")


def bind_args(func, args, env: Dict[int, Any], mem: Dict[int, np.ndarray]) -> None:
    for p, a in zip(func.params, args):
        buf = func.buffer_of(p)
        if buf is None and isinstance(a, np.ndarray):
            if not a.flags.c_contiguous:
                raise IRError(f"interpreter: argument '{p.name}' is a bare pointer and needs a "
                              "contiguous array")
            mem[id(p)] = a.reshape(-1)      # a device kernel's pointer parameter: flat memory
            continue
        if buf is None:
            env[id(p)] = np_dtype(p.dtype).type(a)
            continue
        if not isinstance(a, np.ndarray):
            raise IRError(f"interpreter: argument '{buf.name}' must be a numpy array")
        if a.dtype != np_dtype(buf.dtype):
            raise IRError(f"interpreter: argument '{buf.name}' has dtype {a.dtype}, the buffer "
                          f"is {buf.dtype}")
        if a.ndim != buf.ndim:
            raise IRError(f"interpreter: argument '{buf.name}' has {a.ndim} dimensions, the "
                          f"buffer {buf.ndim}")
        for d, (s, n) in enumerate(zip(buf.shape, a.shape)):
            _bind(env, s, n, f"{buf.name}.shape[{d}]")
        elem = [st // a.itemsize for st in a.strides]
        if buf.strides:
            for d, (s, n) in enumerate(zip(buf.strides, elem)):
                _bind(env, s, n, f"{buf.name}.strides[{d}]")
        elif a.size and not a.flags.c_contiguous:
            raise IRError(f"interpreter: argument '{buf.name}' is not contiguous; declare "
                          "the buffer with strides")
        _bind(env, buf.elem_offset, 0, f"{buf.name}.elem_offset")
        if any(st < 0 for st in elem):
            raise IRError(f"interpreter: argument '{buf.name}' has negative strides")
        span = 1 + sum((n - 1) * st for n, st in zip(a.shape, elem)) if a.size else 0
        flat = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(a.itemsize,))
        mem[id(buf.data)] = flat
