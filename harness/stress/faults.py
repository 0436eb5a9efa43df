"""Real faults for a stress run, beyond SIGKILL crashes (harness/stress/crashes.py): when, whom, and the log.

Each kind is off by default and drawn from its own seeded stream (`<seed>:faults`):

- **pause** (`pause_every`, `pause_for`): SIGSTOP a node process for longer than a lease, then SIGCONT.
  The node's clock jumps on resume, its claims have expired meanwhile and recovery may have taken them
  over: the stall the accepted assumptions (TimelyDispatch, SynchronizedClocks) exclude.
- **pause before dispatch** (`pause_before_dispatch` P): a node stops itself (SIGSTOP) as a share P of
  its provider calls begin, after the renewal; the parent resumes it like any pause. The call then
  begins past its renewal's lease: the TimelyDispatch breach, at the exact point the assumption names.
- **skew** (`skew_ms`, `skew_bound_ms`): each node reads its clock with its own offset, spread evenly over
  [-skew/2, +skew/2] in a seeded order, so two nodes disagree by up to `skew_ms`. The bound is what the
  deployment promises: recovery waits `Grace = ceil(bound / tick)` ticks past expiry, so within the bound
  no owner still holds a claim by its own clock when recovery takes it; beyond it, that is the
  SynchronizedClocks breach (harness/stress/breaches.py counts it). A standing condition, not an episode.
- **drop** (`drop_every`, PostgreSQL): `pg_terminate_backend` on every connection of one node (its
  connections carry `application_name` `claimcheck-<node>`): a unit cut mid-way must roll back whole.
- **storm** (`busy_storm`, sqlite): the parent holds the write lock (`BEGIN IMMEDIATE`) for up to half a
  second at a time while the nodes' busy timeout is 50 ms, so their units fail with SQLITE_BUSY and are
  given up and begun afresh.

Every fault is logged (`Fault`: kind, node, wall-clock start and end) into the result and `faults.jsonl`,
so the report can attribute breaches and measure liveness after the last one (harness/stress/liveness.py).
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import sqlite3
import time
from dataclasses import asdict, dataclass

import sqlalchemy as sa

STORM_BUSY_TIMEOUT = 0.05  # seconds: the nodes' busy timeout under --busy-storm (short, so BUSY surfaces)
STORM_EVERY = 2.0  # mean seconds between storms
STORM_FOR = (0.1, 0.5)  # a storm's length, uniform (seconds)


@dataclass
class Fault:
    kind: str  # pause | skew | drop | storm | crash
    node: str  # the node it hit ("" for a storm: every node)
    t0: float  # wall-clock start (time.time())
    t1: float | None  # wall-clock end (None: standing for the whole run, a clock skew)
    detail: str = ""


def application_name(node: str) -> str:
    return f"claimcheck-{node}"


def skews(seed: str, nodes: list[str], skew_ms: float) -> dict[str, float]:
    """Each node's clock offset in ms: evenly spread over [-skew/2, +skew/2], in a seeded order."""
    if not skew_ms or len(nodes) < 2:
        return {n: 0.0 for n in nodes}
    order = list(nodes)
    random.Random(f"{seed}:skew").shuffle(order)
    step = skew_ms / (len(order) - 1)
    return {n: round(-skew_ms / 2 + k * step, 3) for k, n in enumerate(order)}


def grace_ticks(skew_bound_ms: float, tick: float) -> int:
    """Recovery's Grace covering the promised clock disagreement (SynchronizedClocks: Grace >= SupervisionLag)."""
    return math.ceil(skew_bound_ms / 1000 / tick - 1e-9) if skew_bound_ms > 0 else 0


class FaultInjector:
    """The parent's fault schedule. `turn(t)` starts and ends faults at run time `t` (seconds); `quiet()`
    stops new ones (the settling tail that liveness is measured on); `end()` resumes what is paused and
    releases a storm. `paused` and `storming` tell the parent what not to touch meanwhile."""

    def __init__(self, sup):
        self.sup = sup
        o = sup.o
        self.o = o
        self.rng = random.Random(f"{o.seed}:faults")
        self.log: list[Fault] = []
        self.paused: dict[str, tuple] = {}  # node -> (process, end run time, Fault)
        self.storm: tuple | None = None  # (sqlite3 connection, end run time, Fault)
        self.next_pause = self._after(0.0, o.pause_every)
        self.next_drop = self._after(0.0, o.drop_every)
        self.next_storm = self._after(0.0, STORM_EVERY if o.busy_storm else None)
        self.quieted = False
        self.pause_for = o.pause_for or 2 * o.lease
        self.skew = skews(o.seed, sup.node_ids, o.skew_ms)
        if o.skew_ms:
            for n, ms in self.skew.items():
                self.record(Fault("skew", n, time.time(), None, f"{ms:+g} ms"))

    @property
    def storming(self) -> bool:
        return self.storm is not None

    def _after(self, t: float, every: float | None) -> float:
        return float("inf") if not every else t + self.rng.expovariate(1.0 / every)

    def record(self, f: Fault) -> Fault:
        if f not in self.log:
            self.log.append(f)
        with open(self.sup.run_dir / "faults.jsonl", "a") as fh:
            fh.write(json.dumps(asdict(f)) + "\n")
        return f

    def quiet(self) -> None:
        """No new faults from now on; those under way end on schedule."""
        self.quieted = True
        self.next_pause = self.next_drop = self.next_storm = float("inf")

    def busy(self) -> bool:
        """A fault is still under way (a pause or a storm)."""
        return bool(self.paused) or self.storming

    def turn(self, t: float) -> None:
        self._self_paused(t)
        for n, (proc, until, f) in list(self.paused.items()):
            if t >= until:
                self._resume(n, proc, f)
        if self.storm is not None and t >= self.storm[1]:
            self._calm()
        if t >= self.next_pause:
            self.next_pause = self._after(t, self.o.pause_every)
            self._pause(t)
        if t >= self.next_drop:
            self.next_drop = self._after(t, self.o.drop_every)
            self._drop()
        if t >= self.next_storm and not self.storming and self._storm(t):  # (the lock busy: next turn)
            self.next_storm = self._after(t, STORM_EVERY)

    def _up(self) -> list[str]:
        return [n for n in self.sup.node_ids if n not in self.paused and self.sup.ready(n)
                and self.sup.procs[n].exitcode is None]

    def _pause(self, t: float) -> None:
        up = self._up()
        if not up:
            return
        n = self.rng.choice(up)
        proc = self.sup.procs[n]
        os.kill(proc.pid, signal.SIGSTOP)
        f = Fault("pause", n, time.time(), None, f"{self.pause_for:g} s")
        self.paused[n] = (proc, t + self.pause_for, f)

    def _self_paused(self, t: float) -> None:
        """Nodes that stopped themselves before a provider call (`pause_before_dispatch`): paused from now."""
        if not self.o.pause_before_dispatch:
            return
        for mark in self.sup.run_dir.glob("paused-*"):
            mark.unlink(missing_ok=True)
            _, n, inc = mark.name.rsplit("-", 2)
            proc = self.sup.procs.get(n)
            if proc is None or int(inc) != self.sup.incarnation[n] or proc.exitcode is not None or n in self.paused:
                continue
            f = Fault("pause", n, time.time(), None, f"{self.pause_for:g} s, before a provider dispatch")
            self.paused[n] = (proc, t + self.pause_for, f)

    def _resume(self, n: str, proc, f: Fault) -> None:
        del self.paused[n]
        if proc.exitcode is None:
            os.kill(proc.pid, signal.SIGCONT)
        f.t1 = time.time()
        self.record(f)

    def _drop(self) -> None:
        up = self._up()
        if not up:
            return
        n = self.rng.choice(up)
        killed = self.sup.db.drop_connections(application_name(n))  # no write lock, nothing recorded
        now = time.time()
        self.record(Fault("drop", n, now, now, f"{killed} connections"))

    def _storm(self, t: float) -> bool:
        path = sa.engine.make_url(self.sup.url).database
        conn = sqlite3.connect(path, timeout=0.05, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # a node holds the lock: the storm begins on a later turn
            conn.close()
            return False
        f = Fault("storm", "", time.time(), None, "")
        self.storm = (conn, t + self.rng.uniform(*STORM_FOR), f)
        return True

    def _calm(self) -> None:
        conn, _, f = self.storm
        conn.execute("ROLLBACK")
        conn.close()
        self.storm = None
        f.t1 = time.time()
        f.detail = f"{f.t1 - f.t0:.2f} s"
        self.record(f)

    def end(self) -> None:
        self._self_paused(float("inf"))
        for n, (proc, _, f) in list(self.paused.items()):
            self._resume(n, proc, f)
        if self.storm is not None:
            self._calm()

    def crashed(self, node: str, wall: float) -> None:
        self.record(Fault("crash", node, wall, wall))

    def enough(self, n: int) -> bool:
        """Every fault kind switched on has had `n` episodes end (a count to stop at, like --min-crashes)."""
        o = self.o
        kinds = [k for k, on in (("pause", o.pause_every or o.pause_before_dispatch), ("drop", o.drop_every),
                                 ("storm", o.busy_storm)) if on]
        return all(sum(f.kind == k and f.t1 is not None for f in self.log) >= n for k in kinds)

    def last_end(self) -> float | None:
        """The wall time the last fault episode ended (a standing skew is no episode)."""
        ends = [f.t1 for f in self.log if f.t1 is not None and f.kind != "skew"]
        return max(ends) if ends else None
