"""A node: one server process with an owner id, its runner and its finalizer, over a shared database.

Node-level operations start or touch actors: Acquire and PromoteContinuation (start the runner),
CancelRequest (start the finalizer), Heartbeat (renew a claim one of its actors works on), supervision
(after the clock moves), and Crash (the process dies: its in-memory actors are gone).
"""

from __future__ import annotations

from typing import Iterable

from . import registry as R
from .actor import IDLE
from .boundaries import Boundaries
from .cancel import Finalizer
from .claims import ClaimStore, Ident
from .clock import Clock
from .context import Context
from .db import Database, lock_session, next_id
from .events import Publisher
from .inputs import InputStore
from .provider import ScriptedProvider
from .results import Abort, NotEnabled, Occupied, Ok, Quarantined, Result
from .runner import Runner, Settling


class Node:
    def __init__(self, db: Database, clock: Clock, owner_id: str, *, defects: Iterable[str] = (),
                 boundaries: Boundaries | None = None, lease_ticks: int = 1, grace_ticks: int = 0,
                 provider: ScriptedProvider | None = None, delivery_kinds: bool = True):
        self.ctx = Context(db, clock, boundaries or Boundaries(), frozenset(defects), lease_ticks,
                           grace_ticks)
        self.owner_id = owner_id
        self.claims = ClaimStore(self.ctx)
        self.publisher = Publisher(self.ctx, self.claims)
        self.inputs = InputStore(self.ctx, delivery_kinds)
        self.provider = provider or ScriptedProvider()
        # each actor receives what it uses, never the node; they share Settling (the finalizer's execution)
        stores = dict(claims=self.claims, publisher=self.publisher, inputs=self.inputs, provider=self.provider)
        settling = Settling()
        self.runner = Runner(self.ctx, owner_id, **stores, settling=settling)
        self.finalizer = Finalizer(self.ctx, owner_id, **stores, runner=self.runner, settling=settling)

    def has(self, defect: str) -> bool:
        return self.ctx.has(defect)

    def __repr__(self) -> str:
        return f"Node({self.owner_id!r}, runner={self.runner.pc}, finalizer={self.finalizer.pc})"

    # ------------------------------------------------------------------ starting the runner

    def acquire(self, input_id: str, wake=None) -> Result:
        """Acquire: ordinary selection takes a pending, non-recovery input; insert-only claim. Through a woken
        ordinary wake (`wake`, its `impl.wakes.WakeQueue`): WakeAcquire, the row removed in the same
        transaction."""
        return self._acquire(input_id, ordinary=True, wake=wake)

    def resume(self, session_id: str) -> Result:
        """Resume: durably request the Session's pending ordinary execution (one transaction); the drain it
        forces is a unit of its own, an idle runner's next Acquire (the stress node's, the scheduler's). The
        resume-drains-without-request defect drains with no request: it takes the oldest held prompt at once,
        and on a busy Session leaves nothing behind."""
        if self.has(R.RESUME_DRAINS_WITHOUT_REQUEST):
            with self.ctx.db.read() as conn:
                held = self.inputs.oldest_held(conn, session_id)
            if held is None:
                return NotEnabled(f"{session_id} has no held prompt")
            return self._acquire(held.id, ordinary=True, drained=True)
        requested = self.inputs.request_pending(session_id)
        if requested:
            self.ctx.boundaries.hit(R.B_RESUME_REQUESTED, node=self.owner_id, session=session_id, action=R.RESUME)
        return requested

    def promote(self, input_id: str, wake=None) -> Result:
        """PromoteContinuation: recovery's own continuation, exactly, with an insert-only claim. Through a
        woken recovery wake (`wake`): WakePromote, the row removed in the same transaction."""
        return self._acquire(input_id, ordinary=False, wake=wake)

    def _acquire(self, input_id: str, ordinary: bool, drained: bool = False, wake=None) -> Result:
        if self.runner.pc != IDLE:
            return NotEnabled("this node's runner is busy")
        now = self.ctx.now()

        def body(conn):
            row = self.inputs.get(conn, input_id)
            if row is not None:  # the input names its Session: serialize with its writers, then read again
                lock_session(conn, row.session_id)
                row = self.inputs.get(conn, input_id)
            if row is None:
                return NotEnabled(f"no input {input_id}")
            if drained:  # resume-drains-without-request: a held prompt, no durable request
                if row.state != "held":
                    return NotEnabled(f"input {input_id} is not held")
            elif ordinary:
                regardless = wake is not None and self.has(R.WAKE_SERVES_REGARDLESS)
                if regardless and row.state != "pending":
                    return NotEnabled(f"input {input_id} is not pending")
                if not regardless and not self.inputs.ordinary_selectable(conn, input_id):
                    return NotEnabled(f"input {input_id} is not ordinarily selectable")
                ahead = self.inputs.waiting_ahead(conn, row)
                if ahead is not None:
                    return NotEnabled(f"input {ahead.id} waits ahead of {input_id} (steer before queue, then age)")
            else:
                allowed = self.inputs.check_continuation(conn, row)
                if not allowed:
                    return allowed
            if self.claims.occupied(conn, row.session_id, now):
                raise Abort(Occupied(row.session_id))  # before drawing an id: a refused attempt burns none
            flaw = None if ordinary or drained else self.inputs.refused_flaw(conn, row)
            if flaw is not None:  # a forged or corrupt continuation row: refused and set aside (decision 28)
                for result in (self.inputs.quarantine(conn, input_id),
                               wake.serve(row.session_id, conn) if wake is not None else Ok()):
                    if not result:
                        raise Abort(result)
                return Quarantined(f"continuation {input_id} fails the promotion's {flaw} check")
            ident = Ident(row.session_id, next_id(conn, "execution"), self.owner_id)
            for result in (self.claims.acquire(conn, ident, now, next_id(conn, "claim")),
                           self.inputs.promote(conn, input_id, "ordinary" if ordinary else "recovery",
                                               "held" if drained else "pending")):
                if not result:
                    raise Abort(result)  # nothing of the attempt survives, not even the execution id
            if wake is not None:  # a woken wake's redrive: its row goes in this transaction (WakeAcquire, WakePromote)
                served = wake.serve(row.session_id, conn)
                if not served:
                    raise Abort(served)
            return Ok(ident)
        result = self.ctx.db.atomic(body, wakes=wake is not None)
        if isinstance(result, Ok):
            ident = result.value
            self.runner.start(ident.session_id, ident.execution_id)
            self.ctx.boundaries.hit(R.B_ACQUIRE_COMMITTED, node=self.owner_id, session=ident.session_id,
                                    execution=ident.execution_id,
                                    action=R.RESUME if drained else R.ACQUIRE if ordinary else R.PROMOTE_CONTINUATION)
        return result

    # ------------------------------------------------------------------ cancellation, leases, faults

    def cancel(self, session_id: str, execution_id: int | None = None) -> Result:
        """CancelRequest handled on this node (see Finalizer.request)."""
        return self.finalizer.request(session_id, execution_id)

    def active_on(self, execution_id: int) -> bool:
        """One of this node's actors works on the execution (so its heartbeat keeps that lease)."""
        return self.runner.runs(execution_id) or self.finalizer.holds(execution_id)

    def heartbeat(self, session_id: str) -> Result:
        """Heartbeat: renew the Session's claim if it is ours, not full, and an actor works on it."""
        now = self.ctx.now()

        def body(conn):
            claim = self.claims.get(conn, session_id)
            if claim is None or claim.owner_id != self.owner_id:
                return NotEnabled(f"{session_id} is not claimed by {self.owner_id}")
            if claim.lease_expires_at - now >= self.ctx.lease_ticks:
                return NotEnabled("lease is full")
            if not self.active_on(claim.execution_id):
                return NotEnabled(f"no actor of {self.owner_id} works on execution {claim.execution_id}")
            return self.claims.heartbeat(conn, claim, now)
        return self.ctx.db.atomic(body, sessions=[session_id])

    def heartbeat_all(self) -> dict[str, Result]:
        """The production heartbeat: renew every claim one of this node's actors works on."""
        sessions = {a.session_id for a in (self.runner, self.finalizer) if a.busy}
        return {s: self.heartbeat(s) for s in sorted(sessions)}

    def supervise(self) -> str | None:
        """Supervise (the twin's action of that name): stop the runner and the finalizer whose claim is no
        longer their exact, live claim; the action's name if one stopped, else None."""
        stopped = self.runner.supervise()
        stopped = self.finalizer.supervise() or stopped
        return R.SUPERVISE if stopped else None

    def crash(self) -> None:
        """Crash: the process dies; runner and finalizer memory are gone (the database is not)."""
        self.runner.reset()
        self.finalizer.reset()

    # ------------------------------------------------------------------ production driver

    def run_to_completion(self, max_steps: int = 1000) -> list[str]:
        """Step runner and finalizer until neither can move."""
        ran: list[str] = []
        while True:
            progressed = False
            for actor in (self.runner, self.finalizer):
                action = actor.step()
                if action is not None:
                    ran.append(action)
                    progressed = True
            if not progressed:
                return ran
            if len(ran) >= max_steps:
                raise RuntimeError(f"node {self.owner_id} did not settle in {max_steps} steps")
