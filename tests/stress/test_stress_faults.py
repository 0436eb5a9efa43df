"""Real faults in stress runs (harness/stress/faults.py), the breaches they cause by name
(harness/stress/breaches.py) and bounded liveness after the last fault (harness/stress/liveness.py).

(a) deterministic: a history whose Session is never recovered fails the liveness check naming it, and the
    same Session recovered passes with k measured; a takeover of a claim its owner's skewed clock still
    held live is the SynchronizedClocks breach, and a finding that follows only from it is its
    consequence, not a violation; a conversion the database refuses (SQLITE_BUSY) is retried, not
    quarantined (the storm's finding);
(b) real processes, bounded by counts: every fault on (within the skew bound) holds, nothing lost, no
    Session stranded; recovery switched off strands a Session, named; a skew beyond the bound is
    reported as SynchronizedClocks breaches.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest
import sqlalchemy as sa

from harness.stress.breaches import SkewTakeovers, consequences
from harness.stress.findings import Finding
from harness.stress.liveness import check_rows
from impl.history import read_rows
from spec import configs
from spec import model as M
from stresskit import RecordingScheduler

PROMPTS = configs.CONFIGS["prompts"]  # one Session, two prompts, crashes
P1 = M.Input("s1", "prompt", 1, "pending")
P2 = M.Input("s1", "prompt", 2, "pending")
CONT = M.Input("s1", "cont", 1, "pending")


def _liveness(rs: RecordingScheduler, bound: float, after: int, later: int = 10):
    """The check `later` ticks after the history's last step (the twin's Tick stops once every lease ran
    out: the time of looking is given, as a run's end is)."""
    return check_rows(read_rows(rs.db), lease=rs.cfg.lease, bound=bound, after=after,
                      end=rs.world.clock.now() + later, clock="now")


# ---------------------------------------------------------------- (a) liveness on deterministic histories

def _crashed_owner(extra=()):
    cfg = replace(PROMPTS, lease=2)
    rs = RecordingScheduler(cfg).run([("Acquire", ("n1", P1)), ("Crash", ("n1",))])
    crash_end = rs.world.clock.now()
    rs.run([("Tick", ())] * 3 + list(extra))  # the lease (2) and Grace (1) run out
    return rs, crash_end


def test_a_session_never_recovered_is_stranded_and_named():
    """The owner crashed and nothing recovers its claim (recovery switched off): s1's second prompt waits
    for ever; past the bound the check fails naming s1."""
    rs, crash_end = _crashed_owner()
    rep = _liveness(rs, bound=3, after=crash_end)
    assert not rep.ok and [s for s, _ in rep.stranded] == ["s1"], rep.lines()
    assert rep.stranded[0][1] > 3 and "stranded: Session s1" in "\n".join(rep.lines())


def test_the_same_session_recovered_is_served_within_k_leases():
    steps = [("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)), ("RecoveryReconcile", ("r1",)),
             ("RecoveryConvert", ("r1",)), ("PromoteContinuation", ("n2", CONT))]
    rs, crash_end = _crashed_owner(steps)
    rep = _liveness(rs, bound=3, after=crash_end, later=0)  # looked at as the continuation begins
    assert rep.ok and rep.served >= 1 and rep.waiting == [("s1", 0.0)], rep.lines()  # the second prompt, next
    assert rep.k == 1.5 and rep.k_session == "s1", rep.lines()  # served 3 ticks after the crash: 1.5 leases
    tight = _liveness(rs, bound=1, after=crash_end, later=0)  # served, but past a bound of one lease
    assert not tight.ok and tight.late == [("s1", 1.5)] and "served late: Session s1" in "\n".join(tight.lines())


def test_a_wake_reservation_neither_served_nor_released_is_held_and_named():
    """A scan reserves a wake row and nothing ends the reservation (its waker died with it, and no scan's
    lapsed release came): past the bound the check fails naming the row; released, it passes."""
    cfg = configs.CONFIGS["wakes"]
    rs = RecordingScheduler(cfg).run([("WakeArrive", (1,)), ("WakeScan", ())])  # looked at 10 ticks later
    rep = _liveness(rs, bound=3, after=0)
    assert not rep.ok and [w for w, _ in rep.held] == ["ordinary/w1"], rep.lines()
    assert "wake reservation held: row ordinary/w1" in "\n".join(rep.lines())
    rs.run([("WakeLost", (1,))])
    rep = _liveness(rs, bound=3, after=0, later=0)
    assert rep.ok and rep.reservations == 1, rep.lines()


def test_waits_before_the_last_fault_are_not_counted():
    """A wait is measured from the end of the last fault: the same stranding, seen from a fault that ended
    just now, is within the bound."""
    rs, _ = _crashed_owner()
    rep = _liveness(rs, bound=3, after=rs.world.clock.now() + 6)
    assert rep.ok and [s for s, _ in rep.waiting] == ["s1"], rep.lines()


# ---------------------------------------------------------------- (a) the skew breach, deterministically

def _row(seq, action, actor, claims, wall, changed=True):
    return {"seq": seq, "action": action, "actor": actor, "claims": claims, "wall": wall, "changed": changed}


META = {"nodes": ["n1", "n2"], "workers": ["r1", "r2"], "tick_seconds": 0.01}


def test_a_takeover_of_a_claim_its_owners_clock_still_held_is_a_synchronized_clocks_breach():
    """n1's claim expires at tick 1000 (10.00 s). r2 (in n2's process, 100 ms ahead) takes it over at wall
    9.95 s: n1 reads tick 985 with its clock 100 ms behind, 995 in true time: it still holds the lease, the
    breach. n1 60 ms ahead reads 1001: no breach; in sync the takeover comes after 10.00 s: none."""
    held = [["s1", 7, "n1", 1000, "running", None, None, 0]]
    taken = [["s1", 7, "r2", 1030, "recovering", None, None, 0]]
    for skew, wall, found in (({"n1": -100.0, "n2": 100.0}, 9.95, 1), ({"n1": 0.0, "n2": 100.0}, 9.95, 1),
                              ({"n1": 60.0, "n2": 100.0}, 9.95, 0), ({}, 10.02, 0)):
        sk = SkewTakeovers(META, skew)
        for r in (_row(1, "Acquire", "n1", held, 9.0), _row(2, "RecoveryTakeover", "r2", taken, wall)):
            sk.feed(r)
        assert [(s, o) for _, s, o, _ in sk.found] == [("s1", "n1")] * found, skew
    assert SkewTakeovers(META, {}).node["r2"] == "n2"


def test_a_finding_that_follows_only_from_the_breach_is_its_consequence():
    takeovers = [(12, "s1", "n1", 15)]
    after = Finding(14, "supervision", ["NoOverlappingEffects"], "s1", "n1", "FinalizerSettle", "...")
    before = Finding(9, "supervision", ["NoOverlappingEffects"], "s1", "n1", "FinalizerSettle", "...")
    other_session = Finding(14, "memory", [], "s2", "n1", "Renew", "...")
    unrelated = Finding(15, "invariant", ["AtMostOneTerminal"], "s1", "n2", "PublishStepEnded", "...")
    memory = Finding(16, "memory", [], "s1", "n1", "Renew", "...")
    got = consequences([after, before, other_session, unrelated, memory], takeovers)
    assert got == [after, memory]  # the rest stay protocol violations


# ---------------------------------------------------------------- (a) the storm's finding

def test_a_conversion_the_database_refuses_is_retried_not_quarantined(tmp_path):
    """SQLITE_BUSY during RecoveryConvert: the unit rolled back whole, nothing is wrong with the row. The
    worker stays reconciled and converts on its next try; it used to quarantine the claim as malformed
    (a BUSY storm's run broke QuarantineOnlyMalformed)."""
    from binding.world import World
    from impl.db import Database
    path = tmp_path / "busy.db"
    db = Database(f"sqlite:///{path}", busy_timeout_s=0.05)
    db.create_schema()
    w = World(M.Config(lease=1, grace=0), db=db)
    assert w.node("n1").acquire(w.prompt["s1", 1])
    w.node("n1").crash()
    w.tick()
    w.tick()
    worker = w.worker()
    assert worker.takeover("s1") and worker.pc == "converting"
    assert worker.reconcile() and worker.pc == "reconciled"
    storm = sqlite3.connect(path, isolation_level=None)
    storm.execute("BEGIN IMMEDIATE")
    with pytest.raises(sa.exc.OperationalError, match="locked"):
        worker.convert()
    assert worker.pc == "reconciled"
    storm.execute("ROLLBACK")
    storm.close()
    assert worker.convert() and worker.pc == "idle"
    assert w.snap().claims.get("s1") is None  # converted: the continuation waits, nothing quarantined


# ---------------------------------------------------------------- (b) real processes

@pytest.fixture(params=["sqlite", "postgresql"])
def stress_db(request):
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_databases").url()


def _run(tmp_path, capsys, **options):
    from binding.stress import BUNDLED
    from harness.stress.supervisor import StressOptions, run
    code, res = run(StressOptions(nodes=3, sessions=4, out=str(tmp_path), progress=False, **options), BUNDLED)
    return code, res, capsys.readouterr().out


def test_every_fault_on_within_the_skew_bound_holds(stress_db, tmp_path, capsys):
    """Pauses longer than a lease, a skew within its bound, dropped connections (PostgreSQL) or BUSY storms
    (sqlite), crashes: no violation, nothing lost, no Session stranded, no SynchronizedClocks breach from
    the skew; each fault is logged and the breaches are printed by name."""
    faults = {"drop_every": 0.5} if stress_db else {"busy_storm": True}
    code, res, out = _run(tmp_path, capsys, db=stress_db, seed="3", seconds=120, executions=60, min_faults=1,
                          crash_every_commits=150, pause_every=2.0, skew_ms=60, skew_bound_ms=60,
                          liveness_bound=30, **faults)
    assert code == 0 and res.violations == 0 and res.lost == 0 and res.stranded == 0, out
    fc = res.faultcheck
    assert fc.faults["pause"] >= 1 and fc.faults["drop" if stress_db else "storm"] >= 1, out
    assert not fc.skew_takeovers, out
    assert fc.given_up >= 1, out  # units cut off or refused, rolled back, begun afresh: and nothing lost
    assert "liveness      after the last fault:" in out and "assumption breaches by name" in out, out
    assert (res.run_dir / "faults.jsonl").exists() or code == 0


def test_recovery_switched_off_strands_a_session_and_names_it(tmp_path, capsys):
    """A stand-in that never recovers: a crash of a claim's owner leaves its Session with pending input
    that nothing serves; after the last fault it waits past the bound and the run fails naming it."""
    for seed in ("1", "2", "3"):
        code, res, out = _run(tmp_path / seed, capsys, seed=seed, seconds=120, executions=12, min_crashes=3,
                              crash_every_commits=30, recovery=False, liveness_bound=2)
        if res.stranded:
            break
    assert code == 1 and not res.ok and res.stranded >= 1, out
    # unserved past the bound, or (a node's later acquire of the expired claim) served only after it
    live = res.faultcheck.liveness
    if live.stranded:
        assert f"stranded: Session {live.stranded[0][0]} has had pending input" in out, out
    else:
        assert f"served late: Session {live.late[0][0]} waited" in out, out
    assert "Sessions stranded" in out, out


def test_a_skew_beyond_the_bound_is_reported_as_synchronized_clocks_breaches(tmp_path, capsys):
    """Three nodes 200 ms apart each way against a promised 0: recovery in the fast node's process takes
    claims the slow node's clock still holds; each such takeover is a SynchronizedClocks breach, counted by
    name, and no protocol violation is reported."""
    for seed in ("1", "2", "3"):
        code, res, out = _run(tmp_path / seed, capsys, seed=seed, seconds=120, executions=60, min_crashes=3,
                              min_takeovers=3, crash_every_commits=40, skew_ms=400, skew_bound_ms=0)
        if res.faultcheck.skew_takeovers:
            break
    assert res.violations == 0 and res.lost == 0, out
    assert res.faultcheck.breaches["SynchronizedClocks"] >= len(res.faultcheck.skew_takeovers) >= 1, out
    assert "SynchronizedClocks: " in out and "skew beyond the bound" in out, out


def test_a_pause_between_renewal_and_dispatch_is_a_timely_dispatch_breach(tmp_path, capsys):
    """Nodes stop themselves (SIGSTOP) as a share of provider calls begin, after their renewal; resumed two
    leases later, the call begins past the renewal's lease: TimelyDispatch, counted by name and
    attributed to the pause of its node, and no protocol violation."""
    code, res, out = _run(tmp_path, capsys, seed="5", seconds=120, executions=30, min_faults=1,
                          pause_before_dispatch=0.3, crash_every=0)
    fc = res.faultcheck
    assert code == 0 and res.violations == 0 and res.lost == 0 and res.stranded == 0, out
    assert fc.faults["pause"] >= 1 and fc.breaches["TimelyDispatch"] >= 1, out
    assert fc.causes[("TimelyDispatch", "a pause (SIGSTOP) of its node")] >= 1, out
    assert "- TimelyDispatch: " in out, out


def test_fault_options_are_checked(tmp_path, capsys):
    from harness.cli import main
    for argv in (["--pause-every", "1", "--pause-for", "0.1"], ["--pause-before-dispatch", "2"], ["--drop-connections-every", "1"],
                 ["--busy-storm", "--db", "postgresql://u@127.0.0.1/x"], ["--skew", "-1"],
                 ["--liveness-bound", "0"]):
        assert main(["stress", "--out", str(tmp_path), *argv]) == 2, argv
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    assert "longer than a lease" in err and "needs a PostgreSQL" in err and "sqlite's" in err


def test_skews_spread_evenly_and_grace_covers_the_bound():
    from harness.stress.faults import grace_ticks, skews
    s = skews("7", ["n1", "n2", "n3"], 400)
    assert sorted(s.values()) == [-200, 0, 200] and s == skews("7", ["n1", "n2", "n3"], 400)
    assert skews("7", ["n1"], 400) == {"n1": 0.0} and grace_ticks(0, 0.01) == 0
    assert grace_ticks(50, 0.01) == 5 and grace_ticks(55, 0.01) == 6
