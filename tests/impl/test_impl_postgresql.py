"""The transaction discipline on PostgreSQL (impl/db.py): writers of one Session one at a time under its
advisory lock (or, in the global mode, all writers under one), each seeing every earlier commit of that
Session; writers of other Sessions never wait for them; readers on a REPEATABLE READ, READ ONLY snapshot,
never blocked."""

import threading
import time

import pytest
import sqlalchemy as sa

from impl.db import Database, make_engine
from impl.schema import SEQUENCES, claim_t, input_t, sequence_t

pytestmark = pytest.mark.backends("postgresql")


def count_inputs(conn) -> int:
    return conn.execute(sa.select(sa.func.count()).select_from(input_t)).scalar_one()


def admit(conn, iid: str) -> None:
    conn.execute(input_t.insert().values(id=iid, session_id="s", kind="prompt", src=1, admitted_seq=1))


@pytest.mark.parametrize("mode", ["session", "global"])
def test_writers_serialize_and_readers_are_not_blocked(mode):
    first = Database.memory()
    second = Database(engine=make_engine(first.engine.url.render_as_string(hide_password=False), busy_timeout_s=0.2),
                      pg_lock=mode)
    first.pg_lock = mode
    try:
        with first.transaction(sessions=["s"]):
            # a second writer of the Session waits for its lock, then gives up (lock_timeout = busy_timeout_s)
            with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
                with second.transaction(sessions=["s"]):
                    pass
            if mode == "session":  # a writer of another Session does not wait
                with second.transaction(sessions=["t"]) as conn:
                    admit(conn, "t1")
            else:
                with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
                    with second.transaction(sessions=["t"]):
                        pass
            with second.read() as conn:
                assert count_inputs(conn) == (1 if mode == "session" else 0)
    finally:
        second.dispose()


def test_a_writer_that_waited_sees_the_commit_it_waited_for():
    """Writers are READ COMMITTED: under REPEATABLE READ the lock statement would fix the snapshot before
    the wait, and the second writer would not see the first one's row."""
    db = Database.memory()
    locked, seen = threading.Event(), []

    def first():
        with db.transaction(sessions=["s"]) as conn:
            admit(conn, "i1")
            locked.set()
            time.sleep(0.3)

    t = threading.Thread(target=first)
    t.start()
    assert locked.wait(5)
    with db.transaction(sessions=["s"]) as conn:  # waits for `first` to commit
        seen.append(count_inputs(conn))
    t.join()
    assert seen == [1]


def test_read_is_a_read_only_snapshot():
    db = Database.memory()
    with db.read() as conn:
        assert count_inputs(conn) == 0
        with db.transaction() as w:
            admit(w, "i1")
        assert count_inputs(conn) == 0  # the snapshot does not move within one read
    with db.read() as conn:
        assert count_inputs(conn) == 1
        with pytest.raises(sa.exc.DBAPIError, match="read-only transaction"):
            admit(conn, "i2")


def test_read_modify_write_from_many_threads_loses_no_update():
    """A plain SELECT then UPDATE in each write transaction (no row lock of its own): the Session's lock
    alone makes it exact (under READ COMMITTED without it, concurrent writers lose updates)."""
    db = Database.memory()
    t = sequence_t

    def bump(conn):
        value = conn.execute(sa.select(t.c.value).where(t.c.name == "input")).scalar_one()
        time.sleep(0.001)
        conn.execute(sa.update(t).where(t.c.name == "input").values(value=value + 1))

    def worker():
        for _ in range(15):
            db.atomic(bump, sessions=["s"])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    with db.read() as conn:
        assert conn.execute(sa.select(t.c.value).where(t.c.name == "input")).scalar_one() == 60


def test_clock_columns_are_64_bit():
    db = Database.memory()
    far = 2 ** 40  # millisecond ticks of today's wall clock overflow a 32-bit integer
    with db.transaction() as conn:
        conn.execute(claim_t.insert().values(session_id="s", execution_id=1, owner_id="n", lease_expires_at=far,
                                             phase="running", created_seq=1))
    with db.read() as conn:
        assert conn.execute(sa.select(claim_t.c.lease_expires_at)).scalar_one() == far


def test_two_nodes_creating_the_schema_at_once_do_not_race(pg_server):
    url = pg_server.fresh_database(prefix="schema")  # empty: no tables
    dbs = [Database(url) for _ in range(3)]
    errors = []

    def create(db):
        try:
            db.create_schema()
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=create, args=(db,)) for db in dbs]
    try:
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert errors == []
        with dbs[0].read() as conn:
            assert sorted(conn.execute(sa.select(sequence_t.c.name)).scalars()) == sorted(SEQUENCES)
    finally:
        for db in dbs:
            db.dispose()
        pg_server.drop_database(sa.engine.make_url(url).database)


def test_acquire_takes_the_lock_of_the_session_its_input_names():
    """Acquire learns its Session from the input it reads, then locks it (and reads again): while another
    writer holds s1, acquiring s1's prompt waits (here: gives up), and acquiring s2's does not wait."""
    from impl.clock import ManualClock
    from impl.context import Context
    from impl.inputs import InputStore
    from impl.node import Node
    db = Database.memory()
    url = db.engine.url.render_as_string(hide_password=False)
    impatient = Database(engine=make_engine(url, busy_timeout_s=0.2))
    try:
        inputs = InputStore(Context(db, ManualClock()))
        p1, p2 = inputs.admit_prompt("s1", 1), inputs.admit_prompt("s2", 1)
        node = Node(impatient, ManualClock(), "n1", lease_ticks=5)
        with db.transaction(sessions=["s1"]):
            with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
                node.acquire(p1)
            assert node.acquire(p2)
        assert node.runner.session_id == "s2"
    finally:
        impatient.dispose()


@pytest.mark.parametrize("mode", ["session", "global"])
def test_a_dropped_connection_raises_the_database_error_not_a_pending_rollback(mode):
    """A server that drops a writer's connection mid-transaction (stress's `pg_terminate_backend` fault)
    surfaces as the DBAPI error that dropped it, which callers treat as transient (impl/recovery.py
    TRANSIENT): not as SQLAlchemy's PendingRollbackError, which the recovery worker would take for a
    malformed row and quarantine (QuarantineOnlyMalformed). The transaction's clean-up must not touch the
    dead connection."""
    db = Database.memory()
    db.pg_lock = mode
    killer = Database(engine=make_engine(db.engine.url.render_as_string(hide_password=False)))

    def body(conn):
        pid = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
        with killer.engine.connect() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        conn.execute(sa.text("SELECT 1"))

    try:
        with pytest.raises(sa.exc.DBAPIError) as caught:
            db.atomic(body, sessions=["s"])
        assert not isinstance(caught.value, sa.exc.PendingRollbackError)
        with db.transaction(sessions=["s"]) as conn:  # the pool hands out a live connection afterwards
            admit(conn, "after")
    finally:
        killer.dispose()
        db.dispose()
