"""Faults the environment injects into the database (tests and the harness use them; the protocol
code never does): the twin's CorruptRecoveryRow, and raw writes that bypass the protocol."""

from __future__ import annotations

import sqlalchemy as sa

from . import ids
from .db import Database, next_id
from .schema import claim_t, input_t, recovery_t


class AckLost(ConnectionError):
    """The conversion's transaction committed, but its acknowledgement never reached the worker."""


class CommitFailed(ConnectionError):
    """The connection was lost before the conversion's COMMIT reached the database: nothing committed."""


# the conversion failpoint's outcomes (`RecoveryWorker.convert(lose_ack=...)`): its transaction committed
# and the acknowledgement was lost (RecoveryConvertAckLost), or the COMMIT was lost (RecoveryConvertFails)
COMMITTED = "committed"
NOT_COMMITTED = "not-committed"


def corrupt_recovery_row(db: Database, session_id: str, execution_id: int, continuation_input_id: str | None = None) -> None:
    """An adversary's session_recovery row for `session_id` that reuses another Session's execution id."""
    cont = continuation_input_id or ids.continuation_id(session_id, execution_id)
    with db.transaction(sessions=[session_id]) as conn:
        conn.execute(recovery_t.insert().values(execution_id=execution_id, session_id=session_id,
                                                continuation_input_id=cont))


# what a forged continuation row changes of the row recovery made, per flaw (names.CONTINUATION_FLAWS): each
# fails exactly one check of the promotion's validation (impl/inputs.py continuation_flaws)
FORGED = {
    "id": lambda row: dict(id=ids.forged_continuation_id(row["session_id"], row["src"])),
    "session": lambda row: dict(origin_session_id=f"{row['session_id']}-other"),
    "delivery": lambda row: dict(delivery="steer"),
    "prompt": lambda row: dict(content_digest="forged-content"),
    "assistant": lambda row: dict(assistant_execution=row["src"] + 1),
    "newest": lambda row: dict(assistant_id="forged-assistant"),
    "synthetic": lambda row: dict(synthetic=False),
}


def forge_continuation(db: Database, session_id: str, execution_id: int, flaw: str) -> bool:
    """ForgeContinuation: an adversary (or a corrupt write) replaces recovery's pending continuation of
    (Session, execution) with a continuation-kind row of one flaw. False when there is none to replace."""
    cont = ids.continuation_id(session_id, execution_id)
    with db.transaction(sessions=[session_id]) as conn:
        row = conn.execute(sa.select(input_t).where(input_t.c.id == cont, input_t.c.state == "pending")).mappings().first()
        if row is None:
            return False
        conn.execute(sa.delete(input_t).where(input_t.c.id == cont))  # stamped as every change of an input is
        conn.execute(input_t.insert().values(**{**row, **FORGED[flaw](row), "promoted_seq": next_id(conn, "input")}))
    return True


def force_claim(db: Database, session_id: str, **values) -> None:
    """Overwrite claim columns directly (e.g. a phase string a CHECK constraint would refuse).

    sqlite skips its CHECKs for this one statement. PostgreSQL has no such switch: the phase CHECK is
    dropped and added back NOT VALID (kept for every later write, not verified on rows already there),
    so on PostgreSQL any later UPDATE of the corrupt row is refused until the phase is repaired."""
    bypass = "phase" in values
    with db.transaction(sessions=[session_id], schema_change=bypass and not db.is_sqlite) as conn:
        if bypass and db.is_sqlite:
            conn.exec_driver_sql("PRAGMA ignore_check_constraints = ON")
        elif bypass:
            conn.exec_driver_sql(f"ALTER TABLE {claim_t.name} DROP CONSTRAINT IF EXISTS {_PHASE_CHECK.name}")
        try:
            conn.execute(sa.update(claim_t).where(claim_t.c.session_id == session_id).values(**values))
        finally:
            if bypass and db.is_sqlite:
                conn.exec_driver_sql("PRAGMA ignore_check_constraints = OFF")
        if bypass and not db.is_sqlite:
            conn.exec_driver_sql(f"ALTER TABLE {claim_t.name} ADD CONSTRAINT {_PHASE_CHECK.name} "
                                 f"CHECK ({_PHASE_CHECK.sqltext}) NOT VALID")


_PHASE_CHECK = next(c for c in claim_t.constraints
                    if isinstance(c, sa.CheckConstraint) and c.name == "ck_claim_phase")
