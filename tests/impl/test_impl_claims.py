"""The claim: every fence, each part wrong in turn; insert-only acquisition; monotonic phases;
recovery's compare-and-swap; quarantine's row count."""

import pytest

from impl.claims import ClaimRow, Ident
from impl.events import Fence, StepEvent
from impl.results import Fenced, Lost, Occupied, Ok, Superseded
from implkit import ClaimBench

pytestmark = pytest.mark.backends()  # sqlite and postgresql (tests/impl/conftest.py)

EXACT = Ident("s1", 1, "n1")
# (label, identity presented, ticks advanced, expected reason fragment)
FENCE_CASES = [
    ("exact", EXACT, 0, None),
    ("session", Ident("s2", 1, "n1"), 0, "no claim"),
    ("execution", Ident("s1", 2, "n1"), 0, "execution"),
    ("owner", Ident("s1", 1, "n2"), 0, "owner"),
    ("lease", EXACT, 2, "lease expired"),
]


def _mutations(bench: ClaimBench):
    """Each fenced mutation, as ident -> Result in its own transaction."""
    now = bench.clock.now
    c, p = bench.claims, bench.publisher
    return {
        "renew": lambda i: bench.run(lambda conn: c.renew(conn, i, now())),
        "advance_phase": lambda i: bench.run(lambda conn: c.advance_phase(conn, i, now(), "running", "cancelling")),
        "clear": lambda i: bench.run(lambda conn: c.clear(conn, i, now(), "running")),
        "attach_assistant": lambda i: bench.run(lambda conn: c.attach_assistant(conn, i, now(), "running", "a")),
        "check": lambda i: bench.run(lambda conn: c.check(conn, i, now(), "running")),
        "publish": lambda i: p.publish(StepEvent(i.session_id, i.execution_id, "asst-1-1", "Started", i.owner_id),
                                       Fence(i, "running")),
    }


@pytest.mark.parametrize("mutation", ["renew", "advance_phase", "clear", "attach_assistant", "check", "publish"])
@pytest.mark.parametrize("label,ident,ticks,reason", FENCE_CASES, ids=[c[0] for c in FENCE_CASES])
def test_every_fence(mutation, label, ident, ticks, reason):
    bench = ClaimBench()
    before = bench.claim()
    bench.clock.advance(ticks)
    result = _mutations(bench)[mutation](ident)
    if reason is None:
        assert isinstance(result, Ok), result
        return
    assert isinstance(result, Fenced) and reason in result.reason, result
    assert bench.claim() == before  # nothing changed
    from impl.snapshot import snapshot
    assert snapshot(bench.db).events == [] and snapshot(bench.db).assistants == {}


def test_fenced_update_requires_the_phase_it_moves_from():
    bench = ClaimBench()
    now = bench.clock.now()
    assert bench.run(lambda c: bench.claims.advance_phase(c, EXACT, now, "running", "cancelling"))
    again = bench.run(lambda c: bench.claims.advance_phase(c, EXACT, now, "running", "cancelling"))
    assert isinstance(again, Fenced) and "phase cancelling" in again.reason
    # an ordinary (running-phase) update is now refused: phases never go back
    assert isinstance(bench.run(lambda c: bench.claims.attach_assistant(c, EXACT, now, "running", "a")), Fenced)
    assert isinstance(bench.run(lambda c: bench.claims.clear(c, EXACT, now, "running")), Fenced)
    assert bench.run(lambda c: bench.claims.advance_phase(c, EXACT, now, "cancelling", "cancelled"))
    assert bench.claim().phase == "cancelled"


@pytest.mark.parametrize("frm,to", [("cancelling", "running"), ("cancelled", "cancelling"), ("running", "cancelled"),
                                    ("recovering", "running"), ("running", "recovering")])
def test_backward_or_skipping_phase_moves_are_refused(frm, to):
    bench = ClaimBench()
    with pytest.raises(ValueError):
        bench.run(lambda c: bench.claims.advance_phase(c, EXACT, 0, frm, to))


def test_clear_never_removes_uncertain_phases():
    bench = ClaimBench()
    for phase in ("cancelling", "unknown"):
        with pytest.raises(ValueError):
            bench.run(lambda c: bench.claims.clear(c, EXACT, 0, phase))


@pytest.mark.parametrize("ticks", [0, 1, 2, 5], ids=["live", "live-late", "expired", "long-expired"])
def test_acquire_is_insert_only(ticks):
    bench = ClaimBench()
    bench.clock.advance(ticks)
    result = bench.run(lambda c: bench.claims.acquire(c, Ident("s1", 2, "n2"), bench.clock.now(), 2))
    assert result == Occupied("s1")
    assert bench.claim().ident == EXACT


def test_acquire_inserts_a_fresh_running_claim():
    bench = ClaimBench()
    assert bench.run(lambda c: bench.claims.acquire(c, Ident("s2", 2, "n2"), 0, 2))
    c = bench.claim("s2")
    assert (c.phase, c.lease_expires_at, c.assistant_id, c.recovery_error) == ("running", 2, None, None)


def test_renew_extends_from_now():
    bench = ClaimBench()
    bench.clock.advance(1)
    assert bench.run(lambda c: bench.claims.renew(c, EXACT, 1))
    assert bench.claim().lease_expires_at == 3


def _seen(bench):
    return bench.claim()


@pytest.mark.parametrize("phase,after", [("running", "recovering"), ("cancelling", "cancelling"),
                                         ("cancelled", "cancelled")])
def test_takeover_cas_moves_only_running_to_recovering(phase, after):
    bench = ClaimBench()
    if phase != "running":
        bench.run(lambda c: bench.claims.advance_phase(c, EXACT, 0, "running", "cancelling"))
    if phase == "cancelled":
        bench.run(lambda c: bench.claims.advance_phase(c, EXACT, 0, "cancelling", "cancelled"))
    seen = _seen(bench)
    bench.clock.advance(2)
    assert bench.run(lambda c: bench.claims.takeover(c, seen, "r1", 2))
    c = bench.claim()
    assert (c.owner_id, c.phase, c.lease_expires_at, c.execution_id) == ("r1", after, 4, 1)


def test_takeover_cas_refuses_each_changed_part():
    bench = ClaimBench()
    seen = _seen(bench)
    assert bench.run(lambda c: bench.claims.takeover(c, seen, "r1", 0)) == Lost("lease live")
    bench.clock.advance(2)
    stale = ClaimRow(**{**seen.__dict__, "owner_id": "n9"})
    assert "claim is now" in bench.run(lambda c: bench.claims.takeover(c, stale, "r1", 2)).reason
    other = ClaimRow(**{**seen.__dict__, "execution_id": 7})
    assert "claim is now" in bench.run(lambda c: bench.claims.takeover(c, other, "r1", 2)).reason
    assert bench.run(lambda c: bench.claims.takeover(c, seen, "r1", 2))
    # the same observation cannot win twice
    assert isinstance(bench.run(lambda c: bench.claims.takeover(c, seen, "r2", 2)), Lost)


def test_takeover_refuses_quarantined_claims():
    bench = ClaimBench()
    seen = _seen(bench)
    bench.clock.advance(2)
    assert bench.run(lambda c: bench.claims.takeover(c, seen, "r1", 2))
    mine = Ident("s1", 1, "r1")
    assert bench.run(lambda c: bench.claims.quarantine(c, mine, 2, "bad"))
    bench.clock.advance(5)
    now_seen = bench.claim()
    assert bench.run(lambda c: bench.claims.takeover(c, now_seen, "r2", 7)) == Lost("quarantined")


def test_quarantine_must_change_exactly_one_row():
    bench = ClaimBench()
    seen = _seen(bench)
    bench.clock.advance(2)
    bench.run(lambda c: bench.claims.takeover(c, seen, "r1", 2))
    mine = Ident("s1", 1, "r1")
    # no lease predicate: an expired lease is still quarantined by its owner
    bench.clock.advance(10)
    assert bench.run(lambda c: bench.claims.quarantine(c, mine, 12, "cancellation-owned")) == Ok()
    assert bench.claim().recovery_error == "cancellation-owned"
    assert bench.run(lambda c: bench.claims.quarantine(c, mine, 12, "again")) == Superseded("already quarantined")
    assert bench.claim().recovery_error == "cancellation-owned"


@pytest.mark.parametrize("ident,why", [(Ident("s1", 1, "r2"), "claim is now"), (Ident("s1", 2, "r1"), "claim is now"),
                                       (Ident("s2", 1, "r1"), "no claim")])
def test_quarantine_of_a_claim_this_worker_does_not_own_is_reported(ident, why):
    bench = ClaimBench()
    seen = _seen(bench)
    bench.clock.advance(2)
    bench.run(lambda c: bench.claims.takeover(c, seen, "r1", 2))
    result = bench.run(lambda c: bench.claims.quarantine(c, ident, 2, "x"))
    assert isinstance(result, Superseded) and why in result.reason
    assert bench.claim().recovery_error is None


def test_scan_is_bounded_oldest_first_over_expired_unquarantined():
    bench = ClaimBench()
    for k in range(2, 6):
        bench.run(lambda c, k=k: bench.claims.acquire(c, Ident(f"s{k}", k, "n1"), 0, 10 - k))
    bench.run(lambda c: bench.claims.acquire(c, Ident("live", 9, "n1"), 5, 0))
    bench.clock.advance(2)
    with bench.db.read() as conn:
        window = bench.claims.scan(conn, 2, 3)
    assert [r.session_id for r in window] == ["s1", "s5", "s4"]  # created_seq 1, 5, 6; "live" (seq 0) is live
