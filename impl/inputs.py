"""Session inputs: admitted prompts and recovery continuations, and who may promote which.

Ordinary steer/queue selection never takes a recovery-owned input (a continuation with a
session_recovery row of the same Session and execution); recovery promotes its continuation exactly,
by id, after checking that row. A continuation's id is derived from (Session, execution).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import ids
from . import registry as R
from .context import Context
from .db import next_id
from .results import Conflict, Lost, Malformed, NotEnabled, Ok, Result
from .schema import claim_t, input_t as T, recovery_t as RT


@dataclass(frozen=True)
class InputRow:
    id: str
    session_id: str
    kind: str
    src: int
    delivery: str
    state: str
    admitted_seq: int
    promoted_seq: int | None


def _owned_by_recovery():
    """The input is a continuation with a recovery row of its own Session and execution."""
    return sa.exists().where(RT.c.execution_id == T.c.src, RT.c.session_id == T.c.session_id,
                             T.c.kind == "continuation")


# built once (a SQLAlchemy expression per call cost more than the statement)
_GET = sa.select(T).where(T.c.id == sa.bindparam("id"))
# ordinary selection may take it: pending and not recovery-owned (True: the recovery-input defect)
_SELECTABLE = {defect: sa.select(sa.exists().where(T.c.id == sa.bindparam("id"), T.c.state == "pending",
                                                   sa.true() if defect else sa.not_(_owned_by_recovery())))
               for defect in (False, True)}
_PROMOTE = sa.update(T).where(T.c.id == sa.bindparam("input"), T.c.state == "pending") \
    .values(state=sa.bindparam("to"), promoted_seq=sa.bindparam("seq"))


class InputStore:
    def __init__(self, ctx: Context):
        self.ctx = ctx

    def admit_prompt(self, session_id: str, number: int, delivery: str = "queue") -> str:
        """Admit the number-th prompt of a Session (idempotent: its id is deterministic)."""
        iid = ids.prompt_id(session_id, number)

        def body(conn):
            if self.get(conn, iid) is None:
                conn.execute(T.insert().values(id=iid, session_id=session_id, kind="prompt", src=number,
                                               delivery=delivery, state="pending",
                                               admitted_seq=next_id(conn, "input")))
            return iid
        return self.ctx.db.atomic(body)

    def get(self, conn: Connection, input_id: str) -> InputRow | None:
        row = conn.execute(_GET, {"id": input_id}).mappings().first()
        return InputRow(**row) if row else None

    def _ordinary_filter(self):
        if self.ctx.has(R.RECOVERY_INPUT_IN_ORDINARY_QUEUE):
            return sa.true()
        return sa.not_(_owned_by_recovery())

    def select_ordinary(self, conn: Connection, session_id: str, limit: int = 1) -> list[InputRow]:
        """Ordinary steer/queue selection: pending, not recovery-owned; steer before queue, then age."""
        rows = conn.execute(
            sa.select(T).where(T.c.session_id == session_id, T.c.state == "pending", self._ordinary_filter())
            .order_by(sa.case((T.c.delivery == "steer", 0), else_=1), T.c.admitted_seq).limit(limit)).mappings()
        return [InputRow(**r) for r in rows]

    def ordinary_selectable(self, conn: Connection, input_id: str) -> bool:
        stmt = _SELECTABLE[self.ctx.has(R.RECOVERY_INPUT_IN_ORDINARY_QUEUE)]
        return conn.execute(stmt, {"id": input_id}).scalar_one()

    def check_continuation(self, conn: Connection, row: InputRow) -> Result:
        """Recovery may promote this input: a pending continuation whose recovery row is its own
        (same Session and execution) and names it as the continuation."""
        if row.kind != "continuation" or row.state != "pending":
            return NotEnabled(f"input {row.id} is not a pending continuation")
        if self.ctx.has(R.RECOVERY_INPUT_EXCLUDED_EVERYWHERE) and not self.ordinary_selectable(conn, row.id):
            # the defect: promotion reuses ordinary selection's exclusion of recovery-owned inputs
            return NotEnabled(f"input {row.id} is recovery-owned")
        rec = conn.execute(sa.select(RT).where(RT.c.execution_id == row.src)).mappings().first()
        if rec is None or rec["session_id"] != row.session_id:
            return NotEnabled(f"continuation {row.id} has no recovery row of its Session")
        if rec["continuation_input_id"] != row.id or row.id != ids.continuation_id(row.session_id, row.src):
            return Malformed(f"recovery row of execution {row.src} names {rec['continuation_input_id']}, "
                             f"not {row.id}")
        return Ok()

    def promote(self, conn: Connection, input_id: str, state: str) -> Result:
        """pending -> ordinary|recovery, exactly once (compare-and-set on the state)."""
        n = conn.execute(_PROMOTE, {"input": input_id, "to": state, "seq": next_id(conn, "input")}).rowcount
        return Ok() if n == 1 else Lost(f"input {input_id} is no longer pending")

    def create_continuation(self, conn: Connection, session_id: str, execution_id: int,
                            iid: str | None = None) -> Result:
        """Recovery's continuation input (queue delivery), with the id the conversion derives (`iid`, by
        default ids.continuation_id); exactly one row must be inserted."""
        iid = iid or ids.continuation_id(session_id, execution_id)
        try:
            with conn.begin_nested():
                conn.execute(T.insert().values(id=iid, session_id=session_id, kind="continuation",
                                               src=execution_id, delivery="queue", state="pending",
                                               admitted_seq=next_id(conn, "input")))
        except sa.exc.IntegrityError:
            return Conflict(f"continuation {iid} already exists")
        return Ok(iid)

    def sessions_to_wake(self, conn: Connection, bound: int, *, recovery: bool = False) -> list[str]:
        """Unclaimed Sessions with pending work, oldest admission first, at most `bound`: ordinary work
        (what ordinary selection may take), or with `recovery` the continuations recovery promotes."""
        which = _owned_by_recovery() if recovery else self._ordinary_filter()
        rows = conn.execute(
            sa.select(T.c.session_id).where(T.c.state == "pending", which,
                                            ~sa.exists().where(claim_t.c.session_id == T.c.session_id))
            .group_by(T.c.session_id).order_by(sa.func.min(T.c.admitted_seq)).limit(bound))
        return [r[0] for r in rows]

    def pending_continuation(self, conn: Connection, session_id: str) -> str | None:
        """The Session's pending, recovery-owned continuation (what a recovery wake promotes), if any."""
        row = conn.execute(sa.select(T.c.id).where(T.c.session_id == session_id, T.c.state == "pending",
                                                   _owned_by_recovery()).order_by(T.c.admitted_seq)).first()
        return None if row is None else row[0]
