"""impl.prepared: a statement compiled once and run on the DBAPI cursor answers as `conn.execute` does;
and a sqlite file's transactions on the thread's kept connections (impl.db.Database._kept_connection)."""

import pytest
import sqlalchemy as sa

from impl import claims, events, inputs
from impl.db import Database
from impl.prepared import Rows, run
from impl.schema import assistant_t, claim_t, input_t


@pytest.fixture(params=["memory", "file"])
def db(request, tmp_path):
    d = Database("sqlite://") if request.param == "memory" else Database(f"sqlite:///{tmp_path / 'p.db'}")
    d.create_schema()
    yield d
    d.dispose()


CLAIM = dict(session_id="s1", execution_id=7, owner_id="n1", lease_expires_at=5, phase="running",
             assistant_id=None, recovery_error=None, created_seq=1)  # recovery_attempts: the column's default


def _both(conn, stmt, params, read):
    """The answer through SQLAlchemy and through `run`, in one transaction, rolled back between."""
    out = []
    for how in (lambda: conn.execute(stmt, params), lambda: run(conn, stmt, params)):
        savepoint = conn.begin_nested()
        out.append(read(how()))
        savepoint.rollback()
    return out


def test_answers_as_sqlalchemy(db):
    with db.transaction() as conn:
        run(conn, claims._INSERT, CLAIM)  # the scalar default filled in, as SQLAlchemy does
        conn.execute(assistant_t.insert(), dict(assistant_id="a1", session_id="s1", execution_id=7))
        conn.execute(input_t.insert(), dict(id="i1", session_id="s1", kind="prompt", src=1, admitted_seq=1))
        cases = [
            (claims._GET, {"session": "s1"}, lambda r: dict(r.mappings().first())),
            (claims._GET, {"session": "nope"}, lambda r: r.mappings().first()),
            (claims._SCANS[None], {"now": 9, "bound": 5, "grace": 0}, lambda r: [dict(x) for x in r.mappings()]),
            (claims._SCANS[True], {"now": 9, "bound": 5, "grace": 0}, lambda r: [dict(x) for x in r.mappings()]),
            (events._ASSISTANT, {"assistant": "a1"}, lambda r: dict(r.mappings().first())),  # booleans read back
            (inputs._SELECTABLE[False], {"id": "i1"}, lambda r: r.scalar_one()),
            (events._NEXT_SEQ, {"session": "s1"}, lambda r: r.scalar_one()),
            (events._CALLS, {"assistant": "a1"}, lambda r: [tuple(x) for x in r.all()]),
            (claims._TAKEOVER, dict(session="s1", execution=7, owner="n1", now=9, taker="r1", until=12, grace=0),
             lambda r: r.rowcount),  # a literal IN list, expanded as SQLAlchemy expands it
            (claims._RENEW, dict(session="s1", execution=7, owner="n1", now=9, until=12), lambda r: r.rowcount),
        ]
        for stmt, params, read in cases:
            a, b = _both(conn, stmt, params, read)
            assert a == b and type(a) is type(b), (stmt, a, b)
        row = conn.execute(claims._GET, {"session": "s1"}).mappings().first()
        assert row["recovery_attempts"] == 0
        assert run(conn, events._ASSISTANT, {"assistant": "a1"}).mappings().first()["started"] is True


def test_a_refused_statement_raises_as_sqlalchemy_and_the_transaction_goes_on(db):
    with db.transaction() as conn:
        run(conn, claims._INSERT, CLAIM)
        with pytest.raises(sa.exc.IntegrityError):
            run(conn, claims._INSERT, CLAIM)  # the primary key
        assert run(conn, claims._GET, {"session": "s1"}).mappings().first()["execution_id"] == 7
    with db.read() as conn:
        assert len(run(conn, sa.select(claim_t), {}).all()) == 1


def test_rows():
    r = Rows([(1, "a"), (2, "b")], ("n", "s"), -1)
    assert r.first() == (1, "a") and r.all() == [(1, "a"), (2, "b")] and list(r) == r.all()
    assert r.mappings().all() == [{"n": 1, "s": "a"}, {"n": 2, "s": "b"}] and r.scalars().all() == [1, 2]
    with pytest.raises(sa.exc.MultipleResultsFound):
        r.scalar_one()
    with pytest.raises(sa.exc.NoResultFound):
        Rows([], ("n",), -1).scalar_one()


def test_a_sqlite_file_keeps_each_threads_writer(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'w.db'}")
    db.create_schema()
    with db.transaction() as first:
        run(first, claims._INSERT, CLAIM)
    with pytest.raises(RuntimeError):
        with db.transaction() as conn:
            assert conn is first
            run(conn, claims._RENEW, dict(session="s1", execution=7, owner="n1", now=0, until=99))
            raise RuntimeError("rolled back")
    with db.transaction() as conn:  # the same connection, its transaction rolled back: nothing renewed
        assert conn is first and not conn.closed
        assert run(conn, claims._GET, {"session": "s1"}).mappings().first()["lease_expires_at"] == 5
    with db.read() as reader:  # reads keep a connection of their own, beside the writer's
        assert reader is not first
        with db.transaction() as conn:  # a write inside a read: the kept writer
            assert conn is first
        with db.read() as inner:  # a read inside a read: a pool checkout of its own
            assert inner is not reader
    with db.read() as again:
        assert again is reader
    db.dispose()
    assert first.closed and reader.closed


def test_a_forked_child_opens_connections_of_its_own(tmp_path):
    """A sqlite handle must not cross a fork: the child's first unit opens its own connection, and the
    parent's kept one still works after the child exits."""
    import os
    db = Database(f"sqlite:///{tmp_path / 'f.db'}")
    db.create_schema()
    with db.transaction() as parents:
        run(parents, claims._INSERT, CLAIM)
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only when its connection is a new one and the row is there
        ok = False
        try:
            with db.transaction() as conn:
                ok = conn is not parents and run(conn, claims._GET, {"session": "s1"}).first() is not None
        finally:
            os._exit(0 if ok else 1)
    _pid, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with db.transaction() as conn:
        assert conn is parents and run(conn, claims._GET, {"session": "s1"}).first() is not None
    db.dispose()
