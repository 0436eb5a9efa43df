"""The database backends of the impl tests.

A test (or module, via `pytestmark`) marked `backends` runs once per backend: `[sqlite]` on an in-memory
sqlite database, `[postgresql]` on a fresh database of the test run's PostgreSQL server. The switch is
`Database.memory()`, which every World, ClaimBench and test here uses to get an empty database; on
`postgresql` it returns a fresh PostgreSQL database with the schema instead. Unmarked tests (those about
sqlite itself) run on sqlite only.
"""

import pytest

from impl.db import Database

BACKENDS = ("sqlite", "postgresql")


def pytest_configure(config):
    config.addinivalue_line("markers", "backends(*names): run the test once per database backend "
                                       "(default: sqlite and postgresql)")


def pytest_generate_tests(metafunc):
    mark = metafunc.definition.get_closest_marker("backends")
    if mark is not None and "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", mark.args or BACKENDS, indirect=True)


@pytest.fixture(autouse=True)
def backend(request, monkeypatch):
    """The backend this test runs on; on postgresql, `Database.memory()` makes PostgreSQL databases."""
    name = getattr(request, "param", "sqlite")
    if name == "postgresql":
        dbs = request.getfixturevalue("pg_databases")
        monkeypatch.setattr(Database, "memory", classmethod(lambda cls: dbs.new()))
    elif name != "sqlite":
        raise ValueError(f"unknown backend {name!r}")
    return name
