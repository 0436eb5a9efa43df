"""Faults the environment injects into the database (tests and the harness use them; the protocol
code never does): the twin's CorruptRecoveryRow, and raw writes that bypass the protocol."""

from __future__ import annotations

import sqlalchemy as sa

from . import ids
from .db import Database
from .schema import claim_t, recovery_t


def corrupt_recovery_row(db: Database, session_id: str, execution_id: int, continuation_input_id: str | None = None) -> None:
    """An adversary's session_recovery row for `session_id` that reuses another Session's execution id."""
    cont = continuation_input_id or ids.continuation_id(session_id, execution_id)
    with db.transaction() as conn:
        conn.execute(recovery_t.insert().values(execution_id=execution_id, session_id=session_id,
                                                continuation_input_id=cont))


def force_claim(db: Database, session_id: str, **values) -> None:
    """Overwrite claim columns directly (e.g. a phase string a CHECK constraint would refuse)."""
    with db.transaction() as conn:
        if db.is_sqlite and "phase" in values:
            conn.exec_driver_sql("PRAGMA ignore_check_constraints = ON")
        try:
            conn.execute(sa.update(claim_t).where(claim_t.c.session_id == session_id).values(**values))
        finally:
            if db.is_sqlite and "phase" in values:
                conn.exec_driver_sql("PRAGMA ignore_check_constraints = OFF")
