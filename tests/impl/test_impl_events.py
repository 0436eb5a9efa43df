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


def test_event_sequence_is_per_session():
    bench = ClaimBench()
    bench.publisher.publish(started(), FENCE)
    bench.publisher.publish(StepEvent("s1", 1, "asst-1-1", "Ended", "n1"), FENCE)
    with bench.db.read() as conn:
        seqs = conn.exec_driver_sql("SELECT seq FROM session_event ORDER BY id").scalars().all()
    assert seqs == [1, 2]


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
