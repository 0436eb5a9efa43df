"""The runner of one node: an explicit step machine with exactly the twin's record.

Fields mirror spec.model.Runner: pc, session, execution, mem (publisher memory: the last assistant id
it published, or None), active (publisher memory: assistant active), intr (an interrupt was delivered),
ordinal (the current Step: an execution runs the provider's `steps` Steps, one assistant each). `step()`
runs the one twin action its table (impl.actor) enables, one transaction or one in-memory update, then
hits the boundary that follows it; `run_to_completion()` is the production driver.

The runner receives what it uses, not its node: the claim store, the publisher, the input store, the
provider, and `Settling`, the one fact of its node's finalizer it reads (RunnerExit waits for it).
"""

from __future__ import annotations

from . import ids
from . import registry as R
from .actor import (ACQUIRED, DONE, ENDED, FAILED, HOSTED, HUNG, IDLE, PUBLISH_FAILED, RENEWED, STARTED, STEPPING, STOPPED,
                    STREAMING, TOOL_FAILED, TOOL_STARTED, TOOLING, Actor, Step)
from .claims import ClaimStore, Ident
from .context import Context
from .events import Fence, Publisher, StepEvent
from .inputs import InputStore
from .prepared import run
from .provider import ScriptedProvider
from .results import Abort, Fenced, NotEnabled, Ok, Result
from .schema import history_t


class Settling:
    """The execution this node's finalizer holds (None: none): the one fact of the finalizer its runner
    reads, since RunnerExit waits while the finalizer holds the runner's execution. The finalizer writes it
    and knows its runner; the runner knows only this, so neither actor holds the other both ways."""

    def __init__(self):
        self.execution_id: int | None = None

    def holds(self, execution_id: int | None) -> bool:
        return self.execution_id is not None and self.execution_id == execution_id


class Runner(Actor):
    def __init__(self, ctx: Context, owner_id: str, *, claims: ClaimStore, publisher: Publisher,
                 inputs: InputStore, provider: ScriptedProvider, settling: Settling):
        self.ctx, self.owner_id, self.settling = ctx, owner_id, settling
        self.claims, self.publisher, self.inputs, self.provider = claims, publisher, inputs, provider
        self.last: Result | None = None  # the typed result of the last step
        self.reset()
        stop = Step(R.RUNNER_STOP, self._runner_stop, lambda: self.intr)  # an interrupt: at any busy pc
        super().__init__({
            ACQUIRED: (stop, Step(R.RENEW, self._renew)),
            RENEWED: (stop, Step(R.DISPATCH, self._dispatch)),
            STREAMING: (stop, Step(R.OPEN_FRAGMENT, self._open_fragment, self._fragment_first),
                        Step(R.PUBLISH_STEP_STARTED, self._publish_step_started)),
            STARTED: (stop, Step(R.STEP_STARTED_RETURN, self._step_started_return)),
            HOSTED: (stop, Step(R.HOSTED_RECONCILE, self._hosted_reconcile)),
            STEPPING: (stop, Step(R.PUBLISH_STEP_FAILED, self._publish_step_failed, self._stream_failed),
                       Step(R.TOOL_START, self._tool_start, lambda: self.tool < self.provider.tools),
                       Step(R.PUBLISH_STEP_ENDED, self._publish_step_ended)),
            TOOL_STARTED: (stop, Step(R.TOOL_RUN, self._tool_run)),
            TOOLING: (stop, Step(R.PUBLISH_TOOL_SUCCESS, self._publish_tool_success)),
            TOOL_FAILED: (stop, Step(R.MARK_UNKNOWN, self._mark_unknown)),
            PUBLISH_FAILED: (stop, Step(R.MARK_UNKNOWN, self._mark_unknown)),
            FAILED: (stop, Step(R.STEP_FAILED_RETURN, self._step_failed_return)),
            ENDED: (stop, Step(R.STEP_ENDED_RETURN, self._step_ended_return)),
            DONE: (stop, Step(R.CLEAR_CLAIM, self._clear_claim)),
            STOPPED: (Step(R.RUNNER_EXIT, self._runner_exit, lambda: not self.settling.holds(self.execution_id)),),
            HUNG: (),  # a listener never returned (Residual R2): no step, not even the interrupt's stop
        })

    def reset(self) -> None:
        """RunnerIdle: no execution, publisher memory released."""
        self.pc = IDLE
        self.session_id: str | None = None
        self.execution_id: int | None = None
        self.mem: str | None = None
        self.active = False
        self.intr = False
        self.ordinal = 0
        self.tool = 0  # the tool-settlement flag: the Step's calls whose Tool.Success was published
        self.fail_publication = False  # a failpoint: the next publication (Step.Started, Tool.Success, Step.Ended) fails

    def start(self, session_id: str, execution_id: int) -> None:
        self.reset()
        self.pc, self.session_id, self.execution_id, self.ordinal = ACQUIRED, session_id, execution_id, 1

    def record(self) -> tuple:
        """(pc, session, execution, mem, active, intr, ordinal, tool), the twin's runner record."""
        return (self.pc, self.session_id, self.execution_id, self.mem, self.active, self.intr, self.ordinal,
                self.tool)

    def runs(self, execution_id: int | None) -> bool:
        """The runner works on this execution (a finalizer of it waits for the runner to stop)."""
        return self.busy and self.execution_id == execution_id

    @property
    def ident(self) -> Ident:
        return Ident(self.session_id, self.execution_id, self.owner_id)

    @property
    def fence(self) -> Fence:
        return Fence(self.ident, "running")

    def _fragment_first(self) -> bool:
        return not self.active and self.provider.opens_fragment(self.execution_id)

    def _stream_failed(self) -> bool:
        return self.provider.outcome(self.execution_id) == "fail"

    def supervise(self) -> bool:
        """Stop (in memory) if this busy runner no longer holds its exact, live claim; True if it stopped."""
        if not self.busy or self.claims.holds(self.ident):
            return False
        self._stop()
        return True

    # ------------------------------------------------------------------ actions

    def _hit(self, boundary: str) -> None:
        self.ctx.boundaries.hit(boundary, node=self.owner_id, session=self.session_id, execution=self.execution_id)

    def _stop(self) -> None:
        self.pc = STOPPED

    def steer(self, input_id: str) -> Result:
        """Steer: at a Step's start (before its renewal) take a pending input of this Session into the
        running execution, in one transaction fenced by the exact, live, running claim. Steer selection
        excludes recovery-owned inputs as queue selection does (InputStore.steer)."""
        if self.pc != ACQUIRED or self.intr:
            return NotEnabled(f"the runner is not at a Step's start (it is {self.pc})")
        ctx = self.ctx

        def body(conn):
            fenced = self.claims.check(conn, self.ident, ctx.now(), "running")
            return self.inputs.steer(conn, self.session_id, input_id) if fenced else fenced
        return ctx.db.atomic(body, sessions=[self.session_id])

    def _renew(self) -> Result:
        ctx = self.ctx
        result = ctx.db.atomic(lambda conn: self.claims.renew(conn, self.ident, ctx.now()),
                               sessions=[self.session_id])
        if not result and not ctx.has(R.DISPATCH_AFTER_FAILED_RENEWAL):  # the defect ignores the row count
            self._stop()
            return result
        self.pc = RENEWED
        self._hit(R.B_RENEW_COMMITTED)
        return result

    def _dispatch(self) -> Result:
        self.provider.dispatch(self.session_id, self.execution_id, self.owner_id, self.ctx.now(), self.ordinal)
        self.pc = STREAMING
        self._hit(R.B_PROVIDER_DISPATCHED)
        return Ok()

    def _open_fragment(self) -> Result:
        """OpenFragment: the stream's first event is a partial fragment; publisher memory holds it open
        (active) and names no assistant, since no Step.Started was published (in memory only)."""
        self.provider.open_fragment(self.execution_id, False)  # the provider's decision, consumed
        self.active = True
        self._hit(R.B_FRAGMENT_OPENED)
        return Ok()

    @property
    def assistant(self) -> str:
        """The current Step's assistant id."""
        return ids.assistant_id(self.execution_id, self.ordinal)

    def _event(self, kind: str, call: int = 0) -> StepEvent:
        return StepEvent(self.session_id, self.execution_id, self.assistant, kind, self.owner_id, call)

    @property
    def call(self) -> int:
        """The index of the Step's current local tool call: the calls run one after the other, so it is
        the next after those whose Tool.Success was published."""
        return self.tool + 1

    def _publish_step_started(self) -> Result:
        event = self._event(R.STARTED, self.provider.hosted_call)  # it names the Step's hosted call
        if self.ctx.has(R.MEMORY_BEFORE_PUBLISH):
            self.mem, self.active = event.assistant_id, True
        if self._publication_fails():
            return Fenced("the Step.Started publication failed")
        result = self.publisher.publish(event, self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc = STARTED
        self._hit(R.B_STEP_STARTED_COMMITTED)
        return result

    def _step_started_return(self) -> Result:
        self.publisher.notify(self._event(R.STARTED, self.provider.hosted_call))
        hosted = self.provider.hosted and not self.ctx.has(R.STEP_ENDED_BEFORE_HOSTED_TOOL)  # the defect: no reconciliation
        self.pc, self.mem, self.active = HOSTED if hosted else STEPPING, self.assistant, True
        return Ok()

    def _hosted_reconcile(self) -> Result:
        """The Step's hosted call (the provider ran it inside the dispatch): its outcome, Tool.Success with
        its call index, one fenced transaction, before any local tool, Step.Ended or Step.Failed."""
        if self._publication_fails():
            return Fenced("the hosted call's Tool.Success publication failed")
        result = self.publisher.publish(self._event(R.TOOL_SUCCEEDED, self.provider.hosted_call), self.fence,
                                        by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc = STEPPING
        return result

    def _tool_start(self) -> Result:
        """The fenced tool start: one transaction renews the lease and records the call (Tool.Started)."""
        result = self.publisher.publish(self._event(R.TOOL_STARTED, self.call), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc = TOOL_STARTED
        self._hit(R.B_TOOL_STARTED)
        return result

    def _tool_run(self) -> Result:
        """The physical tool: an external effect (the outside world records it), no transaction."""
        self.provider.run_tool(self.session_id, self.execution_id, self.owner_id, self.owner_id, self.ctx.now(),
                               self.ordinal, self.call)
        self.pc = TOOLING
        self._hit(R.B_TOOL_RAN)
        return Ok()

    def fail_next_publication(self, fault: str) -> str | None:
        """The environment's publication fault `fault` (ToolSuccessFails, StepStartedFails, StepEndedFails): the
        publication the runner makes now (Tool.Success, Step.Started, Step.Ended) fails."""
        at = {R.TOOL_SUCCESS_FAILS: self.pc == TOOLING, R.STEP_STARTED_FAILS: self.pc == STREAMING,
              R.HOSTED_RECONCILE_FAILS: self.pc == HOSTED,
              R.STEP_ENDED_FAILS: self.pc == STEPPING and self.tool >= self.provider.tools}
        if not at[fault] or self.intr:
            return None
        self.fail_publication = True
        self.step()
        return fault

    def hang_listener(self) -> str | None:
        """The environment's hang (Residual R2): a listener of the Step event just committed never returns.
        The runner stays at its gate, hung: it takes no step and observes no interrupt (its table has no
        step at HUNG), while it still runs its execution, so the node's heartbeat keeps the lease live and
        a finalizer of it waits. Only supervise() (the claim no longer its exact, live claim) or a crash
        ends it."""
        at_gate = self.pc in (STARTED, FAILED, ENDED) or (self.pc == DONE and self.active)
        if self.intr or not at_gate:
            return None
        self.pc = HUNG
        return R.LISTENER_HANGS

    def _publish_tool_success(self) -> Result:
        """Tool.Success (fenced); the settlement flag changes only once the publication committed."""
        early = self.ctx.has(R.TOOL_SETTLED_BEFORE_PUBLICATION)
        call = self.call  # the call this Tool.Success settles (before the defect's early flag moves it)
        if early:
            self.tool += 1  # the defect: the flag is set before the publication
        injected, self.fail_publication = self.fail_publication, False
        if injected:  # the environment's fault: the transaction does not commit, nothing durable changes
            self.pc = STEPPING if early else TOOL_FAILED  # correct: the call stays unsettled, the error path follows
            if not early:
                self._hit(R.B_TOOL_PUBLISH_FAILED)
            return Fenced("the Tool.Success publication failed")
        result = self.publisher.publish(self._event(R.TOOL_SUCCEEDED, call), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc, self.tool = STEPPING, self.tool if early else self.tool + 1
        return result

    def _mark_unknown(self) -> Result:
        """The error path after a failed publication (Tool.Success, Step.Started, Step.Ended): running ->
        unknown (fenced); the runner stops."""
        ctx = self.ctx
        if self.pc == TOOL_FAILED and ctx.has(R.RETRY_TOOL_AFTER_FAILED_PUBLICATION):  # the defect: run the tool again, publish again
            self.pc = TOOL_STARTED
            return Ok()
        result = ctx.db.atomic(lambda conn: self.claims.advance_phase(conn, self.ident, ctx.now(), "running",
                                                                      "unknown"), sessions=[self.session_id])
        self._stop()
        return result

    def _publish_step_failed(self) -> Result:
        result = self.publisher.publish(self._event(R.FAILED), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc = FAILED
        self._hit(R.B_STEP_FAILED_COMMITTED)
        return result

    def _step_failed_return(self) -> Result:
        self.publisher.notify(self._event(R.FAILED))
        self.pc, self.active = DONE, False
        return Ok()

    def _publication_fails(self) -> bool:
        """The environment's injected fault, consumed: the transaction does not commit, nothing durable
        changes; the provider call was made, so the runner's error path follows (MarkUnknown)."""
        injected, self.fail_publication = self.fail_publication, False
        if injected:
            self.pc = PUBLISH_FAILED
        return injected

    def _publish_step_ended(self) -> Result:
        if self._publication_fails():
            return Fenced("the Step.Ended publication failed")
        result = self.publisher.publish(self._event(R.ENDED), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        # the listener gate: memory still names the assistant, active, until the publish returns
        self.pc = ENDED if self.ordinal < self.provider.steps else DONE
        self._hit(R.B_STEP_ENDED_COMMITTED)
        return result

    def _step_ended_return(self) -> Result:
        self.publisher.notify(self._event(R.ENDED))
        self.pc, self.active, self.ordinal, self.tool = ACQUIRED, False, self.ordinal + 1, 0  # the next Step's renewal
        return Ok()

    def _clear_claim(self) -> Result:
        if self.active:  # the last Step's Step.Ended returns here (listeners); memory is released, not updated
            self.publisher.notify(self._event(R.ENDED))
        now = self.ctx.now()

        def body(conn):
            result = self.claims.clear(conn, self.ident, now, "running")
            if not result:
                raise Abort(result)
            record_history(conn, self.ident, "cleared", now)
            return result
        result = self.ctx.db.atomic(body, sessions=[self.session_id])
        if not result:
            self._stop()
        else:
            self.reset()
        return result

    def _runner_stop(self) -> Result:
        self._stop()
        return Ok()

    def _runner_exit(self) -> Result:
        self.reset()
        return Ok()


def record_history(conn, ident: Ident, outcome: str, now: int) -> None:
    """Durably note how an execution left its claim (cleared, cancelled, recovered)."""
    run(conn, _INSERT_HISTORY, dict(execution_id=ident.execution_id, session_id=ident.session_id,
                                    outcome=outcome, at=now))


_INSERT_HISTORY = history_t.insert()

