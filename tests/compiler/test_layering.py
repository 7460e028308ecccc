"""The compiler's layering: no import cycles among its modules, no imports hidden inside
functions to dodge one, and compiler.ir (shared by every IR level) imports no IR level."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "compiler"
# Imports deferred on purpose: optional dependencies, loaded only when their feature is used.
# (compiler.target.llvm_intrinsics reads the LLVM inside llvmlite.)
DEFERRED_OK = {"llvmlite", "jinja2", "compiler.codegen.llvm", "compiler.target.llvm_intrinsics",
               "microruntime", "dask", "distributed", "ray", "xgboost"}


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path, parts[-1] == "__init__"


MODULES = {name: (path, is_pkg) for name, path, is_pkg in _modules()}


def _resolve(module, is_pkg, node):
    """The absolute names an ImportFrom/Import node refers to (modules where they are ones)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = module if is_pkg else module.rsplit(".", 1)[0]
    for _ in range(node.level - 1):
        base = base.rsplit(".", 1)[0]
    target = (base + "." + node.module if node.module else base) if node.level else node.module
    out = []
    for a in node.names:
        sub = f"{target}.{a.name}"
        out.append(sub if sub in MODULES else target)
    return out


def _imports(deferred: bool):
    """module -> set of compiler modules it imports at module level (or inside functions)."""
    graph = {}
    for name, (path, is_pkg) in MODULES.items():
        tree = ast.parse(path.read_text())
        found = set()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            inside = node.col_offset > 0
            if inside != deferred:
                continue
            found.update(_resolve(name, is_pkg, node))
        graph[name] = found
    return graph


def _without_parent_edges(graph):
    """Edges from a package's __init__ to its own submodules are how packages re-export; a
    submodule importing its parent package's names is the cycle we look for."""
    return {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in graph.items()}


def test_no_import_cycles(find_cycle):
    cycle = find_cycle(_without_parent_edges(_imports(deferred=False)), MODULES)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_imports_inside_functions():
    hidden = {m: sorted(d for d in deps if not any(d == ok or d.startswith(ok + ".")
                                                   for ok in DEFERRED_OK))
              for m, deps in _imports(deferred=True).items()}
    hidden = {m: d for m, d in hidden.items() if d}
    assert not hidden, f"imports inside functions: {hidden}"


@pytest.mark.parametrize("level", ["compiler.tir", "compiler.te", "compiler.relax",
                                   "compiler.codegen", "compiler.arith"])
def test_ir_core_imports_no_ir_level(level):
    for name, deps in _imports(deferred=False).items():
        if name.startswith("compiler.ir"):
            assert not any(d.startswith(level) for d in deps), (name, deps)


@pytest.mark.parametrize("level", ["compiler.tir", "compiler.te", "compiler.arith",
                                   "compiler.codegen", "compiler.topi"])
def test_loop_levels_import_no_graph_level(level):
    """The graph level (compiler.relax) builds on the loop IR, never the reverse."""
    for name, deps in _imports(deferred=False).items():
        if name == level or name.startswith(level + "."):
            assert not any(d.startswith("compiler.relax") for d in deps), (name, deps)


# Floors that must not import a floor above them: {floor: the packages it never imports}.
DOWNWARD_ONLY = {
    "compiler.relax": ("compiler.autotvm", "compiler.relay", "compiler.frontend"),
    "compiler.codegen": ("compiler.runtime_module", "compiler.relax", "compiler.relay",
                         "compiler.autotvm"),
    "compiler.tir": ("compiler.runtime_module", "compiler.autotvm"),
    "compiler.topi": ("compiler.autotvm", "compiler.relay", "compiler.runtime_module"),
}


@pytest.mark.parametrize("floor", sorted(DOWNWARD_ONLY))
def test_floor_imports_nothing_above_it(floor):
    above = DOWNWARD_ONLY[floor]
    bad = {name: sorted(d for d in deps if any(d == a or d.startswith(a + ".") for a in above))
           for name, deps in {**_imports(deferred=False), **_imports(deferred=True)}.items()
           if name == floor or name.startswith(floor + ".")}
    bad = {m: d for m, d in bad.items() if d}
    assert not bad, f"{floor} imports a floor above it: {bad}"


def _package(module: str) -> str:
    path, is_pkg = MODULES[module]
    return module if is_pkg else module.rsplit(".", 1)[0]


def test_no_private_names_imported_across_packages():
    """`from pkg.mod import _name` only within pkg: a private name is its package's business."""
    bad = []
    for name, (path, is_pkg) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            for alias, target in zip(node.names, _resolve(name, is_pkg, node)):
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and target in MODULES and \
                        _package(target) != _package(name):
                    bad.append(f"{name} imports {alias.name} from {target}")
    assert not bad, "\n".join(bad)
