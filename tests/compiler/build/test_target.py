"""compiler.target.Target: parsing, canonical text, contexts, errors."""
import pytest

from compiler import TargetError
from compiler.target import Target


def test_parse_and_canonical_round_trip():
    t = Target("llvm -mcpu=znver4 -mattr=+avx2,+fma --system-lib")
    assert t.kind.name == "llvm"
    assert t.attrs == {"mcpu": "znver4", "mattr": ["+avx2", "+fma"], "system-lib": True}
    assert str(t) == "llvm -keys=cpu -mattr=+avx2,+fma -mcpu=znver4 --system-lib"
    assert Target(str(t)) == t
    assert t.system_lib_prefix == ""


def test_dict_form_and_host():
    t = Target({"kind": "cuda", "arch": "sm_80", "host": "llvm"})
    assert t.kind.name == "cuda" and t.attrs["arch"] == "sm_80"
    assert t.host.kind.name == "llvm"
    assert t.keys == ["cuda", "gpu"]
    assert t.get("max_num_threads") == 1024


def test_aliases_and_gpu_kinds():
    assert Target("nvptx").keys == ["cuda", "gpu"]
    assert Target("ptx").kind.name == "nvptx"
    for kind in ("opencl", "metal", "vulkan"):
        assert Target(kind).kind.name == kind


def test_system_lib_prefix():
    t = Target("c --system-lib-prefix=mod_")
    assert t.system_lib and t.system_lib_prefix == "mod_"
    assert Target("c").system_lib_prefix is None


def test_context():
    assert Target.current() is None
    with Target("c -opt-level=3") as t:
        assert Target.current() is t
        with Target("llvm"):
            assert Target.current().kind.name == "llvm"
        assert Target.current().attrs["opt-level"] == 3
    assert Target.current() is None


@pytest.mark.parametrize("text,phrase", [
    ("tpu", "unknown target kind 'tpu'; valid kinds: c, cuda, llvm, metal, nvptx, opencl"),
    ("c -mcpux=a", "unknown option 'mcpux' for target kind 'c'; valid options: device"),
    ("llvm -opt-level=high", "option 'opt-level' of target 'llvm' takes a int"),
    ("llvm -mcpu", "option 'mcpu' of target 'llvm' needs a value"),
    ("llvm mcpu=x", "options look like -name=value"),
])
def test_errors(text, phrase):
    with pytest.raises(TargetError) as err:
        Target(text)
    assert phrase in str(err.value)
