"""The state mapping's database read, on a connection of its own, skipped when nothing was committed.

Why: lockstep maps the implementation after every step and every refusal probe. Through SQLAlchemy a
read transaction (a pool checkout, BEGIN, COMMIT) cost more than its six SELECTs, and most refused
probes and many steps (a Tick, a crash, a runner's memory-only return) commit nothing at all.

On a sqlite file (lockstep's default database) `Reader` holds one pool connection that only ever reads:
each read is a plain BEGIN ... COMMIT on it (one snapshot, as `Database.read`), and the rows read last
are reused while sqlite's `PRAGMA data_version` on that connection is unchanged. sqlite changes that
value exactly when another connection committed a change to the database since (sqlite.org/pragma.html
#pragma_data_version), and every writer (the implementation's units, the seed's restore) commits on
another connection. The version is read before the read transaction begins, so a commit in between
changes it again and the next mapping reads anew: a reuse is never of older rows than the database's.
Elsewhere (sqlite in memory: one connection shared with the writers; PostgreSQL) every mapping reads
through `Database.read`, as before.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from impl.db import Database

X = TypeVar("X")


class Reader:
    """Reads `fn(cursor)` in one read transaction; on a sqlite file, reuses the last answer for the same
    key while the database's committed content is unchanged."""

    def __init__(self, db: Database):
        self.db = db
        url = db.engine.url
        self._raw = db.engine.raw_connection() if db.is_sqlite and url.database not in (None, "", ":memory:") \
            else None  # held: a pool checkout given back is reset
        self._conn = self._raw.driver_connection if self._raw is not None else None
        self._last: tuple | None = None  # (data_version, key, answer)
        self.reads = self.reuses = 0

    def read(self, key, fn: Callable[[object], X]) -> X:
        """`fn` on a DBAPI cursor inside a read transaction; `key` names what `fn` computes (a reused
        answer must have been computed by an equal key)."""
        if self._conn is None:
            with self.db.read() as conn:
                self.reads += 1
                return fn(conn.connection.dbapi_connection.cursor())
        cur = self._conn.cursor()
        cur.execute("PRAGMA data_version")
        (version,), = cur.fetchall()
        last = self._last
        if last is not None and last[0] == version and last[1] == key:
            self.reuses += 1
            return last[2]
        cur.execute("BEGIN")
        try:
            answer = fn(cur)
        finally:
            cur.execute("COMMIT")  # a read transaction: nothing to commit, it ends the snapshot
        self.reads += 1
        self._last = (version, key, answer)
        return answer

    def close(self) -> None:
        if self._raw is not None:
            self._raw.close()
            self._raw = self._conn = None
        self._last = None
