"""The runner of one node: an explicit step machine with exactly the twin's record.

Fields mirror spec.model.Runner: pc, session, execution, mem (publisher memory: the last assistant id
it published, or None), active (publisher memory: assistant active), intr (an interrupt was delivered),
ordinal (the current Step: an execution runs the provider's `steps` Steps, one assistant each). `step()`
runs the one twin action enabled for the runner, one transaction or one in-memory update, then hits
the boundary that follows it; `run_to_completion()` is the production driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import ids
from . import registry as R
from .claims import Ident
from .events import Fence, StepEvent
from .prepared import run
from .results import Abort, Fenced, NotEnabled, Ok, Result
from .schema import history_t

if TYPE_CHECKING:
    from .node import Node

IDLE, ACQUIRED, RENEWED, STREAMING, STARTED, STEPPING, FAILED, ENDED, DONE, STOPPED = (
    "idle", "acquired", "renewed", "streaming", "started", "stepping", "failed", "ended", "done", "stopped")
TOOL_STARTED, TOOLING, TOOL_FAILED = "tool_started", "tooling", "tool_failed"


class Runner:
    def __init__(self, node: "Node"):
        self.node = node
        self.last: Result | None = None  # the typed result of the last step
        self.reset()

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
        self.fail_publication = False  # a failpoint: the next Tool.Success publication fails

    def start(self, session_id: str, execution_id: int) -> None:
        self.reset()
        self.pc, self.session_id, self.execution_id, self.ordinal = ACQUIRED, session_id, execution_id, 1

    def record(self) -> tuple:
        """(pc, session, execution, mem, active, intr, ordinal, tool), the twin's runner record."""
        return (self.pc, self.session_id, self.execution_id, self.mem, self.active, self.intr, self.ordinal,
                self.tool)

    @property
    def busy(self) -> bool:
        return self.pc not in (IDLE, STOPPED)

    @property
    def ident(self) -> Ident:
        return Ident(self.session_id, self.execution_id, self.node.owner_id)

    @property
    def fence(self) -> Fence:
        return Fence(self.ident, "running")

    # ------------------------------------------------------------------ the step machine

    def enabled(self) -> str | None:
        """The twin action `step()` would run now, or None."""
        if self.pc == IDLE:
            return None
        if self.intr and self.pc != STOPPED:
            return R.RUNNER_STOP
        if self.pc == STOPPED:
            return None if self.node.finalizer.holds(self.execution_id) else R.RUNNER_EXIT
        if self.pc == STEPPING:
            if self.node.provider.outcome(self.execution_id) == "fail":
                return R.PUBLISH_STEP_FAILED
            return R.TOOL_START if self.tool < self.node.provider.tools else R.PUBLISH_STEP_ENDED
        return {ACQUIRED: R.RENEW, RENEWED: R.DISPATCH, STREAMING: R.PUBLISH_STEP_STARTED,
                TOOL_STARTED: R.TOOL_RUN, TOOLING: R.PUBLISH_TOOL_SUCCESS, TOOL_FAILED: R.MARK_UNKNOWN,
                STARTED: R.STEP_STARTED_RETURN, FAILED: R.STEP_FAILED_RETURN, ENDED: R.STEP_ENDED_RETURN,
                DONE: R.CLEAR_CLAIM}[self.pc]

    def supervise(self) -> bool:
        """Stop (in memory) if this busy runner no longer holds its exact, live claim; True if it stopped."""
        if not self.busy or self.node.holds_claim(self.ident):
            return False
        self._stop()
        return True

    def step(self) -> str | None:
        """Run the enabled action; return its name (None: nothing enabled)."""
        action = self.enabled()
        if action is not None:
            self.last = getattr(self, f"_{action}")()
        return action

    def run_to_completion(self, max_steps: int = 1000) -> list[str]:
        ran = []
        while (action := self.step()) is not None:
            ran.append(action)
            if len(ran) >= max_steps:
                raise RuntimeError(f"runner did not finish in {max_steps} steps: {ran[-5:]}")
        return ran

    # ------------------------------------------------------------------ actions

    def _hit(self, boundary: str) -> None:
        self.node.ctx.boundaries.hit(boundary, node=self.node.owner_id, session=self.session_id,
                                     execution=self.execution_id)

    def _stop(self) -> None:
        self.pc = STOPPED

    def steer(self, input_id: str) -> Result:
        """Steer: at a Step's start (before its renewal) take a pending input of this Session into the
        running execution, in one transaction fenced by the exact, live, running claim. Steer selection
        excludes recovery-owned inputs as queue selection does (InputStore.steer)."""
        if self.pc != ACQUIRED or self.intr:
            return NotEnabled(f"the runner is not at a Step's start (it is {self.pc})")
        ctx = self.node.ctx

        def body(conn):
            fenced = self.node.claims.check(conn, self.ident, ctx.now(), "running")
            return self.node.inputs.steer(conn, self.session_id, input_id) if fenced else fenced
        return ctx.db.atomic(body, sessions=[self.session_id])

    def _Renew(self) -> Result:
        ctx = self.node.ctx
        result = ctx.db.atomic(lambda conn: self.node.claims.renew(conn, self.ident, ctx.now()),
                               sessions=[self.session_id])
        if not result and not ctx.has(R.DISPATCH_AFTER_FAILED_RENEWAL):  # the defect ignores the row count
            self._stop()
            return result
        self.pc = RENEWED
        self._hit(R.B_RENEW_COMMITTED)
        return result

    def _Dispatch(self) -> Result:
        self.node.provider.dispatch(self.session_id, self.execution_id, self.node.owner_id, self.node.ctx.now(),
                                    self.ordinal)
        self.pc = STREAMING
        self._hit(R.B_PROVIDER_DISPATCHED)
        return Ok()

    @property
    def assistant(self) -> str:
        """The current Step's assistant id."""
        return ids.assistant_id(self.execution_id, self.ordinal)

    def _event(self, kind: str) -> StepEvent:
        return StepEvent(self.session_id, self.execution_id, self.assistant, kind, self.node.owner_id)

    def _PublishStepStarted(self) -> Result:
        event = self._event(R.STARTED)
        if self.node.ctx.has(R.MEMORY_BEFORE_PUBLISH):
            self.mem, self.active = event.assistant_id, True
        result = self.node.publisher.publish(event, self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc = STARTED
        self._hit(R.B_STEP_STARTED_COMMITTED)
        return result

    def _StepStartedReturn(self) -> Result:
        self.node.publisher.notify(self._event(R.STARTED))
        self.pc, self.mem, self.active = STEPPING, self.assistant, True
        return Ok()

    def _ToolStart(self) -> Result:
        """The fenced tool start: one transaction renews the lease and records the call (Tool.Started)."""
        result = self.node.publisher.publish(self._event(R.TOOL_STARTED), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc = TOOL_STARTED
        self._hit(R.B_TOOL_STARTED)
        return result

    def _ToolRun(self) -> Result:
        """The physical tool: an external effect (the outside world records it), no transaction."""
        self.node.provider.run_tool(self.session_id, self.execution_id, self.node.owner_id, self.node.owner_id,
                                    self.node.ctx.now(), self.ordinal)
        self.pc = TOOLING
        self._hit(R.B_TOOL_RAN)
        return Ok()

    def fail_next_publication(self) -> str | None:
        """The environment's publication fault: the Tool.Success publication the runner makes now fails."""
        if self.pc != TOOLING or self.intr:
            return None
        self.fail_publication = True
        self.step()
        return R.TOOL_SUCCESS_FAILS

    def _PublishToolSuccess(self) -> Result:
        """Tool.Success (fenced); the settlement flag changes only once the publication committed."""
        early = self.node.ctx.has(R.TOOL_SETTLED_BEFORE_PUBLICATION)
        if early:
            self.tool += 1  # the defect: the flag is set before the publication
        injected, self.fail_publication = self.fail_publication, False
        if injected:  # the environment's fault: the transaction does not commit, nothing durable changes
            self.pc = STEPPING if early else TOOL_FAILED  # correct: the call stays unsettled, the error path follows
            if not early:
                self._hit(R.B_TOOL_PUBLISH_FAILED)
            return Fenced("the Tool.Success publication failed")
        result = self.node.publisher.publish(self._event(R.TOOL_SUCCEEDED), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc, self.tool = STEPPING, self.tool if early else self.tool + 1
        return result

    def _MarkUnknown(self) -> Result:
        """The error path after a failed Tool.Success: running -> unknown (fenced); the runner stops."""
        ctx = self.node.ctx
        if ctx.has(R.RETRY_TOOL_AFTER_FAILED_PUBLICATION):  # the defect: run the tool again, publish again
            self.pc = TOOL_STARTED
            return Ok()
        result = ctx.db.atomic(lambda conn: self.node.claims.advance_phase(conn, self.ident, ctx.now(), "running",
                                                                           "unknown"), sessions=[self.session_id])
        self._stop()
        return result

    def _PublishStepFailed(self) -> Result:
        result = self.node.publisher.publish(self._event(R.FAILED), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.pc = FAILED
        self._hit(R.B_STEP_FAILED_COMMITTED)
        return result

    def _StepFailedReturn(self) -> Result:
        self.node.publisher.notify(self._event(R.FAILED))
        self.pc, self.active = DONE, False
        return Ok()

    def _PublishStepEnded(self) -> Result:
        result = self.node.publisher.publish(self._event(R.ENDED), self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        # the listener gate: memory still names the assistant, active, until the publish returns
        self.pc = ENDED if self.ordinal < self.node.provider.steps else DONE
        self._hit(R.B_STEP_ENDED_COMMITTED)
        return result

    def _StepEndedReturn(self) -> Result:
        self.node.publisher.notify(self._event(R.ENDED))
        self.pc, self.active, self.ordinal, self.tool = ACQUIRED, False, self.ordinal + 1, 0  # the next Step's renewal
        return Ok()

    def _ClearClaim(self) -> Result:
        if self.active:  # the last Step's Step.Ended returns here (listeners); memory is released, not updated
            self.node.publisher.notify(self._event(R.ENDED))
        now = self.node.ctx.now()

        def body(conn):
            result = self.node.claims.clear(conn, self.ident, now, "running")
            if not result:
                raise Abort(result)
            record_history(conn, self.ident, "cleared", now)
            return result
        result = self.node.ctx.db.atomic(body, sessions=[self.session_id])
        if not result:
            self._stop()
        else:
            self.reset()
        return result

    def _RunnerStop(self) -> Result:
        self._stop()
        return Ok()

    def _RunnerExit(self) -> Result:
        self.reset()
        return Ok()


def record_history(conn, ident: Ident, outcome: str, now: int) -> None:
    """Durably note how an execution left its claim (cleared, cancelled, recovered)."""
    run(conn, _INSERT_HISTORY, dict(execution_id=ident.execution_id, session_id=ident.session_id,
                                    outcome=outcome, at=now))


_INSERT_HISTORY = history_t.insert()

