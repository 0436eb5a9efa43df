"""The lockstep campaign's databases: one fresh database per Hypothesis example, cheaply.

Moved out of harness.conformance.lockstep, which drives the machine; this is only the database lifecycle
(open, seed, restore, close).
"""

from __future__ import annotations

import os
import shutil
import tempfile

from impl.db import Database, restore_sequences, sequence_values
from impl.schema import SEQUENCES


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

    def fresh(self) -> tuple[Database, bool]:
        """The database for the next example, and whether it already holds the seeded rows."""
        if self._db is None:
            self._db = self._open()
            return self._db, False
        if self._seed is None:
            self._empty(self._db)
            return self._db, False
        self._restore()
        return self._db, True

    def seed(self) -> None:
        """Keep the rows the set-up wrote, to restore before every later example."""
        with self._db.read() as conn:
            self._seed = {t: [dict(r._mapping) for r in conn.execute(t.select())] for t in _tables()}
            self._seed_sequences = sequence_values(conn)

    def _restore(self) -> None:
        with self._db.transaction() as conn:
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
        if self._db is not None:
            self._db.dispose()
            self._db = None
        if self._root:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None


def _tables():
    """Every table of the schema, parents before children."""
    from sqlmodel import SQLModel
    return SQLModel.metadata.sorted_tables
