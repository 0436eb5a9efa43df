"""The mutation oracle's per-check selection under StrykerJS (ci/mutation/oracle.py `--coverage`): the dry run
maps which mutants each check reaches, a mutant's run runs only those checks, and nothing in the map can
make a check skip a mutant it reached. The checks here stand in for claimcheck's (each "reaches" fixed
mutants and fails on one); the last test runs the TypeScript driver itself recording what it reached."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ci" / "mutation"))
import oracle  # noqa: E402

TS = ROOT / "examples" / "typescript"
# check -> the mutants its run reaches; "b" kills mutant "7"
REACH = {"a": ["1", "2"], "b": ["2", "7"], "c": []}
CHECKS = [(name, [name]) for name in REACH]


@pytest.fixture
def fake(monkeypatch):
    """claimcheck's entry point replaced by a stand-in that records, as the driver does, what it reached."""
    ran: list[str] = []

    def main(argv):
        name = argv[0]
        ran.append(name)
        if oracle.REACHED in os.environ and not os.environ.get("NO_RECORD"):
            with open(os.environ[oracle.REACHED], "a", encoding="utf-8") as f:
                f.write(json.dumps(REACH[name]) + "\n")
        return 1 if os.environ.get(oracle.ACTIVE) == "7" and name == "b" else 0

    monkeypatch.setattr(oracle, "claimcheck", lambda: main)
    monkeypatch.delenv(oracle.ACTIVE, raising=False)
    return ran


def run(path, said=None):
    return oracle.run("./driver", CHECKS, say=(said.append if said is not None else lambda _: None),
                      coverage=str(path))


def test_the_dry_run_maps_each_check_and_a_mutant_runs_only_the_checks_that_reach_it(fake, tmp_path,
                                                                                       monkeypatch):
    path = tmp_path / "reports" / "coverage.json"
    assert run(path) == 0 and fake == ["a", "b", "c"]
    assert json.loads(path.read_text())["checks"] == {"a": ["1", "2"], "b": ["2", "7"], "c": []}
    monkeypatch.setenv(oracle.ACTIVE, "2")
    fake.clear()
    assert run(path) == 0 and fake == ["a", "b"]
    monkeypatch.setenv(oracle.ACTIVE, "7")
    fake.clear()
    assert run(path) == 1 and fake == ["b"]  # killed by the one check that reaches it
    monkeypatch.setenv(oracle.ACTIVE, "9")
    fake.clear()
    said: list[str] = []
    assert run(path, said) == 0 and fake == [] and said == ["oracle: no check reaches mutant 9: survived (unreached)"]


def test_without_a_map_or_with_a_check_left_out_every_check_runs(fake, tmp_path, monkeypatch):
    """No map (no dry run, or an uninstrumented server), or a check whose processes recorded nothing: the
    mutant runs those checks, so a lost record can cost time and never a kill."""
    path = tmp_path / "coverage.json"
    monkeypatch.setenv(oracle.ACTIVE, "7")
    assert run(path) == 1 and fake == ["a", "b"]
    path.write_text(json.dumps({"checks": {"a": ["1"]}}))
    fake.clear()
    assert run(path) == 1 and fake == ["b"]  # "a" does not reach 7; "b" is not in the map: it runs


def test_a_dry_run_that_records_nothing_leaves_no_map(fake, tmp_path, monkeypatch):
    """An uninstrumented server's driver records empty lists, one that ignores the variable none: either way
    no map, and an earlier run's map is gone, so no mutant is called unreached on it."""
    path = tmp_path / "coverage.json"
    path.write_text(json.dumps({"checks": {"a": [], "b": [], "c": []}}))
    monkeypatch.setenv("NO_RECORD", "1")
    said: list[str] = []
    assert run(path, said) == 0 and not path.exists()
    assert any("every mutant runs every check" in line for line in said)
    monkeypatch.delenv("NO_RECORD")
    monkeypatch.setattr(oracle, "claimcheck", lambda: lambda argv: 1)  # a dry run that fails leaves no map
    path.write_text(json.dumps({"checks": {"a": []}}))
    assert run(path) == 1 and not path.exists()


def test_the_typescript_driver_records_the_mutants_its_process_reached(tmp_path):
    """examples/typescript/src/main.js appends, at exit, the keys of StrykerJS's coverage object (here set up
    by a stand-in of the instrumented code's header) to $CLAIMCHECK_MUTANT_COVERAGE."""
    assert shutil.which("node"), "node is not installed (Node 20: examples/typescript/README.md)"
    out = tmp_path / "reached"
    header = tmp_path / "header.mjs"
    header.write_text("globalThis.__stryker__ = {mutantCoverage: {static: {'12': 1, '40': 3}, perTest: {}}};\n")
    env = {**os.environ, oracle.REACHED: str(out), "NODE_OPTIONS": f"--import={header.as_uri()}"}
    trace = ROOT / "traces" / "supervise-stops-nothing-live.json"
    claimcheck = [sys.executable, "-m", "harness.cli"]
    done = subprocess.run([*claimcheck, "replay", str(trace), "--sut", str(TS / "driver")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = out.read_text().splitlines()
    assert lines and all(sorted(json.loads(line)) == ["12", "40"] for line in lines)
