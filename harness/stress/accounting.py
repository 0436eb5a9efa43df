"""The accounting of a history check: the fold of all commits against the final database, every input's
fate, and (per-Session histories) which execution each commit begins.

The first two read the state the checker folded (its Sessions' logs, inputs and cancelled executions, its
claims, recovery rows, execution mark and which execution took each input) and the final database
(`records.Final`) and change nothing; `per_session` reads one commit into the checker's whole-state terms.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from spec import model as M


def fold_differences(checker, final) -> list[str]:
    """What in the final database differs from the fold of the recorded deltas (empty: nothing)."""
    db_claims = {s: [s, c.execution, c.owner, c.lease_expires_at, c.phase, c.assistant, c.recovery_error,
                     c.recovery_attempts]
                 for s, c in final.snapshot.claims.items()}
    problems = []
    if dict(checker.claims) != db_claims:
        problems.append("claims")
    folded_events = sum(len(v.log) for v in checker.sessions.values())
    if folded_events != len(final.snapshot.events):
        problems.append(f"events ({folded_events} recorded, {len(final.snapshot.events)} in the database)")
    else:
        by_s = defaultdict(list)
        src = {i.id: i.src for i in final.snapshot.inputs}  # an input event names its prompt by number
        for e in final.snapshot.events:
            asst = src.get(e.input, -1) if e.input is not None else checker.words.assistant(e.assistant,
                                                                                            checker.cfg.max_steps)
            by_s[e.session].append(M.Event(e.session, e.kind, asst, e.writer, getattr(e, "call", 0)))
        if any(by_s.get(s, []) != v.log for s, v in checker.sessions.items()):
            problems.append("event log")
    db_inputs = {i.id: M.Input(i.session, i.kind, i.src, i.state) for i in final.snapshot.inputs}
    folded_inputs = {iid: i for v in checker.sessions.values() for iid, i in v.inputs.items()}
    if db_inputs != folded_inputs:
        problems.append("inputs")
    if {M.RecRow(e, s) for e, s in final.snapshot.recovery} != checker.recovery:
        problems.append("session_recovery rows")
    folded_cancelled = {x for v in checker.sessions.values() for x in v.cancelled}
    if {M.RecRow(e, s) for e, s in final.snapshot.cancelled} != folded_cancelled:
        problems.append("cancelled executions")
    if checker.per_session:  # a sequence: unique ids, values drawn by units that then died are never used
        if checker.executions and final.execution_seq < max(checker.executions):
            problems.append(f"execution sequence ({max(checker.executions)} recorded, {final.execution_seq} "
                            "in the database)")
    elif final.execution_seq != checker.exec_mark:
        problems.append(f"execution sequence ({checker.exec_mark} recorded, {final.execution_seq} in the database)")
    return problems


def per_session(checker, c) -> None:
    """A per-Session commit (impl/history_sessions.py) read as a whole-state one: its claims are those of
    the Sessions it locked, merged into the rest; an execution it begins (a claim with a new execution id)
    is the twin's nextExec, which must be an id never begun before. The twin draws a fresh counter value,
    PostgreSQL a fresh sequence value: not dense, and across Sessions not in this walk's order; nothing in
    the twin reads more of it than freshness."""
    merged = {s: cl for s, cl in checker.claims.items() if s not in c.row["marks"].get("sessions", ())}
    merged.update(c.claims)
    c.claims = merged
    begun = sorted({cl[1] for s, cl in merged.items() if checker.claims.get(s, [None, None])[1] != cl[1]})
    if len(begun) > 1:
        checker.find(c.row, "record", [], None, f"one commit began several executions: {begun}")
    if begun:
        e = begun[0]
        if e in checker.executions or e < 1:
            checker.find(c.row, "transition", [], None, f"execution id {e} is not fresh")
        checker.executions.add(e)
        checker.exec_mark = e - 1  # the twin's nextExec before it
    c.exec_mark = checker.exec_mark + 1 if begun else checker.exec_mark


class Fates:
    """The fate of each execution in the final database, following recovery's continuations."""

    MAX_DEPTH = 10_000

    def __init__(self, final, taken_by: dict, words):
        snap = final.snapshot
        self.words = words  # the recording server's Vocabulary (harness.port.history)
        self.snap = snap
        self.taken_by = taken_by  # input id -> the execution that took it
        self.inputs = {i.id: i for i in snap.inputs}
        self.outcome = dict(final.outcomes)  # execution -> cleared | cancelled | recovered
        self.kinds = defaultdict(set)
        for e in snap.events:
            self.kinds[e.execution].add(e.kind)
        self.claim_of_exec = {c.execution: c for c in snap.claims.values()}

    def of_execution(self, e: int, s: str, depth: int = 0) -> str:
        if depth > self.MAX_DEPTH:
            return "lost"
        out = self.outcome.get(e)
        if out == "cleared":
            if "Ended" in self.kinds[e]:
                return "answered"
            return "answered (failed)" if "Failed" in self.kinds[e] else "lost"
        if out == "cancelled":
            return "cancelled"
        if out == "recovered":
            cid = self.words.continuation_id(s, e)
            c = self.inputs.get(cid)
            if c is None or (e, s) not in self.snap.recovery:
                return "lost"
            if c.state == "pending":
                return "pending continuation"
            e2 = self.taken_by.get(cid)
            return "lost" if e2 is None else self.of_execution(e2, s, depth + 1)
        c = self.claim_of_exec.get(e)
        if c is not None:
            if c.recovery_error is not None:
                return "quarantined (cancelled)" if c.phase in ("cancelling", "cancelled") else "quarantined"
            return "in flight"
        return "lost"

    def of_prompt(self, i) -> str:
        if i.state in ("pending", "held"):  # held: admitted, its execution awaiting its caller's retry or resume
            return i.state
        e = self.taken_by.get(i.id)
        return "lost" if e is None else self.of_execution(e, i.session)


def account_inputs(final, taken_by: dict, words, max_lost: int = 20) -> tuple[dict, list[str]]:
    """Every admitted prompt: answered, cancelled, pending or held (recoverable), in flight (recoverable),
    quarantined (held for an operator), or lost. Returns ({"admitted": n, fate: count, ...}, lost lines)."""
    fates = Fates(final, taken_by, words)
    counts = Counter()
    lost = []
    for i in final.snapshot.inputs:
        if i.kind != "prompt":
            continue
        f = fates.of_prompt(i)
        counts[f] += 1
        if f == "lost" and len(lost) < max_lost:
            lost.append(f"{i.id} ({i.session}, prompt {i.src}, taken by execution {taken_by.get(i.id)})")
    return {"admitted": sum(counts.values()), **dict(counts)}, lost
