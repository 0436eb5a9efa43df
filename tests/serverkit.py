"""The servers the tests drive through the port (harness.port): the bundled one in this process, and a
stand-in whose worlds a test's own Scheduler subclass makes (a scheduler that lies about its state, or
refuses a step), so a check can be shown to fail."""

from __future__ import annotations

from binding.server import Bundled

BUNDLED = Bundled()  # a new database in memory per world; a lockstep campaign's on a sqlite file


class StandIn(Bundled):
    """The bundled server, its worlds made by `world(cfg, mutant=...)` (a binding.world.Scheduler subclass)."""

    def __init__(self, world):
        super().__init__()
        self.world = world

    def start(self, cfg, mutant=None):
        return self.world(cfg, mutant=mutant)
