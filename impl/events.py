"""Publication of Step events: one transaction, then listeners.

Inside the transaction, in order: projectors (the assistant projection), claim commit hooks (the
fence; Step.Started also stores its assistant id in the claim), then the event is appended. If any part
fails, the whole transaction rolls back and the caller gets a typed failure. Listeners run only after
commit, each isolated: a failing listener is logged, never propagated. The gap between commit and the
listeners returning is the listener boundary the spec explores.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import registry as R
from .claims import ClaimStore, Ident
from .context import Context
from .db import guarded
from .prepared import run
from .results import Abort, Malformed, Ok, Result
from .schema import assistant_t, event_t

log = logging.getLogger(__name__)

Listener = Callable[["StepEvent"], None]


@dataclass(frozen=True)
class StepEvent:
    """A Step event (kind is the twin's short name: Started, Failed, Interrupted, Ended)."""
    session_id: str
    execution_id: int
    assistant_id: str
    kind: str
    writer: str
    call: int = 0  # a tool event's call index in its Step (0 for every other event)

    @property
    def durable_kind(self) -> str:
        return R.DURABLE_KIND[self.kind]


@dataclass(frozen=True)
class Fence:
    """The claim identity an event is published under, and the phase that identity requires:
    `running` for the runner, `cancelling` for the finalizer, `recovering` for recovery."""
    ident: Ident
    phase: str


class Publisher:
    def __init__(self, ctx: Context, claims: ClaimStore):
        self.ctx = ctx
        self.claims = claims
        self.listeners: list[Listener] = []

    def publish(self, event: StepEvent, fence: Fence, *, by_runner: bool = False) -> Result:
        """Commit `event` in its own transaction (listeners are *not* run: call `notify`)."""
        return self.ctx.db.atomic(lambda conn: self.commit(conn, event, fence, by_runner=by_runner),
                                  sessions=[event.session_id])

    def commit(self, conn: Connection, event: StepEvent, fence: Fence, *, by_runner: bool = False) -> Result:
        """Project, run the claim hook, append: inside the caller's transaction. Raises Abort on failure
        (the caller's transaction rolls back); returns Ok(seq) otherwise."""
        if event.writer != fence.ident.owner_id or event.session_id != fence.ident.session_id:
            raise ValueError("an event is written under the identity of its fence")
        self._project(conn, event)
        self._hook(conn, event, fence, by_runner)
        return Ok(self._append(conn, event))

    def notify(self, event: StepEvent) -> None:
        """Run the listeners after commit; one failing listener never stops the others or the caller."""
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:
                log.exception("listener %r failed on %s %s", listener, event.kind, event.assistant_id)

    # ------------------------------------------------------------------ the transaction's parts

    def _project(self, conn: Connection, event: StepEvent) -> None:
        a = assistant_t
        if event.kind in R.TOOL_KINDS:
            return  # a tool event changes no assistant's status
        if event.kind == R.STARTED:
            try:
                with guarded(conn):
                    run(conn, _INSERT_ASSISTANT, dict(assistant_id=event.assistant_id, session_id=event.session_id,
                                                      execution_id=event.execution_id, started=True,
                                                      completed=False, outcome=None))
            except sa.exc.IntegrityError:
                raise Abort(Malformed(f"assistant {event.assistant_id} already started"))
            return
        # a terminal event completes the assistant; the first outcome is kept
        n = run(conn, _COMPLETE, {"assistant": event.assistant_id, "session": event.session_id,
                                     "first_outcome": event.kind.lower()}).rowcount
        if n != 1:
            raise Abort(Malformed(f"assistant {event.assistant_id} of {event.session_id} was never started"))

    def _hook(self, conn: Connection, event: StepEvent, fence: Fence, by_runner: bool) -> None:
        now = self.ctx.now()
        if by_runner and self.ctx.has(R.UNFENCED_STEP_PUBLICATION):
            if event.kind == R.STARTED:
                self.claims.attach_assistant_unfenced(conn, event.session_id, event.execution_id, event.assistant_id)
            return
        if event.kind == R.STARTED:
            result = self.claims.attach_assistant(conn, fence.ident, now, fence.phase, event.assistant_id)
        elif event.kind == R.TOOL_STARTED:  # the renewal that precedes a local tool, with its fence
            result = self.claims.check(conn, fence.ident, now, fence.phase) and self.claims.renew(conn, fence.ident, now)
        else:
            result = self.claims.check(conn, fence.ident, now, fence.phase)
        if not result:
            raise Abort(result)

    def _append(self, conn: Connection, event: StepEvent) -> int:
        return append_event(conn, event.session_id, kind=event.durable_kind, assistant_id=event.assistant_id,
                            execution_id=event.execution_id, writer=event.writer, tool_call=event.call)


# built once (a SQLAlchemy expression per call cost more than the statement)
_COMPLETE = sa.update(assistant_t).where(assistant_t.c.assistant_id == sa.bindparam("assistant"),
                                         assistant_t.c.session_id == sa.bindparam("session")) \
    .values(completed=True, outcome=sa.func.coalesce(assistant_t.c.outcome, sa.bindparam("first_outcome")))
_NEXT_SEQ = sa.select(sa.func.coalesce(sa.func.max(event_t.c.seq), 0) + 1) \
    .where(event_t.c.session_id == sa.bindparam("session"))
_INSERT_ASSISTANT = assistant_t.insert()
_INSERT_EVENT = event_t.insert()
_CALLS = sa.select(event_t.c.kind, event_t.c.tool_call).where(event_t.c.assistant_id == sa.bindparam("assistant"))
_ASSISTANT = sa.select(assistant_t).where(assistant_t.c.assistant_id == sa.bindparam("assistant"))


def append_event(conn: Connection, session_id: str, **row) -> int:
    """Append a durable event to its Session's log, numbered next in that Session (in the caller's
    transaction, whose per-Session serialization makes the number unique); its sequence number."""
    seq = run(conn, _NEXT_SEQ, {"session": session_id}).scalar_one()
    run(conn, _INSERT_EVENT, dict(session_id=session_id, seq=seq, **row))
    return seq


def reserve_assistant(conn: Connection, assistant_id: str, session_id: str, execution_id: int) -> None:
    """The cancel-interrupts-unstarted defect: a projection row for an assistant no Step.Started opened."""
    conn.execute(assistant_t.insert(), dict(assistant_id=assistant_id, session_id=session_id,
                                            execution_id=execution_id, started=False, completed=False, outcome=None))


def open_calls(conn: Connection, assistant_id: str, has=lambda defect: False) -> list[int]:
    """The assistant's Step's tool calls (local, and the hosted call its Step.Started names) whose start is recorded and whose outcome is not, in index
    order: a call is identified by (Session, execution, Step, call index), so each outcome settles its own
    call. `has` names the defects switched on: tool-call-identified-by-step (an outcome of any call of the
    Step reads as the outcome of every call), reconciliation-skips-hosted-call (a Step.Started starts none)."""
    rows = run(conn, _CALLS, {"assistant": assistant_id}).all()
    starts = (R.DURABLE_KIND[R.TOOL_STARTED],) + (() if has(R.RECONCILIATION_SKIPS_HOSTED_CALL)
                                                  else (R.DURABLE_KIND[R.STARTED],))  # it names its hosted call
    started = sorted({c for k, c in rows if k in starts and c})
    outcomes = {R.DURABLE_KIND[k] for k in R.TOOL_OUTCOMES}
    settled = {c for k, c in rows if k in outcomes}
    if has(R.TOOL_CALL_IDENTIFIED_BY_STEP) and settled:
        return []
    return [c for c in started if c not in settled]


def assistant_row(conn: Connection, assistant_id: str):
    """The projection row of an assistant, or None."""
    return run(conn, _ASSISTANT, {"assistant": assistant_id}).mappings().first()
