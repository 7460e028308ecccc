import os
import subprocess
import sys

CODE = r"""
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("llvmlite", "jinja2", "compiler", "tvm", "tvm_ffi"):
            raise ImportError(f"blocked: {name}")
        return None

sys.meta_path.insert(0, Block())
import numpy as np
import microruntime as mr
a = mr.nd.array(np.arange(3, dtype="float32"))
f = mr.convert(lambda x: x)
assert f(a).same_as(a)
mr.load_param_dict(mr.save_param_dict({"a": a}))
bad = [m for m in sys.modules if m.split(".")[0] in ("llvmlite", "jinja2", "compiler")]
assert not bad, bad
print("ok")
"""


def test_imports_without_compiler_dependencies():
    import microruntime

    root = os.path.dirname(os.path.dirname(os.path.abspath(microruntime.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env,
                          cwd=os.path.dirname(os.path.abspath(__file__)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
