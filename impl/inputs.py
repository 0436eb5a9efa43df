"""Session inputs: admitted prompts and recovery continuations, and who may promote which.

Ordinary steer/queue selection never takes a recovery-owned input (a continuation with a
session_recovery row of the same Session and execution); recovery promotes its continuation exactly,
by id, after checking that row. A continuation's id is derived from (Session, execution).

A prompt admitted without its execution requested is `held`: an exact retry of the same prompt appends
its one PromptExecutionRequested (deterministic id, `ids.request_id`) and arms it, and an explicit resume
durably requests the Session's held prompts; only a requested (`pending`) input is drained or steered.
Every change of an input's state is stamped from the input sequence (`admitted_seq`, then
`promoted_seq`), so the commit history (impl/history.py) sees each one.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import ids
from . import registry as R
from .context import Context
from .db import next_id
from .events import append_event
from .prepared import run
from .results import Conflict, Lost, NotEnabled, Ok, Result
from .schema import claim_t, event_t, input_t as T, recovery_t as RT


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
    origin_session_id: str | None = None
    content_digest: str | None = None
    assistant_id: str | None = None
    assistant_execution: int | None = None
    synthetic: bool = False


def continuation_flaws(input_id: str, session_id: str, src: int, delivery: str, origin_session_id: str | None,
                       content_digest: str | None, assistant_id: str | None, assistant_execution: int | None,
                       synthetic: bool, newest: str | None) -> tuple[str, ...]:
    """The checks of the promotion's validation (the reviewed input.ts 321-397; spec/README.md decision 28) a
    continuation row fails, in the order it asks them (names.CONTINUATION_FLAWS): its id is derived from
    Session and execution (`id`), it recovers its own Session's execution (`session`), queue delivery
    (`delivery`), the exact recovery prompt (`prompt`), its assistant is the recovered execution's
    (`assistant`) and that execution's newest started one, `newest` (none when none started), and recovery
    made it (`synthetic`)."""
    gen = ids.continuation_gen(input_id)
    failed = {
        "id": input_id != ids.minted_continuation_id(session_id, src, gen),
        "session": origin_session_id != session_id,
        "delivery": delivery != "queue",
        "prompt": content_digest != ids.recovery_prompt_digest(session_id, src),
        "assistant": assistant_execution != src,
        "newest": assistant_id != newest,
        "synthetic": not synthetic,
    }
    assert set(failed) == set(R.CONTINUATION_FLAWS)
    return tuple(f for f in R.CONTINUATION_FLAWS if failed[f])


def first_flaw(input_id: str, session_id: str, src: int, delivery: str, origin_session_id: str | None,
               content_digest: str | None, assistant_id: str | None, assistant_execution: int | None,
               synthetic: bool, newest: str | None) -> str:
    """The first check of the promotion's validation a continuation row fails (`continuation_flaws`), or ""."""
    return next(iter(continuation_flaws(input_id, session_id, src, delivery, origin_session_id, content_digest,
                                        assistant_id, assistant_execution, synthetic, newest)), "")


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
_REQUESTED = sa.select(event_t.c.id).where(event_t.c.event_key == sa.bindparam("key"))
_PROMOTE = sa.update(T).where(T.c.id == sa.bindparam("input"), T.c.state == sa.bindparam("frm")) \
    .values(state=sa.bindparam("to"), promoted_seq=sa.bindparam("seq"))
_ARM = sa.update(T).where(T.c.id == sa.bindparam("input")).values(state="pending", promoted_seq=sa.bindparam("seq"))
_STEER = sa.update(T).where(T.c.id == sa.bindparam("input"), T.c.state == "pending") \
    .values(state="steered", promoted_seq=sa.bindparam("seq"))
_RECOVERY_ROW = sa.select(RT).where(RT.c.execution_id == sa.bindparam("execution"))
# the newest assistant an execution started (its latest Step.Started), or none
_NEWEST = sa.select(event_t.c.assistant_id).where(
    event_t.c.session_id == sa.bindparam("session"), event_t.c.execution_id == sa.bindparam("execution"),
    event_t.c.kind == R.DURABLE_KIND[R.STARTED]).order_by(event_t.c.id.desc()).limit(1)
_INSERT = T.insert()


def _insert_prompt(conn: Connection, session_id: str, number: int, delivery: str, requested: bool) -> str:
    iid = ids.prompt_id(session_id, number)
    run(conn, _INSERT, dict(id=iid, session_id=session_id, kind="prompt", src=number, delivery=delivery,
                            state="pending" if requested else "held", admitted_seq=next_id(conn, "input")))
    return iid


class InputStore:
    def __init__(self, ctx: Context, delivery_kinds: bool = True):
        self.ctx = ctx
        # the delivery kinds and their order (spec/README.md decision 27): a steer takes steer inputs only,
        # and no selection takes an input while another of its Session waits ahead of it (steer before
        # queue, then age). Off only for the model's configurations without DeliveryKinds, which leave the
        # order free (the binding's World passes the configuration's constant)
        self.delivery_kinds = delivery_kinds

    def admit_prompt(self, session_id: str, number: int, delivery: str = "queue", requested: bool = True) -> str:
        """Admit the number-th prompt of a Session (idempotent: its id is deterministic); without
        `requested` its execution waits for an exact retry or a resume (held)."""
        iid = ids.prompt_id(session_id, number)

        def body(conn):
            if self.get(conn, iid) is None:
                _insert_prompt(conn, session_id, number, delivery, requested)
            return iid
        return self.ctx.db.atomic(body, sessions=[session_id])

    def admit_next(self, session_id: str, delivery: str = "queue", requested: bool = True) -> str:
        """Admit the Session's next prompt (its number one past the highest admitted, read in the same
        transaction, so concurrent callers never pick the same number)."""
        def body(conn):
            k = conn.execute(sa.select(sa.func.coalesce(sa.func.max(T.c.src), 0))
                             .where(T.c.session_id == session_id, T.c.kind == "prompt")).scalar_one() + 1
            return _insert_prompt(conn, session_id, k, delivery, requested)
        return self.ctx.db.atomic(body, sessions=[session_id])

    def exact_retry(self, session_id: str, input_id: str, digest: str | None = None) -> Result:
        """ExactRetry: the identity check (any id a caller sends: this Session's admitted input of that id,
        a prompt, never a continuation, never recovery-owned, with the admitted content's digest; each
        refusal's reason first, names.RETRY_REFUSALS), then one transaction appending the prompt's one
        PromptExecutionRequested and arming it if held. A second retry appends nothing (NotEnabled): the
        event's id is derived from the prompt's. `digest` None: the admitted content's."""
        twice = self.ctx.has(R.EXACT_RETRY_APPENDS_TWICE)
        digest = ids.content_digest(input_id) if digest is None else digest

        def body(conn):
            row = self.get(conn, input_id)
            if row is None:
                return NotEnabled(f"{R.UNKNOWN_INPUT}: no admitted input {input_id}")
            if row.session_id != session_id:
                return NotEnabled(f"{R.OTHER_SESSION}: input {input_id} is not {session_id}'s")
            if row.kind != "prompt" and not self.ctx.has(R.EXACT_RETRY_ARMS_CONTINUATION):
                return NotEnabled(f"{R.CONTINUATION}: input {input_id} is a continuation, recovery's alone")
            if row.state == "recovery":
                return NotEnabled(f"{R.RECOVERY_OWNED}: recovery has taken input {input_id}")
            same = digest == ids.content_digest(input_id)
            if not same and not self.ctx.has(R.EXACT_RETRY_IGNORES_CONTENT):
                return NotEnabled(f"{R.CONTENT_MISMATCH}: the retry's content is not input {input_id}'s")
            key = ids.request_id(input_id)
            if twice:  # the defect: the projection (is it waiting?) decides, and the id is fresh
                if row.state == "pending":
                    return NotEnabled(f"prompt {input_id} is waiting already")
                key = f"{key}-{next_id(conn, 'input')}"
            elif run(conn, _REQUESTED, {"key": key}).first() is not None:
                return NotEnabled(f"prompt {input_id} has its PromptExecutionRequested already")
            seq = append_event(conn, session_id, kind=R.REQUESTED, assistant_id=None, execution_id=0,
                               writer="" if same else digest, input_id=input_id, event_key=key)
            if twice or row.state == "held":  # the projection arms a held prompt (the defect: any prompt)
                run(conn, _ARM, {"input": input_id, "seq": next_id(conn, "input")})
            return Ok(seq)
        return self.ctx.db.atomic(body, sessions=[session_id])

    def request_pending(self, session_id: str) -> Result:
        """An explicit resume's durable request: every held prompt of the Session now waits (one
        transaction, before any drain)."""
        def body(conn):
            held = sa.and_(T.c.session_id == session_id, T.c.kind == "prompt", T.c.state == "held")
            if conn.execute(sa.select(sa.exists().where(held))).scalar_one():
                n = conn.execute(sa.update(T).where(held).values(state="pending",
                                                                promoted_seq=next_id(conn, "input"))).rowcount
            else:
                n = 0
            return Ok(n) if n else NotEnabled(f"{session_id} has no held prompt")
        return self.ctx.db.atomic(body, sessions=[session_id])

    def oldest_held(self, conn: Connection, session_id: str) -> InputRow | None:
        """The resume-drains-without-request defect's drain: the oldest held prompt, no request needed."""
        row = conn.execute(sa.select(T).where(T.c.session_id == session_id, T.c.kind == "prompt",
                                              T.c.state == "held").order_by(T.c.admitted_seq).limit(1)).mappings().first()
        return InputRow(**row) if row else None

    def steer(self, conn: Connection, session_id: str, input_id: str) -> Result:
        """Steer selection: a pending steer input of the Session, never a recovery-owned one (as the queue),
        none waiting ahead of it, is marked steered (in the runner's fenced transaction)."""
        row = self.get(conn, input_id)
        if row is None or row.session_id != session_id or row.state != "pending":
            return NotEnabled(f"input {input_id} is not a pending input of {session_id}")
        if not self.ctx.has(R.STEER_SELECTS_RECOVERY_INPUT) and not run(
                conn, _SELECTABLE[False], {"id": input_id}).scalar_one():
            return NotEnabled(f"input {input_id} is recovery-owned: steer selection excludes it")
        if self.delivery_kinds and row.delivery != "steer" and not self.ctx.has(R.STEER_TAKES_QUEUED_INPUT):
            return NotEnabled(f"input {input_id} was admitted with queue delivery: it waits for the drain")
        ahead = self.waiting_ahead(conn, row)
        if ahead is not None:
            return NotEnabled(f"input {ahead.id} waits ahead of {input_id} (steer before queue, then age)")
        n = run(conn, _STEER, {"input": input_id, "seq": next_id(conn, "input")}).rowcount
        return Ok() if n == 1 else Lost(f"input {input_id} is no longer pending")

    def waiting_ahead(self, conn: Connection, row: InputRow) -> InputRow | None:
        """The input of the Session ordinary selection must take before `row` (a steer input before a queue
        input; within a kind, the older prompt), or None; always None without delivery kinds."""
        if not self.delivery_kinds:
            return None
        for j in self.select_ordinary(conn, row.session_id, limit=None):
            kind = j.delivery == "steer" and row.delivery == "queue" and not self.ctx.has(R.QUEUE_BEFORE_STEER)
            age = (j.delivery == row.delivery and j.kind == row.kind == "prompt" and j.src < row.src
                   and not self.ctx.has(R.SELECTION_IGNORES_AGE))
            if j.id != row.id and (kind or age):
                return j
        return None

    def get(self, conn: Connection, input_id: str) -> InputRow | None:
        row = run(conn, _GET, {"id": input_id}).mappings().first()
        return InputRow(**row) if row else None

    def _ordinary_filter(self):
        if self.ctx.has(R.RECOVERY_INPUT_IN_ORDINARY_QUEUE):
            return sa.true()
        return sa.not_(_owned_by_recovery())

    def select_ordinary(self, conn: Connection, session_id: str, limit: int | None = 1) -> list[InputRow]:
        """Ordinary steer/queue selection: pending, not recovery-owned; steer before queue, then age."""
        rows = conn.execute(
            sa.select(T).where(T.c.session_id == session_id, T.c.state == "pending", self._ordinary_filter())
            .order_by(sa.case((T.c.delivery == "steer", 0), else_=1), T.c.admitted_seq).limit(limit)).mappings()
        return [InputRow(**r) for r in rows]

    def pending_any(self, conn: Connection, session_id: str) -> list[InputRow]:
        """The defect wake-serves-regardless's selection: the Session's oldest pending input, whatever it is."""
        rows = conn.execute(sa.select(T).where(T.c.session_id == session_id, T.c.state == "pending")
                            .order_by(T.c.admitted_seq).limit(1)).mappings()
        return [InputRow(**r) for r in rows]

    def ordinary_selectable(self, conn: Connection, input_id: str) -> bool:
        stmt = _SELECTABLE[self.ctx.has(R.RECOVERY_INPUT_IN_ORDINARY_QUEUE)]
        return run(conn, stmt, {"id": input_id}).scalar_one()

    def check_continuation(self, conn: Connection, row: InputRow) -> Result:
        """Recovery may promote this input: a pending continuation with a recovery row of its own (same Session
        and execution), as the twin's PromoteContinuation and the TypeScript example ask; what the row holds is
        the promotion's validation (`refused_flaw`)."""
        if row.kind != "continuation" or row.state != "pending":
            return NotEnabled(f"input {row.id} is not a pending continuation")
        if self.ctx.has(R.RECOVERY_INPUT_EXCLUDED_EVERYWHERE) and not self.ordinary_selectable(conn, row.id):
            # the defect: promotion reuses ordinary selection's exclusion of recovery-owned inputs
            return NotEnabled(f"input {row.id} is recovery-owned")
        rec = run(conn, _RECOVERY_ROW, {"execution": row.src}).mappings().first()
        if rec is None or rec["session_id"] != row.session_id:
            return NotEnabled(f"continuation {row.id} has no recovery row of its Session")
        return Ok()

    def newest_assistant(self, conn: Connection, session_id: str, execution_id: int) -> str | None:
        """The newest assistant the execution started (its latest Step.Started), or None."""
        row = run(conn, _NEWEST, {"session": session_id, "execution": execution_id}).first()
        return None if row is None else row[0]

    def refused_flaw(self, conn: Connection, row: InputRow) -> str | None:
        """The promotion's validation of a continuation row (decision 28): the first check it fails whose
        defect switch (promotion-ignores-<flaw>) is off, or None when it holds."""
        flaws = continuation_flaws(row.id, row.session_id, row.src, row.delivery, row.origin_session_id,
                                   row.content_digest, row.assistant_id, row.assistant_execution, row.synthetic,
                                   self.newest_assistant(conn, row.session_id, row.src))
        return next((f for f in flaws if not self.ctx.has(R.FLAW_DEFECT[f])), None)

    def quarantine(self, conn: Connection, input_id: str) -> Result:
        """A refused continuation is set aside: pending -> quarantined, exactly once."""
        return self.promote(conn, input_id, "quarantined")

    def promote(self, conn: Connection, input_id: str, state: str, frm: str = "pending") -> Result:
        """pending -> ordinary|recovery, exactly once (compare-and-set on the state; `frm` held: the
        resume-drains-without-request defect's drain)."""
        n = run(conn, _PROMOTE, {"input": input_id, "to": state, "frm": frm, "seq": next_id(conn, "input")}).rowcount
        return Ok() if n == 1 else Lost(f"input {input_id} is no longer {frm}")

    def create_continuation(self, conn: Connection, session_id: str, execution_id: int,
                            iid: str | None = None) -> Result:
        """Recovery's continuation input (queue delivery), with the id the conversion derives (`iid`, by
        default ids.continuation_id); exactly one row must be inserted."""
        iid = iid or ids.continuation_id(session_id, execution_id)
        envelope = dict(origin_session_id=session_id, content_digest=ids.recovery_prompt_digest(session_id, execution_id),
                        assistant_id=self.newest_assistant(conn, session_id, execution_id),
                        assistant_execution=execution_id, synthetic=True)
        try:
            with conn.begin_nested():
                run(conn, _INSERT, dict(id=iid, session_id=session_id, kind="continuation",
                                        src=execution_id, delivery="queue", state="pending",
                                        admitted_seq=next_id(conn, "input"), **envelope))
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
