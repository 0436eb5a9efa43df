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

from . import registry as R
from .db import Database
from .inputs import first_flaw


@dataclass(frozen=True)
class ClaimView:
    execution: int
    owner: str
    lease_expires_at: int
    phase: str
    assistant: str | None
    recovery_error: str | None
    recovery_attempts: int = 0

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
    input: str | None = None  # an input event's prompt (PromptExecutionRequested)
    call: int = 0  # a tool event's call index in its Step (0 for every other event)


@dataclass(frozen=True)
class InputView:
    id: str
    session: str
    kind: str  # prompt | cont
    src: int
    state: str
    flaw: str = ""  # a continuation row's first failing check of the promotion's validation (decision 28)


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


# Plain SQL on the DBAPI cursor: the harness maps the database to the twin after every lockstep step,
# and SQLAlchemy's per-statement work (building, cache keys, result proxies) cost more than the reads.
_CLAIMS = ("SELECT session_id, execution_id, owner_id, lease_expires_at, phase, assistant_id, recovery_error, "
           "recovery_attempts "
           "FROM execution_claim")
_EVENTS = ("SELECT session_id, kind, assistant_id, execution_id, writer, input_id, tool_call FROM session_event "
           "ORDER BY id")
_RECOVERY = "SELECT execution_id, session_id FROM session_recovery"
_INPUTS = ("SELECT id, session_id, kind, src, state, delivery, origin_session_id, content_digest, assistant_id, "
           "assistant_execution, synthetic FROM session_input ORDER BY admitted_seq")
_CANCELLED = "SELECT execution_id, session_id FROM execution_history WHERE outcome = 'cancelled'"
_ASSISTANTS = "SELECT assistant_id, session_id, execution_id, started, completed, outcome FROM assistant"


def read(conn, *, assistants: bool = True) -> Snapshot:
    """The snapshot inside a caller's read transaction (the harness's state mapping reads the execution
    sequence in the same one and needs no assistant projection)."""
    # the caller's transaction, on its DBAPI cursor: no per-statement overhead
    return read_cursor(conn.connection.dbapi_connection.cursor(), assistants=assistants)


def read_cursor(cur, *, assistants: bool = True) -> Snapshot:
    """`read` on a DBAPI cursor inside a read transaction (the harness's state mapping reads on a
    connection of its own: binding.reads)."""
    def q(sql):
        cur.execute(sql)
        return cur.fetchall()
    claims = {r[0]: ClaimView(*r[1:]) for r in q(_CLAIMS)}
    events = [EventView(s, R.SHORT_KIND[k], a, e, w, i, c) for s, k, a, e, w, i, c in q(_EVENTS)]
    recovery = frozenset(tuple(r) for r in q(_RECOVERY))
    newest = {}  # the newest assistant each (Session, execution) started
    for e in events:
        if e.kind == R.STARTED:
            newest[(e.session, e.execution)] = e.assistant
    inputs = [InputView(i, s, "cont" if k == "continuation" else "prompt", src, st,
                        "" if k != "continuation" else
                        first_flaw(i, s, src, dl, origin, digest, a, ax, bool(syn), newest.get((s, src))))
              for i, s, k, src, st, dl, origin, digest, a, ax, syn in q(_INPUTS)]
    cancelled = frozenset(tuple(r) for r in q(_CANCELLED))
    projection = {a: AssistantView(s, e, bool(st), bool(c), o) for a, s, e, st, c, o in q(_ASSISTANTS)} \
        if assistants else {}
    return Snapshot(claims, events, recovery, inputs, cancelled, projection)
