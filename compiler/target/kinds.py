"""The target kinds and the options each accepts, as data.

An option has a value type: `bool` (a flag: `-fast-math` alone means true), `int`, `str`, or
`list` (comma-separated: `-mattr=+avx2,+fma`). Every kind also takes the COMMON options.
`keys` are the kind's default dispatch keys (what schedules and strategies match on).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Tuple

from microruntime.abi import DeviceType

COMMON = {
    "keys": list,
    "device": str,
    "model": str,
    "tag": str,
    "libs": list,
    "opt-level": int,
    "system-lib": bool,
    "system-lib-prefix": str,
    "link-params": bool,
}

_CPU = {
    "mcpu": str,
    "mtriple": str,
    "mattr": list,
    "mabi": str,
    "mfloat-abi": str,
    "march": str,
    "num-cores": int,
    "fast-math": bool,
    "fp-contract": str,  # "fast" (default: a*b + c may become fma) or "off" (bit-exact)
    "fast-math-nnan": bool,
    "fast-math-ninf": bool,
    "fast-math-nsz": bool,
    "fast-math-arcp": bool,
    "fast-math-contract": bool,
    "fast-math-reassoc": bool,
}

# Kinds whose host code we generate; the others are devices and need a host target.
HOST_KINDS = ("c", "llvm")

_GPU = {
    "max_num_threads": int,
    "thread_warp_size": int,
    "max_shared_memory_per_block": int,
    "max_threads_per_block": int,
}


@dataclass(frozen=True, eq=False)
class TargetKind:
    """One kind of target, as `tvm.target.TargetKind`: `Target("cuda").kind.name == "cuda"`.

    Kinds are singletons (the values of KINDS) compared by identity; `str(kind)` is its name.
    """

    name: str
    device_type: int                      # DLPack device type the kind's kernels run on
    keys: Tuple[str, ...]
    options: Dict[str, type] = field(default_factory=dict)
    defaults: Dict[str, object] = field(default_factory=dict)

    @property
    def default_keys(self) -> Tuple[str, ...]:
        """The dispatch keys of a target of this kind that sets no `-keys` (TVM's name)."""
        return self.keys

    @property
    def is_host(self) -> bool:
        """Whether the compiler generates host code for this kind (else it is a device)."""
        return self.name in HOST_KINDS

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"TargetKind({self.name!r})"


KINDS: Dict[str, TargetKind] = {
    k.name: k for k in (
        TargetKind("c", DeviceType.CPU, ("cpu",), {**COMMON, **_CPU}),
        TargetKind("llvm", DeviceType.CPU, ("cpu",), {**COMMON, **_CPU}),
        TargetKind("cuda", DeviceType.CUDA, ("cuda", "gpu"),
                   {**COMMON, **_GPU, "arch": str, "mcpu": str, "mtriple": str,
                    "registers_per_block": int},
                   # 48 KiB: the most static shared memory a block may declare on every arch
                   {"max_num_threads": 1024, "thread_warp_size": 32,
                    "max_shared_memory_per_block": 49152}),
        TargetKind("nvptx", DeviceType.CUDA, ("cuda", "gpu"),
                   {**COMMON, **_GPU, "mcpu": str, "mtriple": str},
                   {"max_num_threads": 1024, "thread_warp_size": 32,
                    "mtriple": "nvptx64-nvidia-cuda"}),
        TargetKind("opencl", DeviceType.OPENCL, ("opencl", "gpu"), {**COMMON, **_GPU},
                   {"max_num_threads": 256, "thread_warp_size": 1}),
        TargetKind("metal", DeviceType.METAL, ("metal", "gpu"),
                   {**COMMON, **_GPU, "max_function_args": int},
                   {"max_num_threads": 256, "thread_warp_size": 16,
                    "max_function_args": 31}),
        TargetKind("rocm", DeviceType.ROCM, ("rocm", "gpu"),
                   {**COMMON, **_GPU, "mcpu": str, "mtriple": str, "mattr": list},
                   {"max_num_threads": 256, "thread_warp_size": 64,
                    "mtriple": "amdgcn-amd-amdhsa-hcc"}),
        TargetKind("vulkan", DeviceType.VULKAN, ("vulkan", "gpu"),
                   {**COMMON, **_GPU, "supports_float16": bool, "supports_int8": bool,
                    "supports_int16": bool, "supports_int64": bool, "supports_float64": bool,
                    "mtriple": str, "max_function_args": int},
                   # a shader binds one storage buffer per tensor argument: 32 fit Mesa's
                   # lavapipe and every desktop GPU (set it lower for a device with fewer)
                   {"max_num_threads": 256, "thread_warp_size": 1, "max_function_args": 32}),
    )
}

# Names TVM users write that mean one of the kinds above.
ALIASES = {"cpu": "llvm", "ptx": "nvptx"}
