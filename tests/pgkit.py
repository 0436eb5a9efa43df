"""PostgreSQL for the tests: one server per test session (Debian's binaries, started by the fixture
`pg_server` in tests/conftest.py), and a fresh database with the schema for every `Database` a test
makes (`PgDatabases.new()`, a file copy of a template: a few milliseconds).

Where PostgreSQL cannot start, its tests skip with the reason; under CI they fail instead (tests/cikit.py),
so a CI run can never pass without having run them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Mapping

from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

import cikit
from binding import pgserver
from impl.db import _TABLES, Database
from impl.schema import SEQUENCES, sequence_t

SCHEMA_TEMPLATE = "claimcheck_schema"


def unavailable(reason: str, env: Mapping[str, str] | None = None):
    """Skip (locally) or fail (CI) the test that needed PostgreSQL."""
    cikit.unavailable(f"PostgreSQL unavailable: {reason}", "the PostgreSQL tests", env)


def start_server(base_dir: Path | None = None, *, bin_dir: Path | str | None = None,
                 env: Mapping[str, str] | None = None) -> pgserver.PgServer:
    """Start a server, or skip/fail with the reason. The default directory is a new one under the
    system temp dir (its parents must be searchable by the `postgres` user, which pytest's are not)."""
    base = base_dir if base_dir is not None else Path(tempfile.mkdtemp(prefix="claimcheck-pg-"))
    try:
        return pgserver.start(base, bin_dir=bin_dir)
    except pgserver.PgUnavailable as exc:
        if base_dir is None:
            import shutil
            shutil.rmtree(base, ignore_errors=True)
        unavailable(str(exc), env)


# what makes two databases' schemas the same: relations, constraints (and whether they are validated),
# triggers; a test that changed any of them (faults.force_claim re-adds a CHECK as NOT VALID) leaves a
# database that is dropped instead of reused
_FINGERPRINT = """
SELECT md5(coalesce(string_agg(x, ',' ORDER BY x), '')) FROM (
  SELECT c.relname || ':' || c.relkind::text AS x FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
  UNION ALL SELECT conname || ':' || convalidated::text || ':' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace
  UNION ALL SELECT tgname FROM pg_trigger WHERE NOT tgisinternal) q"""


class PgPool:
    """Databases holding the current schema, reused from test to test: a returned database is emptied
    (rows deleted, sequences restarted: well under a millisecond) unless its schema changed, then it is
    dropped. Creating a database costs 0.1-0.2 s; emptying one costs nothing."""

    def __init__(self, server: pgserver.PgServer):
        self.server = server
        self.free: list[str] = []
        self.server.drop_database(SCHEMA_TEMPLATE)
        db = Database(self.server.create_database(SCHEMA_TEMPLATE, template=pgserver.TEMPLATE))
        db.create_schema()
        db.dispose()
        self.fingerprint = self._query(SCHEMA_TEMPLATE, _FINGERPRINT)
        tables = [t.__table__ for t in _TABLES]
        self._reset = "; ".join(
            ["SET lock_timeout = '5s'"]
            + [f'DELETE FROM "{t.name}"' for t in reversed(SQLModel.metadata.sorted_tables) if t in tables]
            + ["SELECT setval(c.oid, 1, false) FROM pg_class c WHERE c.relkind = 'S' "
               "AND c.relnamespace = 'public'::regnamespace"]
            + [f"INSERT INTO {sequence_t.name} (name, value) VALUES " + ", ".join(f"('{n}', 0)" for n in SEQUENCES)])

    def _query(self, database: str, sql: str):
        conn = self.server.connect(database)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return cur.fetchone()[0] if cur.description else None
        finally:
            conn.close()

    def take(self) -> str:
        """The name of an empty database with the schema (the caller gives it back)."""
        if self.free:
            return self.free.pop()
        return make_url(self.server.fresh_database(template=SCHEMA_TEMPLATE)).database

    def give_back(self, name: str) -> None:
        """Empty the database for the next test, or drop it when its schema changed (or emptying failed)."""
        try:
            if self._query(name, _FINGERPRINT) == self.fingerprint:
                self._query(name, self._reset)
                self.free.append(name)
                return
        except Exception:  # noqa: BLE001 - a database we cannot empty is dropped instead
            pass
        self.server.drop_database(name)


class PgDatabases:
    """One test's databases, taken from the pool (`.new()` gives a `Database`); `close()` disposes what
    it made and gives the databases back."""

    def __init__(self, pool: PgPool):
        self.pool = pool
        self.made: list[tuple[Database | None, str]] = []

    def url(self) -> str:
        """The URL of a database with the schema for this test (dispose what you open on it)."""
        name = self.pool.take()
        self.made.append((None, name))
        return self.pool.server.url_for(name)

    def new(self) -> Database:
        """A new `Database` with the schema (the PostgreSQL twin of `Database.memory()`)."""
        name = self.pool.take()
        db = Database(self.pool.server.url_for(name))
        self.made.append((db, name))
        return db

    def close(self) -> None:
        for db, _ in self.made:
            if db is not None:
                db.dispose()
        for _, name in self.made:
            self.pool.give_back(name)
        self.made.clear()
