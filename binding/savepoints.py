"""Save and restore the whole bundled server: its database and every actor's memory (the port's
Savepoints, harness.port).

Why: the exhaustive walk (harness.conformance.conform) checks every edge out of a state, so after each
edge it must put the implementation back where it was. The implementation commits its own transactions
(BEGIN IMMEDIATE, one per atomic unit), so an enclosing transaction cannot undo them; instead the whole
database is saved:

- sqlite in memory: `sqlite3.Connection.serialize()` / `deserialize()` (one copy of the pages);
- any other database (a sqlite file, PostgreSQL): every table's rows, put back by one transaction that
  empties every table and inserts them again (as binding.databases restores its seed).

The actors' memory (runners, finalizers, recovery workers, the clock, the provider's record, the wake
queue, the boundary recorder) is everything the scheduler's World reaches but its database: `Memory`
keeps a shallow copy of every mutable container it reaches (objects' `__dict__`s, lists, dicts, sets)
and puts their contents back in place. A deep copy of the World did the same at five times the cost
(126 µs against 26 µs on `ci`), and restoring in place keeps every reference to the actors valid.
"""

from __future__ import annotations

import types

from impl.db import restore_sequences, sequence_values
from spec import model as M

from binding.mapping import actor_fields
from binding.world import Scheduler

_ATOMS = frozenset({int, str, bool, float, type(None), bytes, types.FunctionType, types.BuiltinFunctionType,
                    types.MethodType, type})


class Memory:
    """Every mutable container reachable from `root` (not through `skip`), with a copy of its contents."""

    @staticmethod
    def save(root, skip=()):
        seen = {id(o) for o in skip}
        out, stack = [], [root]
        while stack:
            o = stack.pop()
            t = type(o)
            if t in _ATOMS or id(o) in seen:
                continue
            seen.add(id(o))
            if t is dict:
                out.append((o, dict(o)))
                stack.extend(o.values())
            elif t is list:
                out.append((o, list(o)))
                stack.extend(o)
            elif t is set:
                out.append((o, set(o)))
                stack.extend(o)
            elif t is tuple or t is frozenset:
                stack.extend(o)
            else:
                d = getattr(o, "__dict__", None)
                if d is not None:
                    stack.append(d)
                elif getattr(t, "__slots__", None):  # a mutable object this copy cannot see into
                    raise TypeError(f"savepoint: cannot save {t.__name__} (__slots__)")
        return out

    @staticmethod
    def restore(saved) -> None:
        for c, v in saved:
            if type(c) is list:
                c[:] = v
            else:
                c.clear()
                c.update(v)


def _tables():
    from sqlmodel import SQLModel
    return SQLModel.metadata.sorted_tables


class Serialized:
    """sqlite in memory: the database as one bytes object (StaticPool: one shared connection)."""

    def __init__(self, db):
        self._raw = db.engine.raw_connection()  # held: a checkout given back resets (rolls back) the connection
        self.conn = self._raw.driver_connection

    def save(self):
        return self.conn.serialize()

    def changes(self) -> int:
        """Rows inserted, updated or deleted on the connection so far (rolled-back statements count too)."""
        return self.conn.total_changes

    def restore(self, data) -> None:
        self.conn.deserialize(data)


class Rows:
    """Any database: every table's rows, restored by emptying every table and inserting them again."""

    changes = None  # no cheap count of written rows: every probe maps the whole state

    def __init__(self, db):
        self.db = db
        self.tables = _tables()

    def save(self):
        with self.db.read() as conn:
            return ([(t, [dict(r._mapping) for r in conn.execute(t.select())]) for t in self.tables],
                    sequence_values(conn))

    def restore(self, data) -> None:
        tables, sequences = data
        with self.db.transaction() as conn:
            for t in reversed(self.tables):
                conn.execute(t.delete())
            for t, rows in tables:
                if rows:
                    conn.execute(t.insert(), rows)
            restore_sequences(conn, sequences)  # PostgreSQL's are not rows


def memory_sqlite(db) -> bool:
    url = db.engine.url
    return db.is_sqlite and url.database in (None, "", ":memory:")


class Savepoints:
    """`save()` the scheduler's server, `restore(point)` it (as often as wanted): the port's Savepoints."""

    def __init__(self, sched: Scheduler):
        self.sched = sched
        db = sched.world.db
        self.store = Serialized(db) if memory_sqlite(db) else Rows(db)
        self.kind = "serialize" if isinstance(self.store, Serialized) else "rows"
        self.changes = self.store.changes  # () -> rows written so far, or None where unknown

    def save(self):
        s = self.sched
        return self.store.save(), Memory.save(s.world, (s.world.db,)), s.faults

    def save_at(self, j: int, depth: int):
        """`save()`, as the walk asks for it (a driver's points are named by depth: harness.driver.points)."""
        return self.save()

    def restore(self, point) -> None:
        data, memory, faults = point
        self.store.restore(data)
        Memory.restore(memory)
        self.sched.faults = faults

    def mark(self):
        """Before a refusal probe: the rows written so far and the clock (None where rows are not counted)."""
        if self.changes is None:
            return None
        return self.changes(), self.sched.world.clock.now()

    def unchanged(self, mark, st: M.State) -> M.State | None:
        """After a probe that wrote no row and left the clock where it was: the database still maps to `st`
        (checked on arrival, and after every probe that wrote), so only the actors' memory is read."""
        s = self.sched
        if mark is None or self.changes() != mark[0] or s.world.clock.now() != mark[1]:
            return None
        return st._replace(faults=s.faults, **actor_fields(s.cfg, s.world))
