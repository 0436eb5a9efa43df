"""Wake rows tied to the work they wake (WakesTied, issue 31 item 3; spec/README.md decision 16): on
`wakestied` the ordinary wake acquires only what ordinary selection picks, a continuation is promoted only
through its recovery wake, each taking its row in the same transaction; each kind's queue is scanned in a
transaction of its own (WakeScanQueue); every property holds, and
`wake-serves-regardless` (an ordinary wake that takes any pending input of its Session) breaks
ContinuationsRecoveryOwned in 10 steps. Off, the constant changes nothing."""

from dataclasses import replace

import pytest

from harness.engines.explore import explore
from spec import configs
from spec import guards as G
from spec import model as M
from spec import names as N
from spec.wakes import ReservationsExclusive, WakePlanShared

TIED = configs.get("wakestied")
S = TIED.sessions[0]


def run(cfg, *steps):
    st = M.init(cfg)
    for name, params in steps:
        st = M.apply(cfg, st, name, params)
        assert st is not None, (name, params)
    return st


def prompt(st):
    return next(i for i in st.inputs if i.kind == "prompt")


def test_the_reference_holds_every_property_on_wakestied():
    res = explore(TIED)
    assert res.violation is None and res.distinct == 7478
    assert {"ContinuationsEventuallyPromoted", "PendingInputsEventuallyServed", "RetryAdvances"} <= set(
        res.liveness_checked)


def test_the_defect_breaks_continuations_recovery_owned_in_ten_steps():
    res = explore(replace(TIED, defects=frozenset({"wake-serves-regardless"})))
    assert res.violation is not None and res.violation.invariants == ["ContinuationsRecoveryOwned"]
    assert len(res.violation.steps) - 1 == 10
    assert [s.action for s in res.violation.steps[1:]][-1] == "WakeAcquire"


def test_an_ordinary_wake_acquires_the_prompt_and_takes_its_row():
    st = M.init(TIED)
    i = prompt(st)
    st = run(TIED, ("WakeSync", (1,)), ("WakeScanQueue", (1,)))
    assert M.apply(TIED, st, "WakeLost", (1,)) is None  # a tied row lapses only when it finds nothing
    nxt = M.apply(TIED, st, "WakeAcquire", (TIED.nodes[0], 1, i))
    assert nxt is not None and nxt.wakes[0] == M.WAKE_IDLE and nxt.claim[0].phase == "running"


def test_each_kinds_queue_is_scanned_in_a_transaction_of_its_own():
    """The servers scan the ordinary and the recovery wake queue apart (one `WakeQueue.scan` per kind), as the reviewed code
    scans its recovery wakes and ordinary wakes: a scan of one queue reserves its row and leaves the other
    kind's waiting row as it was, another actor may act in between, and the plan's share is the queue's
    (WakePlanShared holds of it; read over both rows, as an untied scan is, it would not)."""
    n, p = TIED.nodes[0], prompt(M.init(TIED))
    st = run(TIED, ("WakeSync", (1,)), ("Acquire", (n, p)), ("Crash", (n,)), ("Tick", ()),
             ("RecoveryScan", ("r1", S)), ("RecoveryTakeover", ("r1",)), ("RecoveryReconcile", ("r1",)),
             ("RecoveryConvert", ("r1",)), ("WakeScanQueue", (1,)), ("WakeLost", (1,)), ("WakeSync", (2,)))
    assert M.retried_row(st, 1) and M.fresh_row(st, 2)
    assert M.apply(TIED, st, "WakeScan", ()) is None and "apart" in G.why_not(TIED, st, "WakeScan", ())
    nx = M.apply(TIED, st, "WakeScanQueue", (2,))
    assert nx.wakes[1].woken == "fresh" and nx.wakes[0] == st.wakes[0]
    assert WakePlanShared(TIED, st, nx)
    assert not WakePlanShared(replace(TIED, wakes_tied=False), st, nx)
    cont = next(i for i in nx.inputs if i.kind == "cont")
    nx = M.apply(TIED, M.apply(TIED, nx, "WakePromote", (n, 2, cont)), "WakeScanQueue", (1,))  # the other queue, later
    assert nx.wakes[0].woken == "retry" and nx.claim[0].phase == "running"


def test_a_scan_reserves_only_rows_with_work_and_never_a_reserved_one_again():
    """ReservationsExclusive, whoever scans: the two guard mutants of WakeScanQueue (a row with no work, a row
    already reserved) are steps it rejects, and the reference's own scan is one it accepts."""
    st = run(TIED, ("WakeSync", (1,)))
    ok = M.apply(TIED, st, "WakeScanQueue", (1,))
    assert ReservationsExclusive(TIED, st, ok)
    no_work = st._replace(wakes=(st.wakes[0], st.wakes[1]._replace(woken="fresh", tries=1, turned=True)))
    assert not ReservationsExclusive(TIED, st, no_work)  # row 2 has no work, yet is reserved
    again = ok._replace(wakes=(ok.wakes[0]._replace(woken="retry"), ok.wakes[1]))
    assert not ReservationsExclusive(TIED, ok, again)  # row 1, reserved, reserved again


def test_tied_rows_refuse_the_untied_actions_and_say_why():
    st = M.init(TIED)
    assert M.apply(TIED, st, "WakeArrive", (1,)) is None
    assert "WakeSync" in G.why_not(TIED, st, "WakeArrive", (1,))
    assert "WakePromote" in G.why_not(TIED, st, "PromoteContinuation", (TIED.nodes[0], prompt(st)))
    assert G.why_not(TIED, st, "WakeSync", (2,)) == f"no recovery work of {S} waits"
    assert G.why_not(TIED, st, "WakeSync", (1,)) is None
    untied = configs.get("wakes")
    assert "WakesTied is off" in G.why_not(untied, M.init(untied), "WakeSync", (1,))


@pytest.mark.parametrize("kw", [dict(wake_rows=3), dict(sessions=("s1", "s2")), dict(wakers=2)])
def test_tied_rows_need_one_session_two_rows_and_one_waker(kw):
    with pytest.raises(ValueError, match="wakes_tied needs one Session"):
        replace(TIED, **kw)


def test_the_constant_off_adds_no_action_anywhere():
    tied = {"WakeSync", "WakeScanQueue", "WakeAcquire", "WakePromote"}
    for name in configs.CONFIGS:
        cfg = configs.get(name)
        assert cfg.wakes_tied == (name == "wakestied")
        assert (tied <= set(configs.possible_actions(cfg))) == cfg.wakes_tied
    assert set(N.DEFECTS["wake-serves-regardless"].violates) == {"ContinuationsRecoveryOwned"}
