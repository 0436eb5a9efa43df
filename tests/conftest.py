"""Shared fixtures. Tests that need Java/TLC (`tlc_or_skip`) skip (never pass) when TLC cannot run here:
no Java, no jar, or a jar whose sha256 is not the pinned one (tests/tlckit.py). Tests that need
PostgreSQL (`pg_server`, `pg_databases`) skip when it cannot start here (tests/pgkit.py). Under CI
(tests/cikit.py) both fail instead of skipping. One pytest run shares TLC's state-graph dumps between its tests and its
xdist workers (harness/engines/tlccache.py): a temporary directory per run, removed at its end."""

import os
import shutil
import tempfile

import pytest

import pgkit
import tlckit
from harness.engines import tlccache


def pytest_configure(config):
    """The run's TLC dump cache: set up by the controller, before the xdist workers inherit its environment."""
    if not hasattr(config, "workerinput") and not os.environ.get(tlccache.ENV):
        config._tlc_cache = tempfile.mkdtemp(prefix="claimcheck-tlc-dumps-")
        os.environ[tlccache.ENV] = config._tlc_cache


def pytest_unconfigure(config):
    if getattr(config, "_tlc_cache", None):
        shutil.rmtree(config._tlc_cache, ignore_errors=True)
        os.environ.pop(tlccache.ENV, None)



# the files of the longest tests (TLC's checks and graphs), run first: xdist's worksteal hands each worker a
# contiguous part of the collection, and a long test that starts last is the run's tail
LONGEST_FIRST = ("tests/engines/test_equivalence.py", "tests/engines/test_defect_table.py")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(LONGEST_FIRST))  # stable: the rest keep their order
@pytest.fixture(scope="session")
def tlc_or_skip():
    """TLC can run here; else skip with the reason (fail under CI: tests/cikit.py)."""
    tlckit.require()


@pytest.fixture
def out_dir(tmp_path):
    d = tmp_path / "found"
    d.mkdir()
    return d


def have_java() -> bool:
    return shutil.which("java") is not None


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the whole test session (started on first use, stopped at the end)."""
    server = pgkit.start_server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_pool(pg_server):
    """Databases with the schema, emptied and reused from test to test."""
    return pgkit.PgPool(pg_server)


@pytest.fixture
def pg_databases(pg_pool):
    """Empty databases with the schema for one test (`.new()` gives a Database, `.url()` a URL)."""
    dbs = pgkit.PgDatabases(pg_pool)
    yield dbs
    dbs.close()
