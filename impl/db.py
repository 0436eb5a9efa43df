"""The database: an engine from a URL, and the transaction discipline every atomic unit uses.

On sqlite, writers open with `BEGIN IMMEDIATE` so they serialize instead of failing at commit; file
databases use WAL so readers do not block the writer; `sqlite://` (in memory) shares one connection.
Other dialects get a plain transaction; the SQL is SQLAlchemy core only, so it stays portable.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool
from sqlmodel import SQLModel

from . import schema
from .results import Abort, Result

DEFAULT_URL = "sqlite:///.claimcheck/claimcheck.db"
URL_ENV = "CLAIMCHECK_DATABASE_URL"
_BEGIN = "claimcheck_begin"

R = TypeVar("R")


def make_engine(url: str | None = None, *, busy_timeout_s: float = 5.0, synchronous: str | None = None) -> Engine:
    """`synchronous` sets sqlite's PRAGMA synchronous (None keeps sqlite's default, FULL: a commit is
    durable once it returns, which claims need; NORMAL in WAL may lose the last commits on power loss)."""
    url = url or os.environ.get(URL_ENV) or DEFAULT_URL
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url)
    memory = parsed.database in (None, "", ":memory:")
    if memory:
        engine = sa.create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    else:
        os.makedirs(os.path.dirname(os.path.abspath(parsed.database)), exist_ok=True)
        engine = sa.create_engine(url, connect_args={"timeout": busy_timeout_s})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_connection.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        if not memory:
            cur.execute("PRAGMA journal_mode=WAL")
        if synchronous is not None:
            cur.execute(f"PRAGMA synchronous={synchronous}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql(conn.get_execution_options().get(_BEGIN, "BEGIN"))

    return engine


def dialect_insert(conn: Connection, table: sa.Table):
    """An INSERT that supports ON CONFLICT clauses on sqlite and PostgreSQL."""
    name = conn.dialect.name
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        raise NotImplementedError(f"ON CONFLICT on {name}")
    return insert(table)


class Database:
    def __init__(self, url: str | None = None, *, engine: Engine | None = None, **engine_options):
        self.engine = engine or make_engine(url, **engine_options)

    @classmethod
    def memory(cls) -> "Database":
        db = cls("sqlite://")
        db.create_schema()
        return db

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    def create_schema(self) -> None:
        SQLModel.metadata.create_all(self.engine, tables=[t.__table__ for t in _TABLES])
        with self.transaction() as conn:
            have = set(conn.execute(sa.select(schema.sequence_t.c.name)).scalars())
            for name in schema.SEQUENCES:
                if name not in have:
                    conn.execute(schema.sequence_t.insert().values(name=name, value=0))

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction: commits on exit, rolls back on any exception."""
        with self.engine.connect() as conn:
            if self.is_sqlite:
                conn.execution_options(**{_BEGIN: "BEGIN IMMEDIATE"})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (a consistent snapshot; never writes)."""
        with self.engine.connect() as conn:
            with conn.begin():
                yield conn

    def atomic(self, body: Callable[[Connection], R]) -> R | Result:
        """Run `body` in one write transaction; `Abort(result)` rolls it back and returns `result`."""
        try:
            with self.transaction() as conn:
                return body(conn)
        except Abort as abort:
            return abort.result

    def dispose(self) -> None:
        self.engine.dispose()


def next_id(conn: Connection, name: str) -> int:
    """Advance a durable sequence inside the caller's transaction (rolled back with it)."""
    t = schema.sequence_t
    changed = conn.execute(sa.update(t).where(t.c.name == name).values(value=t.c.value + 1)).rowcount
    if changed != 1:
        raise LookupError(f"sequence {name!r} missing: call Database.create_schema()")
    return conn.execute(sa.select(t.c.value).where(t.c.name == name)).scalar_one()


_TABLES = (schema.ExecutionClaim, schema.Assistant, schema.SessionEvent, schema.SessionRecovery,
           schema.SessionInput, schema.WakeCounter, schema.ExecutionHistory, schema.IdSequence)
