"""The commit history: every committed write transaction, recorded inside that same transaction.

Off by default, and free when off: `Database.on_commit` is None and `Database.transaction` only tests it.
`HistoryRecorder.install(db)` (once, on an empty database) creates the tables and turns it on;
`HistoryRecorder.attach(db, process)` turns it on in another process. While on, the hook runs as the last
statement batch of every write transaction (after the body, before COMMIT), so a commit and its record
are one atomic unit: a SIGKILL at any moment leaves both or neither.

One `commit_history` row per commit:

- `seq`: the global commit order, `max(seq) + 1` read and written under the database's write
  serialization (sqlite: BEGIN IMMEDIATE; PostgreSQL in its benchmark-only global mode: the advisory lock
  every write transaction takes first, impl/db.py). It is the primary key, so two writers that were NOT
  serialized would collide on it and fail loudly instead of recording a wrong order. PostgreSQL's
  per-Session writers record per Session instead: impl/history_sessions.py.
- `actor`, `process`, `action`, `params`: who committed (owner id, recovery worker id, `environment`),
  in which process incarnation, as which step (a registry action name with its parameters by the
  registry's parameter names, or an environment step), set by the driver with `recorder.step(...)`
  before it runs the actor's step. A commit made with no step set is recorded as actor `?` (the
  checker rejects it: every commit must be attributed).
- `now`: the clock reading the step used for every lease decision (`wall`: the wall time of the hook).
- `memory`: the in-memory records of the committing process's actors *before* the step, in the twin's
  vocabulary: `{"run": {node: [pc, sess, exec, mem, active, intr]}, "fin": {node: [pc, sess, exec,
  owner]}, "rec": {worker: [pc, sess, exec]}}` (the fields binding/mapping.py reads), and a waker's read
  and reservation its plan, `"wake": {k: [[rank, attempts, slot], ...]}` (the twin's `waker[k]`).
- the durable state after, as a delta: `claims` (the whole claim table: one row per Session, small),
  `delta` (the rows this commit appended or changed: events, session_recovery rows, inputs admitted or
  promoted, armed, steered or forged (with a continuation's envelope and its execution's newest started
  assistant, from which a reader tells a forged row's flaw: binding/flaws.py), execution_history rows of executions whose claim it removed, and the
  whole wake-row table when the commit changed it) and `marks` (high-water marks the next commit's delta
  is taken against: last event id, last recovery row id, the input and execution sequences, the
  execution_history row count, a checksum of the wake rows). Events, recovery and history rows are
  insert-only and every change of an input's state is stamped from the input sequence (an input
  event names its prompt by number, as the twin does), so the fold of the deltas
  is the durable state after every commit; `harness/stress/checker.py` checks that fold against the final
  database too. Measured: recording the full snapshot instead grows with the event log (the run's
  whole log per commit); the delta costs ~9 small statements per commit (the wake rows one), independent of run length.
- `changed`: whether the commit changed anything recorded (a fenced step that failed commits nothing).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import history_sessions, ids
from .db import Database, pg_sequence

META = sa.MetaData()

history_t = sa.Table(
    "commit_history", META,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("actor", sa.String(64), nullable=False),
    sa.Column("process", sa.String(64), nullable=False),
    sa.Column("action", sa.String(64), nullable=False),
    sa.Column("params", sa.Text, nullable=False),
    sa.Column("now", sa.BigInteger, nullable=False),
    sa.Column("wall", sa.Float, nullable=False),
    sa.Column("memory", sa.Text, nullable=False),
    sa.Column("claims", sa.Text, nullable=False),
    sa.Column("delta", sa.Text, nullable=False),
    sa.Column("marks", sa.Text, nullable=False),
    sa.Column("changed", sa.Boolean, nullable=False),
)

# per-Session mode (PostgreSQL's default, impl/db.py): each Session's commit count and what its next
# commit's delta is taken against (its claim, last event seq, recovery row id and input stamp)
session_t = sa.Table(
    "commit_history_session", META,
    sa.Column("session_id", sa.String(64), primary_key=True),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("claim", sa.Text, nullable=False),
    sa.Column("marks", sa.Text, nullable=False),
)

meta_t = sa.Table(
    "commit_history_meta", META,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

PER_SESSION = "sessions"  # the meta key `history` of a per-Session history
ENVIRONMENT = "environment"
UNATTRIBUTED = "?"
ZERO_MARKS = {"event": 0, "recovery": 0, "input": 0, "execution": 0, "history": 0, "wakes": 0}
COLUMNS = [c.name for c in history_t.columns]

_PREV = "SELECT claims, marks, seq FROM commit_history ORDER BY seq DESC LIMIT 1"
_CLAIMS = ("SELECT session_id, execution_id, owner_id, lease_expires_at, phase, assistant_id, recovery_error, "
           "recovery_attempts "
           "FROM execution_claim ORDER BY session_id")
# an input event (PromptExecutionRequested) carries its input's number as the twin's RequestId: a prompt's,
# or a continuation's execution negated
_EVENTS = ("SELECT e.id, e.session_id, e.kind, e.assistant_id, e.execution_id, e.writer, "
           "CASE WHEN i.kind = 'cont' THEN -i.src ELSE i.src END, e.tool_call "
           "FROM session_event e LEFT JOIN session_input i ON i.id = e.input_id "
           "WHERE e.id > {p} ORDER BY e.id")
_RECOVERY = ("SELECT id, execution_id, session_id, continuation_input_id FROM session_recovery "
             "WHERE id > {p} ORDER BY id")
# a continuation's envelope, which the promotion's validation checks, and its execution's newest started
# assistant (spec/README.md decision 28): the converter reads a forged row's flaw from them
_INPUTS = ("SELECT i.id, i.session_id, i.kind, i.src, i.state, i.admitted_seq, i.promoted_seq, i.delivery, "
           "i.origin_session_id, i.content_digest, i.assistant_id, i.assistant_execution, i.synthetic, " +
           history_sessions.NEWEST_STARTED +
           " FROM session_input i WHERE i.admitted_seq > {p} OR i.promoted_seq > {p} ORDER BY i.admitted_seq")
# the wake rows are few (one per Session and kind at most) and change in place: recorded whole when changed
_WAKES = "SELECT kind, item, rank, attempts, reserved, turned FROM wake_row ORDER BY kind, rank, item"
_HISTORY_COUNT = "SELECT count(*) FROM execution_history"
_HISTORY_ROWS = "SELECT execution_id, session_id, outcome FROM execution_history WHERE execution_id IN ({ps})"
_INSERT = f"INSERT INTO commit_history ({', '.join(COLUMNS)}) VALUES ({{ps}})"


@dataclass(frozen=True)
class Step:
    actor: str
    action: str
    params: dict
    memory: dict
    now: int


def memory_of(nodes: Iterable = (), workers: Iterable = (), wakers: dict | None = None) -> dict:
    """The twin-vocabulary records of a process's actors (a Node's runner and finalizer, a worker); `wakers`
    (k -> impl.wakes.Waker, the twin's waker k): each one's plan, `"wake": {"k": [[rank, attempts, slot],
    ...]}` (the row of rank w is the twin's row w), the memory between its read and its reservation."""
    run, fin, rec = {}, {}, {}
    wake = {str(k): sorted([p["rank"], p["attempts"], p["slot"]] for p in w.plan) for k, w in (wakers or {}).items()}
    for node in nodes:
        r, f = node.runner, node.finalizer
        run[node.owner_id] = [r.pc, r.session_id or "", r.execution_id or 0,
                              0 if r.mem is None else ids.numbered(r.mem, node.provider.steps), bool(r.active), bool(r.intr),
                              r.ordinal, r.tool]
        fin[node.owner_id] = [f.pc, f.session_id or "", f.execution_id or 0, f.owner_id or ""]
    for w in workers:
        rec[w.owner_id] = [w.pc, w.session_id or "", w.execution_id or 0, w.seen_owner, w.why]
    return {"run": run, "fin": fin, "rec": rec, **({"wake": wake} if wakers else {})}


class HistoryRecorder:
    """The hook. `step(...)` names the step whose transaction the next commit is; `last_seq` is the seq
    this process recorded last (effect logs refer to it)."""

    def __init__(self, db: Database, process: str):
        self.db = db
        self.process = process
        self.current: Step | None = None
        self.last_seq = 0
        self.commits = 0
        self._sql = _dialect_sql(db)

    # ------------------------------------------------------------------ switching it on

    @classmethod
    def install(cls, db: Database, process: str = ENVIRONMENT, meta: dict | None = None) -> "HistoryRecorder":
        """Create the history tables on a database that holds no protocol state yet, store `meta` (the
        run's constants) and switch recording on for `db`."""
        META.create_all(db.engine)
        if db.per_session:
            with db.transaction(schema_change=True) as conn:
                conn.exec_driver_sql(f"CREATE SEQUENCE IF NOT EXISTS {history_sessions.SEQUENCE}")
            meta = {**(meta or {}), "history": PER_SESSION}
        with db.read() as conn:
            busy = [t for t in ("execution_claim", "session_event", "session_input", "session_recovery",
                                "commit_history")
                    if conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one()]
        if busy:
            raise ValueError(f"the history must start on an empty database; found rows in {', '.join(busy)}")
        with db.transaction() as conn:
            for key, value in (meta or {}).items():
                conn.execute(meta_t.insert().values(key=key, value=json.dumps(value)))
        return cls.attach(db, process)

    @classmethod
    def attach(cls, db: Database, process: str) -> "HistoryRecorder":
        rec = cls(db, process)
        db.on_commit = rec._on_commit_sessions if db.per_session else rec._on_commit
        rec._hook = db.on_commit
        return rec

    def detach(self) -> None:
        if self.db.on_commit == getattr(self, "_hook", None):
            self.db.on_commit = None

    @contextmanager
    def step(self, actor: str, action: str, params: dict, memory: dict, now: int) -> Iterator[None]:
        self.current = Step(actor, action, params, memory, now)
        try:
            yield
        finally:
            self.current = None

    # ------------------------------------------------------------------ the hook

    def _on_commit_sessions(self, conn: Connection) -> None:
        """Per-Session writers (PostgreSQL's default): impl/history_sessions.py."""
        self.last_seq = history_sessions.record(conn, self.current or Step(UNATTRIBUTED, UNATTRIBUTED, {}, {}, -1),
                                                self.process)
        self.commits += 1

    def _on_commit(self, conn: Connection) -> None:
        step = self.current or Step(UNATTRIBUTED, UNATTRIBUTED, {}, {}, -1)
        sql = self._sql
        q = conn.exec_driver_sql
        prev = q(_PREV).first()
        if prev is None:
            seq, prev_claims, marks = 1, "[]", dict(ZERO_MARKS)
        else:
            seq, prev_claims, marks = prev[2] + 1, prev[0], json.loads(prev[1])
        claims = json.dumps([list(r) for r in q(_CLAIMS)], separators=(",", ":"))
        events = [list(r) for r in q(sql["events"], (marks["event"],))]
        recovery = [list(r) for r in q(sql["recovery"], (marks["recovery"],))]
        inputs = [list(r) for r in q(sql["inputs"], (marks["input"], marks["input"]))]
        sequences = dict(q(sql["sequences"]).all())
        n_history = q(_HISTORY_COUNT).scalar_one()
        wakes = [list(r) for r in q(_WAKES)]
        wake_sum = zlib.crc32(_dumps(wakes).encode()) if wakes else 0
        history = []
        if n_history != marks["history"]:
            gone = sorted({c[1] for c in json.loads(prev_claims)} - {c[1] for c in json.loads(claims)})
            if gone:
                ps = ", ".join([sql["p"]] * len(gone))
                history = [list(r) for r in q(_HISTORY_ROWS.format(ps=ps), tuple(gone))]
        new_marks = {"event": events[-1][0] if events else marks["event"],
                     "recovery": recovery[-1][0] if recovery else marks["recovery"],
                     "input": sequences.get("input", 0), "execution": sequences.get("execution", 0),
                     "history": n_history, "wakes": wake_sum}
        wakes_changed = wake_sum != marks.get("wakes", 0)
        changed = bool(claims != prev_claims or events or recovery or inputs or history or wakes_changed
                       or new_marks["execution"] != marks["execution"] or n_history != marks["history"])
        delta = {"wakes": wakes} if wakes_changed else {}
        for key, rows in (("events", events), ("recovery", recovery), ("inputs", inputs), ("history", history)):
            if rows:
                delta[key] = rows
        row = (seq, step.actor, self.process, step.action, _dumps(step.params), step.now, time.time(),
               _dumps(step.memory), claims, _dumps(delta), _dumps(new_marks), changed)
        q(sql["insert"], row)
        self.last_seq = seq
        self.commits += 1


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _dialect_sql(db: Database) -> dict[str, str]:
    """The hook's statements in the driver's own parameter style (exec_driver_sql: no per-statement
    SQLAlchemy compilation inside every commit)."""
    p = "?" if db.is_sqlite else "%s"
    sequences = "SELECT name, value FROM id_sequence" if db.is_sqlite else " UNION ALL ".join(
        f"SELECT '{name}', CASE WHEN is_called THEN last_value ELSE 0 END FROM {pg_sequence(name)}"
        for name in ("input", "execution"))  # one statement, as on sqlite
    return {"p": p, "sequences": sequences, "events": _EVENTS.format(p=p), "recovery": _RECOVERY.format(p=p),
            "inputs": _INPUTS.format(p=p), "insert": _INSERT.format(ps=", ".join([p] * len(COLUMNS)))}


# ---------------------------------------------------------------- reading it back

def read_meta(db: Database) -> dict:
    with db.read() as conn:
        return {k: json.loads(v) for k, v in conn.execute(sa.select(meta_t.c.key, meta_t.c.value))}


def read_rows(db: Database, after: int = 0, limit: int | None = None) -> list[dict]:
    """History rows with seq > after, in commit order, JSON columns decoded."""
    stmt = sa.select(history_t).where(history_t.c.seq > after).order_by(history_t.c.seq)
    if limit is not None:
        stmt = stmt.limit(limit)
    with db.read() as conn:
        return [decode(dict(r._mapping)) for r in conn.execute(stmt)]


def decode(row: dict) -> dict:
    out = dict(row)
    for key in ("params", "memory", "claims", "delta", "marks"):
        if isinstance(out[key], str):
            out[key] = json.loads(out[key])
    out["changed"] = bool(out["changed"])
    return out


def default_process(owner: str) -> str:
    return f"{owner}@{os.getpid()}"
