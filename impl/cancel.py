"""Cancellation: the interrupt (CancelRequest) and the finalizer that settles it.

The interrupt moves the claim running -> cancelling under the claim's own identity, interrupts this
node's runner if it runs that execution, and starts the finalizer. The finalizer waits for its runner
to stop, then in one fenced transaction reads the assistant attached to the claimed execution *from
the database* (publisher memory can lag the commit), publishes at most one Step.Interrupted for an
open assistant, and moves cancelling -> cancelled; then it removes the exact cancelled claim.
Supervision: a finalizer whose claim's lease has expired stops before anyone else can act on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import ids
from . import registry as R
from .claims import Ident
from .db import dialect_insert
from .events import Fence, StepEvent, assistant_row, open_call, reserve_assistant
from .results import Abort, Fenced, Malformed, NotEnabled, Ok, Result
from .runner import record_history
from .schema import recovery_t

if TYPE_CHECKING:
    from .node import Node

IDLE, SETTLE, CLEAR = "idle", "settle", "clear"


def request(node: "Node", session_id: str, execution_id: int | None = None) -> Result:
    """CancelRequest: an authenticated interrupt handled on `node` (routing is the caller's job). A caller
    that names the execution it interrupts (`execution_id`) never cancels a later one of the Session: the
    check is in the same transaction, so an interrupt routed to the owner of execution e is exact."""
    fin = node.finalizer
    if fin.pc != IDLE:
        return NotEnabled("this node's finalizer is busy")
    ctx = node.ctx
    now = ctx.now()

    def body(conn):
        claim = node.claims.get(conn, session_id)
        if claim is None:
            return NotEnabled(f"no claim for {session_id}")
        if execution_id is not None and claim.execution_id != execution_id:
            return NotEnabled(f"{session_id} runs execution {claim.execution_id}, not {execution_id}")
        result = node.claims.advance_phase(conn, claim.ident, now, "running", "cancelling")
        return Ok(claim.ident) if result else result
    result = ctx.db.atomic(body, sessions=[session_id])
    if not result:
        return result
    ident: Ident = result.value
    runner = node.runner
    if ident.owner_id == node.owner_id and runner.execution_id == ident.execution_id and runner.busy:
        runner.intr = True
    fin.start(ident)
    ctx.boundaries.hit(R.B_CANCEL_REQUESTED, node=node.owner_id, session=session_id,
                       execution=ident.execution_id)
    return result


def _requeue(node: "Node", conn, ident: Ident) -> None:
    """The cancel-requeues-continuation defect: recovery's bookkeeping for a cancelled execution, a
    session_recovery row (its conflict ignored) and a continuation."""
    values = dict(execution_id=ident.execution_id, session_id=ident.session_id,
                  continuation_input_id=ids.continuation_id(ident.session_id, ident.execution_id))
    conn.execute(dialect_insert(conn, recovery_t).values(**values).on_conflict_do_nothing())
    result = node.inputs.create_continuation(conn, ident.session_id, ident.execution_id)
    if not result:
        raise Abort(result)


class Finalizer:
    """The twin's finalizer record: pc, session, execution, owner (the identity it writes under)."""

    def __init__(self, node: "Node"):
        self.node = node
        self.last: Result | None = None
        self.reset()

    def reset(self) -> None:
        self.pc = IDLE
        self.session_id: str | None = None
        self.execution_id: int | None = None
        self.owner_id: str | None = None

    def start(self, ident: Ident) -> None:
        self.pc = SETTLE
        self.session_id, self.execution_id, self.owner_id = ident

    def record(self) -> tuple:
        return (self.pc, self.session_id, self.execution_id, self.owner_id)

    @property
    def ident(self) -> Ident:
        return Ident(self.session_id, self.execution_id, self.owner_id)

    def holds(self, execution_id: int | None) -> bool:
        """The finalizer is working on this execution (its runner must wait for it to exit)."""
        return self.pc != IDLE and self.execution_id == execution_id

    # ------------------------------------------------------------------ supervision

    def supervise(self) -> bool:
        """Stop if this finalizer no longer holds its exact, live claim; True if it stopped. An expired
        lease is the usual reason; a claim that is gone or names another owner means the lease expired
        while this node was stalled (a pause, a long lock wait) and another worker acted on it since: its
        lease is lost too (claimcheck stress found a finalizer resuming after recovery's takeover)."""
        if self.pc == IDLE or self.node.ctx.has(R.UNSUPERVISED_CANCEL_HEARTBEAT):
            return False
        if not self.node.holds_claim(self.ident):
            self.last = Fenced("lease lost: finalizer stopped by supervision")
            self.reset()
            return True
        return False

    # ------------------------------------------------------------------ the step machine

    def enabled(self) -> str | None:
        if self.pc == SETTLE:
            runner = self.node.runner
            waiting = runner.execution_id == self.execution_id and runner.busy
            return None if waiting else R.FINALIZER_SETTLE
        if self.pc == CLEAR:
            return R.FINALIZER_CLEAR
        return None

    def step(self) -> str | None:
        """Run the enabled action; return its name (None: nothing ran). Supervision is the node's own
        step (Node.supervise), as the twin's Supervise is an action of its own."""
        action = self.enabled()
        if action is not None:
            self.last = getattr(self, f"_{action}")()
        return action

    def run_to_completion(self, max_steps: int = 100) -> list[str]:
        ran = []
        while (action := self.step()) is not None:
            ran.append(action)
            if len(ran) >= max_steps:
                raise RuntimeError("finalizer did not finish")
        return ran

    # ------------------------------------------------------------------ actions

    def _FinalizerSettle(self) -> Result:
        node, ctx, ident = self.node, self.node.ctx, self.ident
        now = ctx.now()
        if not ctx.has(R.UNSUPERVISED_CANCEL_HEARTBEAT) and not node.holds_claim(ident):
            self.last = Fenced("claim lost: the finalizer's own check stopped it before any effect")
            self.reset()
            return self.last
        # reconcile the execution's tools: an external effect, before (and whatever) the transaction
        node.provider.reconcile(ident.session_id, ident.execution_id, ident.owner_id, node.owner_id, now)
        runner = node.runner
        mine = runner.execution_id == ident.execution_id
        mem, active = (runner.mem, runner.active) if mine else (None, False)
        restarted = []

        def body(conn):
            claim = node.claims.get(conn, ident.session_id)
            if claim is None or claim.ident != ident or not claim.live(now) or claim.phase != "cancelling":
                raise Abort(Fenced(node.claims.why(conn, ident, now, ("cancelling",))))
            a = claim.assistant_id
            if a is not None and open_call(conn, a):
                # the durable failure reconciliation of the Step's local tool call (its outcome is
                # uncertain): recorded as failed, never re-run
                node.publisher.commit(conn, StepEvent(ident.session_id, ident.execution_id, a, R.TOOL_FAILED,
                                                      ident.owner_id), Fence(ident, "cancelling"))
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
                node.publisher.commit(conn, again, Fence(ident, phase))
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
                node.publisher.commit(conn, event, Fence(ident, "cancelling"))
            result = node.claims.advance_phase(conn, ident, now, "cancelling", "cancelled")
            if not result:
                raise Abort(result)
            return Ok(event)
        result = ctx.db.atomic(body, sessions=[ident.session_id])
        if not result and restarted and ctx.has(R.STEP_STARTED_WINDOW):
            self.last = result  # the rejected restart: the finalizer retries, its heartbeat keeps the lease
            return result
        if not result:
            self.reset()
            return result
        if result.value is not None:
            node.publisher.notify(result.value)
        self.pc = CLEAR
        ctx.boundaries.hit(R.B_FINALIZER_SETTLED, node=node.owner_id, session=ident.session_id,
                           execution=ident.execution_id)
        return result

    def _FinalizerClear(self) -> Result:
        node, ctx, ident = self.node, self.node.ctx, self.ident
        now = ctx.now()

        def body(conn):
            result = node.claims.clear(conn, ident, now, "cancelled")
            if not result:
                raise Abort(result)
            record_history(conn, ident, "cancelled", now)
            if ctx.has(R.CANCEL_REQUEUES_CONTINUATION):
                _requeue(node, conn, ident)
            return result
        result = ctx.db.atomic(body, sessions=[ident.session_id])
        self.reset()
        if result and node.runner.execution_id == ident.execution_id:
            node.runner.reset()
        return result
