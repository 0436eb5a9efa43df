"""The port's recorded side: a server's commit history as `claimcheck stress` runs the server and its
history check reads it (harness.stress), whatever server recorded it.

A history is rows, one per committed write transaction, in the recording server's own words: who
committed as which registry action with which parameters, the clock reading, the committing actors'
memory, the claim rows after and the rows it appended or changed (the row format is the bundled server's
recorder's, impl/history.py, the only server a stress run runs: binding.stress). `Vocabulary` is what
the history check must know of the server's words to read them as the twin's (assistant and input ids,
event kinds, quarantine reasons); `History` is a recorded run to check; `StressServer` is what the stress
supervisor starts and drives (its node processes, its database).
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

from spec import model as M


@runtime_checkable
class Vocabulary(Protocol):
    """How a server's history names what the twin numbers."""

    environment: str  # the actor of the environment's steps (an admission, a crash)
    unattributed: str  # the actor of a commit made outside any step
    per_session: str  # the metadata's `history` of a history recorded per Session (no dense seqs)
    zero_marks: dict  # the marks a history's first commit is taken against
    max_tries: int  # MaxTries where the history's metadata names none
    ordinary: str  # the wake queue whose rows are the twin's wake rows

    def assistant(self, aid: str, steps: int) -> int:
        """The twin's assistant of an assistant id (Step k of execution e: (e - 1) * steps + k); ValueError
        when it is none of the server's."""

    def event_kind(self, kind: str) -> str:
        """The twin's event kind of a stored one."""

    def continuation_gen(self, input_id: str) -> int:
        """The twin's `gen` of a continuation's id."""

    def continuation_id(self, session: str, execution: int) -> str:
        """The id of recovery's continuation of (Session, execution)."""

    def input_id(self, i: M.Input) -> str:
        """The id of the twin's input."""

    def quarantine_reason(self, error: str | None) -> str:
        """The twin's quarantine reason (names.QUARANTINE_REASONS) of a claim's stored error; "" for none."""


@runtime_checkable
class History(Protocol):
    """A recorded run to check (harness.stress.checker.check_db)."""

    vocabulary: Vocabulary

    def meta(self) -> dict:
        """The run's metadata: its Sessions, nodes, workers, lease and the other constants."""

    def rows(self, after: int = 0, limit: int | None = None) -> list[dict]:
        """The commits after seq `after`, in seq order (at most `limit`)."""

    def settled(self) -> int:
        """A per-Session history: every commit up to this seq is visible (its seqs have gaps)."""

    def final(self):
        """The database at the end, as the fold of all commits must equal it (harness.stress.records.Final)."""


@runtime_checkable
class RunDatabase(History, Protocol):
    """The database of a stress run as its supervisor writes and watches it (harness.stress.supervisor)."""

    url: str
    per_session_writers: bool  # its writers are serialized per Session (PostgreSQL), not one at a time

    def now(self) -> int:
        """The supervisor's clock reading, in ticks."""

    def admit(self, session: str) -> None:
        """The environment admits the Session's next prompt, its execution requested (one recorded commit)."""

    def record_crash(self, owners) -> int:
        """Record the twin's Crash of each owner id (a node and its worker); the last seq recorded."""

    def live_owners(self, now: int) -> list[str]:
        """The owners of claims whose lease is live at `now`."""

    def commit_counts(self, after: int, upto: int | None = None) -> list[tuple]:
        """(action, commits that changed something, commits, highest seq) per action after seq `after`
        (up to seq `upto`)."""

    def pending_prompts(self) -> dict[str, int]:
        """Pending prompts per Session."""

    def quarantined(self) -> int:
        """Claims held for an operator (a recovery error set)."""

    def input_mark(self) -> int:
        """The input sequence's value now."""

    def waiting(self, mark: int) -> int:
        """Pending inputs admitted or promoted by input sequence `mark`, on Sessions not quarantined, and wake
        rows held reserved (a reservation is served or released in the end: the settling tail waits for it)."""

    def drop_connections(self, application_name: str) -> int:
        """PostgreSQL: end every connection named `application_name`; how many."""

    def dispose(self) -> None:
        """Close every connection."""


@runtime_checkable
class SimulatedProcess(Protocol):
    """A node or the caller of a simulated run: one turn of its loop at a time."""

    def turn(self) -> bool:
        """One turn of its loop (a node: each actor's ready steps; the caller: one interrupt); whether it did
        anything."""


@runtime_checkable
class StressServer(Protocol):
    """A server `claimcheck stress` runs as real processes: its node's entry point, its run database."""

    vocabulary: Vocabulary
    node_module: str  # the module every node process imports first (preloaded by the fork server)
    node_entry: Callable[[list, str], None]  # a node or caller process: (argv, log path), picklable

    def check_wakes(self, batch: int, share: int) -> None:
        """ValueError when the server refuses a wake batch with this fresh share."""

    def open(self, url: str, meta: dict, *, pg_lock: str, tick: float, wall=None) -> RunDatabase:
        """Create the run's database at `url` with its commit history on (`meta`: the run's constants);
        `wall`: a simulation's time (`time()`), None for the wall clock."""

    def simulated(self, argv: list, wall) -> SimulatedProcess:
        """A node or the caller (`argv` as `node_entry` takes it) in this process for a simulation
        (`claimcheck stress --simulate`): its time is `wall`'s (`time`, `monotonic`, `sleep`)."""
