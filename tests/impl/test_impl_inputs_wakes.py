"""Inputs (ordinary selection vs recovery promotion) and wakes (compare-and-set, bounded, fair)."""

import pytest

from impl import ids
from impl import registry as R
from impl.wakes import plan_batch
from implkit import World, acquire_next

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)


def test_admission_is_idempotent_and_ordered():
    w = World(prompts=0)
    store = w.node().inputs
    first = store.admit_prompt("s1", 1)
    assert store.admit_prompt("s1", 1) == first == ids.prompt_id("s1", 1)
    store.admit_prompt("s1", 2)
    with w.db.read() as conn:
        assert [r.src for r in store.select_ordinary(conn, "s1", limit=5)] == [1, 2]


def test_admit_next_numbers_past_the_highest_admitted():
    """A node admits a Session's next prompt without knowing its number (the number is read in the admitting
    transaction), held or requested."""
    w = World(prompts=0)
    store = w.node().inputs
    store.admit_prompt("s1", 1)
    assert store.admit_next("s1", requested=False) == ids.prompt_id("s1", 2)
    assert store.admit_next("s2") == ids.prompt_id("s2", 1)
    assert {i.id: i.state for i in w.snap().inputs}[ids.prompt_id("s1", 2)] == "held"


def test_arming_a_held_prompt_is_stamped():
    """An exact retry's and a resume's arming (held -> pending) stamp the input from the input sequence, as
    every other change of an input's state does: the commit history's delta is taken against that stamp."""
    w = World(prompts=0)
    store = w.node().inputs
    a, b = store.admit_prompt("s1", 1, requested=False), store.admit_prompt("s1", 2, requested=False)

    def stamp(iid):
        with w.db.read() as conn:
            return store.get(conn, iid).promoted_seq
    assert stamp(a) is None and store.exact_retry("s1", a) and stamp(a) > 2
    assert stamp(b) is None and store.request_pending("s1") and stamp(b) > stamp(a)


def test_ordinary_selection_excludes_only_recovery_owned_continuations():
    w = World(sessions=("s1", "s2"), lease=1)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.crash()
    w.tick()
    w.worker().run_once()
    with w.db.transaction() as conn:  # an orphan continuation: no recovery row of its own
        node.inputs.create_continuation(conn, "s2", 99)
    with w.db.read() as conn:
        s1 = [r.kind for r in node.inputs.select_ordinary(conn, "s1", limit=5)]
        s2 = [r.kind for r in node.inputs.select_ordinary(conn, "s2", limit=5)]
    assert s1 == [] and s2 == ["prompt", "continuation"]


def test_wake_scans_are_bounded_and_split_ordinary_from_recovery():
    sessions = ("s1", "s2", "s3")
    w = World(sessions=sessions, lease=1)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.crash()
    w.tick()
    w.worker().run_once()
    with w.db.read() as conn:
        assert node.inputs.sessions_to_wake(conn, 1) == ["s2"]
        assert node.inputs.sessions_to_wake(conn, 5) == ["s2", "s3"]
        assert node.inputs.sessions_to_wake(conn, 5, recovery=True) == ["s1"]


def test_fresh_work_keeps_capacity_while_retries_saturate():
    retries = [f"r{k}" for k in range(10)]
    assert plan_batch(["f1", "f2"], retries, bound=4, fresh_share=1) == ["f1", "r0", "r1", "r2"]
    assert plan_batch([], retries, bound=4, fresh_share=1) == ["r0", "r1", "r2", "r3"]
    assert plan_batch(["f1", "f2", "f3"], ["r0"], bound=4, fresh_share=1) == ["f1", "r0", "f2", "f3"]
    assert plan_batch(["f1"], [], bound=4, fresh_share=2) == ["f1"]
    with pytest.raises(ValueError):
        plan_batch([], [], bound=2, fresh_share=3)


def test_an_exact_retry_checks_the_identity_and_appends_one_request():
    """A held prompt: its retry appends one PromptExecutionRequested and arms it; a second appends nothing;
    a retry naming a continuation, or another Session's prompt, is refused."""
    w = World(prompts=0)
    inputs = w.node().inputs
    pid = inputs.admit_prompt("s1", 1, requested=False)
    assert {i.id: i.state for i in w.snap().inputs}[pid] == "held"
    assert inputs.exact_retry("s2", pid).__class__.__name__ == "NotEnabled"  # not that Session's input
    assert inputs.exact_retry("s1", pid)
    assert not inputs.exact_retry("s1", pid)
    assert not inputs.exact_retry("s1", ids.continuation_id("s1", 1))
    assert [e.kind for e in w.snap().events] == [R.REQUESTED]
    assert {i.id: i.state for i in w.snap().inputs}[pid] == "pending"


def test_a_resume_requests_durably_then_drains():
    w = World(prompts=0)
    node = w.node()
    pid = node.inputs.admit_prompt("s1", 1, requested=False)
    assert not node.acquire(pid)  # held: ordinary selection does not take it
    assert node.resume("s1") and node.runner.pc == "idle"  # the request; the drain is a unit of its own
    assert acquire_next(node, "s1")
    assert {i.id: i.state for i in w.snap().inputs}[pid] == "ordinary" and node.runner.pc == "acquired"
    assert not node.resume("s1")  # nothing held any more
