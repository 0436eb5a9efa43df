"""`claimcheck driver-kit` (issue 33 item 4): the Init state's JSON and every action with a sample request and
answer for a configuration; with `--sut`, a correct server's next step, and a buggy server's first
divergence naming the action, each field path with the twin's and the server's value, and a replay
command that fails the same way."""

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.traces import trace as T
from spec import model as M
from spec import names as N
from harness.conformance import exhaustive as X

ROOT = Path(__file__).resolve().parents[2]
BUGGY = shlex.join([sys.executable, str(ROOT / "tests" / "driver" / "buggydriver.py"), "memory-before-publish"])
GOOD = shlex.join([sys.executable, "-m", "binding.driver", "--no-defects"])


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    """The drivers run from a fresh clone: the repository on their import path."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def test_the_kit_prints_init_and_a_sample_for_every_action(capsys):
    assert main(["driver-kit"]) == 0
    out = capsys.readouterr().out
    cfg, _ = X.resolve("steer/no-faults")
    init = out.split("`faults` may be left empty):\n", 1)[1].split("\n\nactions:", 1)[0]
    assert json.loads(init) == T.state_to_json(cfg, M.init(cfg))
    for name in N.ACTIONS:
        assert f"\n  {name} (" in out, name
    assert '> {"id":3,"op":"step","action":"Acquire"' in out and '"boundaries":["acquire.committed"]' in out
    assert '"op":"attempt","action":"CancelRequest"' in out and '"answer":"refused"' in out
    assert "Heartbeat (node" in out and "not enabled in this configuration: see claimcheck driver-kit --config" in out


def test_a_correct_server_is_sent_on_to_the_gate(capsys):
    assert main(["driver-kit", "--sut", GOOD]) == 0
    assert f"no divergence; next: claimcheck gate --sut {shlex.quote(GOOD)}" in capsys.readouterr().out


def test_a_buggy_server_gets_its_first_divergence_and_the_replay_of_that_edge(capsys, tmp_path):
    assert main(["driver-kit", "--sut", BUGGY, "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "first divergence: PublishStepStarted(n1), step 4 of the shortest path from Init (divergence)" in out
    assert "  field run[n1].mem: twin 0, server 1" in out
    replay = out.split("replay just that edge: ", 1)[1].strip()
    argv = shlex.split(replay)
    assert argv[:2] == ["claimcheck", "replay"] and argv[-2:] == ["--sut", BUGGY]
    assert main(argv[1:]) == 1  # the replay fails the same way
    assert "run[n1].mem" in capsys.readouterr().out


def test_a_configuration_that_is_none_is_bad_usage(capsys):
    assert main(["driver-kit", "--config", "no-such-config"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("claimcheck driver-kit: --config no-such-config") and len(err.splitlines()) == 1
