"""The mutation oracle (ci/mutation/oracle.py) kills a known mutant of each server and lets the server
as committed pass: the fence's lease comparison `>` turned `>=` (a claim still live at its expiry tick),
one of the mutants mutmut and StrykerJS generate, applied to a copy of the server. Its first check alone
(`claimcheck replay` of the committed traces) is enough to kill it, which keeps this test to seconds; the
full runs are the nightly job's (ci/github-nightly.yml)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from serverkit import typescript_mutant

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "ci" / "mutation" / "oracle.py"
TS = ROOT / "examples" / "typescript"

# admission numbering the next prompt (production code no twin action names: the twin's Admit names its number)
PY_ADMIT = ('.where(T.c.session_id == session_id, T.c.kind == "prompt")).scalar_one() + 1',
            '.where(T.c.session_id == session_id, T.c.kind == "prompt")).scalar_one() + 2')
PY_FENCE = ('_LIVE = T.c.lease_expires_at > _P("now")', '_LIVE = T.c.lease_expires_at >= _P("now")')
TS_FENCE = ("AND owner_id = ? AND (lease_expires_at > ? OR ? = 1)`", "AND owner_id = ? AND (lease_expires_at >= ? OR ? = 1)`")


def mutate(path: Path, before: str, after: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(before) == 1, f"{path}: the known mutant's line moved; update this test"
    path.write_text(text.replace(before, after), encoding="utf-8")


def oracle(*args: str, cwd: Path, env: dict | None = None, check: str = "replay") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ORACLE), "--check", check, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_bundled_server_passes_and_its_mutant_is_killed(tmp_path):
    clean = oracle(cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "oracle: every check passes: survived" in clean.stdout
    shutil.copytree(ROOT / "impl", tmp_path / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    mutate(tmp_path / "impl" / "claims.py", *PY_FENCE)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # the copy's impl before the installed one
    killed = oracle(cwd=tmp_path, env=env)
    assert killed.returncode == 1, killed.stdout + killed.stderr
    assert "oracle: replay exits 1: killed" in killed.stdout
    assert str(tmp_path / "impl") in subprocess.run([sys.executable, "-c", "import impl; print(impl.__file__)"],
                                                     cwd=tmp_path, env=env, capture_output=True, text=True).stdout


def test_typescript_server_passes_and_its_mutant_is_killed(tmp_path):
    assert shutil.which("node"), "node is not installed (Node 20: examples/typescript/README.md)"
    assert (TS / "node_modules").is_dir(), "run `npm ci --prefix examples/typescript` first"
    clean = oracle("--sut", str(TS / "driver"), cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    killed = oracle("--sut", str(typescript_mutant(tmp_path, "claims.js", *TS_FENCE)), cwd=tmp_path)
    assert killed.returncode == 1, killed.stdout + killed.stderr
    assert "oracle: replay exits 1: killed" in killed.stdout


def test_the_simulation_kills_a_mutant_of_admissions_own_numbering(tmp_path):
    """`claimcheck stress --simulate` runs the bundled server's own loops: a mutant of admission's numbering
    (a prompt number skipped) fails the simulated run's history check; the check is the bundled server's only
    (with --sut it is left out). The replay kills it too: the twin's Admit drives the same production admission
    (InputStore.admit_next, binding.world.World.admit), whose number the mapped state shows."""
    shutil.copytree(ROOT / "impl", tmp_path / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    mutate(tmp_path / "impl" / "inputs.py", *PY_ADMIT)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    assert oracle(cwd=tmp_path, env=env).returncode == 1
    killed = oracle(cwd=tmp_path, env=env, check="simulate")
    assert killed.returncode == 1, killed.stdout + killed.stderr
    assert "oracle: simulate exits 1: killed" in killed.stdout
    assert "admission must add exactly the Session's next prompt" in killed.stdout
    skipped = oracle("--sut", "unused", cwd=tmp_path, check="simulate")
    assert skipped.returncode == 0 and "every check passes" in skipped.stdout


# the production recovery pass (impl/recovery_pass.py) without its reconciliation unit's name (mutmut's
# argument-to-None mutant of it)
PY_PASS = ("        w.unit(R.RECOVERY_RECONCILE, w.reconcile)", "        w.unit(None, w.reconcile)")


def test_the_simulation_reaches_the_production_recovery_pass(tmp_path):
    """The simulated run's workers run `RecoveryWorker.run_once` on a share of their scans (binding/stress/node.py,
    PASS_SHARE), each unit recorded as its own step: a mutant of the pass that skips its reconciliation passes
    the replay of every trace (no twin action calls the pass) and the simulated run kills it."""
    shutil.copytree(ROOT / "impl", tmp_path / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    mutate(tmp_path / "impl" / "recovery_pass.py", *PY_PASS)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    assert oracle(cwd=tmp_path, env=env).returncode == 0
    killed = oracle(cwd=tmp_path, env=env, check="simulate")
    assert killed.returncode != 0 and "oracle: simulate exits" in killed.stdout and ": killed" in killed.stdout, \
        killed.stdout + killed.stderr


# the recovery wake's choice of continuation, as if none waited (mutmut's "return None" of the function)
PY_CONTINUATION = ("        return None if row is None else row[0]", "        return None")


def test_the_simulation_reaches_the_recovery_wakes_choice(tmp_path):
    """The stress node's `take` promotes what `InputStore.pending_continuation` chooses (it had its own query,
    and the server's choice was called only by a wake pass no loop ran, deleted 2026-12-07): a server whose
    choice finds no continuation strands the converted Sessions, and the simulated run says so."""
    shutil.copytree(ROOT / "impl", tmp_path / "impl", ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "impl" / "inputs.py"
    text = path.read_text(encoding="utf-8")
    at = text.index("    def pending_continuation(")
    assert text.count(PY_CONTINUATION[0], at) == 1, "the known mutant's line moved; update this test"
    path.write_text(text[:at] + text[at:].replace(*PY_CONTINUATION, 1), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    killed = oracle(cwd=tmp_path, env=env, check="simulate")
    assert killed.returncode == 1 and "Sessions stranded" in killed.stdout, killed.stdout + killed.stderr
