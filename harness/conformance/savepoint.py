"""Save and restore the whole implementation: its database and every actor's memory.

Why: the exhaustive walk (harness.conformance.conform) checks every edge out of a state, so after each
edge it must put the implementation back where it was. The implementation commits its own transactions
(BEGIN IMMEDIATE, one per atomic unit), so an enclosing transaction cannot undo them; instead the whole
database is saved:

- sqlite in memory: `sqlite3.Connection.serialize()` / `deserialize()` (one copy of the pages);
- any other database (a sqlite file, PostgreSQL): every table's rows, put back by one transaction that
  empties every table and inserts them again (as harness.conformance.databases restores its seed).

The actors' memory (runners, finalizers, recovery workers, the clock, the provider's record, the wake
queue, the boundary recorder) is the scheduler's World less its database: a deep copy that shares the
Database object (and so its engine and connection).
"""

from __future__ import annotations

import copy

from harness.conformance.scheduler import Scheduler


def _tables():
    from sqlmodel import SQLModel
    return SQLModel.metadata.sorted_tables


class Serialized:
    """sqlite in memory: the database as one bytes object (StaticPool: one shared connection)."""

    def __init__(self, db):
        self.conn = db.engine.raw_connection().driver_connection

    def save(self):
        return self.conn.serialize()

    def restore(self, data) -> None:
        self.conn.deserialize(data)


class Rows:
    """Any database: every table's rows, restored by emptying every table and inserting them again."""

    def __init__(self, db):
        self.db = db
        self.tables = _tables()

    def save(self):
        with self.db.read() as conn:
            return [(t, [dict(r._mapping) for r in conn.execute(t.select())]) for t in self.tables]

    def restore(self, data) -> None:
        with self.db.transaction() as conn:
            for t in reversed(self.tables):
                conn.execute(t.delete())
            for t, rows in data:
                if rows:
                    conn.execute(t.insert(), rows)


def memory_sqlite(db) -> bool:
    url = db.engine.url
    return db.is_sqlite and url.database in (None, "", ":memory:")


class Savepoints:
    """`save()` the scheduler's implementation, `restore(point)` it (as often as wanted)."""

    def __init__(self, sched: Scheduler):
        self.sched = sched
        db = sched.world.db
        self.store = Serialized(db) if memory_sqlite(db) else Rows(db)
        self.kind = "serialize" if isinstance(self.store, Serialized) else "rows"

    def _copy(self, world):
        return copy.deepcopy(world, {id(world.db): world.db})

    def save(self):
        s = self.sched
        return self.store.save(), self._copy(s.world), s.faults

    def restore(self, point, last: bool = False) -> None:
        """`last`: the point will not be restored again, so its copy of the actors is handed over."""
        data, world, faults = point
        self.store.restore(data)
        self.sched.world = world if last else self._copy(world)
        self.sched.faults = faults
