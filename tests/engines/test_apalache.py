"""The Apalache binding, against a STAND-IN apalache-mc (tests/engines/standin/apalache-mc, our own code)
whose output follows the transcripts of Apalache's CLI integration tests; and the spec's type
annotations, checked without Apalache. The expected lines and exit codes below are test data taken from
those transcripts (each names its section), not from the binding's own table. A do-nothing stand-in
(tests/engines/standin/apalache-silent: exit 0, no output) must fail everywhere."""

import json
import os
from pathlib import Path

import pytest

from harness.engines import apalache as A
from serverkit import BUNDLED
from harness.reports import gate
from harness.traces import itf
from harness.engines.check import run_python
from spec import configs
from spec.model import VARIABLES

STANDIN = Path(__file__).resolve().parent / "standin" / "apalache-mc"
SILENT = Path(__file__).resolve().parent / "standin" / "apalache-silent"


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


# (scenario, command, lines the transcript shows, its EXITCODE line and exit code, the binding's verdict),
# from Apalache's CLI integration tests (section heading in the comment)
TRANSCRIPTS = [
    # "running the check command" / "Prints default computation length of 10 (regression #2087)"
    ("ok", "check", ["The outcome is: NoError", "Checker reports no error up to computation length 10"],
     "EXITCODE: OK", 0, "ok"),
    # "check factorization find a counterexample (array-encoding)"
    ("violation", "check", ["The outcome is: Error", "Checker has found an error"], "EXITCODE: ERROR (12)", 12,
     "violation"),
    # "check HandshakeWithTypes.tla with length 5 deadlocks (array-encoding)": a deadlock is exit 12; the
    # transcript shows no trace file, so without one it is not accepted as a violation (and fails)
    ("deadlock", "check", ["The outcome is: Deadlock"], "EXITCODE: ERROR (12)", 12, "error"),
    # "check HandshakeWithTypes.tla with length 5 passes with --no-deadlock": exit 0, but not NoError
    ("too-short", "check", ["The outcome is: ExecutionsTooShort"], "EXITCODE: OK", 0, "error"),
    # "check Bug1126 succeeds": an unsupported expression
    ("cannot-evaluate", "check", ["unsupported expression: Seq(_) produces an infinite set of unbounded sequences."],
     "EXITCODE: ERROR (75)", 75, "error"),
    # "typecheck Bug914 fails"
    ("type-error", "typecheck", ["Arguments to = should have the same type.", "Error when computing the type of Init"],
     "EXITCODE: ERROR (120)", 120, "error"),
    # "parse blank file fails nicely"
    ("parse-error", "check", ["Parsing error: No root module defined in file"], "EXITCODE: ERROR (255)", 255, "error"),
    # "check View2.tla without --view"
    ("view-required", "check", ["Option maxError = 10 requires a view. None specified."], "EXITCODE: ERROR (255)",
     255, "error"),
    # "typecheck CarTalkPuzzleTyped.tla"
    ("ok", "typecheck", ["PASS #1: TypeCheckerSnowcat", " > Running Snowcat .::.", " > Your types are purrfect!",
                         " > All expressions are typed", "Type checker [OK]"], "EXITCODE: OK", 0, "ok"),
]


def _lines(output: str) -> list[str]:
    """The output as the transcripts show it: `sed 's/[IEW]@.*//'`, trailing padding dropped."""
    import re
    return [re.sub(r"\s*[IEW]@.*", "", line).rstrip() for line in output.splitlines()]


@pytest.mark.parametrize("scenario, command, lines, exitline, code, verdict", TRANSCRIPTS,
                         ids=[f"{t[1]}-{t[0]}" for t in TRANSCRIPTS])
def test_runs_are_judged_as_the_transcripts_say(scenario, command, lines, exitline, code, verdict, standin,
                                                monkeypatch, tmp_path):
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", scenario)
    if scenario == "violation":
        monkeypatch.setenv("STANDIN_APALACHE_ITF", str(_an_itf_file(tmp_path)))
    if command == "typecheck":
        res = A.typecheck(STANDIN, tmp_path / "run")
    else:
        res = A.check(STANDIN, configs.get("ci"), tmp_path / "run", max_error=10 if scenario == "view-required" else 1)
    out = _lines(res.output)
    for line in lines:  # the stand-in says what the transcript says ...
        assert any(line in o for o in out), (line, out)
    assert out[-1] == exitline and res.exit_code == code
    assert res.verdict == verdict, res.meaning  # ... and the binding reads it as the transcript means


def _an_itf_file(tmp_path):
    cfg = configs.get("ci", defects=["step-failed-duplicate-interrupt"])
    o = run_python(cfg, "ci", liveness=False, out_dir=tmp_path)
    return itf.export_file(o.trace_path, tmp_path / "a.itf.json")


@pytest.mark.parametrize("scenario, why", [
    ("no-outcome", "The outcome is"),
    ("wrong-length", "not the 10 asked for"),
    ("too-short", "ExecutionsTooShort"),
    ("violation-no-itf", "no violation*.itf.json"),
])
def test_a_run_whose_output_does_not_confirm_it_is_an_error(scenario, why, standin, monkeypatch, tmp_path):
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", scenario)
    res = A.check(STANDIN, configs.get("ci"), tmp_path / "run", length=10)
    assert res.verdict == "error" and why in res.meaning, res.meaning


def test_a_typecheck_without_its_ok_line_is_an_error(standin, monkeypatch, tmp_path):
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "typecheck-silent")
    res = A.typecheck(STANDIN, tmp_path / "t")
    assert res.exit_code == 0 and res.verdict == "error" and "Type checker [OK]" in res.meaning


def test_a_violation_file_that_is_not_itf_is_an_error(standin, monkeypatch, tmp_path):
    bogus = tmp_path / "bogus.itf.json"
    bogus.write_text('{"vars": []}')
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "violation")
    monkeypatch.setenv("STANDIN_APALACHE_ITF", str(bogus))
    res = A.check(STANDIN, configs.get("ci"), tmp_path / "run")
    assert res.exit_code == 12 and res.verdict == "error" and "not an ITF file" in res.meaning


def test_a_do_nothing_apalache_fails_typecheck_check_and_the_gate(monkeypatch, tmp_path):
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    assert A.typecheck(SILENT, tmp_path / "t").verdict == "error"
    assert A.check(SILENT, configs.get("ci"), tmp_path / "c").verdict == "error"
    assert A.check(SILENT, configs.get("ci"), tmp_path / "s", simulate=True).verdict == "error"
    r = gate.stage_apalache(gate.Gate(tmp_path, server=BUNDLED, apalache=str(SILENT)))
    assert r.status == gate.FAIL and "Type checker [OK]" in r.detail, r.detail


def _a_behaviour_of_the_protocol(tmp_path):
    """A behaviour of the correct protocol (Apalache reads the protocol module, which has no defects)."""
    from harness.traces import trace as T
    from harness.traces.paths import path_to
    from harness.engines.explore import explore
    cfg = configs.get("ci")
    res = explore(cfg, liveness=False)
    path = path_to(res.graph, len(res.graph.states) - 1)
    return T.save(T.from_steps(cfg, path, title="deepest", source="explore", base="ci"), tmp_path / "p.json")


def test_check_passes_claimcheck_options_and_imports_every_violation(standin, monkeypatch, tmp_path):
    src = _a_behaviour_of_the_protocol(tmp_path)
    first = itf.export_file(src, tmp_path / "a.itf.json")
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "violation")
    monkeypatch.setenv("STANDIN_APALACHE_ITF", os.pathsep.join([str(first), str(first)]))
    res = A.check(STANDIN, configs.get("ci"), tmp_path / "run", length=12, cinit="ConstInit", max_error=2,
                  view="View")
    assert res.verdict == "violation" and [p.name for p in res.itf_files] == ["violation.itf.json",
                                                                            "violation1.itf.json"]
    assert len(res.traces) == 2 and not res.import_errors
    assert [s.action for s in res.traces[0].steps] == [s.action for s in json_steps(src)]
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
    r = gate.stage_apalache(gate.Gate(tmp_path, server=BUNDLED))
    assert r.status == gate.SKIP and "not found" in r.detail


def test_gate_runs_apalache_when_present(standin, tmp_path):
    r = gate.stage_apalache(gate.Gate(tmp_path, server=BUNDLED, apalache=str(STANDIN)))
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
    r = gate.stage_apalache(gate.Gate(tmp_path / "found", server=BUNDLED, apalache=str(STANDIN)))
    assert r.status == gate.FAIL and "check violation" in r.detail and "traces:" in r.detail
    saved = list((tmp_path / "found").glob("apalache-*.json"))
    assert len(saved) == 1 and len(T.load(saved[0]).steps) == len(path) - 1


def test_a_violation_the_twin_cannot_follow_is_reported_not_dropped(standin, monkeypatch, tmp_path):
    cfg = configs.get("ci", defects=["memory-before-publish"])
    o = run_python(cfg, "ci", liveness=False, out_dir=tmp_path)
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "violation")
    monkeypatch.setenv("STANDIN_APALACHE_ITF", str(itf.export_file(o.trace_path, tmp_path / "v.itf.json")))
    r = gate.stage_apalache(gate.Gate(tmp_path, server=BUNDLED, apalache=str(STANDIN)))
    assert r.status == gate.FAIL and "not replayable by the twin" in r.detail


def test_every_variable_has_an_apalache_type(tmp_path):
    assert A.untyped_variables() == []
    decl = A.declarations()
    assert decl["VARIABLES"]["claim"] == "Str -> $claim" and len(decl["VARIABLES"]) == len(VARIABLES)
    assert all(decl["CONSTANTS"].values())
    text = A.SPEC.read_text().replace("    \\* @type: Seq($event);\n", "")
    bad = tmp_path / "SessionExecution.tla"
    bad.write_text(text)
    assert A.untyped_variables(bad) == ["log"]


def test_the_gate_fails_when_check_exits_0_without_saying_what_it_checked(standin, monkeypatch, tmp_path):
    monkeypatch.setenv("STANDIN_APALACHE_SCENARIO", "no-outcome")
    r = gate.stage_apalache(gate.Gate(tmp_path, server=BUNDLED, apalache=str(STANDIN)))
    assert r.status == gate.FAIL and "typecheck ok" in r.detail and "The outcome is" in r.detail, r.detail


def test_apalache_reads_the_protocol_module_with_its_own_configuration(standin, tmp_path):
    """Apalache checks the correct protocol: SessionExecution.tla, with constants only (no Defects, no
    `Hook <- MCHook`: Apalache replaces only parameterless operators from a .cfg), and refuses defects,
    which TLC (through the MC module's overrides) and the twin check."""
    res = A.check(STANDIN, configs.get("ci"), tmp_path / "run")
    assert res.verdict == "ok" and res.argv[-1] == "SessionExecution.tla"
    text = (tmp_path / "run" / "work" / "MC.cfg").read_text()
    assert "<-" not in text and "Defects" not in text and "INIT Init" in text
    assert A.typecheck(STANDIN, tmp_path / "t").argv[-1] == "SessionExecution.tla"
    with pytest.raises(configs.ProtocolOnly, match="step-failed-duplicate-interrupt"):
        A.check(STANDIN, configs.get("ci", defects=["step-failed-duplicate-interrupt"]), tmp_path / "d")
