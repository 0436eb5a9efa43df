"""The commit history on PostgreSQL with per-Session writers (impl/db.py's default there).

Writers of different Sessions commit concurrently, so there is no "previous commit" to take a delta
against. Instead each commit records the Sessions it holds the locks of (`db.held(conn)`: every write
of a Session's rows is made under its lock, impl/db.py), and for each of them its delta against that
Session's own mark row (`commit_history_session`: its commit count, claim, last event seq, last recovery
row id, last input stamp), which it advances in the same transaction: a per-Session sequence. Under the
Session's lock its marks are exact: the Session's event seqs are dense, and its recovery row ids and
input stamps are drawn from sequences while the lock is held, so they increase in its commit order.

The row's `seq` (the walk order of the history check) is `nextval` of one PostgreSQL sequence, drawn in
this hook, while the Session locks are held: two commits sharing a Session, or made by one process,
get seqs in their commit order; commits of disjoint Sessions by different processes commute (each
reads and writes its own Session's rows only; execution ids are unique by sequence), so any interleaving
of them is a valid order for the check. `seq` has gaps (a value drawn by a transaction that then died,
e.g. SIGKILLed before COMMIT). The wake rows are one queue across Sessions: their writers hold one wake
lock (`WAKE_LOCK`), and a commit holding it records the whole wake-row table when it changed.
`claims` holds the locked Sessions' claim rows only; `marks["sessions"]` names the Sessions recorded (a
Session named with no claim row has none). `settled_seq` tells a reader of a growing history up to
which seq no commit can still appear.
"""

from __future__ import annotations

import json
import time
import zlib

from sqlalchemy.engine import Connection

from .db import LOCK_CLASS, WAKE_LOCK, Database, held

SEQUENCE = "claimcheck_history_seq"  # the commits' walk order

HISTORY_KEY = 0x686973  # "his": the second key of the history's advisory lock (class LOCK_CLASS + 1)
_ZERO = {"event": 0, "recovery": 0, "input": 0}

# a continuation row's execution's newest started assistant (of input row `i`), which the promotion's
# validation compares: recorded beside the row's envelope (impl/history.py too), read as its flaw
NEWEST_STARTED = ("(SELECT e.assistant_id FROM session_event e WHERE i.kind = 'continuation' "
                  "AND e.session_id = i.session_id AND e.execution_id = i.src AND e.kind = 'Step.Started' "
                  "ORDER BY e.seq DESC LIMIT 1)")
# the history lock (shared) and the seq, in one round trip (evaluated left to right)
_NEXT = f"SELECT pg_advisory_xact_lock_shared({LOCK_CLASS + 1}, {HISTORY_KEY}), nextval('{SEQUENCE}')"
# one Session's mark row, claim and delta since the mark, in one round trip (json arrays of the rows)
_READ = """
WITH m AS (SELECT seq, claim, marks FROM commit_history_session WHERE session_id = %(s)s),
k AS (SELECT COALESCE((SELECT (marks::json->>'event')::bigint FROM m), 0) AS ev,
             COALESCE((SELECT (marks::json->>'recovery')::bigint FROM m), 0) AS rc,
             COALESCE((SELECT (marks::json->>'input')::bigint FROM m), 0) AS inp)
SELECT (SELECT seq FROM m), (SELECT claim FROM m), (SELECT marks FROM m),
  (SELECT json_build_array(session_id, execution_id, owner_id, lease_expires_at, phase, assistant_id,
                           recovery_error, recovery_attempts) FROM execution_claim WHERE session_id = %(s)s),
  (SELECT json_agg(json_build_array(e.id, e.session_id, e.kind, e.assistant_id, e.execution_id, e.writer, i.src,
                                    e.seq, e.tool_call) ORDER BY e.seq)
     FROM session_event e LEFT JOIN session_input i ON i.id = e.input_id, k WHERE e.session_id = %(s)s AND e.seq > k.ev),
  (SELECT json_agg(json_build_array(r.id, r.execution_id, r.session_id, r.continuation_input_id) ORDER BY r.id)
     FROM session_recovery r, k WHERE r.session_id = %(s)s AND r.id > k.rc),
  (SELECT json_agg(json_build_array(i.id, i.session_id, i.kind, i.src, i.state, i.admitted_seq, i.promoted_seq,
                                    i.delivery, i.origin_session_id, i.content_digest, i.assistant_id,
                                    i.assistant_execution, i.synthetic, """ + NEWEST_STARTED + """)
                   ORDER BY i.admitted_seq)
     FROM session_input i, k WHERE i.session_id = %(s)s AND (i.admitted_seq > k.inp OR i.promoted_seq > k.inp))
"""
_MARK = "SELECT seq, claim, marks FROM commit_history_session WHERE session_id = %s"
_UPSERT = ("INSERT INTO commit_history_session (session_id, seq, claim, marks) VALUES (%s, %s, %s, %s) "
           "ON CONFLICT (session_id) DO UPDATE SET seq = EXCLUDED.seq, claim = EXCLUDED.claim, "
           "marks = EXCLUDED.marks")
_HISTORY = "SELECT execution_id, session_id, outcome FROM execution_history WHERE execution_id = %s"
_WAKES = "SELECT kind, item, rank, attempts, reserved, turned FROM wake_row ORDER BY kind, rank, item"
_INSERT = ("INSERT INTO commit_history (seq, actor, process, action, params, now, wall, memory, claims, delta, "
           "marks, changed) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")


def record(conn: Connection, step, process: str) -> int:
    """The hook's body (HistoryRecorder on a per-Session database): one commit_history row for this
    transaction, made as `step` (impl.history.Step) by `process`, and the locked Sessions' mark rows
    advanced; returns its seq."""
    q = conn.exec_driver_sql
    h = held(conn)
    locked = sorted(h.sessions) if h is not None else []
    seq = q(_NEXT).first()[1]
    claims, delta, session_seq, changed = [], {}, {}, False
    for s in locked:
        if s == WAKE_LOCK:
            prev = q(_MARK, (s,)).first()
            n, marks = (0, {}) if prev is None else (prev[0], json.loads(prev[2]))
            wakes = [list(r) for r in q(_WAKES)]
            wake_sum = zlib.crc32(_dumps(wakes).encode()) if wakes else 0
            if wake_sum != marks.get("wakes", 0):
                delta["wakes"], changed = wakes, True
            q(_UPSERT, (s, n + 1, "null", _dumps({"wakes": wake_sum})))
            continue
        n, before, marks, claim, events, recovery, inputs = q(_READ, {"s": s}).first()
        n, before, marks = (0, None, dict(_ZERO)) if n is None else (n, json.loads(before), json.loads(marks))
        events, recovery, inputs = events or [], recovery or [], inputs or []
        history = []
        if before is not None and (claim is None or claim[1] != before[1]):  # its claim was removed
            history = [list(r) for r in q(_HISTORY, (before[1],))]
        new = {"event": events[-1][7] if events else marks["event"],
               "recovery": recovery[-1][0] if recovery else marks["recovery"],
               "input": max([marks["input"]] + [x for i in inputs for x in (i[5], i[6]) if x is not None])}
        for key, rows in (("events", [e[:7] + e[8:9] for e in events]), ("recovery", recovery), ("inputs", inputs),
                          ("history", history)):
            if rows:
                delta.setdefault(key, []).extend(rows)
        changed = changed or bool(claim != before or events or recovery or inputs or history)
        if claim is not None:
            claims.append(claim)
        session_seq[s] = n + 1
        q(_UPSERT, (s, n + 1, _dumps(claim), _dumps(new)))
    marks = {"sessions": [s for s in locked if s != WAKE_LOCK], "session_seq": session_seq}
    q(_INSERT, (seq, step.actor, process, step.action, _dumps(step.params), step.now, time.time(),
                _dumps(step.memory), _dumps(claims), _dumps(delta), _dumps(marks), changed))
    return seq


def settled_seq(db: Database) -> int:
    """The seq up to which the history is final: every commit with a seq at most this one has committed or
    died. The hook draws its seq holding the history lock shared; taking it exclusively waits for every
    transaction between its draw and its end, so a seq drawn later is above the value read then."""
    with db.engine.connect() as conn:
        with conn.begin():
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({LOCK_CLASS + 1}, {HISTORY_KEY})")
            return conn.exec_driver_sql(f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END "
                                        f"FROM {SEQUENCE}").scalar_one()


# each commit's seq in the order the commits became visible (the server's commit timestamps, ties by seq)
_COMMIT_ORDER = ("SELECT seq FROM commit_history WHERE seq <= %s "
                 "ORDER BY pg_xact_commit_timestamp(xmin), seq")


def commit_order(db: Database, upto: int) -> list[int] | None:
    """The seqs up to `upto` in the order their commits became visible, or None when the server does not
    track commit timestamps (`track_commit_timestamp`, off by default; binding/pgserver.py turns it on).
    `seq` is drawn in the commit hook, before COMMIT: a process paused between the two (a SIGSTOP) commits
    after commits of higher seqs, and a read of its Sessions' rows made meanwhile saw the state before it."""
    try:
        with db.engine.connect() as conn:
            return [r[0] for r in conn.exec_driver_sql(_COMMIT_ORDER, (upto,))]
    except Exception as exc:  # ObjectNotInPrerequisiteState: "could not get commit timestamp data"
        if "commit timestamp" in str(exc):
            return None
        raise


def _dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
