"""The runtime package's layering, read from its source with ast: its modules import each other
without a cycle, no import hides inside a function (or a class) to dodge one, no module imports
what only the compiler needs, and type indices are named (abi.TypeIndex), not written as
numbers."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "microruntime"
# Imports deferred on purpose: optional dependencies, loaded only when their feature is used.
DEFERRED_OK = {"ml_dtypes"}
# What the compiler needs and the runtime must not (it runs where the compiler is absent).
COMPILER_ONLY = {"compiler", "llvmlite", "jinja2"}


def _modules():
    for path in sorted(PKG.glob("*.py")):
        if path.name == "build_ffi.py":  # the build script of the extension, not the package
            continue
        name = "microruntime" if path.stem == "__init__" else f"microruntime.{path.stem}"
        yield name, path


MODULES = dict(_modules())


def _resolve(module, node):
    """The absolute names an Import/ImportFrom node refers to (modules where they are ones)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module if module == "microruntime" else module.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            base = base.rsplit(".", 1)[0]
        target = base + "." + node.module if node.module else base
    else:
        target = node.module
    out = []
    for a in node.names:
        sub = f"{target}.{a.name}"
        out.append(sub if sub in MODULES else target)
    return out


def _imports_by_scope(tree):
    """(module-level import nodes, import nodes inside a function or class body)."""
    top, inner = [], []

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (inner if nested else top).append(child)
            scope = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                       ast.Lambda))
            visit(child, nested or scope)

    visit(tree, False)
    return top, inner


def _graph(deferred):
    """module -> the names it imports at module level (or, deferred, inside functions)."""
    graph = {}
    for name, path in MODULES.items():
        top, inner = _imports_by_scope(ast.parse(path.read_text()))
        graph[name] = {dep for node in (inner if deferred else top)
                       for dep in _resolve(name, node)}
    return graph


def test_the_package_is_read_whole():
    assert {"microruntime", "microruntime.convert", "microruntime.packed_func",
            "microruntime.module", "microruntime.__main__"} <= set(MODULES)


def test_no_import_cycles(find_cycle):
    """Edges from the package (__init__) to its modules count too: a module that imports the
    package's names closes a cycle through it."""
    cycle = find_cycle(_graph(deferred=False), MODULES)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_one(find_cycle):
    graph = {"microruntime.object": {"microruntime.convert"},
             "microruntime.convert": {"microruntime.device"},
             "microruntime.device": {"microruntime.object", "numpy"}}
    assert find_cycle(graph, MODULES) == ["microruntime.convert", "microruntime.device",
                                          "microruntime.object", "microruntime.convert"]


def test_no_imports_inside_functions():
    hidden = {m: sorted(d for d in deps
                        if not any(d == ok or d.startswith(ok + ".") for ok in DEFERRED_OK))
              for m, deps in _graph(deferred=True).items()}
    hidden = {m: d for m, d in hidden.items() if d}
    assert not hidden, f"imports inside functions: {hidden}"


def test_imports_nothing_of_the_compiler():
    found = {m: sorted(d for d in deps if d.split(".")[0] in COMPILER_ONLY)
             for deferred in (False, True) for m, deps in _graph(deferred).items()}
    found = {m: d for m, d in found.items() if d}
    assert not found, f"compiler dependencies imported by the runtime: {found}"


# Where a type index meets a number: in a comparison with `.type_index` (or a variable named
# type_index or t), as the key of WRAPPERS, as the first argument of wrap_object.
_TYPE_INDEX_NAMES = {"type_index", "t"}


def _is_type_index_expr(node):
    if isinstance(node, ast.Attribute):
        return node.attr == "type_index"
    return isinstance(node, ast.Name) and node.id in _TYPE_INDEX_NAMES


def _int_literal(node):
    return isinstance(node, ast.Constant) and type(node.value) is int


def _literal_type_indices(tree):
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_type_index_expr(s) for s in sides):
                found += [s for s in sides if _int_literal(s)]
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                node.value.id == "WRAPPERS" and _int_literal(node.slice):
            found.append(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "wrap_object" and node.args and _int_literal(node.args[0]):
            found.append(node.args[0])
    return found


def test_type_indices_are_named():
    found = {name: [f"line {n.lineno}: {n.value}" for n in _literal_type_indices(
        ast.parse(path.read_text()))] for name, path in MODULES.items()}
    found = {m: lines for m, lines in found.items() if lines}
    assert not found, f"type indices written as numbers (use abi.TypeIndex): {found}"


def test_the_literal_finder_finds_them():
    tree = ast.parse("WRAPPERS[73] = M\nif result.type_index == 0: pass\n"
                     "wrap_object(71, h)\nif t >= 64: pass\n"
                     "WRAPPERS[TypeIndex.MODULE] = M\nif x.type_index == T.NONE: pass\n")
    assert sorted(n.value for n in _literal_type_indices(tree)) == [0, 64, 71, 73]
