"""The port: a system under test as claimcheck drives it, whatever server is behind it.

Replay, lockstep, the exhaustive walk and the kill matrix take a `Server` (a factory of worlds) and drive
each `World` it starts one twin action instance at a time; they never import a server. Two servers
implement it: the bundled one in this process (binding.server.Bundled, impl/ behind binding/) and any
server behind the driver protocol (harness.driver.client.Sut, docs/driver.md: the bundled one again as
`python -m binding.driver`, or examples/typescript/driver). Optional capabilities are protocols of their
own, asked for with `isinstance`: `Saves` (save and restore a world: the exhaustive walk needs it; a
driver that does not save offers it by replaying each path from Init), `Campaigns` (many runs of one
configuration, cheaper than a world each: lockstep) and `Switches` (the registry defects the server can
switch on: the kill matrix's; a server without them, as a third party's ships, gets the kill matrix
skipped as not applicable: `switches`). The recorded-history side (`claimcheck stress` and
its history check) is harness.port.history.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from spec import model as M


class DivergenceError(AssertionError):
    """The system under test refused or ran a different step than the twin's action."""


@runtime_checkable
class World(Protocol):
    """One run of a system under test from the twin's Init, moved one atomic unit per call."""

    faults: frozenset  # the environment's history: only the twin knows it (set by `apply`, kept by a restore)

    @property
    def hits(self) -> list:
        """The named boundaries passed so far, as (name, context), in order (a list that grows in place)."""

    @property
    def names(self) -> list[str]:
        """The named boundaries passed so far, in order."""

    def apply(self, name: str, params: tuple, twin_next: M.State) -> None:
        """Take the twin's action instance (the twin enables it); DivergenceError when the server took
        another step or none."""

    def attempt(self, name: str, params: tuple) -> object:
        """An attempt (names.ATTEMPTS: the caller chooses the parameters): the server's answer, truthy
        when it took it."""

    def move(self, action: str, who: str) -> str | None:
        """Let the actor of `action`'s kind named `who` take its own next step: the action it took, or None."""

    def state(self) -> M.State:
        """The server's state in the twin's vocabulary (its mapping), `faults` included."""


@runtime_checkable
class Savepoints(Protocol):
    """Save and restore one world as the exhaustive walk asks (harness.conformance.conform)."""

    kind: str  # how it saves, for the report ("serialize", "rows", "driver save/restore", ...)

    def save_at(self, j: int, depth: int) -> object:
        """A point to restore the world to: it is at the walk's state `j`, `depth` frames deep (a point
        is needed only while its frame is on the walk's stack, so a server may name points by depth)."""

    def restore(self, point) -> None:
        """Put the world back as it was at `point` (as often as asked)."""

    def mark(self) -> object | None:
        """A mark before a refusal probe (None: the server cannot tell what a probe wrote)."""

    def unchanged(self, mark, st: M.State) -> M.State | None:
        """After a probe: the state when the probe wrote nothing since `mark` and the clock did not move
        (the database still maps to `st`; only the actors' memory is read), else None (read it whole)."""


@runtime_checkable
class Server(Protocol):
    """A factory of worlds: one system under test, started as often as a run needs."""

    command: str | None  # the driver's command (a failure's replay line repeats it); None: in this process
    label: str  # how a run's header names it: `sut=CMD`, `db=URL`

    def start(self, cfg: M.Config, mutant=None) -> World:
        """A fresh world at the twin's Init for `cfg`; `mutant`: the defects the server runs with when
        they differ from `cfg.defects` (a code-only mutant)."""

    def fresh(self) -> "Server":
        """The same server without this one's resources (a process or a database): what a forked worker
        of the exhaustive walk starts its own worlds with."""

    def check_workers(self, workers: int) -> None:
        """ValueError when `workers` processes cannot each walk worlds of their own on this server."""

    def close(self) -> None:
        """Release what `start` opened; `start` works again after it."""


@runtime_checkable
class Saves(Protocol):
    """A server that saves and restores its worlds."""

    def points(self, world: World, graph) -> Savepoints:
        """Save and restore for `world` (started by this server) along the walk of `graph`."""


@runtime_checkable
class Switches(Protocol):
    """A server with defect switches: `start(cfg, mutant)` runs the defects in `switches` for real."""

    switches: frozenset  # the registry defects (spec/names.py DEFECTS) it can switch on


def switches(server: Server) -> frozenset:
    """The defects `server` can switch on: none when it does not offer `Switches`."""
    return frozenset(server.switches) if isinstance(server, Switches) else frozenset()


@runtime_checkable
class Runs(Protocol):
    """Worlds of one configuration, one after another (a lockstep campaign's runs)."""

    def start(self) -> World:
        """A fresh world at Init (the previous one is dropped)."""

    def close(self) -> None:
        """Release the campaign's resources."""


@runtime_checkable
class Campaigns(Protocol):
    """A server with a cheaper way to start many worlds of one configuration than one `start` each."""

    def campaign(self, cfg: M.Config, mutant=None) -> Runs:
        """The runs of one campaign on `cfg` (`mutant` as `Server.start`)."""
