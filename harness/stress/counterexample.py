"""A violation of a recorded history, rebuilt as a replayable trace (trace format v1, unchanged).

`session_trace` takes the offending Session's recorded commits (from a `checker.Checker` that kept its
rows) and walks them through the twin on a reduced configuration: that Session (plus any Session an
adversary's corrupt recovery row for one of its executions names), the run's nodes and workers, its
executions renumbered 1..m (`Reducer`), lease 1. Between two recorded commits the steps that commit
nothing are found by a bounded breadth-first search (`search`, towards a `Goal`), so the trace is a
behaviour of the twin whose claim and log follow the recorded ones (`SessionWalk`). `save_traces`
writes the first violating Sessions' traces where `claimcheck replay` can run them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spec import model as M
from spec import names as N
from spec.actions import apply_direct

from harness import registry as R
from harness.stress.checker import Checker
from harness.stress.records import ADMIT, asst_of, durable_eq, event_of, fin_of, rec_of, runner_of, twin_params
from harness.traces import trace as T

_SEARCH_LABELS_KEPT = (R.CRASH, R.CANCEL_REQUEST)  # durable-equal steps the search must not take silently


def session_trace(checker: Checker, session: str, defects=(), *, title: str | None = None,
                  source: str = "stress", max_depth: int = 8, reported: str = "") -> tuple[T.Trace, str | None]:
    """The offending Session's twin actions from Init, on a configuration embedded in the trace (trace
    format v1, unchanged): that Session (plus any Session an adversary's corrupt recovery row for one of
    its executions names), the run's nodes and workers, its prompts, its executions renumbered 1..m in
    order, lease 1 (a lease is live or expired, as the history check abstracts it) and the run's defects.
    Between two recorded commits the steps that commit nothing (Dispatch, listener returns, Tick, failed
    fenced steps) are found by a bounded breadth-first search, so the trace is a behaviour of the twin
    whose claim and log follow the recorded ones. The Session's history before its last quiescent point
    (no claim, no actor on it, no pending continuation) is left out when the rest reproduces alone.
    Returns (trace, None), or (the prefix built, why it stopped)."""
    bad = checker.first_bad.get(session)
    rows = sorted(checker.rows_by_session.get(session, []) + checker.crash_rows, key=lambda r: r["seq"])
    if bad is not None:
        rows = [r for r in rows if r["seq"] <= bad]
    first_seq = None
    walk = SessionWalk(checker, session, rows, defects, max_depth).run()
    cfg, steps, why = walk.cfg, walk.steps, walk.why
    if walk.quiet is not None and why is None:
        cut = [r for r in rows if r["seq"] > walk.quiet]
        walk2 = SessionWalk(checker, session, cut, defects, max_depth).run()
        if walk2.why is None and walk2.steps and walk2.steps[-1][0] == steps[-1][0]:
            cfg, steps, first_seq = walk2.cfg, walk2.steps, walk.quiet
    body = [T.TraceStep(action=name, params=T.params_to_json(name, p), state=T.state_to_json(cfg, nx), note=note)
            for name, p, nx, note in steps]
    found = [f for f in checker.report.violations if f.session == session]
    names = sorted({n for f in found for n in f.names if n in N.INVARIANTS})
    if found and all(f.kind == "supervision" for f in found):
        why = why or ("a supervision finding needs a stalled node, which the deterministic scheduler never has "
                      "(its Tick supervises every node at the instant of expiry): the trace shows the schedule")
    reported = "; ".join([f.line() for f in found] + ([reported] if reported else []))
    if first_seq is not None:
        reported = f"commits after {first_seq} (the Session was quiescent there); " + reported
    tr = T.Trace(meta=T.Meta(title=title or f"history violation in Session {session}",
                             defect=(sorted(cfg.defects) or [None])[0], invariants=names, source=source,
                             reported=reported[:2000] or None),
                 config=T.config_to_trace(cfg), steps=body)
    return tr, why


def save_traces(checker: Checker, defects, out: Path, *, limit: int = 3, title: str = "stress run violation",
                stem: str = "stress") -> list[tuple[Path, str | None]]:
    """The first `limit` violating Sessions (by their first bad commit) as trace files under `out`:
    [(path, why the trace stops early or None)]."""
    saved = []
    for s in sorted(checker.first_bad, key=checker.first_bad.get)[:limit]:
        tr, why = session_trace(checker, s, defects, title=f"{title} in Session {s}")
        saved.append((T.save(tr, T.found_path(out, f"{stem}-{s}")), why))
    return saved


def validation_trace(checker: Checker, seq: int, defects, out: Path, *, stem: str = "stress") \
        -> list[tuple[Path, str | None]]:
    """The first line `claimcheck validate` could not explain (its commit `seq`) as a replayable trace: the
    Session that commit names, walked through the twin up to that commit (`session_trace`). [] when the
    commit names no Session, or the history check already saved that Session's trace."""
    session = next((s for s, rows in checker.rows_by_session.items() if any(r["seq"] == seq for r in rows)), None)
    if session is None or session in sorted(checker.first_bad, key=checker.first_bad.get)[:3]:
        return []
    checker.first_bad[session] = min(seq, checker.first_bad.get(session, seq))
    tr, why = session_trace(checker, session, defects, title=f"validate: the first unexplained commit, in Session "
                            f"{session}", reported=f"validate: commit {seq} is no step of the twin from any state "
                            "that explains the commits before it")
    return [(T.save(tr, T.found_path(out, f"{stem}-validate-{session}")), why)]


# ---------------------------------------------------------------- the reduced configuration

def _admits(rows: list[dict]) -> bool:
    """Admission, when the Session's prompts all came by the caller's Admit (a prompt the parent admitted,
    requested, is Init's: a history with both has no reduced twin, and its trace stops at the first input
    action)."""
    return any(r["action"] in (R.ADMIT, R.EXACT_RETRY, R.RESUME) for r in rows) and \
        not any(r["action"] == ADMIT for r in rows)


def _executions(session: str, rows: list[dict]) -> set[int]:
    """The executions the Session's rows name: its claims, its events, the continuations promoted."""
    execs = set()
    for r in rows:
        c = next((c for c in r["claims"] if c[0] == session), None)
        if c:
            execs.add(c[1])
        for e in r["delta"].get("events", ()):
            if e[1] == session and e[4]:  # an input event names no execution (0)
                execs.add(e[4])
        if r["action"] == R.PROMOTE_CONTINUATION and r["params"]["i"]["sess"] == session:
            execs.add(r["params"]["i"]["src"])
    return execs


def _corrupt_rows(checker: Checker, session: str, rows: list[dict], execs: set[int], bad) -> list[dict]:
    """An adversary's corrupt recovery rows, written for another Session, naming one of these executions."""
    start = rows[0]["seq"] if rows else 0
    return [r for s2, rs in checker.rows_by_session.items() if s2 != session for r in rs
            if r["action"] == R.CORRUPT_RECOVERY_ROW and r["params"].get("e") in execs
            and (bad is None or r["seq"] <= bad) and r["seq"] >= start]


class Reducer:
    """Translate recorded values into the reduced configuration (executions renumbered)."""

    def __init__(self, cfg, session, emap, words):
        self.cfg, self.session, self.emap = cfg, session, emap
        self.words = words  # the recording server's Vocabulary (harness.port.history)
        self.si = cfg.sessions.index(session)
        self.log: list[M.Event] = []

    def e(self, x: int) -> int:
        return 0 if x == 0 else self.emap[x]

    def a(self, x: int) -> int:
        """An assistant renumbered with its execution (Step k of e: (e - 1) * MaxSteps + k)."""
        if x <= 0:
            return x
        e, k = divmod(x - 1, self.cfg.max_steps)
        return M.asst(self.cfg, self.e(e + 1), k + 1)

    def follow(self, row) -> None:
        for ev in row["delta"].get("events", ()):
            if ev[1] == self.session:
                e = event_of(ev, self.cfg.max_steps, self.words)
                self.log.append(e if e.kind == N.REQUEST_KIND else e._replace(asst=self.a(e.asst)))  # names a prompt

    def params(self, action, p: tuple) -> tuple:
        if action in (R.ACQUIRE, R.PROMOTE_CONTINUATION, R.STEER):
            i = p[1]
            if i.sess != self.session:
                raise KeyError(f"input of {i.sess}")
            return (p[0], i._replace(src=self.e(i.src)) if i.kind == "cont" else i)
        if action == R.CORRUPT_RECOVERY_ROW:
            return (p[0], self.e(p[1]))
        return p

    def memory(self, mem: dict) -> dict:
        out = {}
        for n, v in mem.get("run", {}).items():
            r = runner_of(v)
            out[("run", n)] = M.RUNNER_IDLE if r.sess != self.session else \
                r._replace(exec=self.e(r.exec), mem=self.a(r.mem))
        for n, v in mem.get("fin", {}).items():
            f = fin_of(v)
            out[("fin", n)] = M.FIN_IDLE if f.sess != self.session else f._replace(exec=self.e(f.exec))
        for n, v in mem.get("rec", {}).items():
            w = rec_of(v)
            out[("rec", n)] = M.REC_IDLE if w.sess != self.session else w._replace(exec=self.e(w.exec))
        return out

    def claim(self, c, now):
        if c is None:
            return M.NO_CLAIM
        tries = min(c[7], self.cfg.max_tries) if len(c) > 7 else 0
        return M.Claim(self.e(c[1]), c[2], 1 if c[3] > now else 0, c[4],
                       self.a(asst_of(c[5], self.cfg.max_steps, self.words)), c[6] is not None, tries,
                       self.words.quarantine_reason(c[6]))


# ---------------------------------------------------------------- walking the commits

class SessionWalk:
    """The Session's rows walked through the reduced twin: `steps` [(action, params, state, note)], `why`
    it stopped early (None: every row matched), `quiet` the seq of its last quiescent point."""

    def __init__(self, checker: Checker, session: str, rows: list[dict], defects, max_depth: int):
        self.bad = checker.first_bad.get(session)
        execs = _executions(session, rows)
        corrupt = _corrupt_rows(checker, session, rows, execs, self.bad)
        self.rows = sorted(rows + corrupt, key=lambda r: r["seq"])
        emap = {e: k for k, e in enumerate(sorted(execs), start=1)}
        meta = checker.meta
        sessions = tuple(s for s in meta["sessions"]
                         if s == session or any(r["params"]["s"] == s for r in corrupt))
        prompts = max(1, max(checker.prompts.get(s, 1) for s in sessions))
        self.cfg = M.Config(sessions=sessions, nodes=tuple(meta["nodes"]), recoverers=tuple(meta["workers"]),
                            prompts=prompts, max_exec=max(1, len(emap)), max_steps=int(meta.get("max_steps", 1)),
                            tools=int(meta.get("tools", 0)), fragments=int(meta.get("fragments", 0)),
                            lease=1, scan_bound=1,
                            grace=int(meta.get("grace_ticks", 0)),
                            max_tries=int(meta.get("max_tries", checker.words.max_tries)),
                            faults=frozenset(N.FAULT_KINDS), defects=frozenset(N.check_defects(defects)),
                            steering=True, admission=_admits(self.rows))
        self.red = Reducer(self.cfg, session, emap, checker.words)
        self.max_depth = max_depth
        self.st = M.init(self.cfg)
        self.steps: list[tuple[str, tuple, M.State, str | None]] = []
        self.prev_claim = None
        self.why: str | None = None
        self.quiet: int | None = None

    def run(self) -> "SessionWalk":
        for r in self.rows:
            if not self._row(r):
                break
        return self

    def quiescent(self, s: M.State) -> bool:
        k = self.red.si
        return (s.claim[k] == M.NO_CLAIM and all(r.pc == "idle" for r in s.run)
                and all(f.pc == "idle" for f in s.fin) and all(w.pc == "idle" for w in s.rec)
                and not any(i.kind == "cont" and i.state == "pending" for i in s.inputs))

    def _row(self, r: dict) -> bool:
        """Walk one recorded commit; False: the walk stops here (`why` says why, unless it showed the
        divergence at the first bad commit)."""
        action = r["action"]
        if action == ADMIT:
            return True
        if action == R.CRASH:
            self._crash(r)
            return True
        red = self.red
        claim_after = next((c for c in r["claims"] if c[0] == red.session), None)
        try:
            params = red.params(action, twin_params(action, r["params"]))
        except (T.TraceError, KeyError) as exc:
            self.why = f"commit {r['seq']}: cannot translate its parameters ({exc})"
            return False
        target_mem = red.memory(r["memory"] or {})
        live_before = self.prev_claim is not None and self.prev_claim[3] > r["now"]
        red.follow(r)
        goal = Goal(action, params, target_mem, live_before, (red.claim(claim_after, r["now"]), tuple(red.log)))
        if action == R.HEARTBEAT and live_before and goal.want[0].ttl > 0 and r["seq"] != self.bad:
            self.prev_claim = claim_after
            return True  # a live lease stays live: invisible at lease 1
        named = r["params"].get("_execution")
        if action == R.CANCEL_REQUEST and named is not None and (self.prev_claim is None
                                                                 or self.prev_claim[1] != named):
            self.prev_claim = claim_after
            return True  # a stale interrupt: not a CancelRequest
        path = search(self.cfg, self.st, goal, red, self.max_depth)
        self.prev_claim = claim_after
        if path is None:
            if not r["changed"]:
                return True  # a stutter the reduced twin cannot take either: nothing to show
            self._unmatched(r, goal)
            return False
        for k, (name, p, nx) in enumerate(path):
            note = f"commit {r['seq']} by {r['actor']} at clock {r['now']}" if k == len(path) - 1 else None
            self.steps.append((name, p, nx, note))
        if path:
            self.st = path[-1][2]
        if r["seq"] != self.bad and self.quiescent(self.st):
            self.quiet = r["seq"]
        return True

    def _crash(self, r: dict) -> None:
        cfg = self.cfg
        who = r["params"]["n"]
        k = (cfg.nodes + cfg.recoverers).index(who) if who in cfg.nodes + cfg.recoverers else None
        nx = M.Crash(cfg, self.st, k) if k is not None else None
        if nx is not None and nx != self.st:
            self.steps.append((R.CRASH, (who,), nx, f"commit {r['seq']}: crash of {who}"))
            self.st = nx

    def _unmatched(self, r: dict, goal: "Goal") -> None:
        """A commit that changed something and that the reduced twin cannot match. At the first bad commit
        the twin's own way of taking the step is included, so replay shows the divergence."""
        action = r["action"]
        if r["seq"] != self.bad:
            self.why = (f"commit {r['seq']} ({action}) could not be matched by the reduced twin "
                        f"(within {self.max_depth} steps that commit nothing); the trace stops there")
            return
        tail = search(self.cfg, self.st, goal.any_result(), self.red, self.max_depth)
        if tail is not None:
            for k, (name, p, nx) in enumerate(tail):
                self.steps.append((name, p, nx, f"commit {r['seq']}: the implementation's result differs"
                                   if k == len(tail) - 1 else None))
            return
        pre_path = search(self.cfg, self.st, goal.memory_only(), self.red, self.max_depth)
        for name, p, nx in pre_path or ():
            self.steps.append((name, p, nx, None))
        self.why = (f"commit {r['seq']} ({action}) is not a step of the twin with defects "
                    f"{sorted(self.cfg.defects) or 'none'}: the trace ends just before it")


# ---------------------------------------------------------------- the search between two commits

@dataclass(frozen=True)
class Goal:
    """What the search between two commits must reach: a state with the recorded `memory` (by (kind,
    actor)) and lease liveness (`live`) from which `action(params)` yields `want` (the Session's claim
    and log; None: any result). No action: reaching the memory is enough."""
    action: str | None
    params: tuple | None
    memory: dict
    live: bool
    want: tuple | None

    def any_result(self) -> "Goal":
        return Goal(self.action, self.params, self.memory, self.live, None)

    def memory_only(self) -> "Goal":
        return Goal(None, None, self.memory, self.live, None)


def _actor_val(cfg, st, kind, n):
    if kind == "rec":
        return st.rec[cfg.recoverers.index(n)]
    return getattr(st, kind)[cfg.nodes.index(n)]


def _ready(cfg, s: M.State, goal: Goal, k: int) -> bool:
    if any(_actor_val(cfg, s, kind, n) != v for (kind, n), v in goal.memory.items()):
        return False
    return s.claim[k] == M.NO_CLAIM or (s.claim[k].ttl > 0) == goal.live


def _finish(cfg, s: M.State, goal: Goal, red: Reducer):
    if goal.action is None:
        return []
    nx = apply_direct(cfg, s, goal.action, goal.params)
    if nx is None or (goal.want is not None
                      and (nx.claim[red.si], tuple(e for e in nx.log if e.sess == red.session)) != goal.want):
        return None
    return [(goal.action, goal.params, nx)]


def search(cfg, st: M.State, goal: Goal, red: Reducer, max_depth: int):
    """Breadth-first over steps that commit nothing (and Tick) to a state ready for the goal; returns the
    path [(action, params, state)] ending with the goal's action, or None."""
    frontier = [(st, [])]
    seen = {st}
    for depth in range(max_depth + 1):
        nxt = []
        for s, path in frontier:
            if _ready(cfg, s, goal, red.si):
                tail = _finish(cfg, s, goal, red)
                if tail is not None:
                    return path + tail
            if depth == max_depth:
                continue
            for label, p, s2 in M.successors(cfg, s):
                if label != R.TICK and not (durable_eq(s, s2) and label not in _SEARCH_LABELS_KEPT):
                    continue
                if s2 not in seen:
                    seen.add(s2)
                    nxt.append((s2, path + [(label, p, s2)]))
        frontier = nxt
    return None
