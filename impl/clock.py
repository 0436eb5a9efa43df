"""Injected time. Every lease decision reads `Clock.now()`, so tests and the harness control time
exactly (ManualClock) and production uses wall time in integer ticks (SystemClock).

A lease is live iff `now < lease_expires_at`; a fresh lease is `now + lease_ticks`.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> int: ...


class ManualClock:
    """A clock that moves only when told: the twin's Tick is `advance(1)`."""

    def __init__(self, start: int = 0):
        self._now = start

    def now(self) -> int:
        return self._now

    def set(self, value: int) -> None:
        if value < self._now:
            raise ValueError("a ManualClock never runs backwards")
        self._now = value

    def advance(self, ticks: int = 1) -> int:
        self.set(self._now + ticks)
        return self._now


class SystemClock:
    """Wall time (shared between nodes, unlike a process-local monotonic clock) in ticks of
    `tick_seconds`, never decreasing within this process even if the wall clock steps back."""

    def __init__(self, tick_seconds: float = 1.0, source=time.time):
        if tick_seconds <= 0:
            raise ValueError("tick_seconds must be positive")
        self.tick_seconds = tick_seconds
        self._source = source
        self._last = 0

    def now(self) -> int:
        self._last = max(self._last, int(self._source() / self.tick_seconds))
        return self._last
