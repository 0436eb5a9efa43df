"""The port (harness/port/): every server claimcheck drives declares it, checked structurally (the
protocols are runtime checkable: each member present), and the check can fail (a stand-in short of one
member is refused). The bundled server in process, the driver client, and the stress side's server,
history, run database and vocabulary."""

from __future__ import annotations

import pytest

from binding.driver import Driver
from binding.savepoints import Savepoints as BundledSavepoints
from binding.server import Bundled
from binding.stress import BUNDLED as STRESS
from binding.stress import RecordedHistory, RunDatabase
from harness.conformance import conform as C
from harness.driver.client import Connection, Sut, SutScheduler
from harness.driver.points import DriverPoints
from harness.driver.transport import InProcess
from harness.port import Campaigns, Runs, Saves, Savepoints, Server, World
from harness.port import history as PH
from impl.db import Database
from spec import configs

CFG = configs.get("ci")


def test_the_bundled_server_declares_the_port_and_both_capabilities():
    server = Bundled()
    assert isinstance(server, Server) and isinstance(server, Saves) and isinstance(server, Campaigns)
    world = server.start(CFG)
    assert isinstance(world, World)
    assert isinstance(server.points(world, None), Savepoints) and isinstance(world, World)
    runs = server.campaign(CFG)
    try:
        assert isinstance(runs, Runs) and isinstance(runs.start(), World)
    finally:
        runs.close()
    assert isinstance(BundledSavepoints(world), Savepoints)


def test_the_driver_client_declares_the_port_and_saves_but_runs_no_campaign():
    sut = Sut("in process", opener=lambda: Connection(InProcess(Driver())))
    try:
        assert isinstance(sut, Server) and isinstance(sut, Saves) and not isinstance(sut, Campaigns)
        world = sut.start(CFG)
        assert isinstance(world, World) and isinstance(world, SutScheduler)
        assert isinstance(sut.points(world, C.graph_of(configs.get("ci"))), Savepoints)
        assert isinstance(DriverPoints(world, None, saves=False), Savepoints)
    finally:
        sut.close()


def test_the_stress_side_declares_the_recorded_port(tmp_path):
    assert isinstance(STRESS, PH.StressServer) and isinstance(STRESS.vocabulary, PH.Vocabulary)
    db = Database.memory()
    assert isinstance(RecordedHistory(db), PH.History)
    run = RunDatabase(f"sqlite:///{tmp_path / 'stress.db'}", {"sessions": ["s1"], "nodes": ["n1"]}, pg_lock="session",
                      tick=0.01)
    try:
        assert isinstance(run, PH.RunDatabase) and isinstance(run, PH.History)
    finally:
        run.dispose()


class _NoMove:
    """A world short of `move`: what a server that cannot let an actor take its own step would be."""

    faults = frozenset()
    hits: list = []
    names: list = []

    def apply(self, name, params, twin_next): ...

    def attempt(self, name, params): ...

    def state(self): ...


def test_the_structural_check_refuses_a_world_short_of_a_member():
    assert not isinstance(_NoMove(), World)
    assert not isinstance(object(), Server) and not isinstance(Bundled(), PH.StressServer)


def test_the_walk_refuses_a_server_that_cannot_save():
    class NoSaves:
        command, label = None, "a stand-in without save and restore"

        def start(self, cfg, mutant=None):
            return Bundled().start(cfg, mutant)

        def fresh(self):
            return self

        def check_workers(self, workers): ...

        def close(self): ...

    assert isinstance(NoSaves(), Server) and not isinstance(NoSaves(), Saves)
    with pytest.raises(TypeError, match="offers no save and restore"):
        C.walk(CFG, server=NoSaves())
