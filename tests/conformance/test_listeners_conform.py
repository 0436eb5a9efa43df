"""A hung listener on the bundled server (Residual R2, spec/README.md decision 24): the walk of `listeners`
takes ListenerHangs where the twin does, and fails on a server that does not record the hang; the race
trace (traces/listener-hang.json: hang, cancel, the refused stop, the heartbeat, a pause, recovery) passes,
and fails on a server whose hung runner still stops on its interrupt (the walk never moves an actor the twin
does not enable; a trace's refused step does)."""

from functools import lru_cache

from serverkit import BUNDLED

from harness.conformance import conform as C
from harness.conformance.exhaustive import resolve
from harness.conformance.replay import TRACES, replay_file
from impl import registry as R
from impl.actor import HUNG
from impl.runner import Runner

LABEL = "listeners/max_exec=1"  # the ci profile's: 1,086 states


@lru_cache(maxsize=1)
def _cfg_graph():
    cfg, _ = resolve(LABEL)
    return cfg, C.graph_of(cfg)


def _walk():
    cfg, graph = _cfg_graph()
    return C.walk(cfg, server=BUNDLED, graph=graph)


def test_the_walk_of_listeners_takes_every_hang():
    rep = _walk()
    assert rep.failure is None and rep.complete, rep.failure
    assert rep.actions["ListenerHangs"] > 0 and rep.states == rep.states_total


def test_a_hang_the_server_does_not_record_diverges(monkeypatch):
    """Stand-in: the listener hangs, but the runner's record stays at its gate (the pc it reports)."""
    monkeypatch.setattr(Runner, "hang_listener", lambda self: R.LISTENER_HANGS if self.pc != HUNG else None)
    rep = _walk()
    assert rep.failure is not None and "ListenerHangs" in str(rep.failure)


def test_the_listener_hang_trace_passes_and_fails_where_a_hung_runner_stops(monkeypatch):
    """Stand-in: a hung runner still observes an interrupt and stops (its listener returned after all)."""
    path = TRACES / "listener-hang.json"
    assert replay_file(path, server=BUNDLED).ok
    enabled = Runner.enabled
    monkeypatch.setattr(Runner, "enabled",
                        lambda self: R.RUNNER_STOP if self.pc == HUNG and self.intr else enabled(self))
    res = replay_file(path, server=BUNDLED)
    assert not res.ok and any("RunnerStop" in p for p in res.problems), res.problems
