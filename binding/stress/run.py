"""The bundled server's recorded history and a stress run's database, as the port's recorded side asks
(harness.port.history): `RecordedHistory` reads a database's commit history (impl/history.py) for the
history check; `RunDatabase` is the database `claimcheck stress` creates, writes its environment's steps
to (admissions, crashes) and watches while the node processes run.
"""

from __future__ import annotations

import time

import sqlalchemy as sa

from impl.clock import SystemClock
from impl.context import Context
from impl.db import Database, sequence_value
from impl.history import ENVIRONMENT, HistoryRecorder, read_meta, read_rows
from impl.history_sessions import settled_seq
from impl.inputs import InputStore, _insert_prompt
from impl.results import Abort, NotEnabled
from impl.schema import input_t
from impl.schema import history_t
from impl.snapshot import read as read_snapshot

from harness import registry as R
from harness.stress.records import ADMIT, Final

from binding.stress.vocabulary import VOCABULARY


class RecordedHistory:
    """The commit history recorded in a database of the bundled server (harness.port.history.History)."""

    vocabulary = VOCABULARY

    def __init__(self, db: Database):
        self.db = db

    def meta(self) -> dict:
        return read_meta(self.db)

    def rows(self, after: int = 0, limit: int | None = None) -> list[dict]:
        return read_rows(self.db, after, limit)

    def settled(self) -> int:
        return settled_seq(self.db)

    def final(self) -> Final:
        with self.db.read() as conn:
            snap = read_snapshot(conn, assistants=False)
            seq = sequence_value(conn, "execution")
            outcomes = {r[0]: r[1] for r in conn.execute(sa.select(history_t.c.execution_id, history_t.c.outcome))}
        return Final(snap, seq, outcomes)


class RunDatabase(RecordedHistory):
    """A stress run's database: the schema and the commit history created at `url` (`meta`: the run's
    constants), the environment's steps recorded as the supervisor takes them."""

    def __init__(self, url: str, meta: dict, *, pg_lock: str, tick: float, wall=time, synchronous: str | None = None):
        super().__init__(Database(url, busy_timeout_s=30.0, pg_lock=pg_lock, synchronous=synchronous))
        self.url = url
        self.db.create_schema()
        self.recorder = HistoryRecorder.install(self.db, ENVIRONMENT, meta=meta)
        self.first_node = meta["nodes"][0]
        self.clock = SystemClock(tick, source=wall.time)
        self.inputs = InputStore(Context(self.db, self.clock))

    @property
    def per_session_writers(self) -> bool:
        return self.db.per_session

    def now(self) -> int:
        return self.clock.now()

    def admit(self, session: str) -> None:
        """The Session's next prompt, its execution requested: one transaction (`AdmitRequested`) while the
        Session holds no prompt (checked in that transaction); else the protocol's Admit (held) then
        Resume, which requests every held prompt. One pending prompt admitted beside held ones is no
        protocol step, so validation could not explain it."""
        def alone(conn):
            held = conn.execute(sa.select(sa.func.count()).select_from(input_t).where(
                input_t.c.session_id == session, input_t.c.kind == "prompt", input_t.c.state == "held")).scalar_one()
            if held:
                raise Abort(NotEnabled(f"{session} holds a prompt"))  # rolled back, its record with it
            k = conn.execute(sa.select(sa.func.coalesce(sa.func.max(input_t.c.src), 0)).where(
                input_t.c.session_id == session, input_t.c.kind == "prompt")).scalar_one() + 1
            return _insert_prompt(conn, session, k, "queue", True)

        with self.recorder.step(ENVIRONMENT, ADMIT, {"s": session}, {}, self.clock.now()):
            done = self.db.atomic(alone, sessions=[session])
        if not isinstance(done, NotEnabled):
            return
        with self.recorder.step(ENVIRONMENT, R.ADMIT, {"s": session}, {}, self.clock.now()):
            self.inputs.admit_next(session, requested=False)
        with self.recorder.step(ENVIRONMENT, R.RESUME, {"n": self.first_node, "s": session}, {}, self.clock.now()):
            self.inputs.request_pending(session)

    def record_crash(self, owners) -> int:
        now = self.clock.now()
        for who in owners:
            with self.recorder.step(ENVIRONMENT, R.CRASH, {"n": who}, {}, now):
                with self.db.transaction():
                    pass
        return self.recorder.last_seq

    def live_owners(self, now: int) -> list[str]:
        with self.db.read() as conn:
            return [r[0] for r in conn.exec_driver_sql(
                f"SELECT owner_id FROM execution_claim WHERE lease_expires_at > {int(now)}")]

    def commit_counts(self, after: int, upto: int | None = None) -> list[tuple]:
        bound = f"AND seq <= {int(upto)}" if upto is not None else ""
        with self.db.read() as conn:
            return conn.exec_driver_sql(
                f"SELECT action, sum(CASE WHEN changed THEN 1 ELSE 0 END), count(*), max(seq) FROM commit_history "
                f"WHERE seq > {int(after)} {bound} GROUP BY action").all()

    def pending_prompts(self) -> dict[str, int]:
        with self.db.read() as conn:
            return dict(conn.exec_driver_sql("SELECT session_id, count(*) FROM session_input WHERE state = 'pending' "
                                             "AND kind = 'prompt' GROUP BY session_id").all())

    def quarantined(self) -> int:
        with self.db.read() as conn:
            return conn.exec_driver_sql("SELECT count(*) FROM execution_claim WHERE recovery_error IS NOT NULL"
                                        ).scalar_one()

    def input_mark(self) -> int:
        with self.db.read() as conn:
            return conn.exec_driver_sql("SELECT value FROM id_sequence WHERE name = 'input'").scalar_one()

    def waiting(self, mark: int) -> int:
        with self.db.read() as conn:
            return conn.exec_driver_sql(
                "SELECT count(*) FROM session_input i WHERE i.state = 'pending' AND i.admitted_seq <= "
                f"{int(mark)} AND coalesce(i.promoted_seq, 0) <= {int(mark)} AND NOT EXISTS (SELECT 1 FROM "
                "execution_claim c WHERE c.session_id = i.session_id AND c.recovery_error IS NOT NULL)").scalar_one() \
                + conn.exec_driver_sql("SELECT count(*) FROM wake_row WHERE reserved IS NOT NULL").scalar_one()

    def drop_connections(self, application_name: str) -> int:
        with self.db.engine.connect() as conn:  # autocommit: no write lock, nothing recorded
            return conn.execution_options(isolation_level="AUTOCOMMIT").execute(
                sa.text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = :a"),
                {"a": application_name}).scalar_one()

    def dispose(self) -> None:
        self.db.dispose()
