"""PostgreSQL's concurrent writers (impl/db.py, per-Session mode) and their commit history
(impl/history_sessions.py) checked by harness/stress/checker.py.

(a) a recorded twin walk on PostgreSQL writes a per-Session history (seqs from a sequence, each commit
    the Sessions it locked) that the checker walks with no violation;
(b) the per-Session lock is needed: two writers of one Session interleaved by hand on two connections,
    with the lock statement weakened to one that locks nothing, record a history the checker rejects (one admission's prompt is
    missing from its record, and the fold differs from the database); with the lock, the second writer
    cannot start until the first committed, and the same two admissions check clean;
(c) a deadlock or serialization failure reruns the whole unit once more, never half-applied.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
import sqlalchemy as sa

from binding.stress import history
from harness.stress.checker import check_db
from harness.stress.records import ADMIT, meta_for
import impl.db
from impl.db import Database, make_engine
from impl.history import ENVIRONMENT, PER_SESSION, HistoryRecorder, read_meta
from impl.inputs import _insert_prompt
from impl.schema import input_t
from spec import configs
from stresskit import record_walk

CI = configs.CONFIGS["ci"]


def test_a_recorded_walk_on_postgresql_checks_clean(pg_databases):
    from spec import names as N
    commits, actions = 0, set()
    for cfg, seed in [(c, k) for c in (CI, configs.CONFIGS["sessions"]) for k in range(4)]:
        rng = random.Random(seed)

        def choose(options):  # the environment's unfair steps (Tick, faults, cancels) less often
            weights = [1.0 if N.ACTIONS[name].fair else 0.2 for name, _, _ in options]
            return rng.choices(options, weights)[0]
        rs = record_walk(cfg, seed, 60, db=pg_databases.new(), choose=choose)
        assert read_meta(rs.db)["history"] == PER_SESSION
        ch = check_db(history(rs.db))
        assert ch.report.violations == [], [f.line() for f in ch.report.violations]
        assert ch.report.inputs.get("lost", 0) == 0
        commits += ch.report.commits
        actions |= {a for a in ch.report.counts if a in N.ACTIONS}
    assert commits > 50 and {"Acquire", "CancelRequest", "RecoveryTakeover", "RecoveryConvert"} <= actions, (commits, actions)


def _two_writers(pg_databases, timeout_s: float = 5.0):
    url = pg_databases.url()
    a = Database(url)
    b = Database(engine=make_engine(url, busy_timeout_s=timeout_s))
    meta = meta_for(replace(CI, sessions=("s1",)), source="test")
    rec_a = HistoryRecorder.install(a, "a", meta=meta)
    rec_b = HistoryRecorder.attach(b, "b")
    return a, b, rec_a, rec_b


def _admit(db, rec, number: int, sessions):
    """An admission of prompt `number` of s1 as one write unit, its transaction left open (a generator:
    the first next() runs the body, the second commits)."""
    with rec.step(ENVIRONMENT, ADMIT, {"s": "s1"}, {}, 0):
        with db.transaction(sessions=sessions) as conn:
            _insert_prompt(conn, "s1", number, "queue", True)
            yield
    yield


def test_without_the_session_lock_two_writers_record_a_history_the_checker_rejects(pg_databases, monkeypatch):
    # weakened: each unit names its Session (so the hook records it), but the lock statement locks nothing
    monkeypatch.setattr(impl.db, "_SESSION_LOCKS", sa.text("SELECT :class, CAST(:names AS text[])"))
    a, b, rec_a, rec_b = _two_writers(pg_databases)
    try:
        first = _admit(a, rec_a, 1, sessions=["s1"])
        next(first)  # prompt 1 inserted (its stamp drawn), not committed
        second = _admit(b, rec_b, 2, sessions=["s1"])
        next(second)
        next(second)  # prompt 2 commits first, its record moves the Session's input mark past prompt 1's stamp
        next(first)  # prompt 1 commits; its record misses its own prompt
        with a.read() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(input_t)).scalar_one() == 2
        ch = check_db(history(a))
        messages = [f.message for f in ch.report.violations]
        assert any("an admission must add exactly" in m for m in messages), messages
        assert any("differs from the final database" in m for m in messages), messages
    finally:
        a.dispose()
        b.dispose()


def test_with_the_session_lock_the_second_writer_waits_and_the_history_checks_clean(pg_databases):
    a, b, rec_a, rec_b = _two_writers(pg_databases, timeout_s=0.2)
    try:
        first = _admit(a, rec_a, 1, sessions=["s1"])
        next(first)
        with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
            next(_admit(b, rec_b, 2, sessions=["s1"]))  # cannot start while the first holds s1
        next(first)
        second = _admit(b, rec_b, 2, sessions=["s1"])
        next(second)
        next(second)
        ch = check_db(history(a))
        assert ch.report.violations == [], [f.line() for f in ch.report.violations]
        assert ch.report.commits == 2
    finally:
        a.dispose()
        b.dispose()


class _Deadlock(Exception):
    pgcode = "40P01"


def test_a_deadlock_reruns_the_whole_unit_in_a_fresh_transaction(pg_databases):
    db = pg_databases.new()
    attempts = []

    def body(conn):
        _insert_prompt(conn, "s1", 1, "queue", True)
        attempts.append(1)
        if len(attempts) == 1:  # the database chose this transaction as a deadlock's victim
            raise sa.exc.OperationalError("INSERT ...", {}, _Deadlock("deadlock detected"))
        return "done"

    assert db.atomic(body, sessions=["s1"]) == "done"
    assert len(attempts) == 2 and db.retries == 1
    with db.read() as conn:  # the first attempt's insert was rolled back: one row, not a conflict
        assert conn.execute(sa.select(sa.func.count()).select_from(input_t)).scalar_one() == 1


def test_other_database_errors_are_not_retried(pg_databases):
    db = pg_databases.new()
    calls = []

    def body(conn):
        calls.append(1)
        raise sa.exc.OperationalError("SELECT ...", {}, Exception("connection lost"))

    with pytest.raises(sa.exc.OperationalError):
        db.atomic(body, sessions=["s1"])
    assert len(calls) == 1


def test_a_reused_execution_id_in_a_per_session_history_is_caught(pg_databases):
    """The check that stands in for nextExec's density on PostgreSQL: every execution begun is fresh."""
    rs = record_walk(configs.CONFIGS["sessions"], 1, 80, db=pg_databases.new())
    assert check_db(history(rs.db)).report.violations == []
    with rs.db.read() as conn:
        rows = conn.exec_driver_sql("SELECT seq, claims FROM commit_history WHERE action = 'Acquire' AND changed "
                                    "ORDER BY seq").all()
    assert len(rows) >= 2, "the walk must begin two executions"
    first = json.loads(rows[0][1])[0][1]
    claims = json.loads(rows[1][1])
    claims[0][1] = first  # the second Acquire's record names the first execution again
    with rs.db.transaction() as conn:
        conn.exec_driver_sql("UPDATE commit_history SET claims = %s WHERE seq = %s", (json.dumps(claims), rows[1][0]))
    messages = [f.message for f in check_db(history(rs.db)).report.violations]
    assert any(f"execution id {first} is not fresh" in m for m in messages), messages
