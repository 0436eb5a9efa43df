"""The runner's step machine: the twin's action sequence, its fences, and publisher memory."""

import pytest

from impl import ids
from impl.results import Fenced
from implkit import World, acquire_next

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
    assert w.node().runner.record() == ("idle", None, None, None, False, False, 0, 0)
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


def test_several_steps_one_assistant_each_the_claim_naming_the_latest():
    """MaxSteps 2: after Step 1's Step.Ended returns the runner renews, dispatches and starts Step 2 with the
    next assistant id; the claim holds the latest; memory names the last assistant published."""
    w = started_world(max_steps=2)
    r = w.node().runner
    step = HAPPY[:5] + ["StepEndedReturn"]
    assert [r.step() for _ in step] == step
    assert (r.pc, r.ordinal, r.mem, r.active) == ("acquired", 2, ids.assistant_id(1, 1), False)
    assert w.snap().claims["s1"].assistant == ids.assistant_id(1, 1)
    for action in HAPPY[:3]:
        assert r.step() == action
    assert w.snap().claims["s1"].assistant == ids.assistant_id(1, 2)
    assert r.mem == ids.assistant_id(1, 1)  # the v18 window of a later Step: memory names Step 1's
    assert r.run_to_completion() == HAPPY[3:]
    snap = w.snap()
    assert [(e.kind, e.assistant) for e in snap.events] == [
        ("Started", ids.assistant_id(1, 1)), ("Ended", ids.assistant_id(1, 1)),
        ("Started", ids.assistant_id(1, 2)), ("Ended", ids.assistant_id(1, 2))]
    assert snap.claims == {} and [(c.execution_id, c.step) for c in w.provider.calls] == [(1, 1), (1, 2)]


def test_step_ended_listeners_run_after_the_gate_and_before_memory_changes():
    """The Step.Ended listener gate: between the commit and the return memory still names the assistant,
    active; listeners are notified at the return (between Steps) or at the release (after the last)."""
    w = started_world(max_steps=2)
    r, heard = w.node().runner, []
    w.node().publisher.listeners.append(lambda e: heard.append((e.kind, e.assistant_id)))
    for _ in range(5):
        r.step()
    assert (r.pc, r.mem, r.active) == ("ended", ids.assistant_id(1, 1), True) and heard[-1][0] == "Started"
    assert r.step() == "StepEndedReturn" and heard[-1] == ("Ended", ids.assistant_id(1, 1)) and not r.active
    r.run_to_completion()
    assert heard[-1] == ("Ended", ids.assistant_id(1, 2))


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
    assert acquire_next(w.node(), "s1")
    assert [i.state for i in w.snap().inputs if i.id == steer] == ["ordinary"]


def test_an_occupied_session_keeps_its_input_and_its_execution_id():
    w = World(prompts=2)
    assert w.node("n1").acquire(w.prompt["s1", 1])
    result = w.node("n2").acquire(w.prompt["s1", 2])
    assert type(result).__name__ == "Occupied"
    assert [i.state for i in w.snap().inputs] == ["ordinary", "pending"]
    w.node().runner.run_to_completion()
    assert w.node("n2").acquire(w.prompt["s1", 2]).value.execution_id == 2  # no id was burnt
