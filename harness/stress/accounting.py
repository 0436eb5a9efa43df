"""The end of a history check: the fold of all commits against the final database, and every input's fate.

Both read the state the checker folded (its Sessions' logs, inputs and cancelled executions, its claims,
recovery rows, execution mark and which execution took each input) and the final database
(`records.Final`); neither changes the checker.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from impl import ids
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
            asst = src.get(e.input, -1) if e.input is not None else ids.numbered(e.assistant, checker.cfg.max_steps)
            by_s[e.session].append(M.Event(e.session, e.kind, asst, e.writer))
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
    if final.execution_seq != checker.exec_mark:
        problems.append(f"execution sequence ({checker.exec_mark} recorded, {final.execution_seq} in the database)")
    return problems


class Fates:
    """The fate of each execution in the final database, following recovery's continuations."""

    MAX_DEPTH = 10_000

    def __init__(self, final, taken_by: dict):
        snap = final.snapshot
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
            cid = ids.continuation_id(s, e)
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


def account_inputs(final, taken_by: dict, max_lost: int = 20) -> tuple[dict, list[str]]:
    """Every admitted prompt: answered, cancelled, pending or held (recoverable), in flight (recoverable),
    quarantined (held for an operator), or lost. Returns ({"admitted": n, fate: count, ...}, lost lines)."""
    fates = Fates(final, taken_by)
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
