"""The six reported races of docs/protocol.md: each passes on the correct implementation and fails, naming its
invariant, with its defect switched on."""

import json

import pytest

from harness.conformance import replay as R
from harness.cli import main
from serverkit import BUNDLED
from spec import names as N

RACES = ("step-started-window", "step-failed-duplicate-interrupt", "cross-session-recovery-collision",
         "unsupervised-cancel-heartbeat", "silent-quarantine-noop", "memory-before-publish")


def path(name):
    return R.TRACES / f"{name}.json"


def test_every_race_is_committed_and_named_after_its_defect():
    assert {p.stem for p in R.committed_traces()} >= set(RACES)
    for name in RACES:
        assert name in N.DEFECTS
        tr = R.replay_file(path(name), server=BUNDLED).trace
        assert tr.meta.defect == name
        assert tr.meta.reported and tr.meta.reported.startswith(N.DEFECTS[name].source)  # its finding id
        assert tr.meta.invariants and set(tr.meta.invariants) <= set(N.DEFECTS[name].violates)
        assert tr.expect is not None and any(s.boundary for s in tr.steps)


@pytest.mark.parametrize("name", RACES)
def test_race_holds_on_the_correct_implementation(name, capsys):
    assert main(["replay", str(path(name))]) == 0
    out = capsys.readouterr().out
    assert "verdict: PASS" in out
    res = R.replay_file(path(name), server=BUNDLED)
    assert res.consumed == len(res.trace.steps)  # never vacuous
    for rec, step in zip(res.steps, res.trace.steps):
        assert step.boundary is None or step.boundary in rec.fired


@pytest.mark.parametrize("name", RACES)
def test_race_fails_with_its_defect_naming_the_invariant(name, capsys):
    assert main(["replay", str(path(name)), "--defect", name]) == 1
    out = capsys.readouterr().out
    headline = N.DEFECTS[name].violates[0]
    assert f"verdict: FAIL, violates {headline}" in out or f"violates {headline}," in out
    assert headline in R.replay_file(path(name), [name], server=BUNDLED).violated


def test_step_started_window_reports_the_stuck_cancellation():
    res = R.replay_file(path("step-started-window"), ["step-started-window"], server=BUNDLED)
    text = "\n".join(res.problems)
    # the rejected restart is a stutter of the twin (the settlement rolls back whole): the replay stops there
    assert "step 8 FinalizerSettle(n1) is not enabled in the twin: its guard holds, but it changes nothing" in text
    assert "expect.claims[0]: claim of s1 absent, found present (cancelling)" in text


def test_race_files_are_valid_json_with_the_v1_header():
    for name in RACES:
        raw = json.loads(path(name).read_text())
        assert raw["format"] == "claimcheck-trace" and raw["version"] == 1


DEFECT_TRACES = [p for p in R.committed_traces() if R.replay_file(p, server=BUNDLED).trace.meta.defect]


@pytest.mark.parametrize("trace_path", DEFECT_TRACES, ids=lambda p: p.stem)
def test_every_trace_fails_under_its_defect_naming_an_invariant_it_lists(trace_path):
    tr = R.replay_file(trace_path, server=BUNDLED).trace
    res = R.replay_file(trace_path, [tr.meta.defect], server=BUNDLED)
    assert not res.ok and set(tr.meta.invariants) & set(res.violated), (res.violated, res.problems)


def test_a_refused_step_the_defect_enables_is_followed_to_the_invariant_it_breaks(monkeypatch):
    """tool-settled-before-publication: the Step's end is refused on the reference protocol; under the
    defect it is enabled and breaks nothing itself, and the claim cleared after it leaves the call open."""
    name = "tool-settled-before-publication"
    res = R.replay_file(path(name), [name], server=BUNDLED)
    assert [r.action for r in res.followed] == ["PublishStepEnded", "ClearClaim"]
    assert res.followed[-1].violated == ["UnknownNeverReexecuted"] and res.violated == ["UnknownNeverReexecuted"]
    assert "the twin's shortest way on to a violation" in R.render(res)
    monkeypatch.setattr(R, "_shortest_violation", lambda cfg, st: None)  # without the follow: no name
    assert R.replay_file(path(name), [name], server=BUNDLED).violated == []
