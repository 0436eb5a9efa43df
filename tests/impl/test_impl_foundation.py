"""Clock, boundaries, ids, the database discipline, schema constraints, defect validation."""

import sqlalchemy as sa
import pytest

from impl import ids
from impl.boundaries import Boundaries, Recorder
from impl.clock import ManualClock, SystemClock
from impl.context import Context
from impl.db import Database
from impl.schema import claim_t, input_t
from spec import names as N


def test_manual_clock_moves_only_forward():
    clock = ManualClock(5)
    assert clock.now() == 5
    assert clock.advance(2) == 7
    clock.set(9)
    assert clock.now() == 9
    with pytest.raises(ValueError):
        clock.set(3)


def test_system_clock_ticks_and_never_runs_backwards():
    wall = iter([10.0, 10.9, 12.1, 11.0])
    clock = SystemClock(tick_seconds=0.5, source=lambda: next(wall))
    assert [clock.now() for _ in range(4)] == [20, 21, 24, 24]
    with pytest.raises(ValueError):
        SystemClock(tick_seconds=0)


def test_boundaries_are_registry_names_and_hooks_see_them():
    rec = Recorder()
    b = Boundaries(rec)
    b.hit("acquire.committed", session="s1")
    assert rec.hits == [("acquire.committed", {"session": "s1"})]
    with pytest.raises(KeyError):
        b.hit("acquire.comitted")
    Boundaries().hit("renew.committed")  # no hook: a no-op


def test_ids_are_deterministic_and_session_scoped():
    assert ids.continuation_id("s1", 3) == ids.continuation_id("s1", 3)
    assert ids.continuation_id("s1", 3) != ids.continuation_id("s2", 3)
    assert ids.continuation_id("a1", 2) != ids.continuation_id("a", 12)
    assert ids.assistant_execution(ids.assistant_id(42, 2)) == 42
    with pytest.raises(ValueError):
        ids.assistant_execution("cont-1-2")


def test_context_validates_defects():
    db = Database.memory()
    ctx = Context(db, ManualClock(), defects=frozenset(["renew-after-expiry"]))
    assert ctx.has("renew-after-expiry") and not ctx.has("step-started-window")
    with pytest.raises(ValueError):
        Context(db, ManualClock(), defects=frozenset(["renew-after-expirey"]))
    with pytest.raises(ValueError):
        Context(db, ManualClock(), lease_ticks=0)


def test_file_database_uses_wal(tmp_path):
    db = Database(f"sqlite:///{tmp_path}/c.db")
    db.create_schema()
    with db.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    db.dispose()


def test_writers_serialize_with_begin_immediate(tmp_path):
    url = f"sqlite:///{tmp_path}/c.db"
    first = Database(url)
    first.create_schema()
    from impl.db import make_engine
    second = Database(engine=make_engine(url, busy_timeout_s=0))
    with first.transaction():
        # a second writer cannot even begin while the first holds the write lock
        with pytest.raises(sa.exc.OperationalError, match="locked"):
            with second.transaction():
                pass
        with second.read() as conn:  # readers are not blocked (WAL)
            assert conn.execute(sa.select(sa.func.count()).select_from(claim_t)).scalar_one() == 0
    first.dispose(), second.dispose()


def test_other_databases_are_refused_in_one_line():
    from impl.db import make_engine
    with pytest.raises(ValueError, match="unsupported database 'mysql'.*sqlite and PostgreSQL"):
        make_engine("mysql://u@localhost/db")


def test_in_memory_database_is_shared_between_connections():
    db = Database.memory()
    with db.transaction() as conn:
        conn.execute(input_t.insert().values(id="i", session_id="s", kind="prompt", src=1, admitted_seq=1))
    with db.read() as conn:
        assert conn.execute(sa.select(input_t.c.id)).scalars().all() == ["i"]


@pytest.mark.backends()
def test_transaction_rolls_back_on_error():
    db = Database.memory()
    with pytest.raises(RuntimeError):
        with db.transaction() as conn:
            conn.execute(input_t.insert().values(id="i", session_id="s", kind="prompt", src=1, admitted_seq=1))
            raise RuntimeError("boom")
    with db.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(input_t)).scalar_one() == 0


@pytest.mark.backends()
@pytest.mark.parametrize("column,value", [
    ("phase", "paused"), ("phase", "none"),
])
def test_claim_phase_check_constraint(column, value):
    db = Database.memory()
    row = dict(session_id="s", execution_id=1, owner_id="n", lease_expires_at=1, phase="running", created_seq=1)
    with db.transaction() as conn:
        conn.execute(claim_t.insert().values(**row))
    with pytest.raises(sa.exc.IntegrityError):
        with db.transaction() as conn:
            conn.execute(sa.update(claim_t).values(**{column: value}))


@pytest.mark.backends()
@pytest.mark.parametrize("column,value", [("kind", "tool"), ("delivery", "push"), ("state", "done")])
def test_input_check_constraints(column, value):
    db = Database.memory()
    row = dict(id="i", session_id="s", kind="prompt", src=1, admitted_seq=1, delivery="queue", state="pending")
    row[column] = value
    with pytest.raises(sa.exc.IntegrityError):
        with db.transaction() as conn:
            conn.execute(input_t.insert().values(**row))


def test_registry_constants_cover_the_registry():
    from impl import registry as R
    bound = {v for k, v in vars(R).items() if k.isupper() and isinstance(v, str)}
    assert set(N.DEFECTS) <= bound
    assert set(N.BOUNDARIES) <= bound
