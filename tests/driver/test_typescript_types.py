"""The TypeScript example is type-checked TypeScript (examples/typescript/tsconfig.json: `checkJs`, `strict`,
`noEmit`), and the check has teeth: `tsc -p .` passes on the example as committed, and fails on a copy of it
with one deliberate mistake of the kind the types exist to catch (a misspelt defect switch or boundary, an
action the step table forgets, a memory value the twin has no name for, a twin-state field of the wrong
type). `npm test` runs the check before `node --test`, so a type error fails the example's tests.

The registry's names spelt out in examples/typescript/src/types.ts (Defect, Boundary, ActionParams, the pc
and kind unions) must be spec/names.py's: a name added to the registry and not to the example's types
fails here, and so does a misspelling (shown failing on an edited copy of the text).

Nothing is skipped: without node or the example's locked devDependencies (`npm ci --prefix
examples/typescript`, which .ci/run does) these tests fail and say so.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spec import names as N
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
        "src/actions.js", '  WakeLost: async (w, p) => took("WakeLost", await w.wakes.release(`w${p.w}`)),\n', "",
        "Property 'WakeLost' is missing"),
    "a pc the twin has no name for": ("src/finalizer.js", 'this.pc = "clear";', 'this.pc = "cleared";',
                                      "not assignable to type 'FinalizerPc'"),
    "a twin-state field of the wrong type": ("src/mapping.js", "tries: Math.min(c.recovery_attempts, cfg.maxTries),",
                                             "tries: c.recovery_error,", "not assignable to type 'TwinClaim'"),
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


# ---- the registry's names in types.ts ----

def union(text: str, name: str) -> set[str]:
    """The string literals of `export type NAME = "a" | "b" ...;` in types.ts."""
    m = re.search(rf"^export type {name} =(.*?);", text, re.MULTILINE | re.DOTALL)
    assert m, f"types.ts has no type {name}"
    return set(re.findall(r'"([^"]*)"', m.group(1)))


def action_params(text: str) -> dict[str, set[str]]:
    """`interface ActionParams`: each action and the names of its parameters."""
    body = text[text.index("export interface ActionParams {"):]
    body = body[:body.index("\n}")]
    return {m.group(1): set(re.findall(r"(\w+):", m.group(2)))
            for m in re.finditer(r"^  (\w+): (\{.*?\}|Record<string, never>);", body, re.MULTILINE)}


def registry_mismatches(text: str) -> list[str]:
    """Where types.ts's spelling of the registry differs from spec/names.py's."""
    want = {"Defect": N.DEFECTS, "Boundary": N.BOUNDARIES, "Assumption": N.ASSUMPTIONS, "AttemptName": N.ATTEMPTS,
            "SteppingActor": N.STEPPING_ACTORS, "RunnerPc": N.RUNNER_PCS, "FinalizerPc": N.FINALIZER_PCS,
            "RecoveryPc": N.RECOVERY_PCS, "Phase": [p for p in N.PHASES if p != "none"], "EventKind": N.LOG_KINDS,
            "InputKind": N.INPUT_KINDS, "InputState": N.INPUT_STATES, "EffectKind": N.EFFECT_KINDS,
            "QuarantineReason": N.QUARANTINE_REASONS, "WakeReservation": N.WAKE_RESERVATIONS}
    out = [f"{name}: types.ts {sorted(union(text, name) ^ set(names))} differ" for name, names in want.items()
           if union(text, name) != set(names)]
    params = action_params(text)
    registry = {a.name: set(a.params) for a in N.ACTIONS.values()}
    out += [f"ActionParams.{a}: types.ts {params.get(a)}, registry {registry.get(a)}"
            for a in sorted(set(params) | set(registry)) if params.get(a) != registry.get(a)]
    return out


def test_types_ts_spells_the_registry_as_spec_names_does():
    assert registry_mismatches(TYPES.read_text()) == []


@pytest.mark.parametrize("edit", [("\"wake-fresh-share-zero\" | ", ""), ("\"tool.ran\"", "\"tool.run\""),
                                  ("  WakeLost: { w: number };\n", ""), ("Steer: { n: string; i: InputRecord }",
                                                                          "Steer: { n: string }")])
def test_the_registry_check_catches_a_name_types_ts_lacks(edit):
    text = TYPES.read_text()
    assert edit[0] in text
    assert registry_mismatches(text.replace(edit[0], edit[1], 1)) != []
