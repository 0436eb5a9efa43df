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


def typescript_mutant(tmp_path, module: str, before: str, after: str):
    """A copy of the TypeScript example with one mutant written into `src/<module>` (as StrykerJS would make it,
    `before` occurring once); its driver's path. The copy shares the example's node_modules."""
    import shutil
    from pathlib import Path
    ts = Path(__file__).resolve().parents[1] / "examples" / "typescript"
    copy = tmp_path / "typescript"
    shutil.copytree(ts, copy, ignore=shutil.ignore_patterns("node_modules", ".stryker-tmp*", "reports"))
    (copy / "node_modules").symlink_to(ts / "node_modules")
    src = copy / "src" / module
    text = src.read_text(encoding="utf-8")
    assert text.count(before) == 1, f"src/{module}: the known mutant's line moved; update the test"
    src.write_text(text.replace(before, after), encoding="utf-8")
    return copy / "driver"


def fires_tool_publish_failed_after_every_failed_publication(monkeypatch):
    """A bundled runner that fires tool.publish_failed after a Step.Started or Step.Ended publication failure
    too (the TypeScript example's `pc === "tool_failed"` -> `true` before the failpoint)."""
    from impl import registry as IR
    from impl.runner import Runner
    original = Runner._publication_fails

    def fails(self):
        injected = original(self)
        if injected:
            self._hit(IR.B_TOOL_PUBLISH_FAILED)
        return injected

    monkeypatch.setattr(Runner, "_publication_fails", fails)
