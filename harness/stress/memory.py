"""The history check's view of actors' memory between their commits (harness/stress/checker.py).

An actor's memory is recorded only before each of its commits; between two of them it takes steps that
commit nothing (Dispatch, the listener returns, RunnerStop/Exit, fenced steps that failed and rolled
back, a finalizer's supervision stop, the reconciliations). `continuity` asks whether the recorded memory is reachable from
the twin's prediction by such steps; `supervision` whether a finalizer still running holds its lease.
Both take the checker (its folded state, predictions and findings) and the `records.Commit`.
"""

from __future__ import annotations

from spec import model as M

from harness import registry as R
from harness.stress.records import Commit, durable_eq, short

MAX_LOCAL_STEPS = 8


def continuity(checker, c: Commit, assts: set) -> None:
    """The memory recorded before commit `c` must be reachable by local steps (bounded breadth-first
    search, `MAX_LOCAL_STEPS`) from the twin's prediction after each actor's previous commit."""
    override, cfg = c.memory, checker.cfg
    names = c.actors()
    predicted = {(k, n): getattr(checker, k).get(n) for k, n in names}
    if any(v is None for v in predicted.values()):
        return  # unknown after a failed transition: resynchronise on the recorded memory
    target = tuple(override[k][n] for k, n in names)
    if tuple(predicted[x] for x in names) == target:
        return
    start = {"run": {}, "fin": {}, "rec": {}}
    for (k, n), v in predicted.items():
        start[k][n] = v
    for k, n in names:  # RecoveryScan is a read: no commit records it; it is inferred here
        w = override[k][n]
        if k == "rec" and predicted[(k, n)].pc == "idle" and w.pc == "scanned":
            if not scan_plausible(checker, w, c.now):
                checker.find(c.row, "memory", [], c.focus,
                              f"{n} remembers a scan of {w.sess} (execution {w.exec}, owner {w.seen}) that no "
                              f"recorded claim explains: none had that identity with its lease expired by clock {c.now}")
                return
            start[k][n] = w
    st = checker.state(c.focus, checker.claims, c.now, assts | {v.exec for v in target}, start)

    def key(s):
        return tuple(getattr(s, k)[(cfg.nodes if k != "rec" else cfg.recoverers).index(n)] for k, n in names)

    if key(st) == target:
        return  # the inferred scan was the only step between the commits

    def reached(k2) -> bool:
        """The target, or the target but for a worker idle here that the target remembers a plausible scan
        of (a released conversion, then a scan: the read no commit records)."""
        return k2 == target or all(
            got == want or (kn[0] == "rec" and got.pc == "idle" and want.pc == "scanned"
                            and scan_plausible(checker, want, c.now))
            for kn, got, want in zip(names, k2, target))

    def recorded(sess, e, owner) -> bool:
        return (sess, e, owner) in checker.last_lease
    frontier, seen = [st], {key(st)}
    for _ in range(MAX_LOCAL_STEPS):
        nxt_frontier = []
        for s in frontier:
            for s2 in local_steps(cfg, s, names, recorded):
                k2 = key(s2)
                if reached(k2):
                    return
                if k2 not in seen:
                    seen.add(k2)
                    nxt_frontier.append(s2)
        frontier = nxt_frontier
        if not frontier:
            break
    differs = [(k, n) for k, n in names if override[k][n] != predicted[(k, n)]]
    got = ", ".join(f"{n}.{k}={short(override[k][n])}" for k, n in differs)
    want = ", ".join(f"{n}.{k}={short(predicted[(k, n)])}" for k, n in differs)
    checker.find(c.row, "memory", [], c.focus, f"recorded memory before the step ({got}) is not reachable by "
                  f"local steps from the twin's prediction after the actor's last commit ({want})")


def scan_plausible(checker, w: M.Rec, now: int) -> bool:
    """Whether a scan the worker remembers (Session, execution, former owner) could have read a real
    row: the history recorded a claim of that identity with a lease that had expired by `now`, the
    clock reading of the compare-and-swap that follows it (a scan reads before its CAS). Any recorded
    lease of the identity will do, and the first is the earliest (an identity's lease only grows): a
    heartbeat whose clock reading was taken before the scan's may commit after it and extend the lease
    the scan saw expired (the CAS then fails, and is checked as such). The window's bound and order are
    not re-checked: the scan read a state between two commits that the checker does not keep, and the
    CAS, which is recorded and checked, compares on exactly this row."""
    held = checker.first_lease.get((w.sess, w.exec, w.seen))
    return held is not None and held <= now


def local_steps(cfg: M.Config, st: M.State, names, recorded):
    """Steps of the given actors that change only their memory (no commit); `recorded` says whether the
    history recorded a claim of an identity (Session, execution, owner)."""
    for kind, n in names:
        if kind in ("run", "fin"):  # Supervise: the node stops its stale actors (in memory, no commit)
            nx = M.Supervise(cfg, st, cfg.nodes.index(n))
            if nx is not None and durable_eq(st, nx):
                yield nx
        if kind == "run":
            k = cfg.nodes.index(n)
            for _name, fn in M.RUNNER_STEPS:
                nx = fn(cfg, st, k)
                if nx is not None and nx != st and durable_eq(st, nx):
                    yield nx
        elif kind == "fin":
            k = cfg.nodes.index(n)
            f = st.fin[k]
            for fn in (M.FinalizerReconcile, M.FinalizerSettle, M.FinalizerClear):
                nx = fn(cfg, st, k)
                if nx is not None and nx != st and durable_eq(st, nx):
                    yield nx
            if f.pc != "idle" and not M.fenced(st, M.si(cfg, f.sess), f.exec, f.owner):
                yield st._replace(fin=M._put(st.fin, k, M.FIN_IDLE))  # its own check: its lease is gone
            yield from _earlier_reconciliation(cfg, st, k, recorded)
        else:
            k = cfg.recoverers.index(n)
            for fn in (M.RecoveryTakeover, M.RecoveryReconcile, M.RecoveryConvert, M.RecoveryConvertFails,
                       M.RecoveryReconvert, M.RecoveryQuarantine):  # a not-committed conversion: memory only
                nx = fn(cfg, st, k)
                if nx is not None and nx != st and durable_eq(st, nx):
                    yield nx
            yield from _earlier_conversions(cfg, st, k)


def _earlier_conversions(cfg: M.Config, st: M.State, k: int):
    """A conversion that committed nothing ran at some clock reading between the two commits, possibly
    while its lease was still live (the checker only knows the later reading): its outcome (released, or
    quarantining for a reason, or reconverting after a lost COMMIT), with the durable state kept as it is."""
    w = st.rec[k]
    if w.pc == "converting":  # the reconciliation commits nothing: the conversion follows it
        st = M.RecoveryReconcile(cfg, st, k)
        w = st.rec[k]
    if w.pc != "reconciled":
        return
    for nx in _at_a_live_lease(cfg, st, w.sess, (M.RecoveryConvert, M.RecoveryConvertFails), k):
        yield st._replace(rec=nx.rec)


def _earlier_reconciliation(cfg: M.Config, st: M.State, k: int, recorded):
    """The finalizer's reconciliation commits nothing either: it began at some clock reading between the
    two commits while its lease was live, and the finalizer may still be reconciling at the later one
    (within SupervisionLag, see `supervision`). By then the claim may even be another's or gone: a paused
    node whose reading came before its expiry commits after a takeover and conversion (a stress run's
    history). So the claim is taken as its own exact one at a live lease when the history recorded that
    identity (`recorded(session, execution, owner)`); its span begun, the durable state kept. The
    settlement that follows is fenced at its own reading and checked as a commit."""
    f = st.fin[k]
    if f.pc != "settle":
        return
    s = M.si(cfg, f.sess)
    c = st.claim[s]
    if (c.exec, c.owner) != (f.exec, f.owner):
        if not recorded(f.sess, f.exec, f.owner):
            return
        st_then = st._replace(claim=M._put(st.claim, s, c._replace(exec=f.exec, owner=f.owner, phase="cancelling")))
    else:
        st_then = st
    for nx in _at_a_live_lease(cfg, st_then, f.sess, (M.FinalizerReconcile,), k):
        yield st._replace(fin=nx.fin, effects=nx.effects)


def _at_a_live_lease(cfg: M.Config, st: M.State, sess: str, steps, k: int):
    """The steps' outcomes as at each live lease of the Session's claim (the same claim, an earlier clock
    reading) that change nothing durable."""
    s = M.si(cfg, sess)
    for ttl in range(1, cfg.lease + 1):
        then = st._replace(claim=M._put(st.claim, s, st.claim[s]._replace(ttl=ttl)))
        for fn in steps:
            nx = fn(cfg, then, k)
            if nx is not None and durable_eq(then, nx):
                yield nx


def supervision(checker, c: Commit) -> None:
    """A finalizer still running must not have outlived the lease it held by more than the node's
    supervision lag, at its own process's clock reading: the twin's Supervise stops a stale actor before
    SupervisionLag ticks pass, and under SynchronizedClocks (Grace >= SupervisionLag) no successor takes
    the claim meanwhile. So past its lease it may still run only while the claim is still its own; a claim
    taken over (or gone) means it should have stopped. The lease is the last one recorded for its exact
    claim: a takeover may commit between the node's supervision read and its own commit (the node read the
    clock first), so before its lease expired the claim at this commit can already be another owner's
    while the finalizer rightly ran."""
    now = c.now
    for n, f in c.memory["fin"].items():
        if f.pc == "idle":
            continue
        held = checker.last_lease.get((f.sess, f.exec, f.owner))
        cl = checker.claims.get(f.sess)
        own = cl is not None and (cl[1], cl[2]) == (f.exec, f.owner)
        if held is not None and (now < held or (own and now < held + checker.cfg.supervision_lag)):
            continue
        seen = "no claim" if cl is None else f"claim (execution {cl[1]}, owner {cl[2]}, lease until {cl[3]})"
        lease = "a claim never recorded" if held is None else f"its lease, which expired at {held}"
        lag = f" (SupervisionLag {checker.cfg.supervision_lag})" if own else ""
        checker.find(c.row, "supervision", [R.NO_OVERLAPPING_EFFECTS], f.sess,
                      f"finalizer of {n} still running ({f.pc}, execution {f.exec}) at clock {now}, past {lease}{lag}; "
                      f"now {seen}: supervision should have stopped it")
