"""What a stress run is asked (`StressOptions`, validated by `validate`) and what it returns (`StressResult`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from spec import names as N

from harness import registry as R

LOOPBACK = ("localhost", "127.0.0.1", "::1", "")
STOP_FILE = "stop"  # in the run's folder: every node and the caller stop after their current step


class StressUsage(ValueError):
    pass


@dataclass
class StressOptions:
    nodes: int = 2
    seconds: float = 10.0
    db: str | None = None
    sessions: int = 8
    lease: float = 0.3
    tick: float = 0.01
    seed: str = "0"
    defects: tuple = ()
    out: str = "traces/found"
    executions: int | None = None
    min_crashes: int = 0
    min_takeovers: int = 0
    crash_every: float = 2.0  # mean seconds between crashes (exponential)
    crash_every_commits: int | None = None  # a count-based schedule instead (randomised in [C/2, 3C/2])
    cancel_every: float = 0.1  # mean seconds between the caller's interrupts
    fail_rate: float = 0.25  # the scripted provider's share of Step.Failed
    steps: int = 1  # Steps per execution (the twin's MaxSteps): the provider asks for another until then
    effect_ms: float = 10.0  # the longest simulated provider call (uniform): time for interrupts to land
    max_prompts: int = 1_000_000
    # the nodes' callers and waker (binding/stress/callers.py): shares of a node's loop turns, and the
    # ordinary wake queue's batch, fresh share and counter bound (impl/wakes.py plan_batch)
    input_rate: float = 0.2  # a caller admits a held prompt, retries one exactly or resumes a Session
    steer_rate: float = 0.5  # an acquisition is followed by a steer of a pending input of its Session
    wake_rate: float = 0.2  # the waker: an arrival, a bounded scan (and its redrives), or a lapsed release
    wake_batch: int = 2
    fresh_share: int = 1
    max_wake_tries: int = 2
    # PostgreSQL's writers: per Session (impl/db.py), or "global", the former single-writer lock kept only for
    # ci/bench_pg_writers.py's side-by-side comparison
    pg_lock: str = "session"
    keep: bool = False
    progress: bool = True
    # --until-violation: check the history while it grows and stop at its first violation, or once
    # `max_executions` executions or `max_crashes` crashes are reached (or `seconds`, a last resort)
    until_violation: bool = False
    max_executions: int | None = None
    max_crashes: int | None = None
    # real faults (harness/stress/faults.py), each off by default, each seeded
    pause_every: float | None = None  # mean seconds between SIGSTOP pauses of a node
    pause_for: float | None = None  # a pause's length (default: two leases; must exceed one)
    pause_before_dispatch: float = 0.0  # share of provider calls a node pauses itself before (TimelyDispatch)
    skew_ms: float = 0.0  # the nodes' clocks disagree by up to this (spread evenly over the nodes)
    skew_bound_ms: float = 0.0  # the disagreement the deployment promises (recovery's Grace covers it)
    drop_every: float | None = None  # PostgreSQL: mean seconds between pg_terminate_backend of a node
    busy_storm: bool = False  # sqlite: the parent holds the write lock in bursts, nodes' busy timeout 50 ms
    min_faults: int = 0  # with `executions`: also wait for this many episodes of each fault kind switched on
    liveness_bound: float = 50.0  # leases within which a Session with pending input must be served
    recovery: bool = True  # False: no node runs its recovery worker (a stand-in that strands Sessions)


@dataclass
class FirstViolation:
    """The first violation the history showed while the run was going, and what the run needed to get
    there: executions begun and crashes injected up to that commit."""
    seq: int
    executions: int
    crashes: int
    line: str


# validate's verdict on a run's own history (harness.validation.command.Verdict, after stress in the flow)
VALID, NOT_VALID, NOT_VALIDATED = "valid", "not valid", "not validated"


@dataclass
class StressResult:
    run_dir: Path
    url: str
    elapsed: float = 0.0
    counts: Counter = field(default_factory=Counter)
    crashes: int = 0
    unexpected_exits: list[str] = field(default_factory=list)
    checker: object | None = None  # harness.stress.checker.Checker, after the run
    effect_violations: list[str] = field(default_factory=list)
    effect_breaches: Counter = field(default_factory=Counter)
    effects: Counter = field(default_factory=Counter)
    traces: list[tuple[Path, str | None]] = field(default_factory=list)
    check_seconds: float = 0.0
    first_violation: FirstViolation | None = None  # --until-violation: seen while running
    faults: list = field(default_factory=list)  # harness.stress.faults.Fault, in the order they ended
    ended_wall: float | None = None  # when the nodes were told to stop (the liveness check's end)
    faultcheck: object | None = None  # harness.stress.breaches.FaultCheck: breaches by name, liveness
    validation: list[str] | None = None  # validate's report on the run's own history (None: not validated)
    validation_ok: bool = True  # False: validate found the history NOT VALID
    not_validated: str = ""  # why validate could not decide on the history (NOT VALIDATED: never OK)
    stopped_by: str = ""  # what ended the run: seconds, executions, violation, max-executions, max-crashes,
    # stranded (every Session's claim quarantined: no execution can begin again)

    @property
    def executions(self) -> int:
        return self.counts[R.ACQUIRE] + self.counts[R.PROMOTE_CONTINUATION]

    @property
    def violations(self) -> int:
        n = self.checker.report.counts["violations"] if self.checker else 0
        n -= self.faultcheck.consequences_count if self.faultcheck else 0  # a breach's, not the protocol's
        return n + len(self.effect_violations) + len(self.unexpected_exits)

    @property
    def stranded(self) -> int:
        return len(self.faultcheck.liveness.failures) if self.faultcheck else 0

    @property
    def lost(self) -> int:
        return self.checker.report.inputs.get("lost", 0) if self.checker else 0

    @property
    def ok(self) -> bool:
        return self.violations == 0 and self.lost == 0 and self.stranded == 0 and self.validation_ok


def check_url(url: str) -> None:
    parsed = sa.engine.make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise StressUsage("--db: an in-memory sqlite database cannot be shared by processes; give a file "
                              "(sqlite:///path/stress.db)")
        return
    if backend == "postgresql":
        if (parsed.host or "") not in LOOPBACK and not (parsed.host or "").startswith("127."):
            raise StressUsage(f"--db: {parsed.host} is not a local host; a stress run talks only to a loopback "
                              "or Unix-socket database")
        return
    raise StressUsage(f"--db: {backend} is not supported (sqlite file or PostgreSQL)")


def validate(opts: StressOptions, server) -> None:
    """Raise StressUsage for options no run can honour (before anything is created); `server`: the
    StressServer that would run (harness.port.history), which may refuse a wake batch."""
    for d in opts.defects:
        if d not in N.DEFECTS:
            raise StressUsage(f"unknown defect {d!r}; known: {', '.join(N.DEFECTS)}")
    if opts.nodes < 1 or opts.seconds <= 0 or opts.sessions < 1 or opts.lease <= 0 or opts.tick <= 0:
        raise StressUsage("--nodes, --seconds, --sessions, --lease must be positive")
    if opts.steps < 1:
        raise StressUsage("--steps must be positive")
    for name, rate in (("--input-rate", opts.input_rate), ("--steer-rate", opts.steer_rate),
                       ("--wake-rate", opts.wake_rate)):
        if not 0 <= rate <= 1:
            raise StressUsage(f"{name} must be in [0, 1]")
    try:
        server.check_wakes(opts.wake_batch, opts.fresh_share)
    except ValueError as exc:
        raise StressUsage(f"--wake-batch/--fresh-share: {exc}") from exc
    if opts.max_wake_tries < 1:
        raise StressUsage("--max-wake-tries must be positive")
    if opts.lease < 3 * opts.tick:
        raise StressUsage("--lease must be at least three clock ticks")
    for name, cap in (("--max-executions", opts.max_executions), ("--max-crashes", opts.max_crashes)):
        if cap is not None and cap < 1:
            raise StressUsage(f"{name} must be positive")
        if cap is not None and not opts.until_violation:
            raise StressUsage(f"{name} caps a run with --until-violation")
    if opts.db is not None:
        check_url(opts.db)
    validate_faults(opts)


def validate_faults(opts: StressOptions) -> None:
    postgres = opts.db is not None and sa.engine.make_url(opts.db).get_backend_name() == "postgresql"
    for name, every in (("--pause-every", opts.pause_every), ("--drop-every", opts.drop_every)):
        if every is not None and every <= 0:
            raise StressUsage(f"{name} must be positive")
    if not 0 <= opts.pause_before_dispatch <= 1:
        raise StressUsage("--pause-before-dispatch must be in [0, 1]")
    if opts.pause_for is not None and opts.pause_for <= opts.lease:
        raise StressUsage(f"--pause-for must be longer than a lease ({opts.lease:g} s)")
    if opts.skew_ms < 0 or opts.skew_bound_ms < 0:
        raise StressUsage("--skew and --skew-bound must not be negative")
    if opts.drop_every is not None and not postgres:
        raise StressUsage("--drop-connections-every needs a PostgreSQL --db (pg_terminate_backend)")
    if opts.busy_storm and postgres:
        raise StressUsage("--busy-storm is sqlite's (SQLITE_BUSY); PostgreSQL has --drop-connections-every")
    if opts.liveness_bound <= 0:
        raise StressUsage("--liveness-bound must be positive")
