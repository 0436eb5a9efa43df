"""What every actor of one process shares: database, clock, boundaries, defect switches, lease length."""

from __future__ import annotations

from dataclasses import dataclass, field

from spec import names as N

from .boundaries import Boundaries
from .clock import Clock
from .db import Database


@dataclass(frozen=True)
class Context:
    db: Database
    clock: Clock
    boundaries: Boundaries = field(default_factory=Boundaries)
    defects: frozenset[str] = frozenset()
    lease_ticks: int = 1
    grace_ticks: int = 0  # ticks an expired claim waits before recovery may take it over (Grace)

    def __post_init__(self):
        object.__setattr__(self, "defects", frozenset(N.check_defects(self.defects)))
        if self.lease_ticks < 1:
            raise ValueError("lease_ticks must be at least 1")

    def has(self, defect: str) -> bool:
        """Whether a known defect is switched on (the one branch point of each defect)."""
        return defect in self.defects

    def now(self) -> int:
        return self.clock.now()

    def lease_from(self, now: int) -> int:
        return now + self.lease_ticks
