"""Every named boundary fires, right after its unit, on the branch that leads to its `before` unit."""

import pytest

from impl import faults
from impl import registry as R
from impl.cancel import SETTLE
from implkit import World, acquire_next, wake_rows
from spec import names as N

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)


def _every_path(w: World) -> None:
    """Drive `w` (sessions s1 to s5) down every path that holds a boundary."""
    n1 = w.node("n1")
    # a full run that ends, its first stream opening with a partial fragment (Fragments)
    w.provider.fragments = 1
    w.provider.open_fragment(1, True)
    n1.acquire(w.prompt["s1", 1])
    n1.runner.run_to_completion()
    w.provider.fragments = 0
    # a wake scan reserving a batch (the World's ordinary wake rows)
    w.wakes.arrive("w1", 1)
    w.wakes.scan()
    # a failing step, then cancellation at the Step.Failed listener gate
    w.provider.decide(2, "fail")
    n1.acquire(w.prompt["s2", 1])
    for _ in range(5):
        n1.runner.step()
    n1.cancel("s2")
    n1.run_to_completion()
    # recovery whose conversion commits with its acknowledgement lost, then the retry
    n1.acquire(w.prompt["s4", 1])
    n1.crash()
    w.tick()
    w.worker().takeover()
    w.worker().reconcile()
    w.worker().convert(lose_ack=True)
    w.worker().step()
    # an explicit resume of a held prompt: the durable request, then the drain it forces (execution 4)
    n1.inputs.admit_prompt("s1", 2, requested=False)
    n1.resume("s1")
    acquire_next(n1, "s1")
    n1.runner.run_to_completion()
    # a local tool whose Tool.Success publication fails: the claim goes unknown, recovery reconciles it
    w.provider.tools = 1
    n1.acquire(w.prompt["s5", 1])
    for _ in range(6):  # Renew, Dispatch, Step.Started and its return, the tool start, the physical tool
        n1.runner.step()
    n1.runner.fail_next_publication(R.TOOL_SUCCESS_FAILS)
    n1.runner.run_to_completion()  # MarkUnknown, RunnerExit
    w.provider.tools = 0
    w.tick()
    w.worker().run_once()
    # recovery that fails to convert (malformed: a forged recovery row names the execution)
    n1.acquire(w.prompt["s3", 1])
    n1.crash()
    faults.corrupt_recovery_row(w.db, "s1", 6)
    w.tick()
    w.worker().run_once()


# after the last Step, Step.Ended's publish returns as the runner's release (ClearClaim), not StepEndedReturn
LAST_STEP = {R.B_STEP_ENDED_COMMITTED: R.CLEAR_CLAIM}
# with Fragments, a stream may open with a partial fragment before its Step.Started
FRAGMENT = {R.B_PROVIDER_DISPATCHED: R.OPEN_FRAGMENT}


def test_every_boundary_fires_in_protocol_order():
    w = World(sessions=("s1", "s2", "s3", "s4", "s5"), lease=1, max_steps=2)
    _every_path(w)
    names = w.recorder.names
    assert set(names) == set(N.BOUNDARIES)
    assert names[:6] == ["acquire.committed", "renew.committed", "provider.dispatched", "fragment.opened",
                         "step_started.committed", "step_ended.committed"]
    assert names[-5:] == ["acquire.committed", "recovery.scanned", "recovery.taken_over", "recovery.reconciling",
                          "recovery.convert_failed"]
    for name, ctx in w.recorder.hits:
        if name == R.B_WAKE_RESERVED:  # a batch of wake rows, not one claim
            assert ctx["items"] == ["w1"], ctx
            continue
        assert ctx["session"] and (ctx.get("execution") or name == R.B_RESUME_REQUESTED), (name, ctx)  # resume: none yet


def _next_actions(w: World) -> set[str]:
    """What the actors will run next: each one's enabled action; a finalizer set to settle but waiting
    for its runner to stop (cancel.requested: "finalizer waits") will run FinalizerReconcile."""
    n1 = w.node("n1")
    fin = n1.finalizer.enabled() or (R.FINALIZER_RECONCILE if n1.finalizer.pc == SETTLE else None)
    with w.db.read() as conn:
        woken = any(slot for _n, slot in wake_rows(w.wakes, conn).values())
    return {a for a in (n1.runner.enabled(), fin, w.worker().enabled(), R.WAKE_SERVE if woken else None)
            if a is not None}


def test_boundaries_follow_the_unit_named_in_after():
    """At each hit the state is the one right after `after` (checked by what the actors will run next),
    for every registry boundary (two Steps per execution: the gate between them, and after the last)."""
    w = World(sessions=("s1", "s2", "s3", "s4", "s5"), lease=1, max_steps=2)
    seen = []

    def hook(name, ctx):
        if name == R.B_RESUME_REQUESTED:  # the next unit is the drain, an acquisition of what is now requested
            with w.db.read() as conn:
                drainable = bool(w.node("n1").inputs.select_ordinary(conn, ctx["session"]))
            seen.append((name, {R.ACQUIRE} if drainable else set()))
            return
        seen.append((name, _next_actions(w)))
    w.boundaries.install(hook)
    _every_path(w)
    assert seen, "no boundary was hit: nothing was checked"
    assert {name for name, _ in seen} == set(N.BOUNDARIES)
    for name, nxt in seen:
        assert N.BOUNDARIES[name].before in nxt or LAST_STEP.get(name) in nxt or FRAGMENT.get(name) in nxt, (name, nxt)
    assert (R.B_STEP_ENDED_COMMITTED, {R.STEP_ENDED_RETURN}) in seen  # the gate between two Steps was held


def test_failed_units_do_not_hit_their_boundary():
    w = World()
    n1 = w.node()
    n1.acquire(w.prompt["s1", 1])
    w.tick()
    n1.runner.step()  # Renew is fenced: the runner stops, no dispatch follows
    assert R.B_RENEW_COMMITTED not in w.recorder.names


def test_a_hook_can_hold_an_actor_at_the_listener_gate():
    """The harness's use: act while the runner sits between Step.Started's commit and its return."""
    w = World()
    n1 = w.node()

    def hook(name, ctx):
        if name == R.B_STEP_STARTED_COMMITTED:
            n1.cancel(ctx["session"])
    w.boundaries.install(hook)
    n1.acquire(w.prompt["s1", 1])
    n1.run_to_completion()
    assert w.snap().kinds() == ["Started", "Interrupted"] and w.snap().claims == {}
