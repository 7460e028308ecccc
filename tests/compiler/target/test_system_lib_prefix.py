"""The system-lib prefix becomes part of C symbol names and C string literals: only a C
identifier prefix is accepted, where the target is parsed and again in every emitter."""
import pytest

import microruntime
from compiler import TargetError, build, lower, te
from compiler.export import (
    library_bin_asm_source,
    library_bin_c_source,
    library_bin_register_c_source,
)
from compiler.target import Target, check_system_lib_prefix

BAD = ['x");}__attribute__((constructor)) static void f(void){system("id");}//',
       "a.b-c/", "a b", "1abc", "mod*/", "caf\u00e9_", "-"]
GOOD = ["", "model_", "_m", "M1_", "a"]


@pytest.mark.parametrize("prefix", BAD)
def test_bad_prefix_in_target_string_is_refused(prefix):
    with pytest.raises(TargetError) as err:
        Target(f"llvm --system-lib '--system-lib-prefix={prefix}'")
    message = str(err.value)
    assert repr(prefix) in message
    assert "letters, digits and '_'" in message and "may not start with a digit" in message


@pytest.mark.parametrize("prefix", BAD)
def test_bad_prefix_in_target_dict_is_refused(prefix):
    with pytest.raises(TargetError, match="invalid --system-lib-prefix"):
        Target({"kind": "c", "system_lib_prefix": prefix})
    with pytest.raises(TargetError, match="invalid --system-lib-prefix"):
        check_system_lib_prefix(prefix)


@pytest.mark.parametrize("prefix", GOOD)
def test_c_identifier_prefixes_are_accepted(prefix):
    t = Target(f"c --system-lib-prefix={prefix}")
    assert t.system_lib and t.system_lib_prefix == prefix
    assert Target(str(t)) == t


def _lowered(prefix):
    A = te.placeholder((8,), name="A")
    B = te.compute(A.shape, lambda i: A[i] + 1.0, name="B")
    mod = lower(te.create_schedule(B.op), [A, B], name="add_one")
    return mod.with_attr("system_lib_prefix", prefix)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_emitters_refuse_an_unchecked_prefix(target):
    """A prefix set on the module directly (not through a Target) is checked by the host code
    generators before it reaches any generated text."""
    with pytest.raises(TargetError, match="invalid --system-lib-prefix 'x\\(\\); //'"):
        build(_lowered("x(); //"), target=target)


def test_blob_sources_refuse_an_unchecked_prefix():
    for make in (lambda p: library_bin_c_source(b"\0" * 8, p),
                 lambda p: library_bin_asm_source("/tmp/devc.bin", p),
                 library_bin_register_c_source):
        with pytest.raises(TargetError, match="invalid --system-lib-prefix"):
            make('a"); system("id'),
        assert "good_" in make("good_")


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_valid_prefix_builds_and_registers_the_functions(target):
    prefix = f"kiln_prefix_{target}_"
    build(_lowered(prefix), target=target)  # loading it registers its functions
    assert microruntime.system_lib(prefix).implements_function("add_one")


def test_compile_command_reports_a_bad_prefix_in_one_line(tmp_path, capsys):
    import onnx

    from compiler.cli import main
    from compiler.frontend.testing import onnx_models

    model = str(tmp_path / "mlp.onnx")
    onnx.save(onnx_models.mlp(batch=2).model, model)
    out = tmp_path / "mlp.a"
    status = main(["compile", model, "--quiet", "-o", str(out),
                   "--target", "llvm --system-lib '--system-lib-prefix=a b'"])
    err = capsys.readouterr().err.strip()
    assert status == 1 and not out.exists()
    assert err.startswith("error: invalid --system-lib-prefix 'a b'") and "\n" not in err
