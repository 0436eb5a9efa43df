"""The history check while a stress run goes (`claimcheck stress --until-violation`).

`Watch` asks `judge` (validate's search on the history so far, harness.validation.command.Growing, which
harness.cli gives: the search comes after stress in the flow) for the first commit no twin behaviour
explains, and notes it with what the run needed to reach it: executions begun (Acquire,
PromoteContinuation) and crashes injected up to that commit (the converter reads a per-Session history,
PostgreSQL's concurrent writers, up to its `settled_seq`). When no judge is given the per-Session
`checker.Checker` is fed the commits recorded so far instead, in seq order and only as a dense prefix (a
per-Session history has gaps: only the commits up to `settled_seq`). It decides only
when the run stops; the verdict is the full check after the run (the whole history validated, then the
final database and the effect logs).
"""

from __future__ import annotations

from harness import registry as R
from harness.port.history import History
from harness.stress.checker import Checker
from harness.stress.options import FirstViolation


class Watch:
    def __init__(self, history: History, meta: dict, *, chunk: int = 2000, judge=None):
        """`history`: the run's, as it grows (harness.port.history); `meta`: its metadata as installed;
        `judge()`: (seq, why) of the first commit validate's search cannot explain so far, or None."""
        self.history = history
        self.judge = judge
        self.counted = 0  # the seq up to which executions are counted (with a judge)
        self.checker = Checker(meta, history.vocabulary)
        self.checker.keep_rows = False
        self.chunk = chunk
        self.executions = 0
        self.crash_seqs: list[int] = []  # seq of each injected crash's record (the node's Crash)
        self.first: FirstViolation | None = None

    def crashed_at(self, seq: int) -> None:
        """An injected crash was recorded at `seq` (a crash is counted when the check reaches it)."""
        self.crash_seqs.append(seq)

    def poll(self) -> FirstViolation | None:
        """Check the commits recorded since the last poll; returns the first violation once there is one."""
        if self.first is not None:
            return self.first
        if self.judge is not None:
            return self._judged()
        ch = self.checker
        settled = self.history.settled() if ch.per_session else None
        while True:
            rows = self.history.rows(ch.seq, self.chunk)
            for row in rows:
                if row["seq"] != ch.seq + 1 and (settled is None or row["seq"] > settled):
                    return None  # not visible yet: the rest waits for the next poll
                before = ch.report.counts["violations"]
                ch.feed(row)
                if row["action"] in (R.ACQUIRE, R.PROMOTE_CONTINUATION) and row["changed"]:
                    self.executions += 1
                if ch.report.counts["violations"] > before:
                    crashes = sum(1 for s in self.crash_seqs if s <= row["seq"])
                    self.first = FirstViolation(row["seq"], self.executions, crashes,
                                                ch.report.violations[0].line() if ch.report.violations else "")
                    return self.first
            if len(rows) < self.chunk:
                return None

    def _judged(self) -> FirstViolation | None:
        hit = self.judge()
        if hit is None:
            return None
        seq, why = hit
        while self.counted < seq:  # executions begun up to the commit
            rows = [r for r in self.history.rows(self.counted, self.chunk) if r["seq"] <= seq]
            if not rows:
                break
            self.executions += sum(1 for r in rows if r["action"] in (R.ACQUIRE, R.PROMOTE_CONTINUATION)
                                   and r["changed"])
            self.counted = rows[-1]["seq"]
        crashes = sum(1 for s in self.crash_seqs if s <= seq)
        self.first = FirstViolation(seq, self.executions, crashes, f"commit {seq} {why}")
        return self.first
