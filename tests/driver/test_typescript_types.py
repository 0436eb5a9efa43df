"""The TypeScript example is type-checked TypeScript (examples/typescript/tsconfig.json: `checkJs`, `strict`,
`noEmit`), and the check has teeth: `tsc -p .` passes on the example as committed, and fails on a copy of it
with one deliberate mistake of the kind the types exist to catch (a misspelt defect switch or boundary, an
action the step table forgets, a memory value the twin has no name for, a twin-state field of the wrong
type). `npm test` runs the check before `node --test`, so a type error fails the example's tests.

The registry's names (Defect, Boundary, ActionParams, the pc and kind unions) are generated from
spec/names.py into examples/typescript/src/registry.ts (`python -m spec.bindings`; tests/spec/
test_registry_literals.py checks it is current), and src/types.ts re-exports them and spells none itself.

Nothing is skipped: without node or the example's locked devDependencies (`npm ci --prefix
examples/typescript`, which .ci/run does) these tests fail and say so.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spec import bindings as B
from test_typescript import EXAMPLE, _installed

TSC = EXAMPLE / "node_modules" / "typescript" / "bin" / "tsc"
TYPES = EXAMPLE / "src" / "types.ts"


def tsc(folder: Path) -> subprocess.CompletedProcess[str]:
    _installed()
    if not TSC.is_file():
        pytest.fail(f"{TSC} is missing: run `npm ci --prefix {EXAMPLE}` (its devDependencies hold typescript)")
    # run in the folder: tsc names each file relative to it
    return subprocess.run(["node", str(TSC), "-p", "."], cwd=folder, capture_output=True, text=True, timeout=300)


def copy_of_example(tmp: Path) -> Path:
    """The example's checked files in `tmp`, its installed node_modules linked (nothing is installed)."""
    out = tmp / "example"
    out.mkdir()
    for name in ("src", "test"):
        shutil.copytree(EXAMPLE / name, out / name)
    for name in ("tsconfig.json", "package.json"):
        shutil.copy(EXAMPLE / name, out / name)
    (out / "node_modules").symlink_to(EXAMPLE / "node_modules", target_is_directory=True)
    return out


def test_the_example_type_checks():
    done = tsc(EXAMPLE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_npm_test_runs_the_type_check_first():
    package = json.loads((EXAMPLE / "package.json").read_text())
    assert package["scripts"]["test"].startswith("tsc -p . && "), package["scripts"]
    assert set(package["devDependencies"]) >= {"typescript", "@types/node"}
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in package["devDependencies"].values()), "pin exactly"
    options = json.loads((EXAMPLE / "tsconfig.json").read_text())["compilerOptions"]
    assert options["checkJs"] and options["strict"] and options["noEmit"], options


# (file, text as committed, the mistake, what tsc must say about that file)
MISTAKES = {
    "misspelt defect switch": ("src/runner.js", 'cfg.has("memory-before-publish")', 'cfg.has("memory-before-publsh")',
                               "not assignable to parameter of type 'Defect'"),
    "misspelt boundary": ("src/runner.js", 'fire("renew.committed")', 'fire("renew.commited")',
                          "not assignable to parameter of type 'Boundary'"),
    "an action the step table forgets": (
        "src/actions.js", '  WakeSync: async (w, p) => took("WakeSync", await tiedSync(w, p.w)),\n', "",
        "Property 'WakeSync' is missing"),
    "a pc the twin has no name for": ("src/finalizer.js", 'this.pc = "clear";', 'this.pc = "cleared";',
                                      "not assignable to type 'FinalizerPc'"),
    "a twin-state field of the wrong type": ("src/mapping.js", "tries: Math.min(c.recovery_attempts, cfg.maxTries),",
                                             "tries: c.recovery_error,", "not assignable to type 'number'"),
    "a parameter of the wrong type": ("src/node.js", "return this.finalizer.cancel(session);",
                                      "return this.finalizer.cancel(this.runner.execution);",
                                      "not assignable to parameter of type 'string'"),
}


def test_a_copy_of_the_example_type_checks_as_committed(tmp_path):
    done = tsc(copy_of_example(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr  # so a failure below is the mistake's


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_a_type_error_fails_the_check(tmp_path, mistake):
    file, committed, wrong, says = MISTAKES[mistake]
    copy = copy_of_example(tmp_path)
    source = (copy / file).read_text()
    assert source.count(committed) == 1, f"{file} no longer holds {committed!r}: update MISTAKES"
    (copy / file).write_text(source.replace(committed, wrong))
    done = tsc(copy)
    assert done.returncode != 0, f"tsc accepted {mistake}"
    assert re.search(rf"^{re.escape(file)}\(\d+,\d+\): error TS\d+: .*{re.escape(says)}", done.stdout, re.MULTILINE), \
        done.stdout


# ---- the registry's names: generated into registry.ts, re-exported by types.ts ----

REGISTRY = EXAMPLE / "src" / "registry.ts"
REGISTRY_REL = str(REGISTRY.relative_to(B.ROOT))


def exported_types(text: str) -> set[str]:
    """The names of `export type NAME` and `export interface NAME` declarations."""
    return set(re.findall(r"^export (?:type|interface) (\w+)\b", text, re.MULTILINE))


def test_types_ts_re_exports_the_generated_registry_and_spells_none_of_it():
    generated = exported_types(REGISTRY.read_text())
    assert REGISTRY_REL in B.GENERATED and REGISTRY.read_text() == B.typescript_registry()
    assert {"Defect", "Boundary", "ActionParams", "RunnerPc", "QuarantineReason"} <= generated
    types = TYPES.read_text()
    assert 'export type * from "./registry.js";' in types
    assert exported_types(types) & generated == set()


def test_a_union_spelt_in_types_ts_again_is_caught():
    text = TYPES.read_text() + '\nexport type Defect = "memory-before-publish";\n'
    assert exported_types(text) & exported_types(REGISTRY.read_text()) == {"Defect"}


def test_a_type_dropped_from_the_generated_registry_fails_the_check(tmp_path):
    """The example's code names the generated types: a registry.ts without `Boundary` fails tsc."""
    copy = copy_of_example(tmp_path)
    text = (copy / "src" / "registry.ts").read_text()
    start = text.index("export type Boundary =")
    (copy / "src" / "registry.ts").write_text(text[:start] + text[text.index(";", start) + 1:])
    done = tsc(copy)
    assert done.returncode != 0, "tsc accepted a registry.ts without Boundary"
    assert re.search(r"^src/failpoints\.js\(\d+,\d+\): error TS\d+: .*has no exported member 'Boundary'", done.stdout,
                     re.MULTILINE), done.stdout
