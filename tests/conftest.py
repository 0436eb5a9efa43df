"""Shared fixtures. Tests that need Java/TLC skip (never pass) when TLC cannot run here. Tests that need
PostgreSQL (`pg_server`, `pg_databases`) skip when it cannot start here, and fail under CI=true."""

import shutil

import pytest

import pgkit


def _tlc_available() -> str | None:
    try:
        from harness.engines import tlc
        tlc.find_jar()
        tlc.find_java()
    except Exception as exc:  # noqa: BLE001 - any reason is a reason to skip
        return str(exc)
    return None


@pytest.fixture(scope="session")
def tlc_or_skip():
    reason = _tlc_available()
    if reason:
        pytest.skip(f"TLC unavailable: {reason}")


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
