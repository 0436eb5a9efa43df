"""A server without defect switches (issue 33 item 1): its driver's hello declares none, the gate skips the
kill matrix as not applicable (the reason and the assurance it has instead shown, never a pass) and exits
0 when everything else holds, `--strict` included; with switches nothing changes. Shown on the bundled
server and the TypeScript example run with `--no-defects`, and failing where it must: a switchless server
that fails a trace fails the gate, a defect asked of it is refused, other skips still fail `--strict`."""

import json

import pytest

from harness.cli import main
from harness.conformance import replay as R
from harness.driver import protocol as P
from harness.driver.client import Connection, NoSwitch, Sut
from harness.driver.transport import InProcess
from harness.port import switches
from harness.reports import gate
from harness.reports import switchless as S
from harness.traces import trace as T
from harness.reports.results import PASS, SKIP, StageResult
from spec import configs
from spec import names as N
from binding.driver import Driver
from serverkit import BUNDLED

from test_sut_replay import DRIVER, importable  # noqa: F401 - the fixture puts the clone on the path
from test_typescript import DRIVER as TS_DRIVER, _installed

STAGES = ["--stage", "traces", "--stage", "kill matrix"]


def in_process(**kw) -> Sut:
    return Sut("in process", opener=lambda: Connection(InProcess(Driver(**kw))))


def test_hello_declares_the_switches_and_a_switchless_driver_none():
    assert switches(in_process()) == frozenset(N.DEFECTS) == switches(BUNDLED)
    sut = in_process(switches=False)
    assert sut.connect().hello.defects == [] and switches(sut) == frozenset()
    reply = P.HelloReply.model_validate({"id": 0, "ok": True, "protocol": P.PROTOCOL, "version": 1, "driver": "old"})
    assert reply.defects == [] and reply.history is False  # a version-1 hello without them: no switches


def test_a_defect_asked_of_a_switchless_server_is_refused_before_start():
    sut = in_process(switches=False)
    with pytest.raises(NoSwitch, match="no switch for memory-before-publish .*no defect switches"):
        sut.start(configs.get("ci"), mutant=["memory-before-publish"])
    config = T.config_to_trace(configs.get("ci")).model_dump(mode="json", exclude_none=True)
    answer = json.loads(Driver(switches=False).handle_line(json.dumps(
        {"id": 1, "op": "start", "config": config, "defects": ["memory-before-publish"]})))
    assert answer["ok"] is False and "no defect switches" in answer["error"]


def _gate(capsys, tmp_path, sut: str, *extra) -> tuple[int, str, dict]:
    code = main(["gate", "--sut", sut, *STAGES, "--out", str(tmp_path), "--json", str(tmp_path / "g.json"), *extra])
    return code, capsys.readouterr().out, json.loads((tmp_path / "g.json").read_text())


def _skipped_with_reason(out: str, report: dict) -> None:
    (km,) = [s for s in report["stages"] if s["name"] == "kill matrix"]
    assert km["status"] == SKIP and "not applicable" in km["detail"] and "declares no defect switches" in km["detail"]
    assert "kill matrix  SKIP" in out and f"gate: skipped kill matrix: {S.SUMMARY}" in out
    assert "gate: instead of the kill matrix: traces pass: " in out and S.MUTATION_DOC in out
    assert "gate: 1 passed, 0 failed" in out


@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_the_gate_of_the_bundled_server_without_switches_is_green(capsys, tmp_path, strict):
    code, out, report = _gate(capsys, tmp_path, f"{DRIVER} --no-defects", *strict)
    assert code == 0 and report["ok"] is True, out
    _skipped_with_reason(out, report)


def test_the_gate_of_the_typescript_example_without_switches_is_green(capsys, tmp_path):
    _installed()
    code, out, report = _gate(capsys, tmp_path, f"{TS_DRIVER} --no-defects", "--strict")
    assert code == 0 and report["ok"] is True, out
    _skipped_with_reason(out, report)


def test_a_switchless_server_that_fails_a_trace_fails_the_gate(monkeypatch, capsys, tmp_path):
    """The skip hides nothing else: the same server with a trace failing is red."""
    failing = gate.Stage("traces", lambda g: StageResult("traces", "fail", "a stand-in failure"))
    monkeypatch.setattr(gate, "STAGES", [failing if s.name == "traces" else s for s in gate.STAGES])
    code, out, report = _gate(capsys, tmp_path, f"{DRIVER} --no-defects", "--strict")
    assert code == 1 and report["ok"] is False and "kill matrix  SKIP" in out


def test_strict_still_refuses_a_skip_that_is_not_by_design():
    na = StageResult("kill matrix", SKIP, "not applicable", kind=S.NOT_APPLICABLE)
    missing = StageResult("Apalache", SKIP, "apalache not installed")
    assert gate.refused_skips([na], strict=True) == [] and gate.verdict_ok([na], strict=True)
    assert gate.refused_skips([na, missing], strict=True) == ["Apalache"]
    assert not gate.verdict_ok([na, missing], strict=True)


def test_the_assurance_line_carries_what_conformance_measured():
    conformance = StageResult("conformance", PASS, "", checks=[])
    cov = {"actions": set(N.ACTIONS), "boundaries": {"acquire.committed"}, "edges": 1234, "probes": 56}
    text = S.coverage([conformance], cov)
    assert f"{len(N.ACTIONS)}/{len(N.ACTIONS)} actions" in text and f"1/{len(N.BOUNDARIES)} boundaries" in text
    assert "1,234 edges" in text and "56 refusal probes" in text
    assert S.coverage([], {}) == "no replay or conformance stage ran"


def test_with_switches_the_kill_matrix_runs(monkeypatch, capsys, tmp_path):
    """Nothing changes with switches: the stage runs (here on two defects) and passes."""
    from harness.conformance import killmatrix as K
    real = K.rows
    monkeypatch.setattr(K, "rows", lambda defects=None, **kw: real(defects=list(defects)[:2], **kw))
    code, out, report = _gate(capsys, tmp_path, DRIVER)
    (km,) = [s for s in report["stages"] if s["name"] == "kill matrix"]
    assert code == 0 and km["status"] == PASS and "not applicable" not in out, out


@pytest.mark.parametrize("argv", [["conform", "--kill-matrix", "--mutant", "memory-before-publish"],
                                  ["conform", "--config", "ci", "--mutant", "memory-before-publish"],
                                  ["fuzz", "--mutant", "memory-before-publish"],
                                  ["replay", str(R.TRACES / "memory-before-publish.json"), "--defect", "memory-before-publish"]])
def test_a_defect_asked_of_a_switchless_server_is_bad_usage(capsys, argv):
    assert main(argv + ["--sut", f"{DRIVER} --no-defects"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "has no switch for memory-before-publish" in err, err
