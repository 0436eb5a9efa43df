"""Registry names are referred to, never spelt: outside `spec/names.py`, an action, invariant,
assumption, defect or boundary name appears as a string only in its package's binding module
(`harness/registry.py`, `impl/registry.py`), and there only as the name a `_pick` call checks at import.
The binding modules (and the TypeScript example's `src/registry.ts`) are generated from the registry by
`python -m spec.bindings`; the committed files must be what it generates (shown failing on a stale copy).

What counts: every `str` constant of the module's syntax tree whose value is a registry name, including
the literal pieces of an f-string, dictionary keys and default arguments. What does not: comments (not in
the tree) and docstrings (the first statement of a module, class or function), which are prose for a
reader; a name inside a longer string (an error message) is prose too.

In `spec/` (the twin and its tables, which spell actions and invariants as the TLA+ does) the check is
for defect names: a defect is written only in `spec/defect_names.py` and as a key of spec.mc's hook table `MC`
(the twin's MCSessionExecution.tla), so the twin's protocol modules name no defect.

The check runs per folder (one test per package of `harness/`, one for `harness/`'s own modules, one for
`impl/`, one for `binding/`, one for `spec/`), so a folder still being cleaned can be left out by name, e.g.
`pytest tests/spec/test_registry_literals.py -k "not stress"`; or run it on folders directly:
`python tests/spec/test_registry_literals.py harness/traces impl spec` (prints file:line per finding, exit 1).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from spec import bindings as B
from spec import names as N

ROOT = Path(__file__).resolve().parents[2]
NAMES = frozenset(N.ACTIONS) | frozenset(N.INVARIANTS) | frozenset(N.ASSUMPTIONS) | frozenset(N.DEFECTS) \
    | frozenset(N.BOUNDARIES)
BINDINGS = {ROOT / rel for rel in B.GENERATED if rel.endswith(".py")}  # harness/registry.py, impl/registry.py
PICK = "_pick"
SPEC = SPEC_DIR = ROOT / "spec"  # SPEC: where the spec/ rule applies (a test points it at a copy)
REGISTRY = (SPEC / "names.py", SPEC / "defect_names.py")  # where every name is defined (the defects apart)
DEFECT_NAMES = frozenset(N.DEFECTS)
MC_TABLE = (SPEC / "mc.py", "MC")  # the module and the name of the twin's hook table: its keys name defects


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


def _table_keys(tree: ast.AST, table: str) -> set[int]:
    """The keys of every dictionary in the module's `table = {...}` assignment (spec.mc's `MC`: each hook's
    alternatives keyed by defect name, as MCSessionExecution.tla's `Has("...")`)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == table for t in node.targets):
            out |= {id(k) for d in ast.walk(node.value) if isinstance(d, ast.Dict)
                    for k in d.keys if isinstance(k, ast.Constant)}
    return out


def literals(source: str, *, binding: bool = False, names=NAMES, table: str | None = None) -> list[tuple[int, str]]:
    """(line, name) for every str constant of `source` that spells a registry name, docstrings aside;
    in a binding module (`binding`), the arguments of `_pick` calls aside too; with `table`, the keys of
    that table's dictionaries aside too."""
    tree = ast.parse(source)
    allowed = _docstrings(tree) | (_picked(tree) if binding else set()) | (_table_keys(tree, table) if table else set())
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
        if path in REGISTRY:
            continue
        in_spec = path.is_relative_to(SPEC)
        table = MC_TABLE[1] if path == MC_TABLE[0] else None
        for line, name in literals(path.read_text(encoding="utf-8"), binding=path in BINDINGS, table=table,
                                   names=DEFECT_NAMES if in_spec else NAMES):
            out.append(f"{rel}:{line}: {name!r}")
    return out


def folders() -> dict[str, list[Path]]:
    """The units the check runs on: each package of harness/, harness/'s own modules, impl/, binding/."""
    out = {"harness": modules(ROOT / "harness", recursive=False)}
    for sub in sorted(p for p in (ROOT / "harness").iterdir() if (p / "__init__.py").exists()):
        out[f"harness.{sub.name}"] = modules(sub)
    out["impl"] = modules(ROOT / "impl")
    out["binding"] = modules(ROOT / "binding")
    out["spec"] = [p for p in modules(SPEC) if p not in REGISTRY]
    return out


FOLDERS = folders()


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_no_registry_name_spelt_outside_the_binding_module(folder):
    files = FOLDERS[folder]
    assert files, f"{folder} has no module: the check would pass vacuously"
    bad = findings(files)
    where = ("a defect belongs in spec.mc's hook table (a hook the protocol calls, its alternative keyed by "
             "the defect)" if folder == "spec" else
             "bind them in its registry module (harness/registry.py, impl/registry.py) and refer to the constant")
    assert not bad, f"{len(bad)} registry name(s) spelt as a literal in {folder}; {where}:\n" + "\n".join(bad)


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


def test_spec_names_a_defect_only_in_the_registry_and_the_mc_table(tmp_path, monkeypatch):
    """In spec/ a defect name planted in a protocol module fails, and so does one in spec/mc.py outside its
    table; the table's keys (every registry defect) and action names (the twin's labels) do not."""
    mc_path, table = MC_TABLE
    mc = mc_path.read_text(encoding="utf-8")
    assert len(literals(mc, names=DEFECT_NAMES)) >= len(N.DEFECTS)  # the table spells each: the exemption counts
    assert literals(mc, names=DEFECT_NAMES, table=table) == []
    planted = mc + '\nON = "renew-after-expiry" in frozenset()\n'
    assert literals(planted, names=DEFECT_NAMES, table=table) == [(planted.count("\n"), "renew-after-expiry")]
    assert findings([SPEC / "model.py"]) == []
    monkeypatch.setattr(sys.modules[__name__], "SPEC", tmp_path)  # a copy of spec/model.py, in a spec/ of its own
    bad = tmp_path / "model.py"
    bad.write_text((SPEC_DIR / "model.py").read_text(encoding="utf-8").replace(
        "def Renew(cfg, st, n):\n", 'def Renew(cfg, st, n):\n    live = "renew-after-expiry" in cfg.defects\n'),
        encoding="utf-8")
    line = bad.read_text(encoding="utf-8").splitlines().index('    live = "renew-after-expiry" in cfg.defects') + 1
    assert findings([bad]) == [f"{bad}:{line}: 'renew-after-expiry'"]
    assert "spec" in FOLDERS and not set(REGISTRY) & set(FOLDERS["spec"]) and mc_path in FOLDERS["spec"]


def test_the_binding_modules_check_at_import():
    from harness import registry as HR
    from impl import registry as IR

    for module in (HR, IR):
        assert module._pick(N.ACTIONS, "Acquire") == "Acquire"
        with pytest.raises(KeyError):
            module._pick(N.ACTIONS, "Acquier")


def test_a_literal_planted_in_a_real_module_is_found(tmp_path):
    """A copy of a module that refers to the binding (binding/actions.py), with one reference
    replaced by the name it stands for: the scan names that line, and passes the module as committed."""
    original = ROOT / "binding" / "actions.py"
    source = original.read_text(encoding="utf-8")
    assert findings([original]) == [] and source.count("R.WAKE_LOST") >= 1
    planted = tmp_path / "actions.py"
    planted.write_text(source.replace("R.WAKE_LOST", '"WakeLost"', 1), encoding="utf-8")
    line = source[:source.index("R.WAKE_LOST")].count("\n") + 1
    assert findings([planted]) == [f"{planted}:{line}: 'WakeLost'"]


# ---------------------------------------------------------------- the bindings are generated

def test_the_bindings_are_generated_and_current():
    assert B.stale() == [], f"stale generated files: run `{B.COMMAND}`"
    for rel in B.GENERATED:
        first = (ROOT / rel).read_text(encoding="utf-8").splitlines()[0]
        assert first in (f"# {B.HEADER}", f"// {B.HEADER}"), rel


def test_generation_is_deterministic(tmp_path):
    for rel in B.GENERATED:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    assert B.write(tmp_path) == list(B.GENERATED) and B.write(tmp_path) == [] and B.stale(tmp_path) == []
    assert all((tmp_path / rel).read_bytes() == (ROOT / rel).read_bytes() for rel in B.GENERATED)


def test_the_check_fails_on_a_stale_sample(tmp_path):
    """An edited, a missing and an outdated generated file are each stale (the last: the registry gained a
    defect, which impl/registry.py and the TypeScript types bind, and harness/registry.py does not)."""
    for rel in B.GENERATED:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    B.write(tmp_path)
    impl = tmp_path / "impl" / "registry.py"
    impl.write_text(impl.read_text().replace('RENEW = _pick(N.ACTIONS, "Renew")\n', ""))
    (tmp_path / "examples" / "typescript" / "src" / "registry.ts").unlink()
    assert B.stale(tmp_path) == ["impl/registry.py", "examples/typescript/src/registry.ts"]


def test_a_name_added_to_the_registry_makes_its_bindings_stale(monkeypatch):
    d = N.Defect("renew-twice", ("FencedMutation",), "none", "a defect the registry does not have")
    monkeypatch.setattr(N, "DEFECTS", {**N.DEFECTS, d.name: d})
    assert B.stale() == ["impl/registry.py", "examples/typescript/src/registry.ts",
                         "examples/typescript/src/switches.js"]
    assert 'RENEW_TWICE = _pick(N.DEFECTS, "renew-twice")' in B.impl_registry()
    assert '| "renew-twice"' in B.typescript_registry() and '  "renew-twice",' in B.typescript_switches()


def test_the_generator_command(monkeypatch, tmp_path, capsys):
    assert B.main(["--check"]) == 0 and "4 generated files current" in capsys.readouterr().out
    assert B.main(["--write"]) == 2 and capsys.readouterr().err == f"usage: {B.COMMAND} [--check]\n"
    monkeypatch.setattr(B, "ROOT", tmp_path)
    assert B.main([]) == 2 and "is not a claimcheck checkout" in capsys.readouterr().err
    for rel in B.GENERATED:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    assert B.main(["--check"]) == 1 and capsys.readouterr().out.count("stale: ") == 4
    assert B.main([]) == 0 and capsys.readouterr().out.count("wrote ") == 4
    assert B.main(["--check"]) == 0


@pytest.mark.parametrize("name, prefix, bound", [("PublishStepStarted", "", "PUBLISH_STEP_STARTED"),
                                                 ("RecoveryConvertAckLost", "", "RECOVERY_CONVERT_ACK_LOST"),
                                                 ("step-started-window", "", "STEP_STARTED_WINDOW"),
                                                 ("tool.publish_failed", "B_", "B_TOOL_PUBLISH_FAILED"),
                                                 ("Tick", "", "TICK")])
def test_the_constant_a_name_is_bound_to(name, prefix, bound):
    assert B.constant(name, prefix) == bound


def test_two_names_bound_to_one_constant_are_refused(monkeypatch):
    d = N.Defect("Renew", ("FencedMutation",), "none", "a defect spelt like an action")
    monkeypatch.setattr(N, "DEFECTS", {**N.DEFECTS, d.name: d})
    with pytest.raises(ValueError, match=r"share a constant: \['RENEW'\]"):
        B.impl_registry()


def main(argv: list[str]) -> int:
    files = [f for arg in argv for f in (modules(Path(arg)) if Path(arg).is_dir() else [Path(arg)])]
    bad = findings(files)
    print("\n".join(bad) or f"no registry name spelt in {len(files)} module(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
