"""The lockstep campaign's databases: one fresh database per run from Init, cheaply (binding.server's
campaigns: harness.conformance.lockstep drives the machine; this is only the database lifecycle: open,
seed, restore, close).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile

from impl.db import Database, restore_sequences, sequence_values
from impl.schema import SEQUENCES

from binding.reads import Reader


class Databases:
    """A fresh database per example, on one long-lived engine and connection pool.

    Why: a new engine, file or connection per example cost more than the example's steps (SQLAlchemy
    compiles statements per engine; opening a sqlite connection runs its PRAGMAs; admitting the prompts
    is a transaction each). So the first example runs on an empty database, its World admits the
    prompts through the implementation, and `seed()` keeps every row; each later example gets the
    same database back by one transaction that empties every table and inserts those rows again.
    The default is a sqlite file (WAL) in a temporary folder; `synchronous` defaults to NORMAL:
    lockstep checks the protocol's semantics, not durability on power loss, and an fsync per commit
    was the largest single cost. `sqlite://` is one in-memory database; another URL is emptied first.
    """

    def __init__(self, url: str | None = None, *, synchronous: str | None = "NORMAL"):
        self.url = url
        self.synchronous = synchronous
        self._root: str | None = None
        self._db: Database | None = None
        self._seed: dict | None = None  # table -> rows, taken after the first example's set-up
        self.reader: Reader | None = None  # the state mapping's reads (binding.reads)

    def fresh(self) -> tuple[Database, bool]:
        """The database for the next example, and whether it already holds the seeded rows."""
        if self._db is None:
            self._db = self._open()
            self.reader = Reader(self._db)
            return self._db, False
        if self._seed is None:
            self._empty(self._db)
            return self._db, False
        self._restore()
        return self._db, True

    def seed(self) -> None:
        """Keep the rows the set-up wrote, to restore before every later example."""
        with self._db.read() as conn:
            if self._db.is_sqlite:  # as read by sqlite itself: put back by plain statements (_restore)
                cur = conn.connection.dbapi_connection.cursor()
                self._seed = {t: cur.execute(f"SELECT {_columns(t)} FROM {t.name}").fetchall() for t in _tables()}
            else:
                self._seed = {t: [dict(r._mapping) for r in conn.execute(t.select())] for t in _tables()}
            self._seed_sequences = sequence_values(conn)  # PostgreSQL's sequences are not rows

    def _restore(self) -> None:
        with self._db.transaction() as conn:
            if self._db.is_sqlite:  # on the DBAPI cursor: SQLAlchemy's per-statement work cost more than the rows
                cur = conn.connection.dbapi_connection.cursor()
                for t in reversed(_tables()):
                    # a table the run left empty is not emptied again: clearing it would still rewrite its
                    # pages, and the commit then writes them all to the WAL (most of a restore's cost)
                    if self._seed[t] or cur.execute(f"SELECT 1 FROM {t.name} LIMIT 1").fetchone() is not None:
                        cur.execute(f"DELETE FROM {t.name}")
                for t in _tables():
                    if self._seed[t]:
                        marks = ", ".join("?" * len(t.columns))
                        cur.executemany(f"INSERT INTO {t.name} ({_columns(t)}) VALUES ({marks})", self._seed[t])
                return
            for t in reversed(_tables()):
                conn.execute(t.delete())
            for t in _tables():
                if self._seed[t]:
                    conn.execute(t.insert(), self._seed[t])
            restore_sequences(conn, self._seed_sequences)  # PostgreSQL's are not rows

    @staticmethod
    def _empty(db: Database) -> None:
        with db.transaction() as conn:
            for t in reversed(_tables()):
                conn.execute(t.delete())
            restore_sequences(conn, dict.fromkeys(SEQUENCES, 0))
        db.create_schema()

    def _open(self) -> Database:
        if self.url is None:
            self._root = tempfile.mkdtemp(prefix="claimcheck-lockstep-")
            url = f"sqlite:///{os.path.join(self._root, 'lockstep.db')}"
        else:
            url = self.url
        db = Database(url, synchronous=self.synchronous)
        db.create_schema()
        if self.url is not None:
            self._empty(db)
        return db

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()
            self.reader = None
        if self._db is not None:
            self._db.dispose()
            self._db = None
        if self._root:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None


@functools.cache
def _tables():
    """Every table of the schema, parents before children (sorted once: sorting them cost as much as
    restoring them)."""
    from sqlmodel import SQLModel
    return tuple(SQLModel.metadata.sorted_tables)


@functools.cache
def _columns(t) -> str:
    return ", ".join(f'"{c.name}"' for c in t.columns)
