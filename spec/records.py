"""The shapes of the registry's entries (spec.names holds the entries): actions, invariants, assumptions,
residuals, defects and boundaries."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Action:
    name: str
    params: tuple[str, ...]
    actor: str  # runner | finalizer | recovery | node | supervisor | waker | environment | fault | caller
    fair: bool  # weakly fair in the liveness specification
    doc: str


@dataclass(frozen=True)
class Invariant:
    name: str
    kind: str  # state | action | liveness | refinement
    doc: str


@dataclass(frozen=True)
class Assumption:
    name: str
    protects: tuple[str, ...]  # invariants whose counterexample appears when the assumption is off
    doc: str
    config: str = "ci"  # the model configuration whose counterexample shows it (spec/configs.py)


@dataclass(frozen=True)
class Residual:
    name: str  # its number in docs/protocol.md section 5 ("R1")
    # the TLA+ operator (of a Session) that states it in the liveness properties it names: a stable residual
    # (once reached it stays: R1's quarantine) as a premise, `premise(s) == [](~X(s))`, `premise(s) => (P ~> Q)`;
    # one that can end (R2's hang) as the state that widens the goal, `P ~> (Q \/ premise(s))`. The twin
    # widens Q in both (spec.invariants.leads_to), which is the same formula only for a stable residual.
    premise: str
    properties: tuple[str, ...]  # the liveness properties it is a premise of
    doc: str
    stable: bool = True


@dataclass(frozen=True)
class Defect:
    name: str
    violates: tuple[str, ...]  # invariants its counterexample breaks (the first is the headline)
    source: str  # the findings it stands for: ids of docs/protocol.md, section 7 ("R003-MUST-FIX-1")
    doc: str
    config: str = "ci"  # the model configuration whose counterexample shows it (spec/configs.py)


@dataclass(frozen=True)
class Boundary:
    name: str
    after: str  # the action whose commit (or in-memory step) the boundary follows
    before: str  # the action that the code runs next in the same actor
    doc: str
    also: tuple[str, ...] = ()  # other actions whose unit ends at the same point (an acquisition by promotion)

    @property
    def follows(self) -> tuple[str, ...]:
        """The actions an edge may fire this boundary in: its own and those ending the same way."""
        return (self.after, *self.also)


def _index(items):
    return {item.name: item for item in items}


class UnknownName(ValueError):
    """A user named a defect, assumption, configuration or invariant the registry does not have (the
    command line reports it as bad usage, exit 2)."""
