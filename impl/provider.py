"""The deterministic stand-in for the language model: a script of outcomes, and a record of calls.

Each dispatch is recorded (the provider effect tests and the harness count). The outcome of an
execution's step is 'end' or 'fail': by execution id from `script`, else the next entry of `sequence`
(consumed in dispatch order), else `default`. `decide` sets it later (before the step publishes).
`steps` is how many Steps an execution has (the model's answer asks for another Step until then: the
twin's MaxSteps); a 'fail' ends the execution at the Step it fails. With `fragments` (the twin's
Fragments) a stream may open with a partial fragment before its Step's Step.Started: `open_fragment`
decides it for an execution's next stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

OUTCOMES = ("end", "fail")


@dataclass(frozen=True)
class ProviderCall:
    session_id: str
    execution_id: int
    owner_id: str
    at: int
    step: int = 1  # the Step whose call this is


@dataclass(frozen=True)
class ToolRun:
    """A local tool's physical run (an external effect): call `call` of Step `step` of an execution."""
    session_id: str
    execution_id: int
    owner_id: str  # the claim identity it works under
    node_id: str  # the node (or recovery worker) it runs on
    at: int
    step: int = 1
    call: int = 1  # the call's index in its Step


@dataclass(frozen=True)
class Reconciliation:
    """A finalizer's reconciliation of an execution's tools (an external effect, like a provider call)."""
    session_id: str
    execution_id: int
    owner_id: str  # the claim identity it works under
    node_id: str  # the node it runs on
    at: int


class ScriptedProvider:
    def __init__(self, script: Mapping[int, str] | None = None, sequence: Iterable[str] = (),
                 default: str = "end", steps: int = 1, tools: int = 0, fragments: int = 0, hosted: int = 0):
        if steps < 1:
            raise ValueError("steps must be at least 1")
        self.steps = steps
        self.tools = tools  # local tool calls per Step (the twin's Tools)
        self.hosted = hosted  # the twin's Hosted: each call also runs one hosted tool (call index tools + 1)
        self.fragments = fragments  # the twin's Fragments: a stream may open with a partial fragment
        self._fragment: set[int] = set()  # executions whose next stream opens with a partial fragment
        self.tool_runs: list[ToolRun] = []
        self._script = dict(script or {})
        self._sequence = list(sequence)
        self.default = default
        self.calls: list[ProviderCall] = []
        self.reconciliations: list[Reconciliation] = []
        for outcome in [*self._script.values(), *self._sequence, default]:
            _check(outcome)

    def dispatch(self, session_id: str, execution_id: int, owner_id: str, at: int, step: int = 1) -> None:
        self.calls.append(ProviderCall(session_id, execution_id, owner_id, at, step))
        if execution_id not in self._script and self._sequence:
            self._script[execution_id] = self._sequence.pop(0)

    def run_tool(self, session_id: str, execution_id: int, owner_id: str, node_id: str, at: int, step: int,
                 call: int) -> None:
        self.tool_runs.append(ToolRun(session_id, execution_id, owner_id, node_id, at, step, call))

    @property
    def hosted_call(self) -> int:
        """The call index a Step's hosted tool has (its Step.Started names it; 0: no hosted tool)."""
        return self.tools + 1 if self.hosted else 0

    def reconcile(self, session_id: str, execution_id: int, owner_id: str, node_id: str, at: int) -> None:
        self.reconciliations.append(Reconciliation(session_id, execution_id, owner_id, node_id, at))

    def decide(self, execution_id: int, outcome: str) -> None:
        self._script[execution_id] = _check(outcome)

    def open_fragment(self, execution_id: int, opens: bool) -> None:
        """Decide whether the execution's next stream opens with a partial fragment (with `fragments` only)."""
        if opens and self.fragments:
            self._fragment.add(execution_id)
        else:
            self._fragment.discard(execution_id)

    def opens_fragment(self, execution_id: int) -> bool:
        return execution_id in self._fragment

    def outcome(self, execution_id: int) -> str:
        return self._script.get(execution_id, self.default)

    def calls_for(self, session_id: str) -> list[ProviderCall]:
        return [c for c in self.calls if c.session_id == session_id]


def _check(outcome: str) -> str:
    if outcome not in OUTCOMES:
        raise ValueError(f"provider outcome {outcome!r} not in {OUTCOMES}")
    return outcome
