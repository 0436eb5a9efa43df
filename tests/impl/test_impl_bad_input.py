"""Corrupt rows: quarantined with a reason or refused with a typed error; the worker keeps going and
no input is lost."""

import sqlalchemy as sa
import pytest

from impl import faults, ids
from impl.results import Fenced, Malformed, NotEnabled
from impl.schema import claim_t, recovery_t
from implkit import World

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)


def crashed_after(w, session, steps):
    node = w.node("n1")
    assert node.acquire(w.prompt[session, 1])
    e = node.runner.execution_id
    for _ in range(steps):
        node.runner.step()
    node.crash()
    return e


def test_recovery_row_of_another_session_is_refused_loudly_and_a_is_intact():
    w = World(sessions=("A", "B"), lease=1)
    e = crashed_after(w, "A", 4)
    faults.corrupt_recovery_row(w.db, "B", e)
    w.tick()
    handled = w.worker().run_once()
    assert handled[0].outcome == "quarantined"
    assert f"recovery row of session B" in handled[0].reason
    snap = w.snap()
    assert snap.claims["A"].execution == e and snap.claims["A"].recovery_error == handled[0].reason
    assert snap.kinds("A") == ["Started"]  # the open assistant is not settled by a refused conversion
    assert not [i for i in snap.inputs if i.kind == "cont"]
    assert [(i.session, i.state) for i in snap.inputs] == [("A", "ordinary"), ("B", "pending")]


def test_unknown_phase_is_refused_by_the_schema():
    w = World()
    crashed_after(w, "s1", 0)
    with pytest.raises(sa.exc.IntegrityError):
        with w.db.transaction() as conn:
            conn.execute(sa.update(claim_t).values(phase="paused"))


def test_unknown_phase_that_got_in_is_quarantined_and_the_scan_continues():
    w = World(sessions=("s1", "s2"), lease=1, scan_bound=5)
    crashed_after(w, "s1", 0)
    w.node("n1").acquire(w.prompt["s2", 1])
    w.node("n1").crash()
    faults.force_claim(w.db, "s1", phase="paused")
    w.tick()
    handled = {h.session_id: h for h in w.worker().run_once()}
    assert handled["s1"].outcome == "quarantined" and "unknown phase 'paused'" in handled["s1"].reason
    assert handled["s2"].outcome == "converted"


def test_claim_naming_a_missing_assistant_is_quarantined():
    w = World(lease=1)
    crashed_after(w, "s1", 2)
    faults.force_claim(w.db, "s1", assistant_id="asst-99-1")
    w.tick()
    (h,) = w.worker().run_once()
    assert h.outcome == "quarantined" and "asst-99-1" in h.reason
    assert w.snap().events == []


def test_finalizer_refuses_a_claim_naming_a_missing_assistant():
    w = World(lease=2)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    node.runner.step(), node.runner.step()
    faults.force_claim(w.db, "s1", assistant_id="asst-99-1")
    node.cancel("s1")
    node.runner.step()
    assert node.finalizer.step() == "FinalizerReconcile"
    assert node.finalizer.step() == "FinalizerSettle"
    assert isinstance(node.finalizer.last, Malformed) and node.finalizer.pc == "idle"
    snap = w.snap()
    assert snap.events == [] and snap.claims["s1"].phase == "cancelling"


def test_a_recovery_row_naming_another_continuation_does_not_block_its_own():
    """The promotion asks for a recovery row of the continuation's Session and execution (RecoveryRowsIsolated,
    the twin's PromoteContinuation, the TypeScript example); the continuation row's own validation decides the
    rest. The row's pointer to its continuation is not read: refusing on it (as this server did, Malformed)
    refused, under conversion-retry-mints-new-ids, the minted continuation the twin promotes."""
    w = World(lease=1)
    e = crashed_after(w, "s1", 0)
    w.tick()
    w.worker().run_once()
    cont = ids.continuation_id("s1", e)
    with w.db.transaction() as conn:
        conn.execute(sa.update(recovery_t).values(continuation_input_id="cont-forged"))
    assert w.node().promote(cont)
    assert [i.state for i in w.snap().inputs if i.id == cont] == ["recovery"]


def test_continuation_whose_recovery_row_moved_to_another_session_is_not_promoted():
    w = World(sessions=("s1", "s2"), lease=1)
    e = crashed_after(w, "s1", 0)
    w.tick()
    w.worker().run_once()
    with w.db.transaction() as conn:
        conn.execute(sa.update(recovery_t).values(session_id="s2"))
    assert isinstance(w.node().promote(ids.continuation_id("s1", e)), NotEnabled)


def test_conversion_that_raises_is_quarantined_not_fatal(monkeypatch):
    w = World(sessions=("s1", "s2"), lease=1, scan_bound=5)
    crashed_after(w, "s1", 0)
    w.node().acquire(w.prompt["s2", 1])
    w.node().crash()
    w.tick()
    r = w.worker()
    real = r.inputs.create_continuation
    calls = []

    def flaky(conn, session, execution):
        calls.append(session)
        if session == "s1":
            raise RuntimeError("disk hiccup")
        return real(conn, session, execution)

    monkeypatch.setattr(r.inputs, "create_continuation", flaky)
    handled = {h.session_id: h for h in r.run_once()}
    assert handled["s1"].outcome == "quarantined" and "disk hiccup" in handled["s1"].reason
    assert handled["s2"].outcome == "converted"
    assert w.snap().recovery == {(2, "s2")}  # s1's partial conversion rolled back


def test_a_runner_meeting_a_corrupt_claim_row_gets_a_typed_refusal(backend):
    """Renewal has no phase predicate (as in the twin); the publication fence refuses the phase. On
    PostgreSQL the phase CHECK that force_claim re-adds (NOT VALID) refuses every UPDATE of the corrupt
    row, so the refusal comes one step earlier, at Renew, as Malformed; nothing is published either way."""
    w = World()
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    faults.force_claim(w.db, "s1", phase="paused")
    if backend == "sqlite":
        assert [node.runner.step() for _ in range(3)] == ["Renew", "Dispatch", "PublishStepStarted"]
        assert isinstance(node.runner.last, Fenced) and "phase paused" in node.runner.last.reason
    else:
        assert node.runner.step() == "Renew"
        assert isinstance(node.runner.last, Malformed) and "ck_claim_phase" in node.runner.last.reason
    assert node.runner.pc == "stopped" and w.snap().events == []


NO_RENEW = {  # a trigger that refuses any change of the lease as a CHECK would
    "sqlite": ["CREATE TRIGGER no_renew BEFORE UPDATE OF lease_expires_at ON execution_claim "
               "BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: lease'); END"],
    "postgresql": ["CREATE FUNCTION no_renew() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                   "RAISE check_violation USING MESSAGE = 'CHECK constraint failed: lease'; END $$",
                   "CREATE TRIGGER no_renew BEFORE UPDATE OF lease_expires_at ON execution_claim "
                   "FOR EACH ROW EXECUTE FUNCTION no_renew()"],
}


def test_a_constraint_refusal_inside_a_mutation_is_a_typed_result(backend):
    from implkit import ClaimBench
    from impl.claims import Ident
    bench = ClaimBench()
    seen = bench.claim()
    faults.force_claim(bench.db, "s1", phase="paused")
    bench.clock.advance(2)
    # a takeover normalizes the unknown phase instead of tripping the CHECK
    assert bench.run(lambda c: bench.claims.takeover(c, seen, "r1", 2))
    assert bench.claim().phase == "unknown"
    with bench.db.transaction() as conn:  # a direct constraint violation is turned into Malformed
        for ddl in NO_RENEW[backend]:
            conn.exec_driver_sql(ddl)

    def renew_then_read(c):  # the refusal leaves the caller's transaction usable
        return bench.claims.renew(c, Ident("s1", 1, "r1"), 2), bench.claims.get(c, "s1")
    result, row = bench.run(renew_then_read)
    assert isinstance(result, Malformed) and "constraint" in result.reason
    assert row.owner_id == "r1" and row.phase == "unknown"


def test_heartbeat_all_renews_what_this_node_works_on():
    w = World(sessions=("s1", "s2"), lease=2)
    node = w.node()
    node.acquire(w.prompt["s1", 1])
    w.clock.advance(1)
    assert list(node.heartbeat_all()) == ["s1"] and node.heartbeat_all()["s1"].__class__.__name__ == "NotEnabled"
    assert w.snap().claims["s1"].lease_expires_at == 3
