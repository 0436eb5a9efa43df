"""The TypeScript example through the commands a user runs with `--sut` (fuzz, conform, the conform kill
matrix), on small configurations so they stay in the test budget; the gate's four server stages and the
whole kill matrix through it are measured in the README ("Figures"). A defect switched on in the server
only must be caught, so each command is shown failing too."""

import pytest

from harness.cli import main
from harness.conformance import conform as C
from harness.conformance import exhaustive as X
from harness.driver.client import Sut
from serverkit import BUNDLED

from test_typescript import DRIVER, NAME, _installed


@pytest.fixture(scope="module")
def sut():
    _installed()
    sut = Sut(DRIVER)
    yield sut
    sut.close()


@pytest.mark.parametrize("label", ["steer/no-faults", "inputs/prompts=1", "tools/max_exec=1"])
def test_the_walk_covers_a_small_configuration_whole(sut, label):
    cfg, _ = X.resolve(label)
    graph = C.graph_of(cfg)
    rep = C.walk(cfg, graph=graph, server=sut)
    assert rep.failure is None and rep.complete, rep.failure and rep.failure.message
    assert rep.probes == C.walk(cfg, graph=graph, server=BUNDLED).probes


@pytest.mark.parametrize("defect", ["memory-before-publish", "exact-retry-appends-twice",
                                    "recovery-reruns-unknown-tool"])
def test_the_conform_kill_matrix_catches_its_defect_switches(capsys, defect):
    _installed()
    assert main(["conform", "--kill-matrix", "--mutant", defect, "--sut", DRIVER]) == 0
    assert f"{defect}" in (out := capsys.readouterr().out) and "KILLED" in out and "SURVIVES" not in out


def test_fuzz_passes_and_catches_a_defect_in_the_server_only(capsys, tmp_path):
    _installed()
    assert main(["fuzz", "--config", "ci", "--max-examples", "40", "--sut", DRIVER]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"fuzz against {NAME}") and "verdict:    OK" in out
    assert main(["fuzz", "--max-examples", "100", "--sut", DRIVER, "--mutant", "memory-before-publish",
                 "--out", str(tmp_path)]) == 1
    assert "verdict:    FAILED" in capsys.readouterr().out
