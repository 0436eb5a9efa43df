"""The runner of one node: an explicit step machine with exactly the twin's record.

Fields mirror spec.model.Runner: pc, session, execution, mem (publisher memory: the current assistant
id, or None), active (publisher memory: assistant active), intr (an interrupt was delivered). `step()`
runs the one twin action enabled for the runner, one transaction or one in-memory update, then hits
the boundary that follows it; `run_to_completion()` is the production driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import ids
from . import registry as R
from .claims import Ident
from .events import Fence, StepEvent
from .results import Abort, Ok, Result
from .schema import history_t

if TYPE_CHECKING:
    from .node import Node

IDLE, ACQUIRED, RENEWED, STREAMING, STARTED, STEPPING, FAILED, DONE, STOPPED = (
    "idle", "acquired", "renewed", "streaming", "started", "stepping", "failed", "done", "stopped")


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

    def start(self, session_id: str, execution_id: int) -> None:
        self.reset()
        self.pc, self.session_id, self.execution_id = ACQUIRED, session_id, execution_id

    def record(self) -> tuple:
        """(pc, session, execution, mem, active, intr), the twin's runner record."""
        return (self.pc, self.session_id, self.execution_id, self.mem, self.active, self.intr)

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
            failed = self.node.provider.outcome(self.execution_id) == "fail"
            return R.PUBLISH_STEP_FAILED if failed else R.PUBLISH_STEP_ENDED
        return {ACQUIRED: R.RENEW, RENEWED: R.DISPATCH, STREAMING: R.PUBLISH_STEP_STARTED,
                STARTED: R.STEP_STARTED_RETURN, FAILED: R.STEP_FAILED_RETURN, DONE: R.CLEAR_CLAIM}[self.pc]

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

    def _Renew(self) -> Result:
        ctx = self.node.ctx
        result = ctx.db.atomic(lambda conn: self.node.claims.renew(conn, self.ident, ctx.now()))
        if not result:
            self._stop()
            return result
        self.pc = RENEWED
        self._hit(R.B_RENEW_COMMITTED)
        return result

    def _Dispatch(self) -> Result:
        self.node.provider.dispatch(self.session_id, self.execution_id, self.node.owner_id, self.node.ctx.now())
        self.pc = STREAMING
        self._hit(R.B_PROVIDER_DISPATCHED)
        return Ok()

    def _event(self, kind: str) -> StepEvent:
        return StepEvent(self.session_id, self.execution_id, ids.assistant_id(self.execution_id), kind,
                         self.node.owner_id)

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
        self.pc, self.mem, self.active = STEPPING, ids.assistant_id(self.execution_id), True
        return Ok()

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
        event = self._event(R.ENDED)
        result = self.node.publisher.publish(event, self.fence, by_runner=True)
        if not result:
            self._stop()
            return result
        self.node.publisher.notify(event)
        self.pc, self.active = DONE, False
        self._hit(R.B_STEP_ENDED_COMMITTED)
        return result

    def _ClearClaim(self) -> Result:
        now = self.node.ctx.now()

        def body(conn):
            result = self.node.claims.clear(conn, self.ident, now, "running")
            if not result:
                raise Abort(result)
            record_history(conn, self.ident, "cleared", now)
            return result
        result = self.node.ctx.db.atomic(body)
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
    conn.execute(history_t.insert().values(execution_id=ident.execution_id, session_id=ident.session_id,
                                           outcome=outcome, at=now))

