"""A plain-data read of everything durable, in the twin's vocabulary, for the harness and tests.

`snapshot(db)` reads in one transaction and returns a `Snapshot`:

- claims:    {session: ClaimView(execution, owner, lease_expires_at, phase, assistant, recovery_error)}
             (the twin's ttl is `view.ttl(now)` when lease_ticks == cfg.lease; quar is `quarantined`)
- events:    [EventView(session, kind, assistant, execution, writer)] in commit order; kind is the
             twin's short name (Started/Failed/Interrupted/Ended); execution is the assistant's execution
             (the twin's asst)
- recovery:  {(execution, session)}: session_recovery rows (the twin's RecRow order)
- inputs:    [InputView(id, session, kind 'prompt'|'cont', src, state)]
- cancelled: {(execution, session)}: executions whose cancellation completed
- assistants: {assistant id: AssistantView(session, execution, started, completed, outcome)}
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from . import registry as R
from .db import Database
from .schema import assistant_t, claim_t, event_t, history_t, input_t, recovery_t


@dataclass(frozen=True)
class ClaimView:
    execution: int
    owner: str
    lease_expires_at: int
    phase: str
    assistant: str | None
    recovery_error: str | None

    def ttl(self, now: int) -> int:
        return max(0, self.lease_expires_at - now)

    @property
    def quarantined(self) -> bool:
        return self.recovery_error is not None


@dataclass(frozen=True)
class EventView:
    session: str
    kind: str
    assistant: str | None
    execution: int
    writer: str


@dataclass(frozen=True)
class InputView:
    id: str
    session: str
    kind: str  # prompt | cont
    src: int
    state: str


@dataclass(frozen=True)
class AssistantView:
    session: str
    execution: int
    started: bool
    completed: bool
    outcome: str | None


@dataclass(frozen=True)
class Snapshot:
    claims: dict[str, ClaimView]
    events: list[EventView]
    recovery: frozenset[tuple[int, str]]
    inputs: list[InputView]
    cancelled: frozenset[tuple[int, str]]
    assistants: dict[str, AssistantView]

    def kinds(self, session: str | None = None) -> list[str]:
        return [e.kind for e in self.events if session is None or e.session == session]

    def count(self, kind: str, assistant: str | None = None) -> int:
        return sum(1 for e in self.events if e.kind == kind and (assistant is None or e.assistant == assistant))


def snapshot(db: Database) -> Snapshot:
    with db.read() as conn:
        return read(conn)


def read(conn, *, assistants: bool = True) -> Snapshot:
    """The snapshot inside a caller's read transaction (the harness's state mapping reads the execution
    sequence in the same one and needs no assistant projection)."""
    claims = {r.session_id: ClaimView(r.execution_id, r.owner_id, r.lease_expires_at, r.phase, r.assistant_id,
                                      r.recovery_error)
              for r in conn.execute(sa.select(claim_t))}
    events = [EventView(r.session_id, R.SHORT_KIND[r.kind], r.assistant_id, r.execution_id, r.writer)
              for r in conn.execute(sa.select(event_t).order_by(event_t.c.id))]
    recovery = frozenset((r.execution_id, r.session_id) for r in conn.execute(sa.select(recovery_t)))
    inputs = [InputView(r.id, r.session_id, "cont" if r.kind == "continuation" else "prompt", r.src, r.state)
              for r in conn.execute(sa.select(input_t).order_by(input_t.c.admitted_seq))]
    cancelled = frozenset((r.execution_id, r.session_id) for r in
                          conn.execute(sa.select(history_t).where(history_t.c.outcome == "cancelled")))
    projection = {r.assistant_id: AssistantView(r.session_id, r.execution_id, bool(r.started),
                                                bool(r.completed), r.outcome)
                  for r in conn.execute(sa.select(assistant_t))} if assistants else {}
    return Snapshot(claims, events, recovery, inputs, cancelled, projection)
