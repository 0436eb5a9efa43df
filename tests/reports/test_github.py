"""GitHub Actions: `::error file=...,line=...` for each failed check, pointing at the trace step or the
TLA+ line of the violated invariant, and the job summary table in $GITHUB_STEP_SUMMARY."""

import json
import shutil
from pathlib import Path

import pytest

import reportkit
from spec import names as N
from spec.source import SPEC
from harness.reports import gate, github, locate
from harness.reports.results import FAIL, Check, StageResult
from spec import configs
from serverkit import BUNDLED

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def actions(monkeypatch, tmp_path):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    return tmp_path / "summary.md"


def errors(out: str) -> list[str]:
    return [x for x in out.splitlines() if x.startswith("::error ")]


def test_each_failed_check_is_an_error_annotation(monkeypatch, tmp_path, capsys, actions):
    reportkit.run_gate(monkeypatch, tmp_path, reportkit.results(failing_trace="memory-before-publish.json"))
    out = capsys.readouterr().out
    assert errors(out) == ["::error file=traces/memory-before-publish.json,line=77,title=claimcheck traces%3A "
                           "replay memory-before-publish.json::step 5 PublishStepStarted(n1): "
                           "MemoryFollowsDurable violated"]
    assert "::warning title=claimcheck Apalache%3A skipped::apalache-mc not found" in out.splitlines()


def test_no_annotations_outside_actions(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    reportkit.run_gate(monkeypatch, tmp_path, reportkit.results(failing_trace="memory-before-publish.json"))
    assert "::error" not in capsys.readouterr().out


def test_messages_and_properties_are_escaped():
    line = github.command("error", "50% done\nnext", title="a: b, c", file="x,y.json", line=3, env={})
    assert line == "::error file=x%2Cy.json,line=3,title=a%3A b%2C c::50%25 done%0Anext"


def test_a_failed_stage_without_checks_is_annotated_at_its_own_place():
    r = StageResult("parse", FAIL, "Fatal errors while parsing", kind="ParseError", file="spec/SessionExecution.tla",
                    line=12)
    assert github.annotations([r], env={}) == [
        "::error file=spec/SessionExecution.tla,line=12,title=claimcheck parse::Fatal errors while parsing"]


def test_the_summary_table_is_appended(monkeypatch, tmp_path, capsys, actions):
    actions.write_text("earlier step\n")
    reportkit.run_gate(monkeypatch, tmp_path, reportkit.results(failing_trace="memory-before-publish.json"))
    text = actions.read_text()
    assert text.startswith("earlier step\n") and "## claimcheck gate: FAILED" in text
    assert "| stage | check | result | time | detail |" in text
    assert "| | TLC leftclaims | ✅ pass |" in text and "| | kill renew-after-expiry | ✅ pass |" in text
    assert "(`traces/memory-before-publish.json:77`)" in text and "| **Apalache** | | ⚠️ skip |" in text
    assert "target 300 s: met" in text


# ---------------------------------------------------------------- where the checks point

def test_the_line_of_each_step_in_a_trace_file():
    path = ROOT / "traces" / "memory-before-publish.json"
    lines = path.read_text().splitlines()
    steps = json.loads(path.read_text())["steps"]
    for k, step in enumerate(steps, start=1):
        n = locate.trace_step_line(path, k)
        assert lines[n - 1].strip() == "{" and f'"action": "{step["action"]}"' in lines[n]
    assert locate.trace_step_line(path, len(steps) + 1) is None
    assert locate.trace_step_line(path.with_name("no-such-trace.json"), 1) is None  # None, not a crash


def test_a_compact_trace_file_still_gives_the_line(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"format": "claimcheck-trace", "meta": {"steps": [1]},\n"steps": [{"action": "A"},\n'
                 '  {"action": "B"}, {"action": "C"}]}')
    assert [locate.trace_step_line(p, k) for k in (1, 2, 3, 4)] == [2, 3, 3, None]


def test_every_invariant_has_its_tla_line():
    lines = SPEC.read_text().splitlines()
    for name in N.INVARIANTS:
        file, n = locate.tla_definition(name)
        assert Path(file).read_text().splitlines()[n - 1].startswith(name), name
    mc = locate.MC_SPEC.read_text().splitlines()  # the defect switches are the MC module's
    for d in N.DEFECTS:
        assert f'Has("{d}")' in mc[locate.tla_defect_line(d) - 1]
    assert not any("Has(" in line for line in lines)


def test_a_failing_trace_replay_points_at_its_failing_step(monkeypatch, tmp_path):
    """A real replay (the committed trace with its defect switched on): the check names the trace file and
    the line where its failing step begins."""
    from harness.conformance import replay as R
    src = ROOT / "traces" / "memory-before-publish.json"
    path = tmp_path / src.name
    shutil.copy(src, path)
    defect = json.loads(src.read_text())["meta"]["defect"]
    monkeypatch.setattr(R, "committed_traces", lambda root=None: [path])
    monkeypatch.setattr(R, "replay_through", lambda tr, defects, name, server: R.replay(tr, [defect], name, server=server))
    r = gate.stage_traces(gate.Gate(tmp_path, server=BUNDLED))
    (c,) = r.checks
    k = int(locate.STEP.match(c.detail).group(1))
    assert r.status == FAIL and c.status == FAIL and c.kind == "InvariantViolation"
    assert c.file == path.as_posix() and c.line == locate.trace_step_line(path, k)
    assert f'"action": "{json.loads(src.read_text())["steps"][k - 1]["action"]}"' in path.read_text().splitlines()[c.line]


def test_a_model_check_violation_points_at_the_invariant(monkeypatch, tmp_path):
    from harness.engines import check
    from spec import configs
    inv = N.STATE_INVARIANTS[1]

    def fake(cfg, name, **kw):
        return check.Outcome("tlc", name, cfg, "violation", violated=[inv], trace_path=tmp_path / "t.json", seconds=2.0)
    monkeypatch.setattr(check, "run_tlc", fake)
    r = gate.stage_tlc(gate.Gate(tmp_path, server=BUNDLED))
    assert r.status == FAIL and [c.name for c in r.checks] == [f"TLC {n}" for n in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS]
    c = r.checks[0]
    assert c.kind == "InvariantViolation" and c.line == locate.tla_definition_line(inv)
    assert c.file == locate.relpath(SPEC) and "t.json" in c.detail


def test_a_skipped_engine_marks_every_configuration_skipped(monkeypatch, tmp_path):
    from harness.engines import check
    from spec import configs

    def fake(cfg, name, **kw):
        return check.Outcome("tlc", name, cfg, "skipped", reason="java not found")
    monkeypatch.setattr(check, "run_tlc", fake)
    r = gate.stage_tlc(gate.Gate(tmp_path, server=BUNDLED))
    assert r.status == "skip" and [c.status for c in r.checks] == ["skip"] * len(configs.GATE_CONFIGS + configs.FEATURE_CONFIGS)


def test_a_surviving_defect_points_at_the_tla_line_that_switches_it_on():
    from harness.conformance.killmatrix import Row
    d = next(iter(N.DEFECTS))
    c = gate._kill_check(d, [Row(d, "traces/a.json", False)])
    assert c.status == FAIL and c.kind == "UndetectedDefect" and c.line == locate.tla_defect_line(d)
    assert c.file == locate.relpath(locate.MC_SPEC)
    assert gate._kill_check(d, [Row(d, "traces/a.json", True, [N.STATE_INVARIANTS[1]])]).status == "pass"
