"""The Apalache binding, against a STAND-IN apalache-mc (tests/standin/apalache-mc) that reproduces the
real CLI's output lines, files and exit codes; and the spec's type annotations, checked without Apalache."""

import json
import os
from pathlib import Path

import pytest

from harness.engines import apalache as A
from harness.reports import gate
from harness.traces import itf
from harness.engines.check import run_python
from spec import configs

STANDIN = Path(__file__).resolve().parent / "standin" / "apalache-mc"


@pytest.fixture
def standin(monkeypatch, tmp_path):
    log = tmp_path / "argv.log"
    monkeypatch.setenv("STANDIN_APALACHE_LOG", str(log))
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    return log


def test_discovery_order(monkeypatch, tmp_path):
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(A.ApalacheUnavailable, match="apalache-mc on PATH"):
        A.discover()
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "apalache-mc").symlink_to(STANDIN)
    monkeypatch.setenv("APALACHE_HOME", str(home))
    assert A.discover() == home / "bin" / "apalache-mc"
    assert A.discover(str(STANDIN)) == STANDIN
    with pytest.raises(A.ApalacheUnavailable, match="not an executable"):
        A.discover(str(tmp_path / "nope"))


@pytest.mark.parametrize("scenario, code, verdict", [
    ("ok", 0, "ok"), ("violation", 12, "violation"), ("cannot-evaluate", 75, "error"),
    ("type-error", 120, "error"), ("parse-error", 150, "error"), ("system-error", 255, "error"),
])
def test_exit_codes_are_mapped(scenario, code, verdict, standin, monkeypatch, tmp_path):
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", scenario)
    res = A.check(STANDIN, configs.get("ci"), tmp_path / "run")
    assert (res.exit_code, res.verdict, res.meaning) == (code, verdict, A.EXIT_CODES[code])


def test_check_passes_claimcheck_options_and_imports_every_violation(standin, monkeypatch, tmp_path):
    cfg = configs.get("ci", defects=["step-failed-duplicate-interrupt"])
    o = run_python(cfg, "ci", liveness=False, out_dir=tmp_path)
    first = itf.export_file(o.trace_path, tmp_path / "a.itf.json")
    cfg2 = configs.get("ci", defects=["step-failed-duplicate-interrupt"])
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "violation")
    monkeypatch.setenv("STANDIN_APALACHE_ITF", os.pathsep.join([str(first), str(first)]))
    res = A.check(STANDIN, cfg2, tmp_path / "run", length=12, cinit="ConstInit", max_error=2, view="View")
    assert res.verdict == "violation" and [p.name for p in res.itf_files] == ["violation.itf.json",
                                                                            "violation1.itf.json"]
    assert len(res.traces) == 2
    assert [s.action for s in res.traces[0].steps] == [s.action for s in json_steps(o.trace_path)]
    argv = json.loads(standin.read_text().splitlines()[-1])
    assert argv[0] == "check" and "--config=MC.cfg" in argv and "--length=12" in argv
    assert "--max-error=2" in argv and "--cinit=ConstInit" in argv and "--view=View" in argv
    assert any(a.startswith("--out-dir=") for a in argv)
    inv = next(a for a in argv if a.startswith("--inv="))
    assert "TypeOK" in inv and "FencedMutationStep" in inv


def json_steps(path):
    from harness.traces import trace as T
    return T.load(path).steps


def test_typecheck_and_simulate_commands(standin, tmp_path):
    assert A.typecheck(STANDIN, tmp_path / "t").verdict == "ok"
    res = A.check(STANDIN, configs.get("ci"), tmp_path / "s", simulate=True)
    assert res.verdict == "ok" and json.loads(standin.read_text().splitlines()[-1])[0] == "simulate"


def test_gate_reports_absent_apalache_as_skipped_never_passed(monkeypatch, tmp_path):
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    r = gate.stage_apalache(gate.Gate(tmp_path))
    assert r.status == gate.SKIP and "not found" in r.detail


def test_gate_runs_apalache_when_present(standin, tmp_path):
    r = gate.stage_apalache(gate.Gate(tmp_path, apalache=str(STANDIN)))
    assert r.status == gate.PASS and "typecheck ok" in r.detail


def test_gate_fails_on_an_apalache_violation_and_keeps_its_trace(standin, monkeypatch, tmp_path):
    from harness.traces import trace as T
    from harness.traces.paths import path_to
    from harness.engines.explore import explore
    cfg = configs.get("ci")
    res = explore(cfg, liveness=False)
    path = path_to(res.graph, len(res.graph.states) - 1)  # a behaviour of the correct spec
    src = T.save(T.from_steps(cfg, path, title="deepest", source="explore", base="ci"), tmp_path / "p.json")
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "violation")
    monkeypatch.setenv("STANDIN_APALACHE_ITF", str(itf.export_file(src, tmp_path / "v.itf.json")))
    r = gate.stage_apalache(gate.Gate(tmp_path / "found", apalache=str(STANDIN)))
    assert r.status == gate.FAIL and "check violation" in r.detail and "traces:" in r.detail
    saved = list((tmp_path / "found").glob("apalache-*.json"))
    assert len(saved) == 1 and len(T.load(saved[0]).steps) == len(path) - 1


def test_a_violation_the_twin_cannot_follow_is_reported_not_dropped(standin, monkeypatch, tmp_path):
    cfg = configs.get("ci", defects=["memory-before-publish"])
    o = run_python(cfg, "ci", liveness=False, out_dir=tmp_path)
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "violation")
    monkeypatch.setenv("STANDIN_APALACHE_ITF", str(itf.export_file(o.trace_path, tmp_path / "v.itf.json")))
    r = gate.stage_apalache(gate.Gate(tmp_path, apalache=str(STANDIN)))
    assert r.status == gate.FAIL and "not replayable by the twin" in r.detail


def test_every_variable_has_an_apalache_type(tmp_path):
    assert A.untyped_variables() == []
    decl = A.declarations()
    assert decl["VARIABLES"]["claim"] == "Str -> $claim" and len(decl["VARIABLES"]) == 10
    assert all(decl["CONSTANTS"].values())
    text = A.SPEC.read_text().replace("    \\* @type: Seq($event);\n", "")
    bad = tmp_path / "SessionExecution.tla"
    bad.write_text(text)
    assert A.untyped_variables(bad) == ["log"]
