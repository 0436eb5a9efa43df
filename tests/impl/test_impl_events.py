"""Publication: one transaction (projection, claim hook, append), then isolated listeners."""

import logging

import pytest

from impl.claims import Ident
from impl.events import Fence, StepEvent
from impl.results import Fenced, Malformed
from impl.snapshot import snapshot
from implkit import ClaimBench

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)

ID = Ident("s1", 1, "n1")
FENCE = Fence(ID, "running")


def started(aid="asst-1-1"):
    return StepEvent("s1", 1, aid, "Started", "n1")


def test_started_projects_attaches_and_appends_in_one_transaction():
    bench = ClaimBench()
    assert bench.publisher.publish(started(), FENCE)
    snap = snapshot(bench.db)
    assert snap.claims["s1"].assistant == "asst-1-1"
    assert snap.assistants["asst-1-1"].started and not snap.assistants["asst-1-1"].completed
    assert [(e.kind, e.assistant, e.writer) for e in snap.events] == [("Started", "asst-1-1", "n1")]


def test_terminal_completes_the_assistant_and_keeps_the_first_outcome():
    bench = ClaimBench()
    bench.publisher.publish(started(), FENCE)
    assert bench.publisher.publish(StepEvent("s1", 1, "asst-1-1", "Failed", "n1"), FENCE)
    snap = snapshot(bench.db)
    assert snap.assistants["asst-1-1"].completed and snap.assistants["asst-1-1"].outcome == "failed"
    assert snap.kinds() == ["Started", "Failed"]


def test_a_failed_fence_rolls_back_projection_and_append():
    bench = ClaimBench()
    bench.run(lambda c: bench.claims.advance_phase(c, ID, 0, "running", "cancelling"))
    result = bench.publisher.publish(started(), FENCE)
    assert isinstance(result, Fenced) and "phase cancelling" in result.reason
    snap = snapshot(bench.db)
    assert snap.events == [] and snap.assistants == {} and snap.claims["s1"].assistant is None


def test_a_second_start_of_the_same_assistant_is_refused():
    bench = ClaimBench()
    bench.publisher.publish(started(), FENCE)
    result = bench.publisher.publish(started(), FENCE)
    assert isinstance(result, Malformed) and "already started" in result.reason
    assert snapshot(bench.db).kinds() == ["Started"]


def test_a_terminal_for_an_assistant_never_started_is_refused():
    bench = ClaimBench()
    result = bench.publisher.publish(StepEvent("s1", 1, "asst-1-1", "Ended", "n1"), FENCE)
    assert isinstance(result, Malformed)
    assert snapshot(bench.db).events == []


def _two_sessions_interleaved() -> dict[str, list[int]]:
    """s1 and s2 each publish Started then Ended, interleaved; each session's seq numbers in order."""
    bench = ClaimBench()
    id2 = Ident("s2", 2, "n1")
    assert bench.run(lambda c: bench.claims.acquire(c, id2, bench.clock.now(), 1))
    fence2 = Fence(id2, "running")
    bench.publisher.publish(started(), FENCE)
    bench.publisher.publish(StepEvent("s2", 2, "asst-2-1", "Started", "n1"), fence2)
    bench.publisher.publish(StepEvent("s1", 1, "asst-1-1", "Ended", "n1"), FENCE)
    bench.publisher.publish(StepEvent("s2", 2, "asst-2-1", "Ended", "n1"), fence2)
    with bench.db.read() as conn:
        rows = conn.exec_driver_sql("SELECT session_id, seq FROM session_event ORDER BY id").all()
    seqs: dict[str, list[int]] = {}
    for session, seq in rows:
        seqs.setdefault(session, []).append(seq)
    return seqs


def test_event_sequence_is_per_session():
    assert _two_sessions_interleaved() == {"s1": [1, 2], "s2": [1, 2]}  # each Session's numbers start at 1


def test_a_global_event_sequence_fails_the_per_session_test(monkeypatch):
    """The test above can fail: numbering events across all Sessions gives s2 3 and 4 after s1's 1 and 2."""
    import sqlalchemy as sa
    from impl import events
    monkeypatch.setattr(events, "_NEXT_SEQ", sa.select(sa.func.coalesce(sa.func.max(events.event_t.c.seq), 0) + 1))
    assert _two_sessions_interleaved() == {"s1": [1, 3], "s2": [2, 4]}


def test_listeners_run_after_commit_and_one_failure_is_isolated(caplog):
    bench = ClaimBench()
    seen = []

    def broken(event):
        raise RuntimeError("slow listener fell over")

    def reader(event):  # a listener sees the committed state
        seen.append((event.kind, snapshot(bench.db).kinds()))

    bench.publisher.listeners += [broken, reader]
    assert bench.publisher.publish(started(), FENCE)
    assert seen == []  # publish commits; listeners are a separate step (the listener boundary)
    with caplog.at_level(logging.ERROR, logger="impl.events"):
        bench.publisher.notify(started())
    assert seen == [("Started", ["Started"])]
    assert "slow listener fell over" in caplog.text
