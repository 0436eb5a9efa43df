"""The bundled server as `claimcheck stress` runs it (the port's StressServer, harness.port.history): real
node processes (node.py, callers.py: `python -m binding.stress.node`), the run's database with the
commit history on (run.py), and how that history names what the twin numbers (vocabulary.py)."""

from __future__ import annotations

from impl.wakes import check_share

from binding.stress.node import child, simulated
from binding.stress.run import RecordedHistory, RunDatabase
from binding.stress.vocabulary import VOCABULARY

__all__ = ["BUNDLED", "BundledStress", "RecordedHistory", "RunDatabase", "history"]


# a simulation's sqlite commits skip the fsync: nothing there loses power, and no process is killed mid-commit
SIMULATED_SYNCHRONOUS = "OFF"


class BundledStress:
    vocabulary = VOCABULARY
    node_module = "binding.stress.node"
    node_entry = staticmethod(child)

    @staticmethod
    def simulated(argv: list, wall):
        """A node's turn is one unit of its runner or finalizer here (a real loop runs a burst of them), so the
        processes interleave, and a crash meets, between any two of them."""
        node = argv[0] == "node"
        return simulated([*argv, "--synchronous", SIMULATED_SYNCHRONOUS, *(["--burst", "1"] if node else [])], wall)

    def check_wakes(self, batch: int, share: int) -> None:
        check_share(batch, share)

    def open(self, url: str, meta: dict, *, pg_lock: str, tick: float, wall=None) -> RunDatabase:
        if wall is None:
            return RunDatabase(url, meta, pg_lock=pg_lock, tick=tick)
        return RunDatabase(url, meta, pg_lock=pg_lock, tick=tick, wall=wall, synchronous=SIMULATED_SYNCHRONOUS)


BUNDLED = BundledStress()


def history(db) -> RecordedHistory:
    """The commit history recorded in `db` (an impl.db.Database), as the history check reads it."""
    return RecordedHistory(db)
