"""The database: an engine from a URL, and the transaction discipline every atomic unit uses.

On sqlite, writers open with `BEGIN IMMEDIATE` so they serialize instead of failing at commit; file
databases use WAL so readers do not block the writer; `sqlite://` (in memory) shares one connection.
On PostgreSQL writers run concurrently at READ COMMITTED, one at a time per Session: a write transaction
names the Sessions it writes (`sessions=`, or `lock_session` once it has read which) and first takes a
transaction-scoped advisory lock per Session, in a fixed order (`pg_lock="session"`, the default); the
wake rows, one queue shared by every Session, have a lock of their own (`wakes=True`). Everything
across Sessions is a compare-and-swap predicate or a unique constraint, and ids come from PostgreSQL
sequences (`next_id`). A deadlock or serialization failure rolls the whole unit back and `atomic` runs it
again as a fresh attempt. `pg_lock="global"` is the former single-writer mode (one advisory lock,
`WRITE_LOCK`, for every write), kept only for the side-by-side benchmark (ci/bench_pg_writers.py). A
read transaction is a REPEATABLE READ, READ ONLY snapshot. Other dialects are refused: the SQL is
SQLAlchemy core, but the atomicity argument is made for these two only.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterable, Iterator, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool
from sqlmodel import SQLModel

from . import schema
from .prepared import run
from .results import Abort, Result

DEFAULT_URL = "sqlite:///.claimcheck/claimcheck.db"
URL_ENV = "CLAIMCHECK_DATABASE_URL"
_BEGIN = "claimcheck_begin"
WRITE_LOCK = 0x636C61696D  # "claim": the advisory lock key of the global mode's one-writer-at-a-time rule
LOCK_CLASS = 0x636C61  # "cla": the first key of the per-Session advisory locks (the second: hashtext of the Session)
WAKE_LOCK = "#wakes"  # the wake rows' lock, taken as a Session's (a name no Session of the harness has)
PG_LOCKS = ("session", "global")
PG_LOCK_ENV = "CLAIMCHECK_PG_LOCK"
RETRIES = 20  # fresh attempts of one atomic unit after a deadlock or serialization failure
_RETRIED = ("40P01", "40001")  # deadlock_detected, serialization_failure

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

    def __init__(self, url: str | None = None, *, engine: Engine | None = None, pg_lock: str | None = None,
                 **engine_options):
        self.engine = engine or make_engine(url, **engine_options)
        pg_lock = pg_lock or os.environ.get(PG_LOCK_ENV) or "session"
        if pg_lock not in PG_LOCKS:
            raise ValueError(f"pg_lock must be one of {', '.join(PG_LOCKS)}, not {pg_lock!r}")
        self.pg_lock = pg_lock
        self.retries = 0  # units run again after a deadlock or serialization failure
        # on a sqlite file each thread keeps its connections between transactions (`_kept_connection`)
        url = self.engine.url
        self._keep = self.is_sqlite and url.database not in (None, "", ":memory:")
        self._by_thread = threading.local()
        self._kept: list[Connection] = []
        self._kept_lock = threading.Lock()
        self._pid = os.getpid()
        if self.is_sqlite:  # every write transaction opens with BEGIN IMMEDIATE (the option set once)
            self._write_engine = self.engine.execution_options(**{_BEGIN: "BEGIN IMMEDIATE"})

    @property
    def per_session(self) -> bool:
        """Writers are serialized per Session (PostgreSQL's default), not one at a time."""
        return self.is_postgresql and self.pg_lock == "session"

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
        """Create what is missing, under the global write lock (two nodes starting at once do not race)."""
        with self.transaction(schema_change=True) as conn:
            SQLModel.metadata.create_all(conn, tables=[t.__table__ for t in _TABLES])
            have = set(conn.execute(sa.select(schema.sequence_t.c.name)).scalars())
            for name in schema.SEQUENCES:
                if name not in have:
                    conn.execute(schema.sequence_t.insert().values(name=name, value=0))
                if self.is_postgresql:
                    conn.exec_driver_sql(f"CREATE SEQUENCE IF NOT EXISTS {pg_sequence(name)}")

    @contextmanager
    def transaction(self, *, sessions: Iterable[str] = (), wakes: bool = False,
                    schema_change: bool = False) -> Iterator[Connection]:
        """One write transaction: commits on exit, rolls back on any exception. On PostgreSQL it first takes
        the locks of `sessions` (and of the wake rows with `wakes`), or the global write lock (the global
        mode, or a `schema_change`)."""
        with self._kept_connection(write=True) as conn:
            with conn.begin():
                held = conn.info[_HELD] = Held(self.per_session and not schema_change)
                try:
                    if self.is_postgresql and not held.per_session:
                        conn.execute(_LOCK, {"key": WRITE_LOCK})
                    elif held.per_session:
                        lock_session(conn, *sessions, *((WAKE_LOCK,) if wakes else ()))
                    yield conn
                    if self.on_commit is not None:  # impl/history.py records the commit inside it (off by default)
                        self.on_commit(conn)
                finally:
                    if not conn.invalidated:  # a dropped connection's info cannot be read: it would raise
                        conn.info.pop(_HELD, None)  # PendingRollbackError and hide the error that dropped it

    @contextmanager
    def _kept_connection(self, *, write: bool) -> Iterator[Connection]:
        """A connection for one write (`write`) or read transaction. On a sqlite file each thread keeps one
        of each between transactions (a pool checkout and return, with their events and reset, cost more
        than most units' statements); the transaction on it is the same BEGIN IMMEDIATE (BEGIN) ... COMMIT.
        Elsewhere, or while the thread's kept one is busy (a transaction inside another), a pool checkout
        as before."""
        engine = self._write_engine if write and self.is_sqlite else self.engine
        slot = "writer" if write else "reader"
        if self._pid != os.getpid():  # a forked child never uses its parent's sqlite handles: left unclosed
            self._by_thread, self._kept, self._kept_lock, self._pid = threading.local(), [], threading.Lock(), os.getpid()
        conn = getattr(self._by_thread, slot, None) if self._keep else None
        if not self._keep or conn is not None and not conn.closed and conn.in_transaction():
            with engine.connect() as conn:
                yield conn
            return
        if conn is None or conn.closed or conn.invalidated:
            if conn is not None:
                self._drop(conn)
            conn = engine.connect()
            setattr(self._by_thread, slot, conn)
            with self._kept_lock:
                self._kept.append(conn)
        try:
            yield conn
        finally:
            if conn.invalidated or conn.in_transaction():  # never kept in a state the next unit would inherit
                self._drop(conn)

    def _drop(self, conn: Connection) -> None:
        for slot in ("writer", "reader"):
            if getattr(self._by_thread, slot, None) is conn:
                setattr(self._by_thread, slot, None)
        with self._kept_lock:
            if conn in self._kept:
                self._kept.remove(conn)
        conn.close()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (a consistent snapshot; never writes)."""
        with self._kept_connection(write=False) as conn:
            with conn.begin():
                if self.is_postgresql:
                    conn.execute(_SNAPSHOT)
                yield conn

    def atomic(self, body: Callable[[Connection], R], *, sessions: Iterable[str] = (),
               wakes: bool = False) -> R | Result:
        """Run `body` in one write transaction (holding the locks of `sessions`, and of the wake rows with
        `wakes`); `Abort(result)` rolls it back and returns `result`. A deadlock or serialization failure
        (PostgreSQL) rolls the whole attempt back and runs `body` again in a fresh transaction: a unit is
        never half-applied, and bodies keep nothing of a failed attempt but what they recompute."""
        sessions = tuple(sessions)
        for attempt in range(RETRIES + 1):
            try:
                with self.transaction(sessions=sessions, wakes=wakes) as conn:
                    return body(conn)
            except Abort as abort:
                return abort.result
            except sa.exc.DBAPIError as exc:
                if attempt == RETRIES or getattr(exc.orig, "pgcode", None) not in _RETRIED:
                    raise
                self.retries += 1
        raise AssertionError("unreachable")

    def dispose(self) -> None:
        with self._kept_lock:
            kept, self._kept = self._kept, []
        for conn in kept:
            conn.close()
        self._by_thread = threading.local()
        self.engine.dispose()


class Held:
    """The locks one write transaction holds (kept in `conn.info` while it runs): the history hook records
    exactly the Sessions locked (impl/history.py)."""

    def __init__(self, per_session: bool):
        self.per_session = per_session
        self.sessions: set[str] = set()  # WAKE_LOCK among them when the wake rows' lock is held

    @property
    def wakes(self) -> bool:
        return WAKE_LOCK in self.sessions


def held(conn: Connection) -> Held | None:
    """The locks of the write transaction running on `conn` (None outside one)."""
    return conn.info.get(_HELD)


def lock_session(conn: Connection, *sessions: str) -> None:
    """Serialize this transaction with every other writer of these Sessions (per-Session mode on
    PostgreSQL; a no-op on sqlite and in the global mode, where every writer is alone anyway). Locks are
    taken in one statement, ordered by their keys, and held until commit or rollback. A unit that learns
    its Session only from a read (acquire: the input names it) calls this, then reads again: at READ
    COMMITTED every statement after the lock sees the last commit of the Session's previous writer."""
    h = held(conn)
    if h is None or not h.per_session:
        return
    new = sorted(set(sessions) - h.sessions)
    if new:
        conn.execute(_SESSION_LOCKS, {"class": LOCK_CLASS, "names": new})
        h.sessions.update(new)


def pg_sequence(name: str) -> str:
    return f"claimcheck_{name}_seq"


def sequence_value(conn: Connection, name: str) -> int:
    """The last value `next_id(name)` issued (0: none yet)."""
    if conn.dialect.name == "postgresql":
        return conn.exec_driver_sql(f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END "
                                    f"FROM {pg_sequence(name)}").scalar_one()
    return conn.execute(_VALUE, {"seq": name}).scalar_one()


def sequence_values(conn: Connection) -> dict[str, int]:
    """Every PostgreSQL sequence's last issued value (what `restore_sequences` puts back); none on sqlite,
    whose sequences are rows of `id_sequence`, saved and restored with the rows."""
    if conn.dialect.name != "postgresql":
        return {}
    return {name: sequence_value(conn, name) for name in schema.SEQUENCES}


def restore_sequences(conn: Connection, values: dict[str, int]) -> None:
    """Put sequences back to what `sequence_values` read (a harness restoring a saved database: the
    PostgreSQL sequences are not rows, and `nextval` is not rolled back). sqlite's are rows of
    `id_sequence`, restored with the rows."""
    if conn.dialect.name != "postgresql":
        return
    for name, value in values.items():
        conn.exec_driver_sql(f"SELECT setval('{pg_sequence(name)}', {max(1, int(value))}, {bool(value)})")


def guarded(conn: Connection):
    """The scope of ONE statement a constraint may refuse, without ending the caller's transaction.

    sqlite's default conflict resolution (ABORT) already backs out just the refused statement and keeps
    the transaction active, so a SAVEPOINT there only costs two statements; other dialects need one."""
    return nullcontext() if conn.dialect.name == "sqlite" else conn.begin_nested()


def next_id(conn: Connection, name: str) -> int:
    """Advance a durable sequence. On sqlite a row of `id_sequence`, inside the caller's transaction
    (rolled back with it): dense. On PostgreSQL a sequence (`nextval`, never rolled back, so a unit that
    rolls back after drawing burns its value): unique and increasing, not dense and, across Sessions, not
    in commit order. That is all the protocol asks of these ids (execution ids must be unique: recovery
    rows and history are keyed by them; `claim` and `input` order scans and admissions), and units draw
    only once they will commit (acquire checks its Session's claim first), so a single writer still sees
    dense ids. A table row would be one hot row every Session's writers queue on."""
    if conn.dialect.name == "postgresql":
        return conn.exec_driver_sql(f"SELECT nextval('{pg_sequence(name)}')").scalar_one()
    if run(conn, _ADVANCE, {"seq": name}).rowcount != 1:
        raise LookupError(f"sequence {name!r} missing: call Database.create_schema()")
    return run(conn, _VALUE, {"seq": name}).scalar_one()


# built once (a SQLAlchemy expression per call cost more than the statement)
_ADVANCE = sa.update(schema.sequence_t).where(schema.sequence_t.c.name == sa.bindparam("seq")) \
    .values(value=schema.sequence_t.c.value + 1)
_VALUE = sa.select(schema.sequence_t.c.value).where(schema.sequence_t.c.name == sa.bindparam("seq"))


_LOCK = sa.text("SELECT pg_advisory_xact_lock(:key)")
_SESSION_LOCKS = sa.text("SELECT count(pg_advisory_xact_lock(:class, k)) FROM "
                         "(SELECT DISTINCT hashtext(n) AS k FROM unnest(CAST(:names AS text[])) AS n ORDER BY k) AS o")
_HELD = "claimcheck_held"
_SNAPSHOT = sa.text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")

_TABLES = (schema.ExecutionClaim, schema.Assistant, schema.SessionEvent, schema.SessionRecovery,
           schema.SessionInput, schema.WakeRow, schema.ExecutionHistory, schema.IdSequence)
