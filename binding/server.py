"""The bundled server in this process, as claimcheck's port sees it (harness.port.Server): a factory of
worlds (binding.world.Scheduler), with save and restore (binding.savepoints) and lockstep campaigns on
one database restored per run (binding.databases).

What database a world runs on is this server's business, chosen by `db_url`: by default a new sqlite
database in memory per world (replay, the exhaustive walk: serialized savepoints, one per forked
worker), and per lockstep campaign a sqlite file in a temporary folder, its prompts seeded once and
restored per run (binding.databases says why); a URL puts both on that database, emptied first
(`sqlite://`: a new one in memory, for each world and each campaign).
"""

from __future__ import annotations

import sqlalchemy as sa

from spec import model as M
from spec import names as N

from binding.databases import Databases
from binding.savepoints import Savepoints
from binding.world import Scheduler


def in_memory(db_url: str | None) -> bool:
    if db_url is None:
        return False
    u = sa.engine.make_url(db_url)
    return u.get_backend_name() == "sqlite" and u.database in (None, "", ":memory:")


class Bundled:
    """The bundled server (impl/) behind the port, in this process."""

    command = None  # in this process: no driver command
    switches = frozenset(N.DEFECTS)  # impl/ has every registry defect's switch (harness.port.Switches)

    def __init__(self, db_url: str | None = None, *, synchronous: str | None = "NORMAL"):
        """`db_url`: the database every world runs on (None: see the module's docstring); `synchronous`:
        sqlite's PRAGMA synchronous for a campaign's database (binding.databases)."""
        self.db_url, self.synchronous = db_url, synchronous
        self.label = f"db={db_url or 'a sqlite file, restored per run'}"
        self._open: list[Databases] = []  # the databases `start` opened on db_url (a file, PostgreSQL)

    def start(self, cfg: M.Config, mutant=None) -> Scheduler:
        if self.db_url is None or in_memory(self.db_url):  # a new database per world
            return Scheduler(cfg, mutant=mutant)
        dbs = Databases(self.db_url)
        self._open.append(dbs)
        db, _ = dbs.fresh()
        return Scheduler(cfg, db=db, mutant=mutant)

    def points(self, world: Scheduler, graph) -> Savepoints:
        return Savepoints(world)

    def campaign(self, cfg: M.Config, mutant=None) -> "Campaign":
        return Campaign(cfg, mutant, Databases(self.db_url, synchronous=self.synchronous))

    def fresh(self) -> "Bundled":
        return Bundled(self.db_url, synchronous=self.synchronous)

    def check_workers(self, workers: int) -> None:
        if workers > 1 and self.db_url is not None and not in_memory(self.db_url):
            raise ValueError(f"--workers {workers} needs sqlite in memory (sqlite://): each worker walks its own "
                             f"database, and {self.db_url} would be shared")

    def close(self) -> None:
        for dbs in self._open:
            dbs.close()
        self._open.clear()


class Campaign:
    """A lockstep campaign's runs: each a fresh Scheduler on the campaign's database, the prompts its first
    run admitted restored (binding.databases), the state read through its Reader (binding.reads)."""

    def __init__(self, cfg: M.Config, mutant, dbs: Databases):
        self.cfg, self.mutant, self.dbs = cfg, mutant, dbs

    def start(self) -> Scheduler:
        db, seeded = self.dbs.fresh()
        sched = Scheduler(self.cfg, db=db, admitted=seeded, mutant=self.mutant, reader=self.dbs.reader)
        if not seeded:
            self.dbs.seed()
        return sched

    def close(self) -> None:
        self.dbs.close()
