"""The read-side API maps the database into the twin's vocabulary."""

import pytest

from impl import ids
from implkit import World

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)


def test_snapshot_of_a_cancelled_and_a_recovered_session():
    w = World(sessions=("s1", "s2"), lease=2)
    n1 = w.node()
    n1.acquire(w.prompt["s1", 1])
    for _ in range(4):
        n1.runner.step()
    n1.cancel("s1")
    n1.run_to_completion()
    n1.acquire(w.prompt["s2", 1])
    n1.runner.step()
    n1.crash()
    snap = w.snap()
    claim = snap.claims["s2"]
    assert (claim.execution, claim.owner, claim.phase, claim.assistant, claim.quarantined) == (2, "n1", "running",
                                                                                                 None, False)
    assert claim.ttl(w.clock.now()) == 2 and claim.ttl(10) == 0
    assert [(e.session, e.kind, e.execution, e.writer) for e in snap.events] == [
        ("s1", "Started", 1, "n1"), ("s1", "Interrupted", 1, "n1")]
    assert snap.cancelled == {(1, "s1")}
    w.tick(2)
    w.worker().run_once()
    snap = w.snap()
    assert snap.recovery == {(2, "s2")}
    assert [(i.session, i.kind, i.src, i.state) for i in snap.inputs] == [
        ("s1", "prompt", 1, "ordinary"), ("s2", "prompt", 1, "ordinary"), ("s2", "cont", 2, "pending")]
    assert snap.assistants[ids.assistant_id(1)].outcome == "interrupted"
    assert snap.count("Interrupted", ids.assistant_id(1)) == 1
