"""Registry names are referred to, never spelt: outside `spec/names.py`, an action, invariant,
assumption, defect or boundary name appears as a string only in its package's binding module
(`harness/registry.py`, `impl/registry.py`), and there only as the name a `_pick` call checks at import.

What counts: every `str` constant of the module's syntax tree whose value is a registry name, including
the literal pieces of an f-string, dictionary keys and default arguments. What does not: comments (not in
the tree) and docstrings (the first statement of a module, class or function), which are prose for a
reader; a name inside a longer string (an error message) is prose too.

The check runs per folder (one test per package of `harness/`, one for `harness/`'s own modules, one for
`impl/`, one for `binding/`), so a folder still being cleaned can be left out by name, e.g.
`pytest tests/spec/test_registry_literals.py -k "not stress"`; or run it on folders directly:
`python tests/spec/test_registry_literals.py harness/traces impl` (prints file:line per finding, exit 1).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from spec import names as N

ROOT = Path(__file__).resolve().parents[2]
NAMES = frozenset(N.ACTIONS) | frozenset(N.INVARIANTS) | frozenset(N.ASSUMPTIONS) | frozenset(N.DEFECTS) \
    | frozenset(N.BOUNDARIES)
BINDINGS = {ROOT / "harness" / "registry.py", ROOT / "impl" / "registry.py"}
PICK = "_pick"


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def _picked(tree: ast.AST) -> set[int]:
    """The string arguments of `_pick(table, "Name")` calls: the one place a binding module spells a name."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == PICK:
            out |= {id(a) for a in node.args if isinstance(a, ast.Constant)}
    return out


def literals(source: str, *, binding: bool = False, names=NAMES) -> list[tuple[int, str]]:
    """(line, name) for every str constant of `source` that spells a registry name, docstrings aside;
    in a binding module (`binding`), the arguments of `_pick` calls aside too."""
    tree = ast.parse(source)
    allowed = _docstrings(tree) | (_picked(tree) if binding else set())
    found = [(node.lineno, node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
             and id(node) not in allowed]
    return sorted(found)


def modules(folder: Path, *, recursive: bool = True) -> list[Path]:
    pattern = "**/*.py" if recursive else "*.py"
    return sorted(p for p in folder.glob(pattern) if "__pycache__" not in p.parts)


def findings(files) -> list[str]:
    """`file:line: 'Name'` for every spelt registry name in these files."""
    out = []
    for path in files:
        path = Path(path).resolve()
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        for line, name in literals(path.read_text(encoding="utf-8"), binding=path in BINDINGS):
            out.append(f"{rel}:{line}: {name!r}")
    return out


def folders() -> dict[str, list[Path]]:
    """The units the check runs on: each package of harness/, harness/'s own modules, impl/, binding/."""
    out = {"harness": modules(ROOT / "harness", recursive=False)}
    for sub in sorted(p for p in (ROOT / "harness").iterdir() if (p / "__init__.py").exists()):
        out[f"harness.{sub.name}"] = modules(sub)
    out["impl"] = modules(ROOT / "impl")
    out["binding"] = modules(ROOT / "binding")
    return out


FOLDERS = folders()


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_no_registry_name_spelt_outside_the_binding_module(folder):
    files = FOLDERS[folder]
    assert files, f"{folder} has no module: the check would pass vacuously"
    bad = findings(files)
    assert not bad, (f"{len(bad)} registry name(s) spelt as a literal in {folder}; bind them in its "
                     "registry module (harness/registry.py, impl/registry.py) and refer to the constant:\n"
                     + "\n".join(bad))


def test_the_check_sees_what_it_should():
    """A sample module with a literal fails; comments and docstrings do not count; prose does not."""
    assert len(NAMES) == (len(N.ACTIONS) + len(N.INVARIANTS) + len(N.ASSUMPTIONS) + len(N.DEFECTS)
                          + len(N.BOUNDARIES)) > 40  # the registry's kinds do not share a name
    sample = '\n'.join([
        '"""Module docstring naming Acquire."""',
        '# "Acquire" in a comment',
        'X = "Acquire"',
        'def f(name="TypeOK"):',
        '    """Acquire"""',
        '    return {"step-started-window": 1}, f"{name}", name == "acquire.committed"',
        'class C:',
        '    """TimelyDispatch"""',
        '    y = ("TimelyDispatch",)',
        'msg = "Acquire is refused"  # prose',
        'z = f"{X}" "Heartbeat"',
    ]) + '\n'
    assert literals(sample) == [(3, "Acquire"), (4, "TypeOK"), (6, "acquire.committed"),
                                (6, "step-started-window"), (9, "TimelyDispatch"), (11, "Heartbeat")]


def test_a_binding_module_spells_names_only_in_pick():
    sample = 'A = _pick(N.ACTIONS, "Acquire")\nB = "Renew"\nC = other(N.ACTIONS, "Dispatch")\n'
    assert literals(sample, binding=True) == [(2, "Renew"), (3, "Dispatch")]
    assert literals(sample) == [(1, "Acquire"), (2, "Renew"), (3, "Dispatch")]


def test_findings_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""doc"""\n\nif action in ("Heartbeat", "Crash"):\n    pass\n', encoding="utf-8")
    assert findings([bad]) == [f"{bad}:3: 'Crash'", f"{bad}:3: 'Heartbeat'"]


def test_the_binding_modules_check_at_import():
    from harness import registry as HR
    from impl import registry as IR

    for module in (HR, IR):
        assert module._pick(N.ACTIONS, "Acquire") == "Acquire"
        with pytest.raises(KeyError):
            module._pick(N.ACTIONS, "Acquier")


def main(argv: list[str]) -> int:
    files = [f for arg in argv for f in (modules(Path(arg)) if Path(arg).is_dir() else [Path(arg)])]
    bad = findings(files)
    print("\n".join(bad) or f"no registry name spelt in {len(files)} module(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
