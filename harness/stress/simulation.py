"""`claimcheck stress --simulate`: a stress run in one process on simulated time, the same run for the same seed.

Real processes (harness/stress/supervisor.py) make a run that the operating system's scheduler decides and
that never repeats; a mutation tool's oracle, a CI check or a bisection needs the same run again. Here the
server's own node loops and its caller run in this process (the port's `StressServer.simulated`), one turn
of a loop at a time, in an order drawn from the seed, on a clock that only the simulation moves: each turn
takes a random fraction of a tick, a provider call and a listener take their (simulated) time, a crash
drops a node's memory between two of its turns. Everything else is the supervisor's: the admissions, the
crash plan, the settling tail, and the checks of the history (checker, effects, `validate`).

What it reaches that `conform` does not: the production paths a twin action names for the server (which
Sessions to wake, ordinary selection, a scan over a window, heartbeats, admission numbering the next
prompt) run as the server's loops run them. What it cannot show: two processes inside one atomic unit of
the server at once (a unit runs whole here, between two turns), or a process stopped inside a unit (pauses,
dropped connections, busy storms and clock skew need real processes: refused here, with the reason).
"""

from __future__ import annotations

import random

from harness.stress.options import StressUsage
from harness.stress.supervisor import Supervisor, run

START = 1_800_000_000.0  # the simulated wall clock's first reading (seconds): fixed, so a seed repeats its run


class SimulatedWall:
    """The simulation's time, read by every simulated process and the parent; a sleep moves it on."""

    def __init__(self, start: float = START):
        self.t = start

    def time(self) -> float:
        return self.t

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(0.0, seconds)


class _Process:
    """A simulated process where the supervisor expects a multiprocessing one: it never exits by itself."""

    exitcode = None

    def __init__(self, loop):
        self.loop = loop


def refused(opts) -> str | None:
    """Why a simulation cannot honour these options (None: it can)."""
    real = [name for name, on in (("--pause-every", opts.pause_every), ("--pause-before-dispatch", opts.pause_before_dispatch),
                                  ("--skew", opts.skew_ms), ("--drop-connections-every", opts.drop_every),
                                  ("--busy-storm", opts.busy_storm), ("--db", opts.db)) if on]
    if real:
        return (f"{', '.join(real)}: a simulation runs every process in one on simulated time and sqlite; "
                "pauses, skew, dropped connections, storms and PostgreSQL need real processes")
    return None


class Simulation(Supervisor):
    """The supervisor's run with simulated processes and time: the parent's sleeps are where nodes run."""

    source = "simulation"

    def __init__(self, opts, server, watch_history=None):
        why = refused(opts)
        if why is not None:
            raise StressUsage(f"--simulate: {why}")
        super().__init__(opts, server, watch_history)
        self.wall = SimulatedWall()
        self.order = random.Random(f"{opts.seed}:simulation")  # which process turns next, how long a turn takes
        self.next_interrupt = START

    # the parent's time is the simulation's
    def monotonic(self) -> float:
        return self.wall.t

    def wall_time(self) -> float:
        return self.wall.t

    def sleep(self, seconds: float) -> None:
        """Let `seconds` of simulated time pass: the processes take turns meanwhile."""
        end = self.wall.t + seconds
        while self.wall.t < end:
            self.wall.sleep(self.order.uniform(0, self.o.tick / 2))
            if self.wall.t >= self.next_interrupt and getattr(self, "caller", None) is not None:
                self.caller.loop.turn()
                self.next_interrupt = self.wall.t + self.caller.loop.pause()
            n = self.order.choice(self.node_ids)
            try:
                self.procs[n].loop.turn()
            except Exception as exc:  # noqa: BLE001 - the server's code raised, not claimcheck's: a node died by itself
                self.crash(n, unexpected=f"{n} raised {type(exc).__name__}: {exc}")

    def open_db(self, meta: dict):
        return self.server.open(self.url, meta, pg_lock=self.o.pg_lock, tick=self.o.tick, wall=self.wall)

    # ------------------------------------------------------------------ the processes

    def spawn(self, argv: list[str], log: str):
        return _Process(self.server.simulated(argv, self.wall))

    def ready(self, n: str) -> bool:
        return True

    def holds_plan(self, n: str) -> bool:
        """Whether node n's waker is between its read and its reservation (not crashed then: Supervisor)."""
        return self.procs[n].loop.waker.holding()

    def crash(self, n: str, *, unexpected: str | None = None) -> None:
        """Drop the node's process (its memory) between two of its turns, record the Crash, start another."""
        self.procs[n].loop.db.dispose()
        k = self.node_ids.index(n)
        self.db.record_crash((n, self.worker_ids[k]))
        self.faults.crashed(n, self.wall.t)
        if unexpected is None:
            self.res.crashes += 1
        else:
            self.res.unexpected_exits.append(unexpected)
        self.incarnation[n] += 1
        self.start(k)

    def stop(self) -> None:
        self.res.faults = list(self.faults.log)
        self.res.ended_wall = self.wall.t
        for proc in [*self.procs.values(), getattr(self, "caller", None)]:
            if proc is not None:
                proc.loop.db.dispose()


def simulate(opts, server, validate_history=None, watch_history=None):
    """`harness.stress.supervisor.run` with a simulation: (exit code, result)."""
    return run(opts, server, validate_history, watch_history, supervisor=Simulation)
