"""The gate's own logic: stage order, a crashing stage fails (not raises), skips are never passes,
reports are written. The stages themselves are tested where their checks live."""

import json
import xml.etree.ElementTree as ET
from argparse import Namespace

import pytest

from harness.reports import gate


def _stages(*results):
    return [gate.Stage(r.name, lambda g, r=r: r) for r in results]


def run(monkeypatch, tmp_path, results, strict=False):
    monkeypatch.setattr(gate, "STAGES", _stages(*results))
    args = Namespace(out=str(tmp_path / "found"), json=str(tmp_path / "g.json"), junit=str(tmp_path / "g.xml"),
                     strict=strict, apalache=None)
    return gate.main_gate(args)


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
    assert suite.get("failures") == "1" and suite.find("testcase[@name='b']/failure") is not None


def test_a_crashing_stage_is_a_failure_not_a_traceback(monkeypatch, tmp_path, capsys):
    def crash(g):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(gate, "STAGES", [gate.Stage("x", crash)])
    args = Namespace(out=str(tmp_path), json=None, junit=None, strict=False, apalache=None)
    assert gate.main_gate(args) == 1
    assert "RuntimeError: disk on fire" in capsys.readouterr().out


@pytest.mark.parametrize("strict, code", [(False, 0), (True, 1)])
def test_skips_are_reported_and_strict_fails_them(monkeypatch, tmp_path, capsys, strict, code):
    assert run(monkeypatch, tmp_path, [gate.StageResult("a", gate.PASS),
                                       gate.StageResult("apalache", gate.SKIP, "not found")], strict) == code
    out = capsys.readouterr().out
    assert "SKIP" in out and "1 skipped" in out
    assert ET.parse(tmp_path / "g.xml").getroot().find("testcase[@name='apalache']/skipped") is not None


def test_stage_order_is_the_issue_order():
    assert [s.name for s in gate.STAGES] == ["parse", "twin = TLC", "TLC", "explorer", "traces", "lockstep",
                                             "kill matrix", "Apalache"]
