"""Wake reservations and bounded batches.

A wake counter changes only by compare-and-set on the value the waker observed, so two wakers never
both believe they reserved the same slot; it rotates from its max back to 1 so it stays bounded. A
batch is bounded, and a share of it is kept for fresh work so retries can never saturate it, while the
rest keeps one retry advancing however much fresh work arrives (`plan_batch` refuses a share of 0 or of
the whole batch). `WakeQueue` is one kind of wake rows (recovery wakes, ordinary wakes). A scan is the
reviewed code's two units: `read` plans each batch with `plan_batch` from the window it reads (the twin's
WakeRead), and `reserve` makes each planned row's compare-and-set on the attempt counter the read observed
(WakeReserve): a row whose counter moved, or that another waker reserved, in between is lost to this
waker and waits for a later scan. A `Waker` reads and reserves in two transactions and keeps its plan
between them (its memory: the twin's Wakers > 1); `scan` makes both in one transaction under the wake lock
(the twin's WakeScan: one waker, or wakers it serializes). A woken redrive then serves the row or releases
it as a retry.
Retried rows take their slots in rounds (`turned`): a row woken in the current round waits until every
waiting retried row has been, so one poison row woken and lost for ever cannot take every retry slot
(issue 31 item 3; oldest first alone, the `wake-retry-oldest-first` defect, starves a younger retry).
"""

from __future__ import annotations

from typing import Sequence, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import registry as R
from .context import Context
from .db import guarded
from .results import NotEnabled, Occupied, Ok, Result
from .schema import wake_row_t as W

X = TypeVar("X")

RECOVERY = "recovery"
ORDINARY = "ordinary"


def check_share(bound: int, fresh_share: int) -> None:
    """A batch must keep a slot for each kind: bound >= 2 and 1 <= fresh_share <= bound - 1 (a share of 0
    lets retries fill the batch; the whole bound lets no retry advance)."""
    if bound < 2 or not 1 <= fresh_share <= bound - 1:
        raise ValueError(f"need bound >= 2 and 1 <= fresh_share <= bound - 1 (got bound {bound}, fresh_share "
                         f"{fresh_share}): a share of 0 lets retries fill the batch, the whole bound lets no "
                         "retry advance")


def plan_batch(fresh: Sequence[X], retried: Sequence[X], bound: int, fresh_share: int) -> list[X]:
    """At most `bound` items; up to `fresh_share` slots go to fresh work first, so retries can fill the
    rest but never the whole batch; unused fresh slots go to retries, unused retry slots to fresh work."""
    check_share(bound, fresh_share)
    return _plan(fresh, retried, bound, fresh_share)


def _plan(fresh: Sequence[X], retried: Sequence[X], bound: int, fresh_share: int) -> list[X]:
    """plan_batch without its share check (the wake-fresh-share defects reach it with 0 or the bound)."""
    first = list(fresh[:fresh_share])
    rest = list(retried[:bound - len(first)])
    spare = bound - len(first) - len(rest)
    return first + rest + list(fresh[len(first):len(first) + spare])


def planned(ctx: Context, fresh: Sequence[X], retried: Sequence[X], bound: int, fresh_share: int) -> list[X]:
    """The batch a scan takes: plan_batch with the configured share (the wake-fresh-share defects plan
    with a share of 0, or of the whole bound, which plan_batch refuses)."""
    if ctx.has(R.WAKE_FRESH_SHARE_ZERO):
        return _plan(fresh, retried, bound, 0)
    if ctx.has(R.WAKE_FRESH_SHARE_FULL):
        return _plan(fresh, retried, bound, bound)
    return plan_batch(fresh, retried, bound, fresh_share)


FRESH, RETRY = "fresh", "retry"  # the batch slot a reservation was made in (the twin's `woken`)
DEFAULT_WAKE_BATCH = 100
DEFAULT_FRESH_SHARE = 50


class Waker:
    """One of several wakers of a queue (the twin's Wakers > 1): its read and its reservation are two steps,
    and between them its plan (the rows with the counters it observed) is its memory, `plan`."""

    def __init__(self, queue: "WakeQueue", name: str):
        self.queue, self.name = queue, name
        self.plan: list[dict] = []

    def read(self) -> Result:
        """WakeRead(k): plan a batch and keep it; NotEnabled while a plan waits for its reservation."""
        if self.plan:
            return NotEnabled(f"{self.name} holds a plan it has not reserved")
        result = self.queue.read()
        if result:
            self.plan = result.value
        return result

    def reserve(self) -> Result:
        """WakeReserve(k): the compare-and-set of each planned row; the plan is spent whatever it won (a
        transaction that failed, rolled back whole, leaves it held)."""
        if not self.plan:
            return NotEnabled(f"{self.name} has read no plan")
        result = self.queue.reserve(self.plan)
        self.plan = []
        return result


class WakeQueue:
    """The wake rows of one kind. A row is a Session with pending work to redrive; its `attempts` counter
    is 0 until its first reservation (fresh), then counts reservations, rotating from `max_tries` to 1."""

    def __init__(self, ctx: Context, kind: str, *, bound: int = DEFAULT_WAKE_BATCH,
                 fresh_share: int = DEFAULT_FRESH_SHARE, max_tries: int = 2, waker: str = "waker"):
        """A reservation whose redrive died stays until a waker releases it (`lapsed`, then `release`: the
        twin's WakeLost, an explicit step), so a scan never takes a reserved row."""
        check_share(bound, fresh_share)
        if max_tries < 1:
            raise ValueError("max_tries must be at least 1")
        self.ctx, self.kind, self.bound, self.fresh_share, self.max_tries = ctx, kind, bound, fresh_share, max_tries
        self.waker = waker

    def _unreserved(self):
        return W.c.reserved.is_(None)

    def arrive(self, item: str, rank: int) -> Result:
        """WakeArrive: insert-only, counter 0 (fresh); a row already there is Occupied."""
        def body(conn):
            try:
                with guarded(conn):
                    conn.execute(W.insert().values(kind=self.kind, item=item, rank=rank, attempts=0,
                                                   max=self.max_tries, reserved=None))
            except sa.exc.IntegrityError:
                return Occupied(item)
            return Ok(item)
        return self.ctx.db.atomic(body, wakes=True)

    def window(self, conn: Connection) -> tuple[list[dict], list[dict]]:
        """The bounded scan: at most `bound` unreserved fresh rows, oldest first, and `bound` retried ones,
        those not yet woken in this round first (then oldest first). When the first retried row is turned,
        every waiting one is: a new round, whose turns the scan clears."""
        rounds = not self.ctx.has(R.WAKE_RETRY_OLDEST_FIRST)

        def rows(retried: bool):
            cond = W.c.attempts > 0 if retried else W.c.attempts == 0
            order = (W.c.turned, W.c.rank) if retried and rounds else (W.c.rank,)
            return [dict(r) for r in conn.execute(
                sa.select(W).where(W.c.kind == self.kind, self._unreserved(), cond)
                .order_by(*order).limit(self.bound)).mappings()]
        fresh, retried = rows(False), rows(True)
        if rounds and retried and retried[0]["turned"]:
            conn.execute(sa.update(W).where(W.c.kind == self.kind, self._unreserved(), W.c.attempts > 0)
                         .values(turned=False))
        return fresh, retried

    def _plan(self, conn: Connection) -> Result:
        """The read's body: the window (a new round clears the waiting turns) and its planned batch
        (`plan_batch`); Ok([{item, rank, attempts, slot}]), each row with the counter it observed, or
        NotEnabled when nothing waits."""
        fresh, retried = self.window(conn)
        for row in fresh:
            row["slot"] = FRESH
        for row in retried:
            row["slot"] = RETRY
        batch = planned(self.ctx, fresh, retried, self.bound, self.fresh_share)
        if not batch:
            return NotEnabled(f"no {self.kind} wake row waits")
        return Ok([{k: row[k] for k in ("item", "rank", "attempts", "slot")} for row in batch])

    def _reserve(self, conn: Connection, plan: Sequence[dict]) -> Result:
        """The reservation's body: each planned row's compare-and-set on the counter its read observed
        (still unreserved, attempts unchanged); a row that does not match is lost to this waker and waits.
        Ok([(item, slot)]) of the rows reserved (possibly none). The wake-reserve-without-cas defect updates
        each planned row by its item alone."""
        cas = not self.ctx.has(R.WAKE_RESERVE_WITHOUT_CAS)
        won = []
        for row in plan:
            match = [W.c.kind == self.kind, W.c.item == row["item"]]
            if cas:
                match += [W.c.attempts == row["attempts"], self._unreserved()]
            n = conn.execute(sa.update(W).where(*match)
                             .values(attempts=sa.case((W.c.attempts >= W.c.max, 1), else_=W.c.attempts + 1),
                                     reserved=row["slot"], reserved_at=self.ctx.now(), turned=True)).rowcount
            if n == 1:
                won.append((row["item"], row["slot"]))
        return Ok(won)

    def read(self) -> Result:
        """WakeRead, one transaction: the window and its plan (`_plan`); nothing is reserved."""
        return self.ctx.db.atomic(self._plan, wakes=True)

    def reserve(self, plan: Sequence[dict]) -> Result:
        """WakeReserve, one transaction: the plan's compare-and-sets (`_reserve`); rows that moved are lost."""
        return self.ctx.db.atomic(lambda conn: self._reserve(conn, plan), wakes=True)

    def scan(self) -> Result:
        """One waker's scan (WakeScan): the read and the reservation of its plan in one transaction under the
        wake lock, so wakers that scan this way (a one-node stress run's, the twin's WakeScan and WakeScanQueue) are
        serialized and no reservation loses; racing wakers read and reserve apart (`Waker`). Ok([(item,
        slot)]) or NotEnabled when nothing waits."""
        def body(conn):
            plan = self._plan(conn)
            return self._reserve(conn, plan.value) if plan else plan
        result = self.ctx.db.atomic(body, wakes=True)
        if result and result.value:
            self.ctx.boundaries.hit(R.B_WAKE_RESERVED, waker=self.waker, kind=self.kind,
                                    items=[item for item, _slot in result.value])
        return result

    def serve(self, item: str, conn: Connection | None = None) -> Result:
        """WakeServe: the woken redrive took the work; remove its reserved row (in the redrive's own
        transaction when `conn` is given)."""
        def body(c):
            n = c.execute(sa.delete(W).where(W.c.kind == self.kind, W.c.item == item,
                                             W.c.reserved.is_not(None))).rowcount
            return Ok(item) if n == 1 else NotEnabled(f"wake row {item} holds no reservation")
        return body(conn) if conn is not None else self.ctx.db.atomic(body, wakes=True)

    def release(self, item: str) -> Result:
        """WakeLost: the woken redrive took nothing; the reservation lapses and the row, its counter
        advanced, waits as a retry."""
        def body(c):
            n = c.execute(sa.update(W).where(W.c.kind == self.kind, W.c.item == item, W.c.reserved.is_not(None))
                          .values(reserved=None, reserved_at=None)).rowcount
            return Ok(item) if n == 1 else NotEnabled(f"wake row {item} holds no reservation")
        return self.ctx.db.atomic(body, wakes=True)

    def lapsed(self, conn: Connection, ticks: int) -> list[str]:
        """Reserved rows whose reservation is at least `ticks` old: their redrive died with its process, so
        a waker may release them (WakeLost) for a later batch."""
        return [r[0] for r in conn.execute(sa.select(W.c.item).where(
            W.c.kind == self.kind, W.c.reserved.is_not(None), W.c.reserved_at + ticks <= self.ctx.now()))]

    def refresh(self, sessions: Sequence[str], rank: dict[str, int]) -> list[str]:
        """The production arrivals: a fresh row for each Session in `sessions` (those with work of this
        kind waiting, `InputStore.sessions_to_wake`) that has none; returns the Sessions that arrived."""
        return [s for s in sessions if self.arrive(s, rank[s])]
