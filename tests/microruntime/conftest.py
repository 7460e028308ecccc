"""Fixtures: hand-written ABI kernels (fixtures/*.c) compiled with the system C compiler."""
import os
import subprocess
import tarfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
INCLUDE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "microruntime", "include")
CC = os.environ.get("CC", "cc")


def compile_c(source, out, shared=True):
    """Compiles fixtures/<source> into `out` (a .so, or a .o when not shared)."""
    cmd = [CC, "-std=c99", "-O2", "-fPIC", "-Wall", "-Werror", "-I" + INCLUDE, "-I" + FIXTURES,
           "-o", out, os.path.join(FIXTURES, source)]
    cmd.insert(1, "-shared" if shared else "-c")
    subprocess.run(cmd, check=True)
    return out


class Kernels:
    """Builds each fixture on first use into one temporary folder."""

    def __init__(self, root):
        self.root = str(root)

    def so(self, name):
        out = os.path.join(self.root, name + ".so")
        return out if os.path.exists(out) else compile_c(name + ".c", out)

    def obj(self, name):
        out = os.path.join(self.root, name + ".o")
        return out if os.path.exists(out) else compile_c(name + ".c", out, shared=False)

    def tar(self, name):
        out = os.path.join(self.root, name + ".tar")
        if not os.path.exists(out):
            with tarfile.open(out, "w") as tar:
                tar.add(self.obj(name), arcname=name + ".o")
        return out


@pytest.fixture(scope="session")
def kernels(tmp_path_factory):
    return Kernels(tmp_path_factory.mktemp("kernels"))
