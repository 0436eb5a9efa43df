"""The TypeScript example (examples/typescript/): an independent Node implementation on sql.js behind its
driver, checked through `--sut` exactly as the bundled implementation is (tests/driver/test_sut_replay.py):
every committed trace passes, and every defect trace fails under its defect naming the same invariants and
problems as the in-process replay of the bundled implementation. The same again on PostgreSQL (the driver's
`--database URL`), on the session's test server (`pg_server`, tests/conftest.py).

Nothing here is skipped for Node: without node, or without examples/typescript/node_modules (`npm ci
--prefix examples/typescript`, which .ci/run does), these tests fail and say so. The PostgreSQL tests follow
the repository's rule for PostgreSQL (tests/pgkit.py): they skip where it cannot start, and fail under CI.

Traces that do not pass yet through the TypeScript driver: none (NOT_YET is empty).
"""

import shutil
import subprocess

import pytest

from harness.cli import main
from harness.conformance import replay as R
from harness.driver.client import Connection, Sut
from harness.traces import trace as T
from serverkit import BUNDLED
from test_sut_replay import observe_and_restore

ROOT = R.TRACES.parent
EXAMPLE = ROOT / "examples" / "typescript"
DRIVER = str(EXAMPLE / "driver")
TRACES = R.committed_traces()
DEFECT_TRACES = [p for p in TRACES if T.load(p).meta.defect]
NOT_YET: frozenset[str] = frozenset()  # trace stems the TypeScript driver does not pass yet
NAME = "claimcheck TypeScript example (examples/typescript, Node + sql.js in memory)"
NAME_PG = "claimcheck TypeScript example (examples/typescript, Node + PostgreSQL through pg)"


def _installed() -> None:
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: the TypeScript example needs Node 20 or later (.ci/run installs it)")
    if not (EXAMPLE / "node_modules" / "sql.js").is_dir():
        pytest.fail(f"{EXAMPLE}/node_modules is missing: run `npm ci --prefix {EXAMPLE}` (.ci/run does)")


@pytest.fixture(scope="module")
def conn():
    _installed()
    conn = Connection.spawn(DRIVER)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def sut(conn):
    return Sut("in process", opener=lambda: conn)


def test_node_and_the_locked_dependencies_are_installed():
    _installed()
    version = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout
    assert int(version.strip().lstrip("v").split(".")[0]) >= 20, version


def test_hello_names_the_typescript_driver(conn):
    hello = conn.hello
    assert hello.driver == NAME and hello.version == 1 and hello.save is True


@pytest.fixture(scope="module")
def pg_conn(pg_server):
    _installed()
    conn = Connection.spawn(f"{DRIVER} --database {pg_server.fresh_database(prefix='typescript')}")
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def pg_sut(pg_conn):
    return Sut("in process", opener=lambda: pg_conn)


def test_on_postgresql_hello_says_so(pg_conn):
    assert pg_conn.hello.driver == NAME_PG


@pytest.mark.parametrize("path", [p for p in TRACES if p.stem not in NOT_YET], ids=lambda p: p.stem)
def test_a_committed_trace_passes_on_postgresql(pg_sut, path):
    res = R.replay_file(path, server=pg_sut)
    assert res.ok and res.consumed == len(T.load(path).steps), res.problems


@pytest.mark.parametrize("path", DEFECT_TRACES, ids=lambda p: p.stem)
def test_a_defect_trace_fails_under_its_defect_on_postgresql(pg_sut, path):
    defect = [T.load(path).meta.defect]
    mine, theirs = R.replay_file(path, defect, server=BUNDLED), R.replay_file(path, defect, server=pg_sut)
    assert not theirs.ok and theirs.violated == mine.violated and theirs.problems == mine.problems


@pytest.mark.parametrize("path", [p for p in TRACES if p.stem not in NOT_YET], ids=lambda p: p.stem)
def test_a_committed_trace_passes_through_the_typescript_driver(sut, path):
    res = R.replay_file(path, server=sut)
    assert res.ok, res.problems
    assert res.consumed == len(T.load(path).steps)


@pytest.mark.parametrize("path", DEFECT_TRACES, ids=lambda p: p.stem)
def test_a_defect_trace_fails_under_its_defect_as_in_process(sut, path):
    defect = [T.load(path).meta.defect]
    mine, theirs = R.replay_file(path, defect, server=BUNDLED), R.replay_file(path, defect, server=sut)
    assert not theirs.ok
    assert theirs.violated == mine.violated and theirs.problems == mine.problems


def test_every_trace_is_accounted_for():
    assert len(TRACES) >= 18 and NOT_YET <= {p.stem for p in TRACES}


def test_the_cli_replays_the_traces_folder_through_the_typescript_driver(capsys):
    _installed()
    assert main(["replay", str(R.TRACES), "--sut", DRIVER]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"replay against {NAME} (driver `{DRIVER}`, claimcheck-driver v1, save and restore)\n")
    assert out.count("verdict: PASS") == len(TRACES) and f"replay: {len(TRACES)} passed, 0 failed" in out


def test_the_cli_passes_a_defect_switch_to_the_typescript_driver(capsys):
    _installed()
    path = R.TRACES / "step-failed-duplicate-interrupt.json"
    assert main(["replay", str(path), "--sut", DRIVER, "--defect", "step-failed-duplicate-interrupt"]) == 1
    assert "verdict: FAIL, violates AtMostOneTerminal" in capsys.readouterr().out


def test_observe_reports_each_boundary_once_and_restore_puts_the_world_back():
    """Save and restore by the journal of requests since start (the server is deterministic)."""
    _installed()
    conn = Connection.spawn(DRIVER)
    try:
        observe_and_restore(conn)
    finally:
        conn.close()
