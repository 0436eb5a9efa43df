"""`claimcheck explain`: per-actor timelines and mermaid sequence diagrams."""

from harness.reports import explain as X
from harness.conformance import replay as R
from harness.cli import main

HEARTBEAT = R.TRACES / "unsupervised-cancel-heartbeat.json"
FAILED = R.TRACES / "step-failed-duplicate-interrupt.json"


def test_text_timeline_names_actors_commits_gates_and_the_violation():
    out = X.explain_file(FAILED, "text", ["step-failed-duplicate-interrupt"])
    assert "actors:  runner@n1, finalizer@n1" in out
    assert "commit Step.Failed a1 (s1, by n1)" in out
    assert "|| boundary step_failed.committed (held here by the trace)" in out
    assert "|| boundary cancel.requested (held here by the trace)" in out
    assert "!! VIOLATES AtMostOneTerminal" in out
    assert "finalizer@n1: 7 CancelRequest, 9 FinalizerSettle, 10 FinalizerClear" in out


def test_correct_run_has_no_violation_and_shows_the_clock_and_recovery():
    out = X.explain_file(HEARTBEAT)
    assert "VIOLATES" not in out
    assert "clock: 5 Tick" in out and "recovery@r1: 6 RecoveryTakeover" in out
    assert "finalizer@n1 settle -> idle" in out  # the supervised finalizer stops when the lease expires


def test_boundaries_come_from_the_implementation_not_only_the_trace(tmp_path):
    import json
    raw = json.loads(FAILED.read_text())
    for step in raw["steps"]:
        step.pop("boundary", None)
    raw["steps"][1]["boundary"] = "provider.dispatched"  # a gate the code does not hit at Renew
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    out = X.explain_file(p)
    assert "|| boundary step_failed.committed (passed)" in out
    assert "|| boundary provider.dispatched (held here by the trace, NOT hit by the implementation)" in out


def test_liveness_violation_and_stuck_step_are_shown():
    out = X.explain_file(R.TRACES / "step-started-window.json", "text", ["step-started-window"])
    assert "stuck: step 8 FinalizerClear(n1) is not enabled" in out
    assert "!! VIOLATES SessionsEventuallyAvailable at the end" in out


def test_mermaid_sequence_diagram(capsys):
    assert main(["explain", str(HEARTBEAT), "--format", "mermaid", "--defect", "unsupervised-cancel-heartbeat"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "  participant recovery_r1 as recovery@r1" in lines
    assert "  recovery_r1->>DB: 6. RecoveryTakeover(r1, s1)" in lines
    assert "  Note over recovery_r1,DB: VIOLATES NoOverlappingEffects" in lines
    assert "  Note over recovery_r1: held at recovery.taken_over" in lines
    assert not any(";" in ln or "#" in ln for ln in lines)


def test_actor_attribution():
    assert X.actor_of("Heartbeat", ("r1", "s1")) == "heartbeat@r1"
    assert X.actor_of("CorruptRecoveryRow", ("s2", 1)) == "adversary"
    assert X.actor_of("FinalizerSettle", ("n2",)) == "finalizer@n2"


def test_explain_bad_input_exits_2(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text("[]")
    assert main(["explain", str(p)]) == 2
    assert "Traceback" not in capsys.readouterr().err
