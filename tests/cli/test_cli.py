"""`claimcheck` exit codes and output: 0 holds, 1 violation (with a trace path), 2 bad usage."""

import json
import subprocess
import sys

import pytest

from harness.cli import main


def test_check_python_passes(capsys):
    """On a small configuration (the explorer on `ci` whole is the gate's and the deep profile's)."""
    assert main(["check", "--engine", "python", "--config", "rows", "--out", "unused"]) == 0
    out = capsys.readouterr().out
    assert "verdict:   OK" in out and "3,089 distinct" in out and "SessionsEventuallyAvailable" in out


def test_check_violation_writes_a_trace(capsys, tmp_path):
    code = main(["check", "--defect", "memory-before-publish", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "VIOLATION of MemoryFollowsDurable (5 steps)" in out
    path = out.split("trace:")[1].strip().split()[0]
    data = json.loads(open(path).read())
    assert data["meta"]["defect"] == "memory-before-publish" and len(data["steps"]) == 5


@pytest.mark.parametrize("argv, message", [
    (["check", "--defect", "no-such-defect"], "unknown defect 'no-such-defect'"),
    (["check", "--config", "huge"], "invalid choice: 'huge'"),
    (["check", "--assume-off", "Gravity"], "unknown assumption 'Gravity'"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_usage_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_console_script_runs_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "check", "--defect", "x"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_check_tlc_passes(capsys, tlc_or_skip):
    """The command's pass on the smallest feature configuration (TLC on the gate's is tests/engines/test_equivalence's,
    with its count; `delivery` 6 s against `rows` 17 s, liveness checked)."""
    assert main(["check", "--engine", "tlc", "--config", "delivery", "--out", "unused"]) == 0
    assert "705 distinct" in capsys.readouterr().out
