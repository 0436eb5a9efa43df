"""The twin's answers about a state, computed once per lockstep campaign.

Why: the twin's enabled instances, whether a Tick is a pause, the invariants, the refusals a probe may
draw and their reasons are functions of the configuration and a state (or an edge) only, and lockstep
comes back to the same states over and over (every run starts at Init: ci's 5,600 steps visit some 600
distinct states), so each is computed on a state's first visit and looked up after. The answers are
the twin's own (`spec.model`, `spec.invariants`, called through their modules at the first visit, so a
test's or a benchmark's stand-in is what is remembered); a campaign's memo lives as long as its run.
"""

from __future__ import annotations

from spec import invariants as I
from spec import model as M

LIMIT = 200_000  # entries per table; past it the table starts again (a deep campaign's memory stays bounded)


class Here:
    """One twin state's answers: `enabled` (M.successors, as a list), `paused` (M.pausing); the
    machine fills `refusals` and `reasons` (aligned with them) when it first needs them."""

    __slots__ = ("enabled", "paused", "refusals", "reasons")

    def __init__(self, enabled: list, paused: bool):
        self.enabled, self.paused = enabled, paused
        self.refusals: list | None = None
        self.reasons: list | None = None


class Memo:
    def __init__(self, cfg: M.Config):
        self.cfg = cfg
        self._here: dict[M.State, Here] = {}
        self._state: dict[M.State, list[str]] = {}
        self._edge: dict[tuple[M.State, M.State], list[str]] = {}

    def here(self, st: M.State) -> Here:
        got = self._here.get(st)
        if got is None:
            if len(self._here) >= LIMIT:
                self._here.clear()
            got = self._here[st] = Here(list(M.successors(self.cfg, st)), M.pausing(self.cfg, st))
        return got

    def check_state(self, st: M.State) -> list[str]:
        """I.check_state (a new list each call: the caller may extend it)."""
        got = self._state.get(st)
        if got is None:
            if len(self._state) >= LIMIT:
                self._state.clear()
            got = self._state[st] = I.check_state(self.cfg, st)
        return list(got)

    def check_edge(self, st: M.State, nx: M.State) -> list[str]:
        """I.check_edge (a new list each call)."""
        key = (st, nx)
        got = self._edge.get(key)
        if got is None:
            if len(self._edge) >= LIMIT:
                self._edge.clear()
            got = self._edge[key] = I.check_edge(self.cfg, st, nx)
        return list(got)
