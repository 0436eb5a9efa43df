"""`--sut CMD` on fuzz, conform, the kill matrix and the gate: the bundled implementation behind its driver
(in process, and as `python -m binding.driver`) passes what it passes in process, is caught with a defect
switched on, and the walk restores a driver without save by replaying each path from Init."""

import shlex
import sys

import pytest

from harness.cli import main
from harness.conformance import conform as C
from harness.conformance import exhaustive as X
from harness.conformance import killmatrix as K
from harness.driver.client import Connection, Sut
from harness.driver.transport import InProcess
from harness.reports import gate
from binding.driver import Driver
from serverkit import BUNDLED

from test_sut_replay import DRIVER, importable  # noqa: F401 - the fixture puts the clone on the path

LABEL = "steer/no-faults"  # 485 states, 524 edges, 3,434 probes: every kind of request, in seconds


def in_process(**kw) -> Sut:
    return Sut("in process", opener=lambda: Connection(InProcess(Driver(**kw))))


@pytest.fixture(scope="module")
def small():
    cfg, _ = X.resolve(LABEL)
    return cfg, C.graph_of(cfg)


def covered(rep):
    return rep.complete, rep.states, rep.edges, rep.probes, dict(rep.actions), dict(rep.boundaries)


@pytest.mark.parametrize("how", ["save", "no save", "subprocess"])
def test_the_walk_through_the_driver_covers_what_it_covers_in_process(small, how):
    cfg, graph = small
    sut = Sut(DRIVER) if how == "subprocess" else in_process(save=how == "save")
    try:
        rep = C.walk(cfg, graph=graph, server=sut)
    finally:
        sut.close()
    assert rep.failure is None and covered(rep) == covered(C.walk(cfg, graph=graph, server=BUNDLED))
    assert rep.savepoint == ("replayed from Init (the driver does not save)" if how == "no save"
                             else "driver save/restore")


def test_the_walk_on_two_workers_starts_a_driver_process_each_and_covers_the_same(small):
    cfg, graph = small
    sut = Sut(DRIVER)
    rep = C.walk(cfg, graph=graph, server=sut, workers=2)
    assert sut.conn is None  # the parent never started one: each worker did
    assert rep.failure is None and covered(rep) == covered(C.walk(cfg, graph=graph, server=BUNDLED))
    bad = C.walk(cfg, graph=graph, server=Sut(DRIVER), workers=2, mutant=["memory-before-publish"])
    assert bad.failure is not None and bad.failure.kind == "divergence"


def test_a_driver_whose_restore_does_nothing_fails_the_walk(small, monkeypatch):
    """The stand-in that shows the walk depends on restore: without it the second edge out of a state
    starts where the first one left the server."""
    monkeypatch.setattr(Driver, "_restore", lambda self, req: {})
    cfg, graph = small
    rep = C.walk(cfg, graph=graph, server=in_process())
    assert rep.failure is not None and rep.failure.kind == "divergence"


@pytest.mark.parametrize("save", [True, False])
def test_a_code_only_mutant_is_caught_through_the_driver(small, save):
    cfg, graph = small
    rep = C.walk(cfg, graph=graph, server=in_process(save=save), mutant=["memory-before-publish"])
    direct = C.walk(cfg, graph=graph, mutant=["memory-before-publish"], server=BUNDLED)
    assert rep.failure is not None and rep.failure.probe == direct.failure.probe
    assert [s.action for s in rep.failure.steps] == [s.action for s in direct.failure.steps]


def test_conform_command_through_the_subprocess_driver(capsys, tmp_path):
    assert main(["conform", "--config", LABEL, "--sut", DRIVER]) == 0
    out = capsys.readouterr().out
    assert out.startswith("conform against claimcheck bundled implementation")
    assert "states 485 of 485, edges 524 of 524, probes 3,434" in out and "verdict:    OK, 100%" in out
    assert main(["conform", "--config", LABEL, "--sut", DRIVER, "--mutant", "memory-before-publish",
                 "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"--sut {shlex.quote(DRIVER)}" in out  # the replay command drives the same server


@pytest.mark.parametrize("argv, message", [
    (["conform", "--sut", DRIVER, "--db", "sqlite:///x.db"], "give --sut or --db, not both"),
    (["fuzz", "--sut", DRIVER, "--db", "sqlite://"], "give --sut or --db, not both"),
    (["fuzz", "--sut", "no-such-driver-command"], "cannot run it"),
    (["gate", "--sut", f"{shlex.quote(sys.executable)} -c pass"], "without replying"),
])
def test_bad_sut_usage_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_fuzz_through_the_subprocess_driver_passes_and_catches_a_mutant(capsys, tmp_path):
    assert main(["fuzz", "--config", "ci", "--max-examples", "15", "--sut", DRIVER]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fuzz against claimcheck bundled implementation") and "verdict:    OK" in out
    # heartbeat-extends-lease: caught on `heartbeat` in 3 steps (10 s); step-failed-duplicate-interrupt on `ci` took 29 s
    code = main(["fuzz", "--max-examples", "200", "--sut", DRIVER, "--mutant", "heartbeat-extends-lease",
                 "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "verdict:    FAILED" in out and f"--sut {shlex.quote(DRIVER)}" in out


def test_the_kill_matrix_through_the_driver_kills_each_defect_it_kills_in_process():
    defects = ["step-failed-duplicate-interrupt", "cancel-trusts-previous-step-memory", "exact-retry-appends-twice"]
    sut = in_process()
    theirs = K.rows(defects=defects, server=sut)
    assert not K.undetected(theirs) and not K.correct_failures(server=sut)
    mine = K.rows(defects=defects, server=BUNDLED)
    assert [(r.defect, r.trace, r.detected) for r in theirs] == [(r.defect, r.trace, r.detected) for r in mine]


def test_the_gate_drives_the_server_behind_sut(monkeypatch, tmp_path, capsys):
    seen = []

    def traces(g):
        seen.append(g.server.command)
        return gate.stage_traces(g)
    monkeypatch.setattr(gate, "STAGES", [gate.Stage("traces", traces)])
    assert main(["gate", "--sut", DRIVER, "--out", str(tmp_path), "--json", str(tmp_path / "g.json")]) == 0
    out = capsys.readouterr().out
    assert seen == [DRIVER] and f"replayed against the server behind `{DRIVER}`" in (tmp_path / "g.json").read_text()
    assert out.startswith("gate against claimcheck bundled implementation")
