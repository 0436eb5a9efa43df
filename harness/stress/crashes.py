"""Crash injection for a stress run: when to crash, whom, and the twin's Crash it records.

`CrashPlan` decides when (at random moments, mean `crash_every` seconds, or every ~C commits for a
deterministic count) and whom (usually a node that owns a live claim, so recovery has work), from one
seeded random stream. The run database records the twin's Crash of a node and of its recovery worker
(`RunDatabase.record_crash`, harness.port.history); the SIGKILL and the restart are the supervisor's
(process control).
"""

from __future__ import annotations

import random


class CrashPlan:
    def __init__(self, seed: str, crash_every: float, crash_every_commits: int | None):
        self.rng = random.Random(f"{seed}:parent")
        self.every = crash_every
        self.every_commits = crash_every_commits
        self.next_time = float("inf")
        self.next_seq: int | float = float("inf")

    def start(self) -> None:
        self.next_time = self._after_time(0.0)
        self.next_seq = self._after_seq(0)

    def due(self, t: float, commits: int) -> bool:
        return t >= self.next_time if self.every_commits is None else commits >= self.next_seq

    def crashed(self, t: float, commits: int) -> None:
        """Schedule the next crash after one at time `t`, `commits` commits into the run."""
        self.next_time = self._after_time(t)
        self.next_seq = self._after_seq(commits)

    def victim(self, db, now: int, candidates: dict[str, bool], nodes: list[str]) -> str | None:
        """A node to kill: usually one that owns a live claim (so its work must be recovered). `db`: the run
        database (harness.port.history.RunDatabase); `candidates`: node -> whether it is up (ready);
        `nodes`: every node id in order."""
        if self.rng.random() < 0.8:
            owners = [x for x in db.live_owners(now) if candidates.get(x)]
            if owners:
                return self.rng.choice(sorted(owners))
        up = [n for n in nodes if candidates.get(n)]
        return self.rng.choice(up) if up else None

    def _after_time(self, t: float) -> float:
        if self.every_commits is not None or self.every <= 0:
            return float("inf")
        return t + self.rng.expovariate(1.0 / self.every)

    def _after_seq(self, seq: int) -> int | float:
        c = self.every_commits
        return float("inf") if c is None else seq + self.rng.randint(max(1, c // 2), max(1, c + c // 2))
