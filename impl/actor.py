"""The step machine the runner, the finalizer and the recovery worker share, and their pc names.

An actor states its steps once, in an explicit table: for each pc, the steps that pc can take, in order,
each an action name, the method that takes it (one atomic unit) and the guard it waits on. The pc enables
the first step whose guard holds, as the twin enables one action of an actor at a time (spec/model.py).
`enabled()` names that action; `step()` runs the method the table gives for the name `enabled()` returns
(so a stand-in `enabled()` in a test still runs the real method) and keeps its typed result in `last`.

The pc names are the twin's (spec.names RUNNER_PCS, FINALIZER_PCS, RECOVERY_PCS), spelt here once for
impl/ and checked at import, so a misspelt pc is an import error.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping, NamedTuple, Sequence

from spec import names as N

from .results import Result


def _pc(name: str, *vocabularies: tuple[str, ...]) -> str:
    missing = [v for v in vocabularies if name not in v]
    if missing:
        raise KeyError(f"pc {name!r} is not in the registry's {missing}")
    return name


IDLE = _pc("idle", N.RUNNER_PCS, N.FINALIZER_PCS, N.RECOVERY_PCS)  # every actor at rest
# the runner's (spec.names RUNNER_PCS)
ACQUIRED = _pc("acquired", N.RUNNER_PCS)
RENEWED = _pc("renewed", N.RUNNER_PCS)
STREAMING = _pc("streaming", N.RUNNER_PCS)
STARTED = _pc("started", N.RUNNER_PCS)
STEPPING = _pc("stepping", N.RUNNER_PCS)
TOOL_STARTED = _pc("tool_started", N.RUNNER_PCS)
TOOLING = _pc("tooling", N.RUNNER_PCS)
TOOL_FAILED = _pc("tool_failed", N.RUNNER_PCS)
HOSTED = _pc("hosted", N.RUNNER_PCS)  # after Step.Started's return: the Step's hosted call to reconcile
PUBLISH_FAILED = _pc("publish_failed", N.RUNNER_PCS)  # a Step.Started or Step.Ended publication failed
FAILED = _pc("failed", N.RUNNER_PCS)
ENDED = _pc("ended", N.RUNNER_PCS)
DONE = _pc("done", N.RUNNER_PCS)
STOPPED = _pc("stopped", N.RUNNER_PCS)
HUNG = _pc("hung", N.RUNNER_PCS)  # a listener never returned (the environment's hang, Residual R2): no step
# the finalizer's (FINALIZER_PCS)
SETTLE = _pc("settle", N.FINALIZER_PCS)
RECONCILING = _pc("reconciling", N.FINALIZER_PCS)  # its reconciliation began; the settlement is due
CLEAR = _pc("clear", N.FINALIZER_PCS)
# the recovery worker's (RECOVERY_PCS)
SCANNED = _pc("scanned", N.RECOVERY_PCS)
CONVERTING = _pc("converting", N.RECOVERY_PCS)
RECONCILED = _pc("reconciled", N.RECOVERY_PCS)  # its reconciliation began; the conversion is due
QUARANTINING = _pc("quarantining", N.RECOVERY_PCS)
RECONVERTING = _pc("reconverting", N.RECOVERY_PCS)  # after a lost commit acknowledgement: the retry is due

RUNNER_PCS = (IDLE, ACQUIRED, RENEWED, STREAMING, STARTED, STEPPING, TOOL_STARTED, TOOLING, TOOL_FAILED, PUBLISH_FAILED, FAILED,
              ENDED, DONE, STOPPED, HUNG, HOSTED)
FINALIZER_PCS = (IDLE, SETTLE, RECONCILING, CLEAR)
RECOVERY_PCS = (IDLE, SCANNED, CONVERTING, RECONCILED, QUARANTINING, RECONVERTING)


class Step(NamedTuple):
    """One action an actor can take: its registry name, the method that takes it (it returns the typed
    result), and the guard it waits on (None: none)."""
    action: str
    take: Callable[[], Result]
    when: Callable[[], object] | None = None


class Actor:
    """An actor's step machine over its table: pc -> the steps that pc can take, in order."""

    pc: str
    last: Result | None = None  # the typed result of the last step

    def __init__(self, table: Mapping[str, Sequence[Step]]):
        takes: dict[str, Callable[[], Result]] = {}
        for steps in table.values():
            for s in steps:
                if takes.setdefault(s.action, s.take) != s.take:
                    raise ValueError(f"{type(self).__name__} takes {s.action} by two methods")
        # fixed at construction, read-only: not the actor's memory (a savepoint copies memory only)
        self.table = MappingProxyType({pc: tuple(steps) for pc, steps in table.items()})
        self.takes = MappingProxyType(takes)

    @property
    def busy(self) -> bool:
        """The actor works on an execution (stopped: a runner that only waits to release its memory)."""
        return self.pc not in (IDLE, STOPPED)

    def enabled(self) -> str | None:
        """The action `step()` would take now (the first of the pc's steps whose guard holds), or None."""
        for s in self.table.get(self.pc, ()):
            if s.when is None or s.when():
                return s.action
        return None

    def step(self) -> str | None:
        """Take the enabled action; return its name (None: nothing enabled)."""
        action = self.enabled()
        if action is not None:
            self.last = self.takes[action]()
        return action

    def run_to_completion(self, max_steps: int = 1000) -> list[str]:
        """The production driver: step until nothing is enabled."""
        ran = []
        while (action := self.step()) is not None:
            ran.append(action)
            if len(ran) >= max_steps:
                raise RuntimeError(f"{type(self).__name__} did not finish in {max_steps} steps: {ran[-5:]}")
        return ran
