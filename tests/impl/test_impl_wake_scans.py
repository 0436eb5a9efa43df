"""Wake scans in the implementation (issue 13 item 5): plan_batch refuses a share outside 1..bound-1, the
scans actually plan with it (WakeQueue.scan, RecoveryWorker.window), reservations are compare-and-set on
each row's counter, and the wake-fresh-share defects are the only way to a share of 0 or the whole batch."""

import pytest

from impl import registry as R
from impl.boundaries import Boundaries, Recorder
from impl.clock import ManualClock
from impl.context import Context
from impl.db import Database
from impl.results import NotEnabled, Occupied
from impl.wakes import FRESH, RETRY, WakeQueue, plan_batch
from implkit import World, random_walk, wake_rows
from spec import configs

pytestmark = pytest.mark.backends()


@pytest.mark.parametrize("bound,share", [(4, 0), (4, 4), (1, 1), (1, 0), (3, 5)])
def test_plan_batch_refuses_a_share_outside_one_to_bound_minus_one(bound, share):
    with pytest.raises(ValueError, match="fresh_share"):
        plan_batch(["f"], ["r"], bound=bound, fresh_share=share)


def queue(defects=(), bound=2, share=1, max_tries=2):
    clock = ManualClock()
    rec = Recorder()
    ctx = Context(Database.memory(), clock, Boundaries(rec), frozenset(defects))
    return WakeQueue(ctx, "ordinary", bound=bound, fresh_share=share, max_tries=max_tries), rec


def test_a_queue_refuses_the_shares_plan_batch_refuses():
    for share in (0, 2):
        with pytest.raises(ValueError):
            queue(share=share)


def rows(q):
    with q.ctx.db.read() as conn:
        return wake_rows(q, conn)


def test_fresh_work_keeps_its_slot_while_retries_could_fill_the_batch():
    q, rec = queue()
    for k in (1, 2):
        assert q.arrive(f"w{k}", k)
    assert isinstance(q.arrive("w1", 1), Occupied)  # insert-only
    assert q.scan().value == [("w1", FRESH), ("w2", FRESH)]  # the unused retry slot goes to fresh work
    assert rec.names == [R.B_WAKE_RESERVED]
    assert isinstance(q.scan(), NotEnabled)  # reserved rows are not scanned again
    q.release("w1"), q.release("w2")
    q.arrive("w3", 3)
    assert rows(q) == {"w1": (1, ""), "w2": (1, ""), "w3": (0, "")}
    assert q.scan().value == [("w3", FRESH), ("w1", RETRY)]  # one fresh slot, one retry
    assert rows(q) == {"w1": (2, RETRY), "w2": (1, ""), "w3": (1, FRESH)}
    assert q.serve("w3") and "w3" not in rows(q)
    assert isinstance(q.serve("w2"), NotEnabled)  # not reserved: nothing to serve


def test_the_counter_rotates_from_its_maximum_to_one():
    q, _ = queue(max_tries=2)
    q.arrive("w1", 1)
    seen = []
    for _ in range(4):
        q.scan()
        seen.append(rows(q)["w1"][0])
        q.release("w1")
    assert seen == [1, 2, 1, 2]


def test_a_lapsed_reservation_released_is_scanned_again_as_a_retry():
    """A reservation whose redrive died stays reserved (never scanned) until a waker finds it lapsed and
    releases it (WakeLost): then it is scanned as a retry."""
    q, _ = queue()
    q.arrive("w1", 1)
    q.scan()
    q.ctx.clock.advance(2)
    assert isinstance(q.scan(), NotEnabled)
    with q.ctx.db.read() as conn:
        assert q.lapsed(conn, 3) == [] and q.lapsed(conn, 2) == ["w1"]
    assert q.release("w1")
    assert q.scan().value == [("w1", RETRY)]


@pytest.mark.parametrize("defect,planned", [(R.WAKE_FRESH_SHARE_ZERO, [("w1", RETRY), ("w2", RETRY)]),
                                            (R.WAKE_FRESH_SHARE_FULL, [("w3", FRESH), ("w4", FRESH)])])
def test_the_defects_plan_with_a_share_of_zero_or_the_whole_batch(defect, planned):
    q, _ = queue([defect])
    for k in (1, 2):
        q.arrive(f"w{k}", k)
    q.scan()
    q.release("w1"), q.release("w2")
    q.arrive("w3", 3), q.arrive("w4", 4)
    assert q.scan().value == planned


def test_the_claim_scan_plans_a_window_of_several_rows_and_keeps_one_row_oldest_first():
    w = World(nodes=("n1",), sessions=("s1", "s2", "s3"), lease=1, scan_bound=2, fresh_share=1)
    for s in ("s1", "s2", "s3"):
        node = w.node()
        assert node.acquire(w.prompt[s, 1])
        node.crash()
    w.tick()
    worker = w.worker()
    # s1 taken over once and released (a retry): its attempts are 1
    assert worker.take(worker.window()[0]) and worker.pc == "converting"
    worker.reset()
    w.tick(2)
    window = [r.session_id for r in worker.window()]
    assert window == ["s1", "s2"]  # one retry (s1), one fresh claim (s2): not both fresh, not both retries
    one = World(nodes=("n1",), sessions=("s1",), scan_bound=1)
    assert one.worker().scan_bound == 1  # a window of one row has no share: the oldest, as before


def test_a_woken_row_goes_with_its_acquisition_or_is_released():
    """The tied units (WakeScanQueue, WakeAcquire, WakeLost): a woken row is removed in its acquisition's
    transaction; a redrive that takes nothing (the runner is busy with s1) releases its row."""
    w = World(nodes=("n1",), sessions=("s1", "s2"), lease=1)
    q = WakeQueue(Context(w.db, w.clock, w.boundaries), "ordinary", bound=2, fresh_share=1)
    with w.db.read() as conn:
        waiting = w.node().inputs.sessions_to_wake(conn, 10)
    assert q.refresh(waiting, {"s1": 1, "s2": 2}) == ["s1", "s2"]
    assert [s for s, _slot in q.scan().value] == ["s1", "s2"]
    assert w.node().acquire(w.prompt["s1", 1], q)
    assert not w.node().acquire(w.prompt["s2", 1], q) and q.release("s2")  # the runner is busy with s1
    assert rows(q) == {"s2": (1, "")}  # s1 served, s2 released: a retry for the next batch


def test_twin_walks_on_the_wake_configuration_match_the_implementation():
    for seed in range(3):
        random_walk(configs.get("wakes"), seed, 40)


def test_a_recovery_wake_promotes_the_sessions_continuation():
    w = World(nodes=("n1",), sessions=("s1",), lease=1)
    node = w.node()
    assert node.acquire(w.prompt["s1", 1])
    node.crash()
    w.tick()
    assert [h.outcome for h in w.worker().run_once()] == ["converted"]
    q = WakeQueue(Context(w.db, w.clock, w.boundaries), "recovery", bound=2, fresh_share=1)
    with w.db.read() as conn:
        waiting = node.inputs.sessions_to_wake(conn, 10, recovery=True)
    assert q.refresh(waiting, {"s1": 1}) == ["s1"]
    assert [s for s, _slot in q.scan().value] == ["s1"]
    with w.db.read() as conn:
        cont = node.inputs.pending_continuation(conn, "s1")  # the recovery wake's choice
    assert node.promote(cont, q) and node.runner.pc == "acquired"
    assert rows(q) == {}  # served: the continuation was promoted


@pytest.mark.parametrize("defects", [(), (R.WAKE_RESERVE_WITHOUT_CAS,)], ids=["reference", "without-cas"])
def test_two_wakers_race_and_the_reservation_that_lost_takes_nothing(defects):
    """The scan is two transactions (issue 31 item 3): both wakers read row w1 at counter 0; the first
    reserves it; the second's compare-and-set finds it reserved and loses it (the defect, by item alone,
    takes it over the first's reservation). Then w1 lapses (counter 1) and a stale plan at 0 loses it too."""
    from impl.wakes import Waker
    q, _rec = queue(defects)
    one, two = Waker(q, "waker1"), Waker(q, "waker2")
    q.arrive("w1", 1)
    assert one.read() and two.read() and two.plan == [{"item": "w1", "rank": 1, "attempts": 0, "slot": FRESH}]
    assert isinstance(one.read(), NotEnabled)  # a plan waits for its reservation
    assert one.reserve().value == [("w1", FRESH)] and one.plan == []
    got = two.reserve()
    assert got.value == ([("w1", FRESH)] if defects else []) and two.plan == []
    assert rows(q) == {"w1": (2 if defects else 1, FRESH)}
    q.release("w1")
    assert two.read() and two.plan[0]["attempts"] == (2 if defects else 1)
    assert one.read() and one.reserve().value == [("w1", RETRY)]
    q.release("w1")  # w1's counter moved past two's plan
    assert two.reserve().value == ([("w1", RETRY)] if defects else [])
