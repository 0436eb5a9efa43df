"""The gate's own logic: stage order, a crashing stage fails (not raises), skips are never passes,
reports are written. The stages themselves are tested where their checks live."""

import json
import xml.etree.ElementTree as ET
from argparse import Namespace

import pytest

from harness.reports import gate
from serverkit import BUNDLED


def _stages(*results):
    return [gate.Stage(r.name, lambda g, r=r: r) for r in results]


def run(monkeypatch, tmp_path, results, strict=False):
    monkeypatch.setattr(gate, "STAGES", _stages(*results))
    args = Namespace(out=str(tmp_path / "found"), json=str(tmp_path / "g.json"), junit=str(tmp_path / "g.xml"),
                     strict=strict, apalache=None)
    return gate.main_gate(args, BUNDLED)


def test_all_pass_exits_0_and_reports(monkeypatch, tmp_path, capsys):
    code = run(monkeypatch, tmp_path, [gate.StageResult("a", gate.PASS, "fine"), gate.StageResult("b", gate.PASS)])
    out = capsys.readouterr().out
    assert code == 0 and "[1/2] a" in out and "gate: 2 passed, 0 failed, 0 skipped" in out
    assert json.loads((tmp_path / "g.json").read_text())["ok"] is True
    suite = ET.parse(tmp_path / "g.xml").getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "0"


def test_a_failing_stage_fails_the_gate(monkeypatch, tmp_path):
    code = run(monkeypatch, tmp_path, [gate.StageResult("a", gate.PASS), gate.StageResult("b", gate.FAIL, "boom")])
    assert code == 1
    suite = ET.parse(tmp_path / "g.xml").getroot()
    assert suite.get("failures") == "1" and suite.find(".//testcase[@name='b']/failure") is not None


def test_a_crashing_stage_is_a_failure_not_a_traceback(monkeypatch, tmp_path, capsys):
    def crash(g):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(gate, "STAGES", [gate.Stage("x", crash)])
    args = Namespace(out=str(tmp_path), json=None, junit=None, strict=False, apalache=None)
    assert gate.main_gate(args, BUNDLED) == 1
    assert "RuntimeError: disk on fire" in capsys.readouterr().out


@pytest.mark.parametrize("strict, code", [(False, 0), (True, 1)])
def test_skips_are_reported_and_strict_fails_them(monkeypatch, tmp_path, capsys, strict, code):
    assert run(monkeypatch, tmp_path, [gate.StageResult("a", gate.PASS),
                                       gate.StageResult("apalache", gate.SKIP, "not found")], strict) == code
    out = capsys.readouterr().out
    assert "SKIP" in out and "1 skipped" in out
    assert ET.parse(tmp_path / "g.xml").getroot().find(".//testcase[@name='apalache']/skipped") is not None


def test_stage_order_puts_the_stages_waiting_for_tlc_last():
    """TLC runs in the background from the gate's start (tests/reports/test_gate_tlc.py), so the stages
    that read its outcomes come after those that run in claimcheck's own process."""
    assert [s.name for s in gate.STAGES] == ["parse", "explorer", "traces", "lockstep", "conformance",
                                             "kill matrix", "twin = TLC", "TLC", "Apalache"]


def run_allowing(monkeypatch, tmp_path, results, allow):
    monkeypatch.setattr(gate, "STAGES", _stages(*results))
    args = Namespace(out=str(tmp_path / "found"), json=str(tmp_path / "g.json"), junit=str(tmp_path / "g.xml"),
                     strict=True, apalache=None, allow_skip=allow)
    return gate.main_gate(args, BUNDLED)


def test_strict_with_an_allowed_skip_passes_and_names_it(monkeypatch, tmp_path, capsys):
    results = [gate.StageResult("TLC", gate.PASS), gate.StageResult("Apalache", gate.SKIP, "not found")]
    assert run_allowing(monkeypatch, tmp_path, results, ["apalache"]) == 0
    out = capsys.readouterr().out
    assert "1 skipped" in out and "gate: skipped Apalache: allowed by --allow-skip" in out
    report = json.loads((tmp_path / "g.json").read_text())
    assert report["ok"] is True and report["allowed_skips"] == ["apalache"]
    assert ET.parse(tmp_path / "g.xml").getroot().find(".//testcase[@name='Apalache']/skipped") is not None


def test_strict_fails_every_other_skip_even_with_an_allowed_one(monkeypatch, tmp_path, capsys):
    results = [gate.StageResult("TLC", gate.SKIP, "java is not on PATH"),
               gate.StageResult("Apalache", gate.SKIP, "not found")]
    assert run_allowing(monkeypatch, tmp_path, results, ["apalache"]) == 1
    captured = capsys.readouterr()
    assert "gate: skipped TLC: fails the gate (--strict)" in captured.out
    assert "skipped TLC counts as a failure" in captured.err and "Apalache counts" not in captured.err
    assert json.loads((tmp_path / "g.json").read_text())["ok"] is False


def test_strict_without_allow_skip_fails_the_apalache_skip_too(monkeypatch, tmp_path):
    assert run_allowing(monkeypatch, tmp_path, [gate.StageResult("Apalache", gate.SKIP, "not found")], None) == 1
    assert json.loads((tmp_path / "g.json").read_text())["ok"] is False


def test_an_allowed_stage_that_fails_still_fails(monkeypatch, tmp_path):
    assert run_allowing(monkeypatch, tmp_path, [gate.StageResult("Apalache", gate.FAIL, "check error")],
                        ["apalache"]) == 1


def test_allow_skip_takes_only_stage_names():
    from harness import cli
    args = cli.build_parser().parse_args(["gate", "--strict", "--allow-skip", "Apalache"])
    assert args.allow_skip == ["apalache"]
    with pytest.raises(cli.UsageError, match="unknown gate stage 'apalache-mc'"):
        cli.build_parser().parse_args(["gate", "--allow-skip", "apalache-mc"])


def test_ci_gate_script_is_strict_except_for_apalache():
    from pathlib import Path
    script = (Path(__file__).resolve().parents[2] / "ci" / "gate.sh").read_text()
    line = next(x for x in script.splitlines() if "claimcheck gate" in x and not x.startswith("#"))
    assert "--strict" in line.split() and line.split().count("--allow-skip") == 1
    assert line.split()[line.split().index("--allow-skip") + 1] == "apalache"


@pytest.mark.parametrize("times, said", [((277.0, 120.5, 58.5), "target 300 s: missed by 156 s"),
                                         ((200.0, 100.0), "target 300 s: met"),
                                         ((300.2,), "target 300 s: missed by 1 s")])
def test_the_summary_says_whether_the_300_s_target_was_met(times, said):
    results = [gate.StageResult(f"s{k}", gate.PASS, seconds=t) for k, t in enumerate(times)]
    total_line = next(x for x in gate.summary(results).splitlines() if x.startswith("total"))
    assert total_line.endswith(f"(2 cores; {said})") and "under" not in total_line


def test_the_summary_keeps_its_stages_and_verdicts():
    text = gate.summary([gate.StageResult("TLC", gate.PASS, seconds=1.0), gate.StageResult("Apalache", gate.SKIP)])
    assert "TLC       PASS" in text and "Apalache  SKIP" in text and "gate: 1 passed, 0 failed, 1 skipped" in text


def test_stage_runs_only_the_chosen_stages_and_reports_the_others_as_skipped(monkeypatch, tmp_path, capsys):
    ran = []
    monkeypatch.setattr(gate, "STAGES", [gate.Stage(n, lambda g, n=n: ran.append(n) or gate.StageResult(n, gate.PASS))
                                         for n in ("traces", "TLC", "kill matrix")])
    args = Namespace(out=str(tmp_path), json=str(tmp_path / "g.json"), junit=None, strict=True, apalache=None,
                     stage=["traces", "kill matrix"])
    assert gate.main_gate(args, BUNDLED) == 0  # --strict: a stage the user did not choose is a skip they asked for
    out = capsys.readouterr().out
    assert ran == ["traces", "kill matrix"] and "gate: 2 passed, 0 failed, 1 skipped" in out
    assert "gate: skipped TLC: not chosen (--stage)" in out and "(only traces, kill matrix: --stage)" in out
    assert json.loads((tmp_path / "g.json").read_text())["ok"] is True


def test_lockstep_drives_the_gate_configurations_conformance_does_not_walk_whole():
    """`rows` is walked whole (every state, edge and refusal) by the conformance stage, so lockstep's random
    walk of it is left out; every other gate configuration is driven."""
    from harness.conformance import exhaustive as X
    chosen = gate.lockstep_configs()
    assert "rows" in X.PROFILES["ci"] and "rows" not in chosen
    assert chosen == [n for n in gate.configs.GATE_CONFIGS if n != "rows"]
