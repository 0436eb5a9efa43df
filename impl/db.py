"""The database: an engine from a URL, and the transaction discipline every atomic unit uses.

On sqlite, writers open with `BEGIN IMMEDIATE` so they serialize instead of failing at commit; file
databases use WAL so readers do not block the writer; `sqlite://` (in memory) shares one connection.
On PostgreSQL the same discipline: every write transaction (READ COMMITTED) first takes one
transaction-scoped advisory lock, `pg_advisory_xact_lock(WRITE_LOCK)`, so writers run one at a time and
each sees every earlier commit; a read transaction is a REPEATABLE READ, READ ONLY snapshot. Other
dialects are refused: the SQL is SQLAlchemy core, but the atomicity argument is made for these two only.
"""

from __future__ import annotations

import os
from contextlib import contextmanager, nullcontext
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
WRITE_LOCK = 0x636C61696D  # "claim": the advisory lock key of claimcheck's one-writer-at-a-time rule

R = TypeVar("R")


def make_engine(url: str | None = None, *, busy_timeout_s: float = 5.0, synchronous: str | None = None) -> Engine:
    """`synchronous` sets sqlite's PRAGMA synchronous (None keeps sqlite's default, FULL: a commit is
    durable once it returns, which claims need; NORMAL in WAL may lose the last commits on power loss).
    `busy_timeout_s` bounds a writer's wait for the write lock (sqlite's busy timeout; PostgreSQL's
    lock_timeout), after which it fails with OperationalError instead of waiting forever."""
    url = url or os.environ.get(URL_ENV) or DEFAULT_URL
    parsed = sa.engine.make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        # writers must be READ COMMITTED: under REPEATABLE READ the snapshot would be taken by the lock
        # statement itself, before the wait, and miss the commit of the writer it waited for
        return sa.create_engine(url, isolation_level="READ COMMITTED",
                                connect_args={"options": f"-c lock_timeout={max(1, int(busy_timeout_s * 1000))}"})
    if backend != "sqlite":
        raise ValueError(f"unsupported database {backend!r} in {parsed.render_as_string()}: "
                         "claimcheck runs on sqlite and PostgreSQL")
    memory = parsed.database in (None, "", ":memory:")
    if memory:
        engine = sa.create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    else:
        os.makedirs(os.path.dirname(os.path.abspath(parsed.database)), exist_ok=True)
        engine = sa.create_engine(url, connect_args={"timeout": busy_timeout_s})

    dbapi_module = engine.dialect.loaded_dbapi

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
        # on the DBAPI connection: through exec_driver_sql, SQLAlchemy's per-statement work cost more than
        # the BEGIN; an error is raised as SQLAlchemy raises it (a lock wait timing out: OperationalError)
        sql = conn.get_execution_options().get(_BEGIN, "BEGIN")
        dbapi = conn.connection.dbapi_connection
        try:
            dbapi.execute(sql)
        except dbapi_module.Error as exc:
            raise sa.exc.DBAPIError.instance(sql, (), exc, dbapi_module.Error, dialect=conn.dialect) from exc

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
    on_commit: Callable[[Connection], None] | None = None  # a hook run inside every write transaction, last

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

    @property
    def is_postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    def create_schema(self) -> None:
        """Create what is missing, under the write lock (two nodes starting at once do not race)."""
        with self.transaction() as conn:
            SQLModel.metadata.create_all(conn, tables=[t.__table__ for t in _TABLES])
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
                if self.is_postgresql:
                    conn.execute(_LOCK, {"key": WRITE_LOCK})
                yield conn
                if self.on_commit is not None:  # impl/history.py records the commit inside it (off by default)
                    self.on_commit(conn)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (a consistent snapshot; never writes)."""
        with self.engine.connect() as conn:
            with conn.begin():
                if self.is_postgresql:
                    conn.execute(_SNAPSHOT)
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


def guarded(conn: Connection):
    """The scope of ONE statement a constraint may refuse, without ending the caller's transaction.

    sqlite's default conflict resolution (ABORT) already backs out just the refused statement and keeps
    the transaction active, so a SAVEPOINT there only costs two statements; other dialects need one."""
    return nullcontext() if conn.dialect.name == "sqlite" else conn.begin_nested()


def next_id(conn: Connection, name: str) -> int:
    """Advance a durable sequence inside the caller's transaction (rolled back with it)."""
    if conn.execute(_ADVANCE, {"seq": name}).rowcount != 1:
        raise LookupError(f"sequence {name!r} missing: call Database.create_schema()")
    return conn.execute(_VALUE, {"seq": name}).scalar_one()


# built once (a SQLAlchemy expression per call cost more than the statement)
_ADVANCE = sa.update(schema.sequence_t).where(schema.sequence_t.c.name == sa.bindparam("seq")) \
    .values(value=schema.sequence_t.c.value + 1)
_VALUE = sa.select(schema.sequence_t.c.value).where(schema.sequence_t.c.name == sa.bindparam("seq"))


_LOCK = sa.text("SELECT pg_advisory_xact_lock(:key)")
_SNAPSHOT = sa.text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

_TABLES = (schema.ExecutionClaim, schema.Assistant, schema.SessionEvent, schema.SessionRecovery,
           schema.SessionInput, schema.WakeCounter, schema.WakeRow, schema.ExecutionHistory, schema.IdSequence)
