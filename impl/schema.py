"""The durable state of the protocol, as SQLModel tables (portable: sqlite and PostgreSQL).

Constraints carry the protocol where the database can: one claim per Session (primary key), globally
unique execution ids, one recovery row per execution, one event per (Session, seq), closed sets of
phases, kinds and states (CHECK). Rows the database cannot vouch for (e.g. a claim naming a missing
assistant) are validated by their readers.
"""

from __future__ import annotations

from typing import Optional

from sqlalchemy import BigInteger, CheckConstraint, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

# The claim phases. `running` -> `cancelling` -> `cancelled` is the ordinary order; `unknown` marks an
# uncertain provider/tool outcome; `recovering` belongs to recovery.
PHASES = ("running", "unknown", "recovering", "cancelling", "cancelled")
# Tool.Started records a local tool call (the fenced start); Tool.Success and Tool.Failed (a
# reconciliation's record of an uncertain outcome) settle it; PromptExecutionRequested is an exact retry's
EVENT_KINDS = ("Step.Started", "Step.Failed", "Step.Interrupted", "Step.Ended", "PromptExecutionRequested",
               "Tool.Started", "Tool.Success", "Tool.Failed")
OUTCOMES = ("failed", "interrupted", "ended")
INPUT_KINDS = ("prompt", "continuation")
DELIVERIES = ("steer", "queue")
# held: admitted with its execution not yet requested; steered: taken into a running execution; quarantined: a
# flawed continuation row the promotion refused (spec/README.md decision 28)
INPUT_STATES = ("pending", "ordinary", "recovery", "held", "steered", "quarantined")
HISTORY_OUTCOMES = ("cleared", "cancelled", "recovered")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class ExecutionClaim(SQLModel, table=True):
    """Which owner runs a Session's execution, until when, in which phase."""

    __tablename__ = "execution_claim"
    __table_args__ = (
        CheckConstraint(_in("phase", PHASES), name="ck_claim_phase"),
        Index("ix_claim_scan", "recovery_error", "lease_expires_at", "created_seq"),
    )

    session_id: str = Field(primary_key=True)
    execution_id: int = Field(unique=True)
    owner_id: str
    lease_expires_at: int = Field(sa_type=BigInteger)  # clock ticks: 64-bit (ms ticks overflow 32 bits)
    phase: str
    assistant_id: Optional[str] = None
    recovery_error: Optional[str] = None
    created_seq: int = Field(index=True)
    recovery_attempts: int = 0  # recovery takeovers so far: a conversion that lost its lease retries below a bound


class Assistant(SQLModel, table=True):
    """The assistant projection: started by Step.Started, completed by its terminal event."""

    __tablename__ = "assistant"
    __table_args__ = (
        CheckConstraint(f"outcome IS NULL OR {_in('outcome', OUTCOMES)}", name="ck_assistant_outcome"),
    )

    assistant_id: str = Field(primary_key=True)
    session_id: str = Field(index=True)
    execution_id: int = Field(index=True)
    started: bool = True
    completed: bool = False
    outcome: Optional[str] = None


class SessionEvent(SQLModel, table=True):
    """The durable event log; `writer` is the claim identity the event was published under."""

    __tablename__ = "session_event"
    __table_args__ = (
        UniqueConstraint("session_id", "seq", name="uq_event_session_seq"),
        CheckConstraint(_in("kind", EVENT_KINDS), name="ck_event_kind"),
    )

    id: Optional[int] = Field(default=None, primary_key=True)
    session_id: str = Field(index=True)
    seq: int
    kind: str
    assistant_id: Optional[str] = Field(default=None, foreign_key="assistant.assistant_id", index=True)
    execution_id: int
    writer: str
    # an input event (PromptExecutionRequested): the prompt it names, and its deterministic id (derived
    # from the prompt's, so a second exact retry conflicts instead of appending)
    input_id: Optional[str] = None
    event_key: Optional[str] = Field(default=None, unique=True)
    # a tool event's call index in its Step (1, 2, ...: the Step's local tool calls, run one after the
    # other); 0 for every other event. A call is identified by (Session, execution, Step, call index).
    tool_call: int = 0


class SessionRecovery(SQLModel, table=True):
    """One row per recovered execution (execution ids are global: unique across Sessions)."""

    __tablename__ = "session_recovery"

    id: Optional[int] = Field(default=None, primary_key=True)
    execution_id: int = Field(unique=True)
    session_id: str = Field(index=True)
    continuation_input_id: str


class SessionInput(SQLModel, table=True):
    """Queued prompts and recovery continuations of a Session."""

    __tablename__ = "session_input"
    __table_args__ = (
        CheckConstraint(_in("kind", INPUT_KINDS), name="ck_input_kind"),
        CheckConstraint(_in("delivery", DELIVERIES), name="ck_input_delivery"),
        CheckConstraint(_in("state", INPUT_STATES), name="ck_input_state"),
        Index("ix_input_select", "session_id", "state", "admitted_seq"),
    )

    id: str = Field(primary_key=True)
    session_id: str
    kind: str
    src: int  # prompt number, or the recovered execution of a continuation
    delivery: str = "queue"
    state: str = "pending"
    admitted_seq: int
    promoted_seq: Optional[int] = None
    # a continuation's recovery envelope, written by the conversion and checked by the promotion (decision 28):
    # the Session whose execution it recovers, the digest of its content (the exact recovery prompt), the
    # assistant it resumes (the recovered execution's newest started one, or none) and that assistant's
    # execution, and whether recovery made it (synthetic). Prompts leave them empty.
    origin_session_id: Optional[str] = None
    content_digest: Optional[str] = None
    assistant_id: Optional[str] = None
    assistant_execution: Optional[int] = None
    synthetic: bool = False


WAKE_KINDS = ("recovery", "ordinary")
WAKE_SLOTS = ("fresh", "retry")  # the slot of the batch a reservation was made in


class WakeRow(SQLModel, table=True):
    """A wake row: pending work of one Session to redrive (a recovery wake promotes its continuation, an
    ordinary wake acquires its input), with its bounded wake-attempt counter (0: fresh, never woken),
    changed only by compare-and-set, rotating from max to 1; `reserved` while a woken redrive runs."""

    __tablename__ = "wake_row"
    __table_args__ = (
        CheckConstraint(_in("kind", WAKE_KINDS), name="ck_wake_row_kind"),
        CheckConstraint("max >= 1 AND attempts >= 0 AND attempts <= max", name="ck_wake_row_attempts"),
        CheckConstraint(f"reserved IS NULL OR {_in('reserved', WAKE_SLOTS)}", name="ck_wake_row_reserved"),
        Index("ix_wake_row_scan", "kind", "reserved", "attempts", "rank"),
    )

    kind: str = Field(primary_key=True)
    item: str = Field(primary_key=True)  # the Session to wake
    rank: int  # the scan's order, oldest first (the Session's creation order)
    attempts: int = 0
    max: int
    reserved: Optional[str] = None
    reserved_at: Optional[int] = Field(default=None, sa_type=BigInteger)  # clock ticks of the reservation
    turned: bool = False  # woken in the current round of retries: waits until every waiting retried row was


class ExecutionHistory(SQLModel, table=True):
    """How each settled execution left its claim (the twin's `cancelled` set is outcome 'cancelled')."""

    __tablename__ = "execution_history"
    __table_args__ = (CheckConstraint(_in("outcome", HISTORY_OUTCOMES), name="ck_history_outcome"),)

    execution_id: int = Field(primary_key=True)
    session_id: str = Field(index=True)
    outcome: str
    at: int = Field(sa_type=BigInteger)


class IdSequence(SQLModel, table=True):
    """Durable counters for execution ids and scan/admission order (dense, never reused)."""

    __tablename__ = "id_sequence"

    name: str = Field(primary_key=True)
    value: int = 0


SEQUENCES = ("execution", "claim", "input")

claim_t = ExecutionClaim.__table__
assistant_t = Assistant.__table__
event_t = SessionEvent.__table__
recovery_t = SessionRecovery.__table__
input_t = SessionInput.__table__
wake_row_t = WakeRow.__table__
history_t = ExecutionHistory.__table__
sequence_t = IdSequence.__table__
