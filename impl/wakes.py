"""Wake reservations and bounded batches.

A wake counter changes only by compare-and-set on the value the waker observed, so two wakers never
both believe they reserved the same slot; it rotates from its max back to 1 so it stays bounded. A
batch is bounded, and a share of it is kept for fresh work so retries can never saturate it.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from .context import Context
from .results import Lost, Ok, Result
from .schema import wake_t as T

X = TypeVar("X")

RECOVERY = "recovery"
ORDINARY = "ordinary"


def rotate(value: int, maximum: int) -> int:
    return 1 if value >= maximum else value + 1


class WakeCounters:
    def __init__(self, ctx: Context):
        self.ctx = ctx

    def ensure(self, name: str, maximum: int) -> None:
        def body(conn):
            if conn.execute(sa.select(T.c.name).where(T.c.name == name)).first() is None:
                conn.execute(T.insert().values(name=name, value=0, max=maximum))
        self.ctx.db.atomic(body)

    def observe(self, name: str) -> int:
        with self.ctx.db.read() as conn:
            return conn.execute(sa.select(T.c.value).where(T.c.name == name)).scalar_one()

    def reserve(self, name: str, observed: int) -> Result:
        """Compare-and-set from the observed value to its successor: Ok(new value) or Lost."""
        def body(conn: Connection):
            n = conn.execute(sa.update(T).where(T.c.name == name, T.c.value == observed)
                             .values(value=sa.case((T.c.value >= T.c.max, 1), else_=T.c.value + 1))).rowcount
            if n != 1:
                return Lost(f"wake counter {name} moved from {observed}")
            return Ok(conn.execute(sa.select(T.c.value).where(T.c.name == name)).scalar_one())
        return self.ctx.db.atomic(body)

    def reserve_next(self, name: str, attempts: int = 3) -> Result:
        """Observe and reserve, retrying a bounded number of times under contention."""
        result: Result = Lost("no attempt")
        for _ in range(attempts):
            result = self.reserve(name, self.observe(name))
            if result:
                return result
        return result


def plan_batch(fresh: Sequence[X], retried: Sequence[X], bound: int, fresh_share: int) -> list[X]:
    """At most `bound` items; up to `fresh_share` slots go to fresh work first, so retries can fill the
    rest but never the whole batch; unused fresh slots go to retries."""
    if bound < 1 or not 0 <= fresh_share <= bound:
        raise ValueError("need bound >= 1 and 0 <= fresh_share <= bound")
    first = list(fresh[:fresh_share])
    rest = list(retried[:bound - len(first)])
    spare = bound - len(first) - len(rest)
    return first + rest + list(fresh[len(first):len(first) + spare])
