"""Typed outcomes of every mutation: callers branch on them; nothing is silently ignored.

`Ok` carries an optional value; every other result says why nothing changed. `Abort` lets a
transaction body roll back everything it did and hand one of these results to its caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Result:
    ok: ClassVar[bool] = False

    def __bool__(self) -> bool:  # `if result:` means "it happened"
        return self.ok


@dataclass(frozen=True)
class Ok(Result):
    ok: ClassVar[bool] = True
    value: Any = None


@dataclass(frozen=True)
class Fenced(Result):
    """The claim is not the caller's exact, live claim (reason names the first failing part)."""
    reason: str


@dataclass(frozen=True)
class Occupied(Result):
    """Insert-only acquisition found a claim for the Session, live or expired."""
    session_id: str


@dataclass(frozen=True)
class Lost(Result):
    """A compare-and-swap found the row changed since it was observed."""
    reason: str


@dataclass(frozen=True)
class Released(Result):
    """A conversion that lost its lease left the claim, unchanged, for a later takeover to retry."""
    reason: str


@dataclass(frozen=True)
class Superseded(Result):
    """Zero rows changed because another worker owns (or already quarantined) the claim now."""
    reason: str


@dataclass(frozen=True)
class Conflict(Result):
    """A uniqueness or identity conflict (e.g. a recovery row of another Session)."""
    reason: str


@dataclass(frozen=True)
class Malformed(Result):
    """A durable row does not have the shape the protocol requires."""
    reason: str


@dataclass(frozen=True)
class Quarantined(Result):
    """The promotion refused a flawed continuation row and set it aside (quarantined) in its transaction: a
    step that happened (truthy), with no claim (spec/README.md decision 28)."""
    ok: ClassVar[bool] = True
    reason: str


@dataclass(frozen=True)
class NotEnabled(Result):
    """The actor's guard is false: the twin action is not enabled (nothing was done)."""
    reason: str


class Abort(Exception):
    """Raised inside a transaction body: roll everything back and return `result`."""

    def __init__(self, result: Result):
        super().__init__(result)
        self.result = result
