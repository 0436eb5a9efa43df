"""The house rules of spec/, impl/, harness/ and binding/, each a check that is shown to fail on a sample:

- no module over 500 lines;
- a function over 80 lines says why in its docstring (a docstring with "why" or "because" in it);
- no import cycle: the packages are layered in the data flow's order (LAYERS) and a module imports only
  its own package or one before it; inside a package the modules' import graph has no cycle. The graph
  is built with `ast` from every `import` statement, function-level ones included; imports under
  `if TYPE_CHECKING:` are left out, since they never run (they name a type for an annotation).

Every check runs per package (the test ids name it), so a package still being cleaned can be left out
by name, e.g. `pytest tests/spec/test_house.py -k "not stress"`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
REASON = re.compile(r"\b(why|because)\b", re.IGNORECASE)

# The packages in the data flow's order: a module may import only its own package or one before it.
# `harness` is harness/'s own modules (harness/__init__.py; registry.py, which binds the registry names for
# every package of harness/ and imports only spec; progress.py, the long runs' progress). `harness.port` is
# a system under test as the checks drive it; the driver client (`harness.driver`) is one server behind
# it, and the bundled server (`impl`) is the other, behind its binding (`binding`): both come after every
# check, so that a check importing the server is an import against the flow, and only the command line
# (harness.cli, the pytest plugin) imports `binding`, to choose the default server. No exception layer.
LAYERS = ("spec", "harness", "harness.traces", "harness.engines", "harness.port", "harness.driver",
          "harness.conformance", "harness.stress", "harness.validation", "harness.reports", "impl", "binding",
          "harness.cli", "harness.pytest_plugin")
# a server knows the protocol (the spec's registry) and nothing of the checks that drive it
SERVER_IMPORTS = {"impl": ("spec", "impl")}


# ---------------------------------------------------------------- modules and packages

def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str, layers=LAYERS) -> str | None:
    """The longest layer that `module` is or lies inside."""
    best = None
    for layer in layers:
        if (module == layer or module.startswith(layer + ".")) and (best is None or len(layer) > len(best)):
            best = layer
    return best


def sources(root: Path = ROOT) -> dict[str, Path]:
    """Every module of spec/, impl/, harness/ and binding/, by dotted name."""
    out = {}
    for top in ("spec", "impl", "harness", "binding"):
        for path in sorted((root / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                out[module_name(path, root)] = path
    return out


SOURCES = sources()
PACKAGES = sorted({package_of(m) for m in SOURCES})


def in_package(package: str) -> dict[str, Path]:
    return {m: p for m, p in SOURCES.items() if package_of(m) == package}


# ---------------------------------------------------------------- sizes

def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[int, str, int]]:
    """(line, name, length) for every function longer than `limit` lines whose docstring gives no
    reason (no "why" or "because")."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit and not REASON.search(ast.get_docstring(node) or ""):
                out.append((node.lineno, node.name, length))
    return sorted(out)


def line_count(source: str) -> int:
    return len(source.splitlines())


# ---------------------------------------------------------------- imports

def _type_checking_only(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node, at any depth, except those under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def imports_of(module: str, source: str, known, *, is_package: bool = False) -> set[tuple[str, int]]:
    """(imported module, line) for each import in `source` of a module in `known` (the modules of the
    house; others, the standard library and third parties, are left out). `from a import b` imports
    `a.b` when that is a module, else `a`; relative imports resolve against `module`."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    out = set()
    for node in _imports(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for t in targets:
            while t and t not in known:  # `import a.b.c` of an attribute path: the longest known prefix
                t = t.rpartition(".")[0]
            if t:  # (a module importing itself stays in: a cycle of one)
                out.add((t, node.lineno))
    return out


def import_graph(srcs: dict[str, Path] = SOURCES) -> dict[str, set[tuple[str, int]]]:
    known = set(srcs)
    return {m: imports_of(m, p.read_text(encoding="utf-8"), known, is_package=p.name == "__init__.py")
            for m, p in srcs.items()}


def layer_violations(graph, layers=LAYERS) -> list[str]:
    """`a:line imports b` for every import of a later package than the importer's own."""
    rank = {layer: k for k, layer in enumerate(layers)}
    out = []
    for a, edges in sorted(graph.items()):
        pa = package_of(a, layers)
        for b, line in sorted(edges):
            pb = package_of(b, layers)
            if pa is not None and pb is not None and rank[pb] > rank[pa]:
                out.append(f"{a}:{line} imports {b} ({pb} comes after {pa})")
    return out


def cycles(graph, modules=None) -> list[list[str]]:
    """The import cycles among `modules` (default: all of `graph`): each strongly connected component
    of more than one module, and each module importing itself."""
    modules = set(graph) if modules is None else set(modules)
    succ = {m: sorted({b for b, _l in graph.get(m, ()) if b in modules}) for m in modules}
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):  # recursive Tarjan: the house has a few hundred modules at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in succ[v]:
                out.append(sorted(comp))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return sorted(out)


GRAPH = import_graph()


# ---------------------------------------------------------------- the house's own modules

@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_over_500_lines(package):
    mods = in_package(package)
    assert mods, f"{package} has no module"
    big = {str(p.relative_to(ROOT)): n for p in mods.values()
           if (n := line_count(p.read_text(encoding="utf-8"))) > MAX_MODULE_LINES}
    assert not big, f"modules over {MAX_MODULE_LINES} lines in {package}: {big}"


@pytest.mark.parametrize("package", PACKAGES)
def test_a_function_over_80_lines_says_why(package):
    bad = [f"{p.relative_to(ROOT)}:{line}: {name} ({n} lines)"
           for p in in_package(package).values()
           for line, name, n in long_functions(p.read_text(encoding="utf-8"))]
    assert not bad, (f"functions over {MAX_FUNCTION_LINES} lines with no reason in their docstring "
                     "(split them, or say why):\n" + "\n".join(bad))


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_itself_and_those_before_it(package):
    bad = layer_violations({m: GRAPH[m] for m in in_package(package)})
    assert not bad, "imports against the data flow's order " + " -> ".join(LAYERS) + ":\n" + "\n".join(bad)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_a_package(package):
    found = cycles(GRAPH, in_package(package))
    assert not found, f"import cycles inside {package}: {found}"


def server_violations(graph, allowed=SERVER_IMPORTS, layers=LAYERS) -> list[str]:
    """`a:line imports b` for every import of a server's module of a package outside its allowed ones."""
    out = []
    for a, edges in sorted(graph.items()):
        pa = package_of(a, layers)
        if pa not in allowed:
            continue
        for b, line in sorted(edges):
            pb = package_of(b, layers)
            if pb is not None and pb.split(".")[0] not in allowed[pa]:
                out.append(f"{a}:{line} imports {b} (the server {pa} imports only {', '.join(allowed[pa])})")
    return out


def test_the_server_imports_only_the_spec():
    bad = server_violations(GRAPH)
    assert not bad, "\n".join(bad)


def test_harness_imports_nothing_of_the_bundled_server():
    """The scan of "Done when" (issue 29): no module of harness/, function-level imports included, imports
    impl/; binding/ only the command line does."""
    impl = [f"{a}:{line} imports {b}" for a, edges in sorted(GRAPH.items()) if a.split(".")[0] == "harness"
            for b, line in sorted(edges) if b.split(".")[0] == "impl"]
    assert not impl, "\n".join(impl)
    binding = {a for a, edges in GRAPH.items() if a.split(".")[0] == "harness"
               for b, _ in edges if b.split(".")[0] == "binding"}
    assert binding and all(a == "harness.pytest_plugin" or a.split(".")[:2] == ["harness", "cli"] for a in binding), binding


def test_no_import_cycle_in_the_whole_house():
    """Follows from the two above (a cycle across packages needs a backward import); checked directly
    so that a layer table that lets one through is caught too."""
    assert not cycles(GRAPH), cycles(GRAPH)


def test_every_module_belongs_to_a_layer():
    assert SOURCES and all(package_of(m) is not None for m in SOURCES)
    assert set(PACKAGES) == set(LAYERS), set(LAYERS) ^ set(PACKAGES)


# ---------------------------------------------------------------- each check can fail

def test_the_function_check_sees_a_long_function_without_a_reason():
    body = "\n".join(f"    x{k} = {k}" for k in range(85))
    indented = "\n".join("    " + line for line in body.splitlines())
    sample = (f"def plain():\n    \"\"\"Does things.\"\"\"\n{body}\n\n"
              f"def explained():\n    \"\"\"Does things; one piece because the steps share locals.\"\"\"\n{body}\n\n"
              f"def short():\n    return 1\n\n"
              f"class C:\n    def method(self):\n{indented}\n")
    assert long_functions(sample) == [(1, "plain", 87), (181, "method", 86)]
    assert line_count(sample) > 250


def test_the_layer_check_sees_a_backward_import(tmp_path):
    (tmp_path / "spec").mkdir()
    (tmp_path / "harness" / "engines").mkdir(parents=True)
    files = {"spec/__init__.py": "", "spec/model.py": "def f():\n    from harness.engines import explore\n",
             "harness/__init__.py": "", "harness/engines/__init__.py": "",
             "harness/engines/explore.py": "from spec import model as M\nfrom . import liveness\n",
             "harness/engines/liveness.py": "import harness.engines.explore\n"}
    for rel, text in files.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    graph = import_graph(sources(tmp_path))
    assert graph["harness.engines.explore"] == {("spec.model", 1), ("harness.engines.liveness", 2)}
    assert graph["spec.model"] == {("harness.engines.explore", 2)}  # a function-level import counts
    assert layer_violations(graph) == [
        "spec.model:2 imports harness.engines.explore (harness.engines comes after spec)"]
    assert cycles(graph) == [["harness.engines.explore", "harness.engines.liveness", "spec.model"]]
    assert cycles(graph, ["harness.engines.explore", "harness.engines.liveness"]) == [
        ["harness.engines.explore", "harness.engines.liveness"]]


def test_the_layer_check_sees_a_check_importing_the_server(tmp_path):
    """A planted back-import: a check (harness.conformance) that imports the bundled server (impl), a
    function-level import, and one that imports its binding, are both against the flow; the command line
    importing the binding is not; a server importing a check breaks the server rule."""
    files = {"spec/__init__.py": "", "impl/__init__.py": "", "impl/db.py": "",
             "impl/node.py": "from harness.conformance import replay\n",
             "harness/__init__.py": "", "harness/conformance/__init__.py": "",
             "harness/conformance/replay.py": "def f():\n    from impl.db import Database\n",
             "harness/conformance/lockstep.py": "import binding.world\n",
             "binding/__init__.py": "", "binding/world.py": "from impl import db\n",
             "harness/cli/__init__.py": "from binding import world\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    graph = import_graph(sources(tmp_path))
    assert layer_violations(graph) == [
        "harness.conformance.lockstep:1 imports binding.world (binding comes after harness.conformance)",
        "harness.conformance.replay:2 imports impl.db (impl comes after harness.conformance)"]
    assert server_violations(graph) == [
        "impl.node:1 imports harness.conformance.replay (the server impl imports only spec, impl)"]


def test_type_checking_imports_are_left_out_and_relative_ones_resolved():
    known = {"impl", "impl.node", "impl.runner", "impl.registry"}
    src = ("from typing import TYPE_CHECKING\nfrom . import registry as R\nfrom .node import Node\n"
           "if TYPE_CHECKING:\n    from .node import Other\nelse:\n    import impl.registry\n")
    assert imports_of("impl.runner", src, known) == {("impl.registry", 2), ("impl.node", 3),
                                                      ("impl.registry", 7)}
    assert imports_of("impl", "from . import runner\n", known, is_package=True) == {("impl.runner", 1)}


def shared_test_names(root: Path) -> dict[str, list[str]]:
    """Test module basenames that more than one file under `root` has."""
    seen: dict[str, list[str]] = {}
    for p in sorted(root.rglob("test_*.py")):
        seen.setdefault(p.name, []).append(str(p.relative_to(root)))
    return {k: v for k, v in seen.items() if len(v) > 1}


def test_no_two_test_modules_share_a_name():
    """The tests directories have no __init__.py (pytest's rootdir-relative import mode), so two test
    modules of one basename make the whole run stop with an import-file mismatch at collection."""
    assert not shared_test_names(ROOT / "tests")


def test_the_name_check_sees_two_test_modules_of_one_name(tmp_path):
    for d in ("cli", "engines"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "test_shards.py").write_text("")
    assert shared_test_names(tmp_path) == {"test_shards.py": ["cli/test_shards.py", "engines/test_shards.py"]}
