"""Cancellation: the interrupt, the finalizer reading the durable assistant, supervision."""

import pytest

from impl import registry as R
from impl.results import Fenced, NotEnabled
from implkit import World

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)


def at(w, steps, outcome="end"):
    """Acquire on n1 and run its runner `steps` steps."""
    w.provider.decide(1, outcome)
    assert w.node().acquire(w.prompt["s1", 1])
    for _ in range(steps):
        w.node().runner.step()
    return w.node()


# (label, runner steps before the interrupt, provider outcome, expected event kinds afterwards)
WINDOWS = [
    ("before-start", 2, "end", []),
    ("started-committed-listener-gate", 3, "end", ["Started", "Interrupted"]),
    ("started-returned", 4, "end", ["Started", "Interrupted"]),
    ("failed-committed-listener-gate", 5, "fail", ["Started", "Failed"]),
    ("failed-returned", 6, "fail", ["Started", "Failed"]),
]


@pytest.mark.parametrize("label,steps,outcome,kinds", WINDOWS, ids=[x[0] for x in WINDOWS])
def test_cancel_in_every_window_settles_from_the_database(label, steps, outcome, kinds):
    w = World()
    node = at(w, steps, outcome)
    assert node.cancel("s1")
    assert w.snap().claims["s1"].phase == "cancelling"
    assert node.run_to_completion() == ["RunnerStop", "FinalizerReconcile", "FinalizerSettle", "FinalizerClear"]
    snap = w.snap()
    assert snap.kinds() == kinds
    assert snap.claims == {} and snap.recovery == frozenset() and snap.cancelled == {(1, "s1")}
    assert not [i for i in snap.inputs if i.kind == "cont"]
    assert node.runner.pc == "idle" and node.finalizer.pc == "idle"


def test_the_finalizer_waits_for_its_runner():
    w = World()
    node = at(w, 2)
    node.cancel("s1")
    assert node.finalizer.enabled() is None and node.finalizer.step() is None
    assert node.runner.step() == "RunnerStop"
    assert node.finalizer.enabled() == "FinalizerReconcile"
    assert node.runner.enabled() is None  # a stopped runner waits for its finalizer


def test_cancel_needs_a_running_live_claim_and_a_free_finalizer():
    w = World(sessions=("s1", "s2"))
    node = w.node()
    assert isinstance(node.cancel("s1"), NotEnabled)  # no claim
    at(w, 0)
    assert node.cancel("s1")
    assert isinstance(node.cancel("s1"), NotEnabled)  # this node's finalizer is busy
    assert isinstance(w.node("n2").cancel("s1"), Fenced)  # phase is cancelling now
    w2 = World()
    at(w2, 0)
    w2.clock.advance(1)
    assert w2.node().cancel("s1").reason == "lease expired"


def test_cancel_on_another_node_does_not_interrupt_the_owner():
    """ProcessLocalRouting off: the interrupt acts under the claim's identity; the owner runs on."""
    w = World()
    at(w, 2)
    assert w.node("n2").cancel("s1")
    assert w.node("n1").runner.intr is False
    f = w.node("n2").finalizer
    assert (f.pc, f.session_id, f.execution_id, f.owner_id) == ("settle", "s1", 1, "n1")


def test_supervision_stops_the_finalizer_when_its_lease_expires():
    w = World()
    node = at(w, 2)
    node.cancel("s1")
    w.tick()  # heartbeat did not run: the lease expires with the finalizer still waiting
    assert node.finalizer.pc == "settle"  # supervision is the node's own step
    assert node.supervise() == R.SUPERVISE
    assert node.finalizer.pc == "idle"
    assert isinstance(node.finalizer.last, Fenced)
    assert w.snap().claims["s1"].phase == "cancelling"


def test_heartbeat_keeps_the_cancellation_lease_while_the_finalizer_works():
    w = World(lease=2)
    node = at(w, 2)
    node.cancel("s1")
    w.clock.advance(1)
    assert node.heartbeat("s1")
    assert w.snap().claims["s1"].lease_expires_at == 3
    assert isinstance(node.heartbeat("s1"), NotEnabled)  # full lease
    w.tick()
    assert node.finalizer.pc == "settle"
    assert node.run_to_completion() == ["RunnerStop", "FinalizerReconcile", "FinalizerSettle", "FinalizerClear"]


def test_heartbeat_requires_an_actor_on_the_execution():
    w = World(lease=2)
    at(w, 0)
    w.clock.advance(1)
    assert isinstance(w.node("n2").heartbeat("s1"), NotEnabled)  # not its claim
    w.node().crash()
    assert isinstance(w.node().heartbeat("s1"), NotEnabled)  # nobody works on it any more
