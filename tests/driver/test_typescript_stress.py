"""The TypeScript example as several real processes on one PostgreSQL database (examples/typescript/src/stress.js,
issue 32 item 4): node processes (runner, finalizer, supervisor, heartbeats, a recovery worker each) and a caller,
crashed (SIGKILL) and paused (SIGSTOP/SIGCONT) at seeded random times by the supervisor, each unit one recorded
transaction (src/recorder.js). `claimcheck validate` explains the history (exit 0); with a defect whose effect is
durable switched on in the processes (`acquire-overwrites-expired`), it does not (exit 1).

Seeded and short (2 nodes, a few seconds). Skipped only where PostgreSQL cannot start (tests/pgkit.py: under CI
that fails instead); without node or node_modules it fails and says so (test_typescript._installed)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from test_typescript import EXAMPLE, _installed

STRESS = EXAMPLE / "src" / "stress.js"
SUMMARY = re.compile(r"(\d+) lines, (\d+) crashes, (\d+) pauses, (\d+) executions, (\d+) unexpected exits")


def stress(url: str, out, *extra: str) -> tuple[int, int, int, int]:
    """A run of the supervisor; its lines, crashes, pauses and executions (it must exit 0)."""
    _installed()
    done = subprocess.run(["node", str(STRESS), "run", "--database", url, "--out", str(out), "--nodes", "2",
                           "--seed", "1", "--lease", "30", *extra], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    got = SUMMARY.search(done.stdout)
    assert got, done.stdout
    lines, crashes, pauses, executions, unexpected = map(int, got.groups())
    assert unexpected == 0
    return lines, crashes, pauses, executions


def test_two_node_processes_with_crashes_and_pauses_validate(pg_server, tmp_path, capsys):
    out = tmp_path / "history.jsonl"
    lines, crashes, pauses, executions = stress(pg_server.fresh_database(prefix="tsstress"), out, "--seconds", "4",
                                                "--crash-every", "1.5", "--pause-every", "2")
    assert lines > 50 and crashes >= 1 and pauses >= 1 and executions >= 5, (lines, crashes, pauses, executions)
    text = out.read_text().splitlines()
    header = json.loads(text[0])
    assert header["config"]["nodes"] == ["n1", "n2"] and header["config"]["max_exec"] == executions
    body = [json.loads(ln) for ln in text[1:]]
    assert [ln["seq"] for ln in body] == sorted(ln["seq"] for ln in body)
    # a crashed node's next incarnation committed too (its first may not have, on a loaded machine: seen with
    # n1#0 and n1#1 killed before their first line, n1#2 and n2#0 committing)
    assert any(not p.split("@")[0].endswith("#0") for p in {ln["process"] for ln in body if "process" in ln})
    capsys.readouterr()
    assert main(["validate", str(out)]) == 0, capsys.readouterr().out


# recorded with the options of the test below (2026-12-07, the machine otherwise idle): whether 5 s of real processes
# meet an expired claim is the scheduler's, not the seed's (a loaded CI run's 274 lines met none: exit 0, not 1)
RECORDED = Path(__file__).parents[1] / "validation" / "typescript-2node-acquire-overwrites-expired.history.jsonl"


def _fails_at_an_acquire(history, capsys) -> None:
    assert json.loads(history.read_text().splitlines()[0])["config"]["defects"] == []  # the correct twin judges
    capsys.readouterr()
    assert main(["validate", str(history)]) == 1
    report = capsys.readouterr().out
    assert "NOT VALID" in report and re.search(r"first unmatched: line \d+: n\d Acquire\(", report), (history, report)


def test_a_recorded_history_of_the_processes_with_a_durable_defect_fails_validation(capsys):
    """Every run: the processes' history with the defect (below), as recorded, fails at its overwriting Acquire."""
    _fails_at_an_acquire(RECORDED, capsys)


@pytest.mark.deep
def test_a_durable_defect_in_the_processes_fails_validation(pg_server, tmp_path, capsys):
    """Two Sessions, every acquisition tried on any Session with pending input (claimed ones too), a crash and
    a pause a second, recovery slow: an expired claim is overwritten (`acquire-overwrites-expired`), which the
    correct twin refuses: the first line it cannot explain is that Acquire. (Five seeds of these options all
    failed so on an idle machine; without the defect, the same options validate.) Real processes on the wall
    clock: nightly (`deep`), the recorded history in every run."""
    out = tmp_path / "defect.jsonl"
    stress(pg_server.fresh_database(prefix="tsstress"), out, "--seconds", "5", "--sessions", "2", "--crash-every", "1",
           "--pause-every", "1", "--any-share", "1", "--scan-every-ms", "3000", "--defect", "acquire-overwrites-expired")
    _fails_at_an_acquire(out, capsys)
