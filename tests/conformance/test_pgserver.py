"""binding/pgserver.py and the tests' PostgreSQL fixture: a missing PostgreSQL skips locally and fails
under CI=true (checked by pointing the binary lookup at an empty directory); the server listens on
loopback only; the CLI starts, names and stops a server."""

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import pgkit
from binding import pgserver


def test_missing_binaries_are_named_in_one_line(tmp_path):
    with pytest.raises(pgserver.PgUnavailable) as err:
        pgserver.find_bin(str(tmp_path))
    message = str(err.value)
    assert "\n" not in message and str(tmp_path) in message and "apt-get install" in message


def test_the_binary_directory_can_be_overridden(tmp_path, monkeypatch):
    monkeypatch.setenv(pgserver.BIN_ENV, str(tmp_path))
    with pytest.raises(pgserver.PgUnavailable, match=pgserver.BIN_ENV):
        pgserver.find_bin()


def test_the_newest_version_is_chosen(tmp_path):
    for version in ("9.6", "15", "13"):
        d = tmp_path / version / "bin"
        d.mkdir(parents=True)
        for exe in ("initdb", "pg_ctl", "postgres"):
            (d / exe).write_text("#!/bin/sh\n")
            (d / exe).chmod(0o755)
    assert pgserver.find_bin(str(tmp_path / "*" / "bin")) == tmp_path / "15" / "bin"


@pytest.mark.parametrize("env,outcome", [({}, "skip"), ({"CI": "false"}, "skip"), ({"CI": "true"}, "fail"),
                                         ({"CI": "TRUE"}, "fail")])
def test_missing_postgresql_skips_locally_and_fails_under_ci(tmp_path, env, outcome):
    empty = tmp_path / "bin"
    empty.mkdir()
    expected = pytest.fail.Exception if outcome == "fail" else pytest.skip.Exception
    with pytest.raises(expected) as err:
        pgkit.start_server(tmp_path / "server", bin_dir=empty, env=env)
    assert "PostgreSQL unavailable" in str(err.value) and str(empty) in str(err.value)
    assert ("CI=true" in str(err.value)) == (outcome == "fail")


def test_the_cli_reports_missing_binaries_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(pgserver.BIN_ENV, str(tmp_path))
    assert pgserver.main(["start", str(tmp_path / "server")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pgserver: no PostgreSQL binaries") and err.count("\n") == 1


def test_the_server_listens_on_loopback_only_and_databases_start_empty(pg_server):
    conn = pg_server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW listen_addresses")
            assert cur.fetchone()[0] == "127.0.0.1"
    finally:
        conn.close()
    url = pg_server.fresh_database()
    name = url.rsplit("/", 1)[1]
    conn = pg_server.connect(name)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            assert cur.fetchone()[0] == 0
    finally:
        conn.close()
        pg_server.drop_database(name)


def test_the_cli_starts_names_and_stops_a_server(pg_server):
    """(needs `pg_server` only so that a missing PostgreSQL skips or fails this test like the others)"""
    base = Path(tempfile.mkdtemp(prefix="claimcheck-pgcli-"))  # empty; start hands it to the postgres user
    cli = [sys.executable, "-m", "binding.pgserver"]
    try:
        started = subprocess.run([*cli, "start", str(base)], capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip()
        assert url.startswith("postgresql+psycopg2://postgres@127.0.0.1:") and url.endswith("/claimcheck")
        named = subprocess.run([*cli, "url", str(base)], capture_output=True, text=True, timeout=60)
        assert named.stdout.strip() == url
        import sqlalchemy as sa
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1
        engine.dispose()
    finally:
        stopped = subprocess.run([*cli, "stop", str(base)], capture_output=True, text=True, timeout=120)
    assert stopped.returncode == 0 and not base.exists()
