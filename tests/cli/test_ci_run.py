"""`.ci/run` fails, never warns and goes on: a Java, PostgreSQL, chromium or Node that apt-get cannot provide, and
a pytest that ran no test (exit 5), each make it exit non-zero with a line saying why. Run on a copy of the
script with a PATH of fakes (apt-get, python3, the venv's pip and pytest): nothing is installed, no test
suite runs."""

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "run"


def _exe(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def sandbox(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(SCRIPT, repo / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "mkdir", "chmod", "cat"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    pg = tmp_path / "pg"
    pg.mkdir()
    # python3 -m venv .venv: a venv whose pip does nothing and whose pytest exits $FAKE_PYTEST_EXIT
    _exe(bin_dir / "python3", 'mkdir -p "$3/bin"\n'
         'printf "#!/bin/sh\\nexit 0\\n" > "$3/bin/pip"\n'
         'printf "#!/bin/sh\\necho CI=\\$CI > ran-pytest\\necho \\"\\$@\\" > pytest-args\\nexit $FAKE_PYTEST_EXIT\\n" > "$3/bin/pytest"\n'
         'chmod +x "$3/bin/pip" "$3/bin/pytest"\n')
    return {"repo": repo, "bin": bin_dir, "pg": pg, "log": tmp_path / "apt.log"}


def _run(box, pytest_exit=0, **extra):
    env = {"PATH": str(box["bin"]), "CLAIMCHECK_PG_BIN": str(box["pg"]), "FAKE_PYTEST_EXIT": str(pytest_exit),
           "APT_LOG": str(box["log"]), **extra}
    return subprocess.run([shutil.which("bash"), str(box["repo"] / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60)


def _apt_get(box, *, provides: bool):
    """A fake apt-get that logs its arguments and, when `provides`, installs fake java, chromium, PostgreSQL,
    node (version 20) and npm."""
    install = (f'[ "$1" = install ] && {{ for b in java chromium npm; do printf "#!/bin/sh\\n" > {box["bin"]}/$b; '
               f'chmod +x {box["bin"]}/$b; done; printf "#!/bin/sh\\necho 20\\n" > {box["bin"]}/node; '
               f'chmod +x {box["bin"]}/node; '
               f'for e in initdb pg_ctl postgres; do printf "#!/bin/sh\\n" > {box["pg"]}/$e; '
               f'chmod +x {box["pg"]}/$e; done; }}\n' if provides else "")
    _exe(box["bin"] / "apt-get", 'echo "$@" >> "$APT_LOG"\n' + install + ("exit 0\n" if provides else "exit 100\n"))


def _node(box, major: int = 20) -> None:
    _exe(box["bin"] / "node", f"echo {major}\n")
    _exe(box["bin"] / "npm", "")


def test_missing_java_and_postgresql_that_apt_get_cannot_install_fail(sandbox):
    _apt_get(sandbox, provides=False)
    r = _run(sandbox)
    assert r.returncode == 1
    assert "FAILED: Java is missing" in r.stderr and "FAILED: PostgreSQL is missing" in r.stderr
    assert "FAILED: chromium is missing" in r.stderr
    log = sandbox["log"].read_text()
    assert "openjdk-17-jre-headless" in log and "postgresql" in log and "install -y -qq chromium" in log
    assert not (sandbox["repo"] / "ran-pytest").exists()  # failed before the tests, not after skipping them


def test_without_apt_get_a_missing_java_fails(sandbox):
    _exe(sandbox["bin"] / "chromium", "")
    for e in ("initdb", "pg_ctl", "postgres"):
        _exe(sandbox["pg"] / e, "")
    r = _run(sandbox)
    assert r.returncode == 1 and "FAILED: Java is missing" in r.stderr and "PostgreSQL" not in r.stderr.split(
        "FAILED")[-1]


def test_what_apt_get_installs_is_used_and_the_tests_run_under_ci(sandbox):
    _apt_get(sandbox, provides=True)
    r = _run(sandbox)
    assert r.returncode == 0, r.stderr
    assert (sandbox["repo"] / "ran-pytest").read_text().strip() == "CI=true"


def test_the_20_slowest_tests_end_every_log(sandbox):
    """Issue 34 item 4: pytest's "slowest 20 durations", printed after the results of every run."""
    _apt_get(sandbox, provides=True)
    assert _run(sandbox).returncode == 0
    assert "--durations=20" in (sandbox["repo"] / "pytest-args").read_text().split()


@pytest.mark.parametrize("pytest_exit, code", [(0, 0), (1, 1), (5, 1)])
def test_pytest_running_no_test_is_a_failure(sandbox, pytest_exit, code):
    _exe(sandbox["bin"] / "java", "")
    _exe(sandbox["bin"] / "chromium", "")
    _node(sandbox)
    for e in ("initdb", "pg_ctl", "postgres"):
        _exe(sandbox["pg"] / e, "")
    r = _run(sandbox, pytest_exit)
    assert r.returncode == code
    assert ("ran no test" in r.stderr) == (pytest_exit == 5)


def test_a_missing_chromium_that_apt_get_cannot_install_fails(sandbox):
    _apt_get(sandbox, provides=False)
    _exe(sandbox["bin"] / "java", "")
    for e in ("initdb", "pg_ctl", "postgres"):
        _exe(sandbox["pg"] / e, "")
    r = _run(sandbox)
    assert r.returncode == 1
    assert "FAILED: chromium is missing" in r.stderr and "Java" not in r.stderr and "PostgreSQL" not in r.stderr
    assert "chromium" in sandbox["log"].read_text()
    assert not (sandbox["repo"] / "ran-pytest").exists()


@pytest.mark.parametrize("major", [None, 18])
def test_a_missing_or_old_node_that_apt_get_cannot_replace_fails(sandbox, major):
    _apt_get(sandbox, provides=False)
    _exe(sandbox["bin"] / "java", "")
    _exe(sandbox["bin"] / "chromium", "")
    for e in ("initdb", "pg_ctl", "postgres"):
        _exe(sandbox["pg"] / e, "")
    if major:
        _node(sandbox, major)
    r = _run(sandbox)
    assert r.returncode == 1 and "FAILED: Node 20+ or npm is missing" in r.stderr
    assert "nodejs npm" in sandbox["log"].read_text()
    assert not (sandbox["repo"] / "ran-pytest").exists()
