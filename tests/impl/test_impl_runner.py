"""The runner's step machine: the twin's action sequence, its fences, and publisher memory."""

import pytest

from impl import ids
from impl.results import Fenced
from implkit import World

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)

HAPPY = ["Renew", "Dispatch", "PublishStepStarted", "StepStartedReturn", "PublishStepEnded", "ClearClaim"]
FAILING = ["Renew", "Dispatch", "PublishStepStarted", "StepStartedReturn", "PublishStepFailed",
           "StepFailedReturn", "ClearClaim"]


def started_world(outcome="end", **kw):
    w = World(**kw)
    w.provider.decide(1, outcome)
    assert w.node().acquire(w.prompt["s1", 1])
    return w


@pytest.mark.parametrize("outcome,actions,last", [("end", HAPPY, "Ended"), ("fail", FAILING, "Failed")])
def test_run_to_completion_is_the_twin_sequence(outcome, actions, last):
    w = started_world(outcome)
    assert w.node().runner.run_to_completion() == actions
    snap = w.snap()
    assert snap.kinds() == ["Started", last] and snap.claims == {}
    assert w.node().runner.record() == ("idle", None, None, None, False, False)
    assert len(w.provider.calls) == 1
    assert {x.outcome for x in snap.assistants.values()} == {last.lower()}


def test_each_step_reports_one_action_and_the_record_follows_the_twin():
    w = started_world("fail")
    r = w.node().runner
    aid = ids.assistant_id(1)
    expected = [
        ("Renew", ("renewed", None, False)), ("Dispatch", ("streaming", None, False)),
        ("PublishStepStarted", ("started", None, False)), ("StepStartedReturn", ("stepping", aid, True)),
        ("PublishStepFailed", ("failed", aid, True)), ("StepFailedReturn", ("done", aid, False)),
    ]
    for action, (pc, mem, active) in expected:
        assert r.enabled() == action
        assert r.step() == action
        assert (r.pc, r.mem, r.active) == (pc, mem, active)


def test_memory_is_set_only_after_the_publish_returns():
    w = started_world()
    r = w.node().runner
    for _ in range(3):
        r.step()
    assert r.pc == "started" and r.mem is None and w.snap().kinds() == ["Started"]
    r.step()
    assert r.mem == ids.assistant_id(1)


@pytest.mark.parametrize("steps_before,stop_at", [(0, "acquired"), (1, "renewed"), (2, "streaming"), (3, "started")])
def test_an_interrupt_stops_the_runner_at_its_next_step(steps_before, stop_at):
    w = started_world()
    r = w.node().runner
    for _ in range(steps_before):
        r.step()
    assert r.pc == stop_at
    r.intr = True
    assert r.step() == "RunnerStop" and r.pc == "stopped"
    assert r.step() == "RunnerExit" and r.pc == "idle"


def test_renew_with_an_expired_lease_stops_the_runner_without_dispatch():
    w = started_world()
    w.clock.advance(1)
    r = w.node().runner
    assert r.step() == "Renew"
    assert isinstance(r.last, Fenced) and r.last.reason == "lease expired"
    assert r.pc == "stopped" and w.provider.calls == []


def test_publication_after_losing_the_claim_stops_the_runner():
    w = started_world()
    r = w.node().runner
    r.step(), r.step()
    w.tick()  # the lease expires while the provider streams (a pause)
    assert r.step() == "PublishStepStarted"
    assert isinstance(r.last, Fenced) and r.pc == "stopped" and r.mem is None
    assert w.snap().events == []


def test_clear_after_the_claim_was_taken_over_stops_the_runner():
    w = started_world()
    r = w.node().runner
    for _ in range(5):
        r.step()
    assert r.pc == "done"
    w.tick()
    assert w.worker().takeover("s1")
    assert r.step() == "ClearClaim" and isinstance(r.last, Fenced) and r.pc == "stopped"
    assert w.snap().claims["s1"].owner == "r1"


def test_a_busy_runner_does_not_acquire_again():
    w = World(sessions=("s1", "s2"))
    assert w.node().acquire(w.prompt["s1", 1])
    assert not w.node().acquire(w.prompt["s2", 1])


def test_acquire_next_takes_steer_before_queue():
    w = World(prompts=2)
    steer = w.node().inputs.admit_prompt("s1", 3, delivery="steer")
    assert w.node().acquire_next("s1")
    assert [i.state for i in w.snap().inputs if i.id == steer] == ["ordinary"]


def test_an_occupied_session_keeps_its_input_and_its_execution_id():
    w = World(prompts=2)
    assert w.node("n1").acquire(w.prompt["s1", 1])
    result = w.node("n2").acquire(w.prompt["s1", 2])
    assert type(result).__name__ == "Occupied"
    assert [i.state for i in w.snap().inputs] == ["ordinary", "pending"]
    w.node().runner.run_to_completion()
    assert w.node("n2").acquire(w.prompt["s1", 2]).value.execution_id == 2  # no id was burnt
