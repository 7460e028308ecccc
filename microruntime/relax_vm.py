"""The Relax virtual machine (as `tvm.runtime.relax_vm`): runs Apache TVM 0.27's VM executables,
written by TVM or by Kiln, on the microruntime.

    ex = microruntime.load_module("model.so")          # a relax.VMExecutable module
    vm = VirtualMachine(ex, microruntime.cpu())
    out = vm["main"](x)                                 # NDArray, or a (nested) list for tuples

The executable is validated when loaded (every register, constant and function index, jump
target and instruction range); every external function is resolved when the VM is created.
The interpreter, builtins and allocators are C (microruntime/src/vm).
"""
import struct
from enum import IntEnum
from numbers import Number

import numpy as np

from .abi import DEVICE_NAMES, DeviceType
from .device import Device, cpu
from .library_file import payloads, read_library_bytes
from .module import Module, num_threads
from .ndarray import NDArray, array
from .object import Object
from .packed_func import convert_func, get_global_func
from .profiling import Count, Duration, Percent, Report

__all__ = ["Executable", "VMInstrumentReturnKind", "VirtualMachine", "read_functions"]


class VMInstrumentReturnKind(IntEnum):
    """What an instrument returns before a call: NO_OP runs it, SKIP_RUN skips it."""
    NO_OP = 0
    SKIP_RUN = 1


class Executable:
    """A Relax VM executable on the runtime side: `mod` is its relax.VMExecutable Module
    (importing the kernel library when it came from a library file)."""

    def __init__(self, mod):
        if isinstance(mod, Executable):
            mod = mod.mod
        if not isinstance(mod, Module):
            raise TypeError(f"Executable expects a Module, not {type(mod).__name__}")
        if mod.type_key != "relax.VMExecutable":
            raise ValueError(f"a Module of kind {mod.type_key!r} is not a relax.VMExecutable")
        self.mod = mod

    @classmethod
    def from_bytes(cls, data, kernels=None):
        """An executable from its bytes (validated), with `kernels` (a Module) imported."""
        loader = get_global_func("ffi.Module.load_from_bytes.relax.VMExecutable")
        mod = loader(bytes(data))
        if kernels is not None:
            if not isinstance(kernels, Module) and hasattr(kernels, "asobject"):
                kernels = kernels.asobject()  # a compiler-built module: its runtime Module
            mod.import_module(kernels)
        return cls(mod)

    def jit(self):
        return self.mod

    def __getitem__(self, name):
        return self.mod[name]


class VirtualMachine:
    """Relax VM runtime."""

    NAIVE_ALLOCATOR = 1
    POOLED_ALLOCATOR = 2

    def __init__(self, rt_mod, device, memory_cfg=None, profile=False):
        mod = rt_mod
        if not isinstance(mod, Module):
            inner = getattr(mod, "mod", None)
            if not isinstance(inner, Module):
                raise ValueError("VirtualMachine expects a runtime Module or an Executable, not "
                                 f"{type(rt_mod).__name__}")
            mod = inner
        if mod.type_key != "relax.VMExecutable":
            raise ValueError(f"VirtualMachine needs a relax.VMExecutable module; this one is a "
                             f"{mod.type_key!r} module (was the library built for the graph "
                             "executor?)")
        self._exec = mod
        load = "vm_profiler_load_executable" if profile else "vm_load_executable"
        self.module = mod[load]()
        m = self.module
        self._invoke_closure = m["invoke_closure"]
        self._save_function = m["save_function"]
        self._set_input = m["set_input"]
        self._invoke_stateful = m["invoke_stateful"]
        self._get_output = m["get_output"]
        self._get_output_arity = m["get_output_arity"]
        self._get_function_arity = m["get_function_arity"]
        self._get_function_param_name = m["get_function_param_name"]
        self._set_instrument = m["set_instrument"]
        self._setup_device(device, memory_cfg)

    def _setup_device(self, dev, memory_cfg):
        devs = list(dev) if isinstance(dev, (list, tuple)) else [dev]
        for d in devs:
            if not isinstance(d, Device):
                raise TypeError("dev is expected to be Device or List[Device]")
        if devs[-1].device_type != DeviceType.CPU:
            devs.append(cpu())  # the host: shape computations run there
        default = VirtualMachine.POOLED_ALLOCATOR
        if memory_cfg is None:
            memory_cfg = {}
        elif isinstance(memory_cfg, str):
            if memory_cfg not in ("naive", "pooled"):
                raise ValueError(f"memory_cfg {memory_cfg!r}: the allocators are 'naive' and "
                                 "'pooled'")
            if memory_cfg == "naive":
                default = VirtualMachine.NAIVE_ALLOCATOR
            memory_cfg = {}
        elif not isinstance(memory_cfg, dict):
            raise TypeError("memory_cfg is expected be string or dictionary, "
                            f"but received {type(memory_cfg)}")
        kinds = {"naive": VirtualMachine.NAIVE_ALLOCATOR,
                 "pooled": VirtualMachine.POOLED_ALLOCATOR}
        init_args = []
        for d in devs:
            kind = memory_cfg.get(d, default)
            init_args += [d.device_type, d.device_id, kinds.get(kind, kind)]
        self.devices = devs
        self.module["vm_initialization"](*init_args)

    def __getitem__(self, key):
        return self.module[key]

    # ---- closures and stateful calls ----------------------------------------------------
    def invoke_closure(self, closure, *args):
        """Invokes a VM closure (or a PackedFunc) with args."""
        return self._invoke_closure(closure, *[self._convert(a) for a in args])

    def save_function(self, func_name, saved_name, *args, include_return=True, **kwargs):
        """Saves `func_name` bound to args under `saved_name` (callable as vm[saved_name]())."""
        if kwargs:
            args = self._convert_func_named_args(func_name, args, **kwargs)
        self._save_function(func_name, saved_name, int(include_return),
                            *[self._convert(a) for a in args])

    def _convert(self, arg):
        if isinstance(arg, (Object, NDArray, str)):
            return arg
        if isinstance(arg, np.ndarray):
            return array(arg)
        if isinstance(arg, (tuple, list)):
            return tuple(self._convert(x) for x in arg)
        if isinstance(arg, (Number, bool, np.generic)):
            if isinstance(arg, np.float16):
                dtype = "float16"
            elif isinstance(arg, (bool, int, np.integer, np.bool_)):
                dtype = "int32"
            else:
                dtype = "float32"
            return array(np.array(arg, dtype=dtype))
        raise TypeError(f"Unsupported type: {type(arg)}")

    def _convert_func_named_args(self, func_name, args, **kwargs):
        arity = self._get_function_arity(func_name)
        params = [self._get_function_param_name(func_name, i) for i in range(arity)]
        new_args = [None] * len(params)
        count = 0
        for key, value in kwargs.items():
            if key not in params:
                raise ValueError(f"{func_name!r} has no parameter named {key!r} "
                                 f"(parameters: {params})")
            new_args[params.index(key)] = value
            count += 1
        if len(args) + count != len(params):
            raise ValueError(f"{func_name!r} takes {len(params)} arguments, "
                             f"{len(args) + count} were given")
        it = iter(args)
        return [next(it) if a is None else a for a in new_args]

    def set_input(self, func_name, *args, **kwargs):
        """Sets the inputs of `func_name` for invoke_stateful."""
        if kwargs:
            args = self._convert_func_named_args(func_name, args, **kwargs)
        self._set_input(func_name, *[self._convert(a) for a in args])

    def invoke_stateful(self, func_name):
        """Calls `func_name` with the inputs set by set_input; results via get_outputs."""
        self._invoke_stateful(func_name)

    def get_outputs(self, func_name):
        """The result of the last invoke_stateful of `func_name`; tuples as (nested) tuples."""

        def rec(*idx):
            arity = self._get_output_arity(func_name, *idx)
            if arity == -1:
                return self._get_output(func_name, *idx)
            return tuple(rec(*idx, i) for i in range(arity))

        return rec()

    def set_instrument(self, instrument):
        """Calls instrument(func, func_symbol, before_run, ret_value, *args) around every Call
        instruction; returning VMInstrumentReturnKind.SKIP_RUN before a call skips it."""
        self._set_instrument(convert_func(instrument) if instrument is not None else None)

    # ---- timing and profiling ------------------------------------------------------------
    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0,
                       cooldown_interval_ms=0, repeats_to_cooldown=1, f_preproc=""):
        """An evaluator timing `func_name` (also "invoke_stateful" and saved functions)."""
        return self.module.time_evaluator(
            func_name, dev, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
            cooldown_interval_ms=cooldown_interval_ms, repeats_to_cooldown=repeats_to_cooldown,
            f_preproc=f_preproc)

    def profile(self, func_name, *args):
        """Runs `func_name` once to warm up, then once timing each kernel call; returns a
        Report with one row per kernel call (Name, Duration (us), Percent, Device, Count,
        Argument Shapes)."""
        rows = self.module["profile"](func_name, *[self._convert(a) for a in args])
        dev = self.devices[0]
        dev_name = f"{DEVICE_NAMES.get(dev.device_type, 'dev')}{dev.device_id}"
        total = sum(r[1] for r in rows) / 1e3
        calls = []
        for name, ns, shapes in rows:
            us = ns / 1e3
            calls.append({
                "Name": name, "Duration (us)": Duration(us),
                "Percent": Percent(100.0 * us / total if total else 0.0),
                "Device": dev_name, "Count": Count(1), "Argument Shapes": shapes,
            })
        return Report(calls, {dev_name: {"Duration (us)": Duration(total)}},
                      {"Number of threads": Count(num_threads()), "Executor": "VM"})


# ---- the function table, read from the file ------------------------------------------------
_KIND = "relax.VMExecutable"
_MAGICS = (0xD225DE2F4214151E, 0xD225DE2F4214151D)
_VM_FUNC = 1  # a function's kind in the table: a bytecode function (0: packed, 2: TIR)


def _function_table(payload):
    """[(name, number of arguments, [param names])] of the VM functions (kind 1) in
    executable bytes."""
    def u64(pos):
        return struct.unpack_from("<Q", payload, pos)[0], pos + 8

    def string(pos):
        n, pos = u64(pos)
        if n > len(payload) - pos:
            raise ValueError("truncated")
        return payload[pos:pos + n].decode("utf-8"), pos + n

    magic, pos = u64(0)
    if magic not in _MAGICS:
        raise ValueError("not an executable")
    _, pos = string(pos)
    count, pos = u64(pos)
    if count > len(payload):
        raise ValueError("truncated")
    funcs = []
    for _ in range(count):
        (kind,) = struct.unpack_from("<i", payload, pos)
        name, pos = string(pos + 4)
        (num_args,) = struct.unpack_from("<q", payload, pos + 16)
        nparams, pos = u64(pos + 32)
        if nparams > len(payload):
            raise ValueError("truncated")
        params = []
        for _ in range(nparams):
            p, pos = string(pos)
            params.append(p)
        if kind == _VM_FUNC:
            funcs.append((name, num_args, params))
    return funcs


def read_functions(path):
    """[(name, number of arguments, [param names])] of the VM functions of the Relax VM
    executable exported at `path` (.so, .a, .o or .tar), read from the file's library blob
    without loading it. ValueError when the file holds no Relax VM executable."""
    for payload in payloads(read_library_bytes(path), _KIND):
        try:
            return _function_table(payload)
        except (ValueError, struct.error, UnicodeDecodeError):
            continue
    raise ValueError(f"{path}: no Relax VM executable in this file")
