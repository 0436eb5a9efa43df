"""The JUnit report: valid against pytest's junit-10.xsd, one testcase per check."""

import xml.etree.ElementTree as ET

import pytest

import cikit
import junitkit
import reportkit
from harness.reports import gate, junit
from harness.reports.results import FAIL, PASS, SKIP, Check, StageResult
from spec import configs
from spec import names as N
from serverkit import BUNDLED


def report(monkeypatch, tmp_path, results):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    reportkit.run_gate(monkeypatch, tmp_path, results)
    return ET.parse(tmp_path / "g.xml").getroot()


def test_the_report_meets_junit_10_xsd(monkeypatch, tmp_path):
    root = report(monkeypatch, tmp_path, reportkit.results(failing_trace="memory-before-publish.json"))
    assert junitkit.problems(root) == []


def test_the_hand_check_rejects_what_the_schema_rejects():
    bad = ET.fromstring('<testsuite name="g" tests="1" failures="1" skipped="0" time="1e3" colour="red">'
                        '<testcase name="a"><error message="x"/></testcase>oops</testsuite>')
    found = "\n".join(junitkit.problems(bad))
    for what in ("'errors' missing", "'colour' not allowed", "not SUREFIRE_TIME", "<error> not allowed",
                 "text inside <testsuite>"):
        assert what in found


def test_the_report_validates_with_xmlschema_against_the_xsd(monkeypatch, tmp_path):
    try:  # CI has both: a skip there would hide a gap
        import xmlschema
    except ImportError:
        cikit.unavailable("xmlschema not installed (pip install -e '.[test]')", "the XSD check")
    path = junitkit.xsd_path()
    if path is None:
        cikit.unavailable("junit-10.xsd not at hand (set CLAIMCHECK_JUNIT_XSD); the hand check above still runs",
                          "the XSD check")
    schema = xmlschema.XMLSchema(str(path))
    report(monkeypatch, tmp_path, reportkit.results(failing_trace="memory-before-publish.json"))
    schema.validate(str(tmp_path / "g.xml"))
    # and the hand check agrees with the schema on a report it rejects
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuite name="g" tests="1" failures="0" time="1"><testcase name="a"/></testsuite>')
    assert not schema.is_valid(str(bad)) and junitkit.problems(ET.parse(bad).getroot())


def test_one_testcase_per_check(monkeypatch, tmp_path):
    root = report(monkeypatch, tmp_path, reportkit.results())
    names = [c.get("name") for c in root.iter("testcase")]
    assert {"TLC ci", "TLC leftclaims", "explorer ci", "explorer leftclaims", "lockstep ci"} <= set(names)
    assert sum(n.startswith("replay ") for n in names) == 6 and sum(n.startswith("kill ") for n in names) == len(N.DEFECTS)
    assert "parse" in names and "Apalache" in names  # the stages with no sub-checks are one case each
    assert root.tag == "testsuites" and root.get("tests") == str(len(names)) == str(10 + 3 * len(configs.GATE_CONFIGS) + 2 * len(configs.FEATURE_CONFIGS) + len(N.DEFECTS))
    tlc = root.find("testsuite[@name='TLC']")
    assert tlc.get("tests") == str(len(configs.GATE_CONFIGS + configs.FEATURE_CONFIGS)) and {c.get("classname") for c in tlc} == {"claimcheck.tlc"}


def test_counts_and_times_on_every_suite(monkeypatch, tmp_path):
    root = report(monkeypatch, tmp_path, reportkit.results(failing_trace="step-started-window.json"))
    assert root.get("failures") == "1" and root.get("errors") == "0"
    for s in root.iter("testsuite"):
        assert {"tests", "failures", "errors", "skipped", "time"} <= set(s.attrib)
        assert s.get("tests") == str(len(s.findall("testcase")))
        assert s.get("failures") == str(len(s.findall("testcase/failure")))
        assert s.get("skipped") == str(len(s.findall("testcase/skipped")))
    assert root.find("testsuite[@name='Apalache']").get("skipped") == "1"


def test_a_failure_has_a_type_and_a_message(monkeypatch, tmp_path):
    root = report(monkeypatch, tmp_path, reportkit.results(failing_trace="step-started-window.json"))
    f = root.find(".//testcase[@name='replay step-started-window.json']/failure")
    assert f.get("type") == "InvariantViolation" and "MemoryFollowsDurable violated" in f.get("message")
    assert "traces/step-started-window.json:77" in f.text


def test_a_crashed_stage_is_a_failure_typed_by_its_exception(monkeypatch, tmp_path):
    def crash(g):
        raise RuntimeError("disk on fire")
    monkeypatch.setattr(gate, "STAGES", [gate.Stage("x", crash)])
    from argparse import Namespace
    gate.main_gate(Namespace(out=str(tmp_path), json=None, junit=str(tmp_path / "g.xml"), strict=False, apalache=None),
                   BUNDLED)
    root = ET.parse(tmp_path / "g.xml").getroot()
    f = root.find(".//testcase[@name='x']/failure")
    assert f.get("type") == "RuntimeError" and f.get("message") == "RuntimeError: disk on fire"
    assert junitkit.problems(root) == []


def test_a_stage_failing_with_no_failing_check_gets_a_case_of_its_own():
    r = StageResult("traces", FAIL, "no trace in traces/", 1.0, [Check("replay a.json", PASS)], kind="NoTraces")
    cases = junit.cases(r)
    assert [(c.name, c.status) for c in cases] == [("replay a.json", PASS), ("traces", FAIL)]
    skipped = StageResult("TLC", SKIP, "java not found", 0.0, [Check("TLC ci", SKIP, "java not found")])
    assert [c.name for c in junit.cases(skipped)] == ["TLC ci"]


def test_characters_xml_cannot_hold_are_dropped(tmp_path):
    junit.write_junit([StageResult("parse", FAIL, "bad \x1b[31mred\x1b[0m \x00 output")], tmp_path / "g.xml")
    f = ET.parse(tmp_path / "g.xml").getroot().find(".//failure")
    assert f.get("message") == "bad [31mred[0m  output"


def test_checks_handed_as_dicts_still_reach_the_reports(monkeypatch, tmp_path):
    r = StageResult("TLC", FAIL, "x", checks=[{"name": "TLC ci", "status": FAIL, "detail": "bad", "seconds": 1.0}])
    root = report(monkeypatch, tmp_path, [r])
    assert root.find(".//testcase[@name='TLC ci']/failure").get("type") == "CheckFailed"
