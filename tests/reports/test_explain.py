"""`claimcheck explain`: per-actor timelines and mermaid sequence diagrams."""

import json
import re

import pytest

from harness.reports import explain as X
from harness.conformance import replay as R
from harness.cli import main
from serverkit import BUNDLED

HEARTBEAT = R.TRACES / "unsupervised-cancel-heartbeat.json"
FAILED = R.TRACES / "step-failed-duplicate-interrupt.json"


def test_text_timeline_names_actors_commits_gates_and_the_violation():
    out = X.explain_file(FAILED, "text", ["step-failed-duplicate-interrupt"], server=BUNDLED)
    assert "actors:  runner@n1, finalizer@n1" in out
    assert "commit Step.Failed a1 (s1, by n1)" in out
    assert "|| boundary step_failed.committed (held here by the trace)" in out
    assert "|| boundary cancel.requested (held here by the trace)" in out
    assert "!! VIOLATES AtMostOneTerminal" in out
    assert "finalizer@n1: 7 CancelRequest, 8 FinalizerSettle, 10 FinalizerReconcile, 11 FinalizerSettle, 12 FinalizerClear" in out


def test_correct_run_has_no_violation_and_shows_the_clock_and_recovery():
    out = X.explain_file(HEARTBEAT, server=BUNDLED)
    assert "VIOLATES" not in out
    assert "clock: 6 Tick, 8 Tick" in out and "recovery@r1: 9 RecoveryScan, 10 RecoveryTakeover, 11 RecoveryReconcile" in out
    assert "finalizer@n1 settle -> idle" in out  # the supervised finalizer stops when the lease expires


def test_boundaries_come_from_the_implementation_not_only_the_trace(tmp_path):
    import json
    raw = json.loads(FAILED.read_text())
    for step in raw["steps"]:
        step.pop("boundary", None)
    raw["steps"][1]["boundary"] = "provider.dispatched"  # a gate the code does not hit at Renew
    p = tmp_path / "t.json"
    p.write_text(json.dumps(raw))
    out = X.explain_file(p, server=BUNDLED)
    assert "|| boundary step_failed.committed (passed)" in out
    assert "|| boundary provider.dispatched (held here by the trace, NOT hit by the implementation)" in out


def test_liveness_violation_and_stuck_step_are_shown():
    out = X.explain_file(R.TRACES / "step-started-window.json", "text", ["step-started-window"], server=BUNDLED)
    assert "stuck: step 8 FinalizerSettle(n1) is not enabled in the twin: " in out and "enabled here: " in out
    assert "!! VIOLATES SessionsEventuallyAvailable at the end" in out


def test_mermaid_sequence_diagram(capsys):
    assert main(["explain", str(HEARTBEAT), "--format", "mermaid", "--defect", "unsupervised-cancel-heartbeat"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "  participant recovery_r1 as recovery@r1" in lines
    assert "  recovery_r1->>DB: 10. RecoveryTakeover(r1)" in lines
    assert "  Note over recovery_r1,DB: VIOLATES NoOverlappingEffects" in lines  # the successor's first effect
    assert "  Note over recovery_r1: recovery@r1 scanned -> converting<br/>held at recovery.taken_over" in lines
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


# ---------------------------------------------------------------- the mermaid diagram's participants, notes, loops

MEMORY = R.TRACES / "memory-before-publish.json"


def _mermaid(path, defects=None, loop=None, tmp_path=None) -> list[str]:
    if loop is not None:
        raw = json.loads(path.read_text())
        raw["loop"] = loop
        path = tmp_path / "lasso.json"
        path.write_text(json.dumps(raw))
    return X.mermaid(X.story(X.T.load(path), defects, str(path), server=BUNDLED)).splitlines()


def test_mermaid_provider_and_publisher_memory_are_participants():
    lines = _mermaid(MEMORY, ["memory-before-publish"])
    assert "  participant provider as provider" in lines
    assert "  participant mem_n1 as publisher memory@n1" in lines
    assert "  runner_n1->>provider: 3. Dispatch(n1)" in lines  # the provider call, not a transaction
    assert "  runner_n1->>DB: 5. PublishStepStarted(n1)" in lines
    assert "  runner_n1-->>mem_n1: 5. also memory@n1: a1 active" in lines  # the defect: memory set anyway
    assert not any("->>DB" in ln and "Dispatch" in ln for ln in lines)
    assert "  Note over clock: 4. Tick()<br/>fault: pause" in lines  # the clock calls nothing
    assert "  Note over DB: claim s1: e1 n1 running ttl1 -> e1 n1 running ttl0" in lines
    lines = _mermaid(FAILED, ["step-failed-duplicate-interrupt"])
    assert "  runner_n1->>mem_n1: 5. StepStartedReturn(n1)" in lines
    assert "  Note over mem_n1: memory@n1: a1 active" in lines
    assert "  Note over runner_n1: 9. RunnerStop(n1)<br/>runner@n1 failed -> stopped" in lines
    assert not any("->>" in ln and "RunnerStop" in ln for ln in lines)


@pytest.mark.parametrize("path", R.committed_traces(), ids=lambda p: p.stem)
def test_mermaid_shows_every_note_of_the_trace(path):
    lines = _mermaid(path)
    notes = [s["note"] for s in json.loads(path.read_text())["steps"] if "note" in s]
    assert notes
    for note in notes:
        assert any(re.fullmatch(rf"  Note over \w+(,\w+)?: {re.escape(X._safe(note))}", ln) for ln in lines), note


def test_mermaid_draws_a_lasso_as_a_loop_block(tmp_path):
    lines = _mermaid(HEARTBEAT, loop=10, tmp_path=tmp_path)
    start = lines.index("  loop forever, back to the state after step 10")
    assert lines[start + 1] == "    recovery_r1->>DB: 11. RecoveryReconcile(r1)"
    assert lines[-1] == "  end" and "  recovery_r1->>DB: 10. RecoveryTakeover(r1)" in lines[:start]
    assert all(ln.startswith("    ") for ln in lines[start + 1:-1])
    assert any("loop: the steps inside repeat forever" in ln for ln in lines)
    lines = _mermaid(HEARTBEAT, loop=0, tmp_path=tmp_path)
    assert "  loop forever, back to the initial state" in lines
    assert "loop" not in "\n".join(_mermaid(HEARTBEAT))


# the abbreviations a reader meets, found independently of explain's own table
ABBREVIATIONS = {r"\be\d+\b": "eN: execution N", r"\ba\d+\b": "aN: assistant N", r"\bttl\d+\b": "ttlN: N clock ticks",
                 r"\w+/prompt\d+": "s1/prompt1: Session s1's input", r"\bheld at\b": "held at B: the trace holds",
                 r"\bVIOLATES\b": "VIOLATES X: invariant X", r"Step\.\w+ a\d": "Step.X aN (s, by n): event X",
                 r"\bfault: \w": "fault: F: "}


@pytest.mark.parametrize("path", R.committed_traces(), ids=lambda p: p.stem)
@pytest.mark.parametrize("with_defect", [False, True])
def test_mermaid_legend_explains_its_participants_and_every_abbreviation(path, with_defect):
    defect = json.loads(path.read_text())["meta"].get("defect")  # a race the reference passes has none
    defects = [defect] if with_defect and defect else None
    lines = _mermaid(path, defects)
    legend = [ln for ln in lines if ln.startswith("  Note over ") and ": Legend<br/>" in ln]
    assert len(legend) == 1
    body = "\n".join(ln for ln in lines if ln not in legend)
    assert "- database: the step is one committed transaction" in legend[0]
    assert ("- provider: the provider call begins" in legend[0]) == ("participant provider" in body)
    used = [why for pattern, why in ABBREVIATIONS.items() if re.search(pattern, body)]
    steps = json.loads(path.read_text())["steps"]  # (a trace of wake rows alone, held nowhere, names none)
    assert used or all(st["action"].startswith("Wake") and "boundary" not in st for st in steps)
    for why in used:
        assert why in legend[0], why
    assert not any(";" in ln or "#" in ln for ln in lines)
