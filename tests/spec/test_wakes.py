"""The wake scans in the twin (spec/README.md, decision 16): the batch is planned as plan_batch plans it,
each defect breaks its property on a short witness of `wakes`, bad constants are refused (a configuration
file or trace with them is bad input, exit 2), and each defect's trace passes on the reference and fails
under its defect."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from harness.cli import main
from harness.conformance import replay as RP
from harness.engines.explore import explore
from harness.engines.liveness import check_leads_to
from impl.wakes import plan_batch
from spec import configs
from spec import model as M
from spec import names as N
from spec.invariants import check_edge
from serverkit import BUNDLED

WAKES = configs.get("wakes")


def run(cfg, *steps):
    st = M.init(cfg)
    for name, params in steps:
        st = M.apply(cfg, st, name, params)
        assert st is not None, (name, params)
    return st


def test_the_twins_plan_is_plan_batch():
    """Every reachable state's plan equals plan_batch over its fresh rows, oldest first, and its retried
    rows in the order WakeQueue.window reads them: not yet turned in this round first, then oldest first."""
    graph = explore(WAKES, liveness=False, keep_edges=False, check=False).graph
    for st in graph.states:
        rows = range(1, WAKES.wake_rows + 1)
        fresh = [w for w in rows if M.fresh_row(st, w)]
        retried = sorted((w for w in rows if M.retried_row(st, w)), key=lambda w: (st.wakes[w - 1].turned, w))
        planned, again = M.wake_plan(WAKES, st)
        assert sorted(planned + again) == sorted(plan_batch(fresh, retried, WAKES.wake_batch, WAKES.fresh_share))


def test_a_scan_reserves_one_fresh_row_and_one_retry_and_rotates_the_counters():
    st = run(WAKES, ("WakeArrive", (1,)), ("WakeArrive", (2,)), ("WakeScan", ()), ("WakeLost", (1,)),
             ("WakeLost", (2,)), ("WakeArrive", (3,)), ("WakeScan", ()))
    assert [(x.tries, x.woken) for x in st.wakes] == [(2, "retry"), (1, ""), (1, "fresh"), (0, "")]
    assert [x.turned for x in st.wakes] == [True, False, True, False]  # row 1's retry opened a new round
    st = run(WAKES, ("WakeArrive", (1,)), ("WakeScan", ()), ("WakeLost", (1,)), ("WakeScan", ()),
             ("WakeLost", (1,)), ("WakeScan", ()))
    assert st.wakes[0] == M.Wake(True, 1, "retry", True)  # MaxWakeTries 2: 1, 2, then back to 1
    assert M.apply(WAKES, st, "WakeServe", (1,)).wakes[0] == M.WAKE_IDLE


def test_the_reference_holds_every_wake_property():
    res = explore(WAKES)
    assert res.violation is None and res.distinct == 4621  # 2,401 before the rounds (issue 31 item 3)
    assert set(N.WAKE_PROPERTIES) - {"WakePlanShared", "ReservationsExclusive"} <= set(res.liveness_checked)


@pytest.mark.parametrize("defect,prop,length", [("wake-fresh-share-zero", "FreshWorkKeepsCapacity", 7),
                                                ("wake-fresh-share-full", "RetryAdvances", 6)])
def test_each_defect_breaks_its_plan_and_its_liveness_property(defect, prop, length):
    cfg = configs.get("wakes", [defect])
    res = explore(cfg)
    assert res.violation.invariants == ["WakePlanShared"] and len(res.violation.steps) - 1 == length
    graph = explore(cfg, liveness=False, keep_edges=True, only=["none"]).graph
    assert check_leads_to(cfg, graph, prop) is not None
    other = ({"FreshWorkKeepsCapacity", "RetryAdvances"} - {prop}).pop()
    assert check_leads_to(cfg, graph, other) is None  # each defect breaks its own property only


def test_a_poison_retry_takes_every_retry_slot_only_without_rounds():
    """Issue 31 item 3: row 1 (a poison retry, woken and lost every time) and row 2 (a younger retry) wait
    while fresh work (row 3) keeps arriving; with one retry slot per batch, the rounds give row 2 the next
    one, oldest first (wake-retry-oldest-first) gives it to row 1 again, for ever: RetryAdvances (per row)
    fails on its lasso, in 13 steps to its cycle (TLC: 17 steps)."""
    start = [("WakeArrive", (1,)), ("WakeArrive", (2,)), ("WakeScan", ()), ("WakeLost", (1,)), ("WakeLost", (2,)),
             ("WakeArrive", (3,)), ("WakeScan", ())]  # row 1 retried, row 3 fresh: row 1 turned, row 2 not
    loop = [("WakeLost", (1,)), ("WakeServe", (3,)), ("WakeArrive", (3,)), ("WakeScan", ())]
    for defect, woken in (([], "retry"), (["wake-retry-oldest-first"], "")):
        cfg = configs.get("wakes", defect)
        st = run(cfg, *start, *loop)
        assert st.wakes[1].woken == woken and st.wakes[0].woken == ("" if defect == [] else "retry")
    cfg = configs.get("wakes", ["wake-retry-oldest-first"])
    res = explore(cfg)
    assert res.violation.invariants == ["RetryAdvances"] and len(res.violation.steps) - 1 == 13
    graph = explore(cfg, liveness=False, keep_edges=True, only=["none"]).graph
    assert check_leads_to(cfg, graph, "FreshWorkKeepsCapacity") is None  # it breaks RetryAdvances only


def test_the_default_constants_leave_every_configuration_without_wake_rows():
    for name, cfg in configs.CONFIGS.items():
        if name not in ("wakes", "wakes2", "wakestied"):
            assert cfg.wake_rows == 0 and M.init(cfg).wakes == ()
            assert not set(N.WAKE_PROPERTIES) & set(configs.to_tlc_cfg(cfg).split())


@pytest.mark.parametrize("field,value", [("fresh_share", 0), ("fresh_share", 2), ("wake_batch", 1)])
def test_bad_wake_constants_are_refused(field, value, tmp_path, capsys):
    with pytest.raises(ValueError, match=field):
        replace(WAKES, **{field: value})
    raw = json.loads((Path(configs.__file__).parent / "config-files" / "wakes.json").read_text())
    raw[field] = value
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    assert main(["check", "--config", str(path)]) == 2
    assert field in capsys.readouterr().err


@pytest.mark.parametrize("defect", ["wake-fresh-share-zero", "wake-fresh-share-full", "wake-reserve-without-cas"])
def test_each_defects_trace_passes_on_the_reference_and_fails_under_it(defect, capsys):
    path = RP.TRACES / f"{defect}.json"
    assert main(["replay", str(path)]) == 0
    res = RP.replay_file(path, server=BUNDLED)
    assert res.consumed == len(res.trace.steps) and res.trace.meta.defect == defect
    assert res.trace.meta.reported.startswith(N.DEFECTS[defect].source)
    assert main(["replay", str(path), "--defect", defect]) == 1
    assert set(N.DEFECTS[defect].violates) <= set(RP.replay_file(path, [defect], server=BUNDLED).violated)


# ---------------------------------------------------------------- two wakers (issue 31 item 3)

WAKES2 = configs.get("wakes2")


def test_one_waker_keeps_its_one_transaction_scan_and_two_race_read_and_reserve():
    """Wakers 1: the scan is WakeScan (the graphs of every configuration as before); Wakers 2: each waker's
    WakeRead and WakeReserve, never WakeScan; every wake property, liveness included, holds on wakes2."""
    one = explore(WAKES, liveness=False, keep_edges=True).graph
    two = explore(WAKES2, keep_edges=True)
    assert two.violation is None and two.distinct == 3168
    assert {"FreshWorkKeepsCapacity", "RetryAdvances"} <= set(two.liveness_checked)
    names = lambda g: {label for edges in g.succ for label, _p, _to in edges}
    assert {"WakeRead", "WakeReserve"}.isdisjoint(names(one)) and "WakeScan" in names(one)
    assert "WakeScan" not in names(two.graph) and {"WakeRead", "WakeReserve"} <= names(two.graph)
    assert all(st.waker == () for st in one.states)


def test_a_reservation_that_lost_takes_nothing_and_the_row_waits():
    """Both wakers plan row 1 at counter 0; waker 1 reserves it; waker 2's compare-and-set finds it reserved:
    lost, nothing changes. Without the compare-and-set waker 2 takes it over waker 1's reservation."""
    steps = [("WakeArrive", (1,)), ("WakeRead", (1,)), ("WakeRead", (2,)), ("WakeReserve", (1,))]
    st = run(WAKES2, *steps)
    assert st.waker[1] == frozenset({M.Plan(1, 0, "fresh")}) and st.wakes[0] == M.Wake(True, 1, "fresh", True)
    after = M.apply(WAKES2, st, "WakeReserve", (2,))
    assert after.wakes == st.wakes and after.waker == (frozenset(), frozenset())
    assert check_edge(WAKES2, st, after) == []
    bad = configs.get("wakes2", ["wake-reserve-without-cas"])
    taken = M.apply(bad, st, "WakeReserve", (2,))
    assert taken.wakes[0] == M.Wake(True, 2, "fresh", True)
    assert check_edge(bad, st, taken) == ["ReservationsExclusive"]


def test_the_defect_breaks_reservations_exclusive_on_wakes2():
    res = explore(configs.get("wakes2", ["wake-reserve-without-cas"]))
    assert res.violation.invariants == ["ReservationsExclusive"] and len(res.violation.steps) - 1 == 5


@pytest.mark.parametrize("wakers,rows", [(0, 2), (2, 0)])
def test_bad_wakers_are_refused(wakers, rows):
    with pytest.raises(ValueError, match="wake"):
        replace(WAKES2, wakers=wakers, wake_rows=rows)
