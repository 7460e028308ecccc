"""A shared library cut short fails to load with a message naming it, never a crash: the
loader checks the ELF headers and segments against the file's size before dlopen (which
otherwise maps pages past the end of the file and dies of SIGBUS touching them)."""
import os
import subprocess
import sys

import pytest

# Loads each cut in turn in one fresh process; prints one line per cut.
RUNNER = r"""
import sys
import microruntime as mr
for path in sys.argv[1:]:
    try:
        mr.load_module(path)
        print("loaded", path)
    except Exception as err:
        print("failed" if path in str(err) else "unclear", path, type(err).__name__)
    sys.stdout.flush()
print("done")
"""


def compiled_add_so(tmp_path):
    """A .so the compiler built (its real layout), else the hand-written fixture."""
    try:
        import compiler
        from compiler import te
    except ImportError:
        return None
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    path = str(tmp_path / "add.so")
    compiler.build(te.create_schedule(C.op), [A, B, C], target="llvm",
                   name="add").export_library(path)
    return path


def cut_points(size):
    points = list(range(0, min(size, 4096), 61))
    points += list(range(4096, size, size // 61 + 1))
    points += list(range(max(size - 16, 0), size))
    return sorted(set(points))


@pytest.mark.parametrize("source", ["compiler", "fixture"])
def test_every_cut_of_a_library_fails_cleanly(kernels, tmp_path, source):
    path = compiled_add_so(tmp_path) if source == "compiler" else kernels.so("add")
    if path is None:
        pytest.skip("the compiler is not installed")
    with open(path, "rb") as f:
        data = f.read()
    cuts = []
    for cut in cut_points(len(data)):
        cut_path = str(tmp_path / f"cut_{cut}.so")
        with open(cut_path, "wb") as f:
            f.write(data[:cut])
        cuts.append(cut_path)
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", RUNNER] + cuts, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    lines = out.stdout.splitlines()
    assert out.returncode == 0, f"crashed after {len(lines)} cuts:\n{out.stdout[-2000:]}"
    assert lines[-1] == "done"
    results = [line.split()[0] for line in lines[:-1]]
    assert len(results) == len(cuts)
    assert set(results) == {"failed"}, [line for line in lines if not line.startswith("failed")]


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    """The runtime opened the path before dlopen with fopen, which blocks on a FIFO until a
    writer comes; the file is now opened without blocking and refused unless regular (the C
    side is tested in tests/c/test_elf.c)."""
    fifo = tmp_path / "model.so"
    os.mkfifo(fifo)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", RUNNER, str(fifo), str(tmp_path)], env=env,
                         text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=120, check=False)
    lines = out.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:2]] == [["failed", str(fifo)],
                                                        ["failed", str(tmp_path)]], out.stdout
    assert lines[2:] == ["done"], out.stdout
