"""Recovery: takeover, conversion, quarantine, promotion, bounded scans that never stop on a bad row."""

import pytest

from impl import faults, ids
from impl import registry as R
from impl.results import Conflict, NotEnabled
from implkit import World, acquire_next

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)


def abandoned(w, session="s1", steps=4, node="n1", number=1):
    """A runner that took `steps` steps and then its node crashed; return the execution id."""
    assert w.node(node).acquire(w.prompt[session, number])
    execution = w.node(node).runner.execution_id
    for _ in range(steps):
        w.node(node).runner.step()
    w.node(node).crash()
    return execution


@pytest.mark.parametrize("steps,kinds", [(2, []), (3, ["Started", "Interrupted"]), (4, ["Started", "Interrupted"]),
                                         (5, ["Started", "Ended"])])
def test_conversion_settles_records_continues_and_clears(steps, kinds):
    w = World(lease=2)
    e = abandoned(w, steps=steps)
    w.tick(2)
    r = w.worker()
    assert r.step() == "RecoveryScan" and r.record() == ("scanned", "s1", e, "n1", "")  # a read: nothing changed
    assert w.snap().claims["s1"].owner == "n1"
    assert r.step() == "RecoveryTakeover" and r.record() == ("converting", "s1", e, "", "")
    assert w.snap().claims["s1"].phase == "recovering"
    assert r.step() == "RecoveryReconcile" and r.step() == "RecoveryConvert" and r.pc == "idle"
    snap = w.snap()
    assert snap.kinds() == kinds
    assert [x.writer for x in snap.events if x.kind == "Interrupted"] == (["r1"] if "Interrupted" in kinds else [])
    assert snap.claims == {} and snap.recovery == {(e, "s1")}
    conts = [i for i in snap.inputs if i.kind == "cont"]
    assert [(c.id, c.src, c.state) for c in conts] == [(ids.continuation_id("s1", e), e, "pending")]


def test_only_recovery_promotes_the_continuation():
    w = World(lease=2)
    e = abandoned(w)
    w.tick(2)
    w.worker().run_once()
    cont = ids.continuation_id("s1", e)
    assert isinstance(w.node("n2").acquire(cont), NotEnabled)
    assert isinstance(acquire_next(w.node("n2"), "s1"), NotEnabled)
    assert w.node("n2").promote(cont)
    assert w.node("n2").runner.run_to_completion()[-1] == "ClearClaim"
    assert [i.state for i in w.snap().inputs if i.id == cont] == ["recovery"]
    assert isinstance(w.node("n1").promote(cont), NotEnabled)  # exactly once


def test_promote_refuses_a_prompt():
    w = World()
    assert isinstance(w.node().promote(w.prompt["s1", 1]), NotEnabled)


def test_live_claims_are_not_taken_over():
    w = World(lease=2)
    abandoned(w)
    w.tick(1)
    assert w.worker().step() is None and isinstance(w.worker().takeover("s1"), NotEnabled)


def test_an_expired_cancellation_is_finished_not_quarantined():
    """Issue 12 item 4: the finalizer was supervised away with the claim cancelling; recovery finishes the
    cancellation (no recovery row, no continuation) and the Session is available again."""
    w = World(lease=1)
    w.node().acquire(w.prompt["s1", 1])
    w.node().cancel("s1")
    w.tick()
    w.supervise()  # the finalizer was supervised away; the claim is left cancelling
    handled = w.worker().run_once()
    assert [(h.outcome, h.reason) for h in handled] == [("cancelled", None)]
    snap = w.snap()
    assert snap.claims == {} and (1, "s1") in snap.cancelled
    assert snap.recovery == frozenset() and not [i for i in snap.inputs if i.kind == "cont"]


def test_a_cancellation_with_a_started_assistant_is_interrupted_once_by_recovery():
    w = World(lease=1)
    n1 = w.node()
    n1.acquire(w.prompt["s1", 1])
    for _ in range(3):
        n1.runner.step()  # Renew, Dispatch, PublishStepStarted: the assistant is open
    n1.cancel("s1")
    n1.crash()  # between running -> cancelling and Step.Interrupted
    w.tick(2)
    assert [h.outcome for h in w.worker().run_once()] == ["cancelled"]
    snap = w.snap()
    assert snap.kinds("s1") == ["Started", "Interrupted"] and snap.events[-1].writer == "r1"
    assert snap.claims == {} and snap.recovery == frozenset()


def test_under_the_defect_cancellation_owned_work_is_quarantined():
    w = World(lease=1, defects=[R.CANCELLATION_QUARANTINE_STRANDS])
    w.node().acquire(w.prompt["s1", 1])
    w.node().cancel("s1")
    w.tick()
    w.supervise()
    handled = w.worker().run_once()
    assert [(h.outcome, h.reason) for h in handled] == [
        ("quarantined", "invalid: phase 'cancelling': only a running execution is recovered")]
    assert w.snap().claims["s1"].recovery_error.startswith("invalid: phase 'cancelling'")
    assert w.worker().window() == []  # never taken over again: the Session is stranded


def test_a_conversion_that_outlasts_its_lease_is_retried_then_quarantined():
    """Issue 12 item 4: a pause releases the claim to a later takeover; the attempts are recorded on the
    claim, and only when they reach max_tries is the claim quarantined."""
    w = World(lease=1, max_tries=2)
    abandoned(w)
    w.tick()
    r = w.worker()
    r.takeover("s1")
    w.tick()  # the worker paused: its lease is gone, conversion is fenced
    assert r.step() == "RecoveryReconcile" and r.step() == "RecoveryConvert" and r.pc == "idle" and type(r.last).__name__ == "Released"
    assert w.snap().claims["s1"].recovery_error is None and w.snap().claims["s1"].recovery_attempts == 1
    w.tick()
    r.takeover("s1")
    w.tick()
    assert r.step() == "RecoveryReconcile" and r.step() == "RecoveryConvert" and r.pc == "quarantining" and r.reason == "exhausted: lease expired"
    assert r.step() == "RecoveryQuarantine"
    c = w.snap().claims["s1"]
    assert c.recovery_error == "exhausted: lease expired" and c.recovery_attempts == 2


def test_unbounded_retries_never_quarantine():
    w = World(lease=1, max_tries=1, defects=[R.RECOVERY_RETRIES_UNBOUNDED])
    abandoned(w)
    r = w.worker()
    for _ in range(3):
        w.tick()
        r.takeover("s1")
        w.tick()
        assert r.step() == "RecoveryReconcile" and r.step() == "RecoveryConvert" and r.pc == "idle"
    assert w.snap().claims["s1"].recovery_error is None and w.snap().claims["s1"].recovery_attempts == 3


def test_a_successor_worker_owns_it_then_quarantine_changes_nothing_and_says_so():
    w = World(workers=("r1", "r2"), lease=1, max_tries=1)
    abandoned(w)
    w.tick()
    r1, r2 = w.worker("r1"), w.worker("r2")
    r1.takeover("s1")
    w.tick()
    r1.reconcile()
    r1.convert()
    assert r2.takeover("s1")  # r1's lease expired: r2 took the claim over
    result = r1.quarantine()
    assert type(result).__name__ == "Superseded" and "r2" in result.reason
    assert r1.pc == "idle" and w.snap().claims["s1"].owner == "r2" and w.snap().claims["s1"].recovery_error is None


def test_recovery_heartbeat_keeps_its_lease_while_converting():
    w = World(lease=2)
    abandoned(w)
    w.tick(2)
    r = w.worker()
    assert isinstance(r.heartbeat("s1"), NotEnabled)
    r.takeover("s1")
    w.clock.advance(1)
    assert r.heartbeat("s1") and w.snap().claims["s1"].lease_expires_at == 5


def test_scan_is_bounded_and_run_once_handles_every_row_of_its_window():
    sessions = tuple(f"s{k}" for k in range(1, 6))
    w = World(sessions=sessions, lease=1, scan_bound=3)
    for s in sessions:
        abandoned(w, session=s, steps=0)
    w.tick()
    assert [c.session_id for c in w.worker().window()] == ["s1", "s2", "s3"]
    assert [h.session_id for h in w.worker().run_once()] == ["s1", "s2", "s3"]
    assert [h.session_id for h in w.worker().run_once()] == ["s4", "s5"]
    assert w.snap().claims == {}


def test_a_scan_never_stops_on_a_bad_row():
    sessions = ("s1", "s2", "s3")
    w = World(sessions=sessions, lease=1, scan_bound=3)
    abandoned(w, "s1", steps=0)
    w.node("n2").acquire(w.prompt["s2", 1])
    w.node("n2").cancel("s2")  # cancellation-owned: finished, not converted
    abandoned(w, "s3", steps=0)
    w.node("n2").crash()
    faults.corrupt_recovery_row(w.db, "s3", 1)  # s1's execution already has a (forged) recovery row
    w.tick()
    outcomes = [(h.session_id, h.outcome) for h in w.worker().run_once()]
    assert outcomes == [("s1", "quarantined"), ("s2", "cancelled"), ("s3", "converted")]


def test_run_once_skips_rows_another_worker_won():
    w = World(workers=("r1", "r2"), lease=1)
    abandoned(w)
    w.tick()
    seen = w.worker("r1").window()
    assert w.worker("r2").takeover("s1")
    assert w.worker("r1").take(seen[0]).reason.startswith("claim is now")
    assert w.worker("r1").pc == "idle"


def test_recovery_row_insert_must_change_one_row():
    """Even if the existence check were raced, the insert's conflict is an error, not a no-op."""
    w = World(sessions=("s1", "s2"), lease=1)
    e = abandoned(w)
    w.tick()
    r = w.worker()
    r.takeover("s1")
    from impl.claims import Ident
    with w.db.transaction() as conn:
        from impl.faults import recovery_t
        conn.execute(recovery_t.insert().values(execution_id=e, session_id="s2", continuation_input_id="x"))
        from impl.results import Abort
        with pytest.raises(Abort) as aborted:
            r._insert_recovery_row(conn, Ident("s1", e, "r1"), ids.continuation_id("s1", e))
    assert isinstance(aborted.value.result, Conflict)


def test_a_pass_after_a_refused_unit_finishes_that_row_then_its_window():
    """A conversion the database refuses (a transient error: rolled back, raised out of the pass) leaves the
    worker mid-row; the next pass finishes that row first, then takes its window: no row reported "lost"
    because the worker was not idle (impl/recovery_pass.py)."""
    import sqlalchemy as sa

    w = World(sessions=("s1", "s2"), lease=2)
    abandoned(w, "s1", node="n1")
    abandoned(w, "s2", node="n2")
    w.tick(2)
    r = w.worker()
    convert_once = r._convert_once
    refusals = []

    def refused_once(conn):
        if not refusals:
            refusals.append(r.session_id)
            raise sa.exc.OperationalError("COMMIT", {}, Exception("database is locked"))
        return convert_once(conn)

    r._convert_once = refused_once
    with pytest.raises(sa.exc.OperationalError):
        r.run_once()
    assert r.pc == "reconciled" and refusals == ["s1"]
    handled = r.run_once()
    assert [(h.session_id, h.outcome) for h in handled] == [("s1", "converted"), ("s2", "converted")]
    assert w.snap().claims == {} and r.pc == "idle"
