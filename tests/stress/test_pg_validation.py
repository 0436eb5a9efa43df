"""A per-Session history (PostgreSQL's concurrent writers: impl/history_sessions.py) validated in its
`seq` order with executions renumbered in the order they begin (binding/history_sessions.py).

PostgreSQL draws an execution id when the begin's transaction runs, and a transaction that dies after
drawing burns its value: ids have gaps, and across Sessions they need not follow the commit order. The
twin numbers executions densely in the order they begin, so the walk renumbers them; without it a gap is
already a divergence (the stand-in below)."""

from __future__ import annotations

import json
import random

import pytest

import binding.history as C
import binding.history_sessions as HS
from harness.validation.command import check_database
from impl.db import next_id
from impl.history import PER_SESSION, read_meta
from spec import configs
from stresskit import record_walk


def recorded_with_a_burnt_id(db, seed: int = 1, steps: int = 80):
    """A twin walk recorded on PostgreSQL, an execution id drawn and lost (a begin that died) after the
    first Acquire: later executions' ids skip one."""
    rng, taken, burnt = random.Random(seed), [], []

    def choose(options):  # called before each step, so after the one before it committed
        if taken and taken[-1] == "Acquire" and not burnt:
            with db.transaction() as conn:
                burnt.append(next_id(conn, "execution"))
        pick = rng.choice(options)
        taken.append(pick[0])
        return pick
    rs = record_walk(configs.CONFIGS["sessions"], seed, steps, db=db, choose=choose)
    assert burnt
    return rs


def verdict(db):
    return check_database("postgresql://walk", lambda _url: C.convert_db(db))


def test_a_per_session_history_with_a_burnt_execution_id_validates(pg_databases):
    rs = recorded_with_a_burnt_id(pg_databases.new())
    assert read_meta(rs.db)["history"] == PER_SESSION
    v = verdict(rs.db)
    assert v.ok, v.report


def test_without_the_renumbering_the_burnt_id_is_a_divergence(pg_databases, monkeypatch):
    """The stand-in: executions keep the database's ids (a Renumbering whose begin is the identity)."""
    rs = recorded_with_a_burnt_id(pg_databases.new())

    def identity(self, real):
        self.dense[real] = real
        return real
    monkeypatch.setattr(HS.Renumbering, "begin", identity)
    v = verdict(rs.db)
    assert v.state == "not valid" and "exec" in "\n".join(v.report), v.report


def test_two_begins_committed_against_their_ids_order_are_renumbered():
    """Execution 7 drawn first and committed second: the walk numbers them in commit order."""
    rows = [{"seq": 1, "claims": [["s2", 9, "n2", 40, "running", None, None, 0]], "delta": {}, "params": {},
             "memory": {}, "marks": {"sessions": ["s2"]}},
            {"seq": 2, "claims": [["s1", 7, "n1", 40, "running", None, None, 0]], "delta": {}, "params": {},
             "memory": {"run": {"n1": ["acquired", "s1", 7, 0, False, False, 1, 0]}}, "marks": {"sessions": ["s1"]}},
            {"seq": 3, "claims": [], "delta": {"events": [[1, "s1", "Step.Started", "asst-7-1", 7, "n1"]]},
             "params": {}, "memory": {}, "marks": {"sessions": ["s1"]}}]
    out = HS.whole_rows(rows, steps=1)
    assert [r["claims"] for r in out][:2] == [[["s2", 1, "n2", 40, "running", None, None, 0]],
                                             [["s1", 2, "n1", 40, "running", None, None, 0],
                                              ["s2", 1, "n2", 40, "running", None, None, 0]]]
    assert out[1]["memory"]["run"]["n1"][2] == 2 and [r["marks"]["execution"] for r in out] == [1, 2, 2]
    assert out[2]["delta"]["events"][0][3:5] == ["asst-2-1", 2]
    assert [r["claims"] for r in out][2] == [["s2", 1, "n2", 40, "running", None, None, 0]]  # s1's claim gone


def test_an_execution_begun_twice_or_named_before_its_begin_is_bad_input():
    begun_twice = [{"seq": k, "claims": [[s, 5, "n1", 40, "running", None, None, 0]], "delta": {}, "params": {},
                    "memory": {}, "marks": {"sessions": [s]}} for k, s in ((1, "s1"), (2, "s2"))]
    with pytest.raises(C.PerSessionHistory, match="execution 5 begun twice"):
        C.convert_rows({"history": PER_SESSION, "max_steps": 1}, begun_twice)
    early = [{"seq": 1, "claims": [], "delta": {"history": [[3, "s1", "cleared"]]}, "params": {}, "memory": {},
              "marks": {"sessions": ["s1"]}}]
    with pytest.raises(C.PerSessionHistory, match="names execution 3 before it begins"):
        C.convert_rows({"history": PER_SESSION, "max_steps": 1}, early)


def test_commits_are_walked_in_the_order_they_became_visible(pg_databases):
    """`seq` is drawn before COMMIT: a writer paused between the two commits after a higher seq (its rows
    unseen by a read made meanwhile). The server's commit timestamps give the visible order; a server that
    does not track them gives None (the walk then takes seq order)."""
    from impl.history import META, history_t
    from impl.history_sessions import commit_order
    db = pg_databases.new()
    META.create_all(db.engine)
    row = dict(actor="n1", process="n1", action="Renew", params="{}", now=0, wall=0.0, memory="{}", claims="[]",
               delta="{}", marks="{}", changed=True)
    first, second = db.engine.connect(), db.engine.connect()
    try:
        first.begin()
        first.execute(history_t.insert().values(seq=1, **row))  # drawn first; its COMMIT waits
        with second.begin():
            second.execute(history_t.insert().values(seq=2, **row))
        first.commit()
    finally:
        first.close()
        second.close()
    assert commit_order(db, 2) == [2, 1]
    assert commit_order(db, 1) == [1]


def recommitted_with_two_seqs_swapped(db):
    """A twin walk recorded on PostgreSQL, its history rows committed again one transaction each in their
    order, except that an Acquire and the next commit of the same Session trade seqs: the later commit holds
    the lower seq, as a writer paused between drawing its seq and its COMMIT leaves it (impl/history.py draws
    the seq in the commit hook). The commit timestamps follow the walk; seq order does not."""
    import sqlalchemy as sa
    from impl.history import history_t
    rs = record_walk(configs.CONFIGS["sessions"], 3, 60, db=db)
    with db.read() as conn:
        rows = [dict(r._mapping) for r in conn.execute(sa.select(history_t).order_by(history_t.c.seq))]
    a = next(k for k, r in enumerate(rows) if r["action"] == "Acquire")
    session = json.loads(rows[a]["marks"])["sessions"]
    b = next(k for k in range(a + 1, len(rows)) if json.loads(rows[k]["marks"]).get("sessions") == session)
    rows[a]["seq"], rows[b]["seq"] = rows[b]["seq"], rows[a]["seq"]
    with db.transaction() as conn:
        conn.execute(history_t.delete())
    for r in rows:  # each its own transaction: the commit timestamps follow the walk's order
        with db.engine.begin() as conn:
            conn.execute(history_t.insert().values(**r))
    return rs, rows[b]["action"]


def test_commit_timestamps_order_a_history_whose_seqs_are_not_the_commit_order(pg_databases, monkeypatch):
    """End to end: walked in the order its commits became visible the history validates; walked in seq order
    (the stand-in: a server that does not track commit timestamps) the later commit comes first and is a
    step the twin cannot take yet."""
    rs, later = recommitted_with_two_seqs_swapped(pg_databases.new())
    v = verdict(rs.db)
    assert v.ok, v.report
    monkeypatch.setattr(C, "commit_order", lambda db, upto: None)
    v = verdict(rs.db)
    assert v.state == "not valid" and later in "\n".join(v.report), v.report
