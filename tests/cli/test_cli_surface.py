"""What a CI user meets first: usage, --version, help on every flag, a defect checked where it shows,
a switched-on defect that goes undetected (never "OK"), and the closing count of a replay of many traces."""

import argparse
import json
import re

import pytest

from spec import names as N

from harness import cli
from harness.cli import NOT_DETECTED, main


def test_bare_command_prints_usage_and_exits_2(capsys):
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "usage: claimcheck" in err and "gate" in err and "exit codes" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert re.match(r"claimcheck \d+\.\d+", capsys.readouterr().out)


def _actions(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for a in _actions(sub):
                    yield (name,) + a
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield (action.dest, action)


def test_every_flag_and_argument_has_help():
    missing = [f"{path[0]} {path[-1].dest}" for path in _actions(cli.build_parser()) if not path[-1].help]
    assert missing == []


def test_a_defect_runs_on_its_witness_configuration(capsys, tmp_path):
    witness = N.DEFECTS["cross-session-recovery-collision"].config
    assert witness != "ci"
    code = main(["check", "--defect", "cross-session-recovery-collision", "--no-liveness", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and f"config={witness}" in out and "the witness of cross-session-recovery-collision" in out


def test_a_defect_on_a_configuration_that_cannot_show_it_is_refused(capsys):
    assert main(["check", "--defect", "cross-session-recovery-collision", "--config", "ci"]) == 2
    err = capsys.readouterr().err
    assert "shows on configuration rows, not ci" in err and len(err.strip().splitlines()) == 1


def test_switches_with_different_witnesses_are_refused(capsys):
    assert main(["check", "--defect", "cross-session-recovery-collision", "--defect", "memory-before-publish"]) == 2
    assert "different configurations" in capsys.readouterr().err


def test_an_undetected_defect_is_not_ok(capsys, tmp_path, monkeypatch):
    from harness.engines import check

    def blind(cfg, name, **kw):  # an engine that finds nothing: the defect goes undetected
        return check.Outcome("python", name, cfg, "ok", 1, 1, 0, 0.0, [], False)
    monkeypatch.setattr(check, "run_python", blind)
    code = main(["check", "--defect", "memory-before-publish", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == NOT_DETECTED == 4 and "NOT DETECTED" in out and "verdict:   OK" not in out


def test_check_json_and_workers(capsys, tmp_path):
    report = tmp_path / "r.json"
    assert main(["check", "--defect", "memory-before-publish", "--json", str(report), "--out", str(tmp_path)]) == 1
    doc = json.loads(report.read_text())
    assert doc["verdict"] == "violation" and doc["violated"] == ["MemoryFollowsDurable"] and doc["length"] == 5
    assert main(["check", "--workers", "4"]) == 2  # the explorer is one process
    assert "--workers is for --engine tlc" in capsys.readouterr().err


def test_replay_of_many_traces_closes_with_a_count(capsys):
    assert main(["replay", "traces"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"replay: \d+ passed, 0 failed", last)


def test_fuzz_with_an_undetected_defect_exits_4(monkeypatch, tmp_path, capsys):
    from harness.conformance import fuzz as F
    from harness.conformance import lockstep as L

    def nothing_found(cfg, **kw):
        return L.Outcome(cfg, L.Coverage(), None, 0.1)
    monkeypatch.setattr(L, "run", nothing_found)
    monkeypatch.setattr(F, "reachable_graph", lambda cfg: (1000, 5000, True))
    code = main(["fuzz", "--defect", "memory-before-publish", "--seed", "7", "--max-examples", "3",
                 "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 4 and "NOT DETECTED" in out and "seed=7" in out and "examples=3" in out


def test_fuzz_seed_and_max_examples_reach_hypothesis(monkeypatch, tmp_path):
    from harness.conformance import fuzz as F
    from harness.conformance import lockstep as L
    seen = {}

    def record(cfg, **kw):
        seen.update(kw)
        return L.Outcome(cfg, L.Coverage(), None, 0.1)
    monkeypatch.setattr(L, "run", record)
    monkeypatch.setattr(F, "reachable_graph", lambda cfg: (1000, 5000, True))
    assert main(["fuzz", "--config", "ci", "--seed", "11", "--max-examples", "5", "--out", str(tmp_path)]) == 0
    assert seen["seed"] == 11 and seen["settings_"].max_examples == 5 and not seen["settings_"].derandomize


@pytest.mark.parametrize("script", ["ci/bench_impl.py", "ci/bench_lockstep.py", "ci/bench_conform.py",
                                    "ci/bench_tlc_distributed.py", "ci/bench_gate_tlc.py"])
def test_benchmark_scripts_answer_help_and_bad_input_without_a_traceback(script):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    ok = subprocess.run([sys.executable, str(root / script), "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "usage:" in ok.stdout and "Traceback" not in ok.stderr
    bad = subprocess.run([sys.executable, str(root / script), "--no-such-flag"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_fuzz_refuses_a_configuration_that_cannot_show_the_defect(capsys):
    assert main(["fuzz", "--config", "ci", "--mutant", "cross-session-recovery-collision"]) == 2
    assert "shows on configuration rows, not ci" in capsys.readouterr().err
