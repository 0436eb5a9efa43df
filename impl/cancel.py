"""Cancellation: the interrupt (CancelRequest) and the finalizer that settles it.

The interrupt moves the claim running -> cancelling under the claim's own identity, interrupts this
node's runner if it runs that execution, and starts the finalizer. The finalizer waits for its runner
to stop, checks that it still holds its exact, live claim and reconciles the execution's tools (an
external effect: a span that can stall), then in one fenced transaction reads the assistant attached to
the claimed execution *from the database* (publisher memory can lag the commit), publishes at most one
Step.Interrupted for an open assistant, and moves cancelling -> cancelled; then it removes the exact
cancelled claim. Supervision: a finalizer whose claim's lease has expired stops, whatever step it is at,
before anyone else can act on it (R003-MUST-FIX-2).
"""

from __future__ import annotations

from . import ids
from . import registry as R
from .actor import CLEAR, IDLE, RECONCILING, SETTLE, Actor, Step
from .claims import ClaimStore, Ident
from .context import Context
from .db import dialect_insert
from .events import Fence, Publisher, StepEvent, assistant_row, open_calls, reserve_assistant
from .inputs import InputStore
from .provider import ScriptedProvider
from .results import Abort, Fenced, Malformed, NotEnabled, Ok, Result
from .runner import Runner, Settling, record_history
from .schema import recovery_t


def _requeue(inputs: InputStore, conn, ident: Ident) -> None:
    """The cancel-requeues-continuation defect: recovery's bookkeeping for a cancelled execution, a
    session_recovery row (its conflict ignored) and a continuation."""
    values = dict(execution_id=ident.execution_id, session_id=ident.session_id,
                  continuation_input_id=ids.continuation_id(ident.session_id, ident.execution_id))
    conn.execute(dialect_insert(conn, recovery_t).values(**values).on_conflict_do_nothing())
    result = inputs.create_continuation(conn, ident.session_id, ident.execution_id)
    if not result:
        raise Abort(result)


class Finalizer(Actor):
    """The twin's finalizer record: pc, session, execution, owner (the identity it writes under). It
    receives what it uses, not its node: the node's id (`host_id`), the stores, the provider, the runner it
    waits for and settles after, and `Settling`, where it tells that runner which execution it holds."""

    def __init__(self, ctx: Context, host_id: str, *, claims: ClaimStore, publisher: Publisher,
                 inputs: InputStore, provider: ScriptedProvider, runner: Runner, settling: Settling):
        self.ctx, self.host_id, self.runner, self.settling = ctx, host_id, runner, settling
        self.claims, self.publisher, self.inputs, self.provider = claims, publisher, inputs, provider
        self.last: Result | None = None
        self.reset()
        super().__init__({
            SETTLE: (Step(R.FINALIZER_RECONCILE, self._finalizer_reconcile, lambda: not runner.runs(self.execution_id)),),
            RECONCILING: (Step(R.FINALIZER_SETTLE, self._finalizer_settle),),
            CLEAR: (Step(R.FINALIZER_CLEAR, self._finalizer_clear),),
        })

    def reset(self) -> None:
        self.pc = IDLE
        self.session_id: str | None = None
        self.execution_id: int | None = None
        self.owner_id: str | None = None
        self.settling.execution_id = None

    def start(self, ident: Ident) -> None:
        self.pc = SETTLE
        self.session_id, self.execution_id, self.owner_id = ident
        self.settling.execution_id = ident.execution_id

    @property
    def ident(self) -> Ident:
        return Ident(self.session_id, self.execution_id, self.owner_id)

    def holds(self, execution_id: int | None) -> bool:
        """The finalizer is working on this execution (its runner must wait for it to exit)."""
        return self.settling.holds(execution_id)

    def request(self, session_id: str, execution_id: int | None = None) -> Result:
        """CancelRequest: an authenticated interrupt handled on this finalizer's node (routing is the
        caller's job). A caller that names the execution it interrupts (`execution_id`) never cancels a later
        one of the Session: the check is in the same transaction, so an interrupt routed to the owner of
        execution e is exact."""
        if self.pc != IDLE:
            return NotEnabled("this node's finalizer is busy")
        ctx = self.ctx
        now = ctx.now()

        def body(conn):
            claim = self.claims.get(conn, session_id)
            if claim is None:
                return NotEnabled(f"no claim for {session_id}")
            if execution_id is not None and claim.execution_id != execution_id:
                return NotEnabled(f"{session_id} runs execution {claim.execution_id}, not {execution_id}")
            result = self.claims.advance_phase(conn, claim.ident, now, "running", "cancelling")
            return Ok(claim.ident) if result else result
        result = ctx.db.atomic(body, sessions=[session_id])
        if not result:
            return result
        ident: Ident = result.value
        if ident.owner_id == self.host_id and self.runner.runs(ident.execution_id):
            self.runner.intr = True
        self.start(ident)
        ctx.boundaries.hit(R.B_CANCEL_REQUESTED, node=self.host_id, session=session_id,
                           execution=ident.execution_id)
        return result

    # ------------------------------------------------------------------ supervision

    def supervise(self) -> bool:
        """Stop if this finalizer no longer holds its exact, live claim; True if it stopped. An expired
        lease is the usual reason; a claim that is gone or names another owner means the lease expired
        while this node was stalled (a pause, a long lock wait) and another worker acted on it since: its
        lease is lost too (claimcheck stress found a finalizer resuming after recovery's takeover).
        Supervision is the node's own step (Node.supervise), as the twin's Supervise is an action of its own."""
        if self.pc == IDLE or self.ctx.has(R.UNSUPERVISED_CANCEL_HEARTBEAT):
            return False
        if not self.claims.holds(self.ident):
            self.last = Fenced("lease lost: finalizer stopped by supervision")
            self.reset()
            return True
        return False

    # ------------------------------------------------------------------ actions

    def _finalizer_reconcile(self) -> Result:
        """FinalizerReconcile: the span begins with the finalizer's own check, then the tools'
        reconciliation, an external effect before any transaction; the settlement is the next step."""
        ctx, ident = self.ctx, self.ident
        now = ctx.now()
        if not ctx.has(R.UNSUPERVISED_CANCEL_HEARTBEAT) and not self.claims.holds(ident):
            self.last = Fenced("claim lost: the finalizer's own check stopped it before any effect")
            self.reset()
            return self.last
        self.provider.reconcile(ident.session_id, ident.execution_id, ident.owner_id, self.host_id, now)
        self.pc = RECONCILING
        ctx.boundaries.hit(R.B_FINALIZER_RECONCILING, node=self.host_id, session=ident.session_id,
                           execution=ident.execution_id)
        return Ok(None)

    def _finalizer_settle(self) -> Result:
        """FinalizerSettle: one fenced transaction; a failed fence stops the finalizer, nothing written."""
        ctx, ident = self.ctx, self.ident
        now = ctx.now()
        runner = self.runner
        mine = runner.execution_id == ident.execution_id
        mem, active = (runner.mem, runner.active) if mine else (None, False)
        restarted, flush_raised = [], []

        def body(conn):
            claim = self.claims.get(conn, ident.session_id)
            if claim is None or claim.ident != ident or not claim.live(now) or claim.phase != "cancelling":
                raise Abort(Fenced(self.claims.why(conn, ident, now, ("cancelling",))))
            a = claim.assistant_id
            # the durable failure reconciliation of every open local tool call of the Step, each by its call
            # index (its outcome is uncertain): recorded as failed, never re-run
            for call in ([] if a is None else open_calls(conn, a, ctx.has)):
                self.publisher.commit(conn, StepEvent(ident.session_id, ident.execution_id, a, R.TOOL_FAILED,
                                                      ident.owner_id, call), Fence(ident, "cancelling"))
            if active and mem is None and ctx.has(R.FLUSH_WITHOUT_ASSISTANT):
                # the flush of publisher memory's open fragment: the reference drops a fragment memory names
                # no assistant for (nothing of it is durable); the defect raises for want of an assistant id
                flush_raised.append(True)
                raise Abort(NotEnabled("flush: the publisher's open fragment has no current assistant id"))
            restart = ctx.has(R.STEP_STARTED_WINDOW) or ctx.has(R.CANCEL_RESTARTS_ASSISTANT)
            if restart and a is not None and mem is None:
                # publisher memory knows no assistant, so it starts one again; the ordinary claim update
                # rejects it (phase cancelling) and the whole settlement rolls back; cancel-restarts-assistant
                # fences the restart by identity and lease in the phase the claim is in, so it commits
                again = StepEvent(ident.session_id, ident.execution_id,
                                  ids.restarted_id(ident.execution_id, ids.assistant_step(a)[1]), R.STARTED,
                                  ident.owner_id)
                phase = "running" if ctx.has(R.STEP_STARTED_WINDOW) else "cancelling"
                restarted.append(again)
                self.publisher.commit(conn, again, Fence(ident, phase))
            if mem is not None and ctx.has(R.CANCEL_TRUSTS_PREVIOUS_STEP_MEMORY):
                # the defect: publisher memory's assistant whenever it names one; inside a later Step's
                # Step.Started gate that is the earlier Step's, completed, so nothing is interrupted
                a = mem
            if a is None and ctx.has(R.CANCEL_INTERRUPTS_UNSTARTED):
                # the defect: the assistant id derived from the execution, its projection made on the spot
                a = ids.assistant_id(ident.execution_id)
                reserve_assistant(conn, a, ident.session_id, ident.execution_id)
            row = None
            if a is not None:
                row = assistant_row(conn, a)
                if row is None or row["session_id"] != ident.session_id or row["execution_id"] != ident.execution_id:
                    raise Abort(Malformed(f"claim of {ident.session_id} names assistant {a}, which is not its own"))
            if ctx.has(R.STEP_FAILED_DUPLICATE_INTERRUPT) and active and mem == a:
                interrupt = True  # the defect: memory's active flag instead of the durable projection
            else:
                interrupt = row is not None and not row["completed"]
            event = None
            if interrupt:
                event = StepEvent(ident.session_id, ident.execution_id, a, R.INTERRUPTED, ident.owner_id)
                self.publisher.commit(conn, event, Fence(ident, "cancelling"))
            result = self.claims.advance_phase(conn, ident, now, "cancelling", "cancelled")
            if not result:
                raise Abort(result)
            return Ok(event)
        result = ctx.db.atomic(body, sessions=[ident.session_id])
        if not result and (restarted and ctx.has(R.STEP_STARTED_WINDOW) or flush_raised):
            self.last = result  # the rejected restart (the raising flush): the finalizer retries, its heartbeat
            return result  # keeps the lease
        if not result:
            self.reset()
            return result
        if result.value is not None:
            self.publisher.notify(result.value)
        self.pc = CLEAR
        ctx.boundaries.hit(R.B_FINALIZER_SETTLED, node=self.host_id, session=ident.session_id,
                           execution=ident.execution_id)
        return result

    def _finalizer_clear(self) -> Result:
        ctx, ident = self.ctx, self.ident
        now = ctx.now()

        def body(conn):
            result = self.claims.clear(conn, ident, now, "cancelled")
            if not result:
                raise Abort(result)
            record_history(conn, ident, "cancelled", now)
            if ctx.has(R.CANCEL_REQUEUES_CONTINUATION):
                _requeue(self.inputs, conn, ident)
            return result
        result = ctx.db.atomic(body, sessions=[ident.session_id])
        self.reset()
        if result and self.runner.execution_id == ident.execution_id:
            self.runner.reset()
        return result
