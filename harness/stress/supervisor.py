"""`claimcheck stress`: N real node processes on one database, crashes by SIGKILL, then the history check.

    claimcheck stress --nodes N --seconds S [--db URL] [--sessions K] [--lease SECONDS] [--seed X]
                      [--defect NAME ...] [--out DIR] [--executions N] [--crash-every SECONDS | --crash-every-commits C]

The parent (this module) creates the schema and the commit history (impl/history.py) on a database
that must be a sqlite file (WAL) or a local PostgreSQL server (loopback or a Unix socket),
admits prompts (an environment step), starts N node processes and one cancel caller
(`python -m harness.stress.node`, real OS processes), and injects crashes: at random moments (or every
C commits, for a deterministic count) it SIGKILLs a node process (preferring one that owns a claim, so
recovery has work), records the twin's Crash of the node and of its recovery worker, and starts a new
process with the same owner ids and empty memory (the twin's Crash: the node comes back as itself).
Leases are short (default 0.3 s, in 10 ms clock ticks) so expiry and recovery are frequent. A progress
line on stderr is refreshed about once a second. The run stops by itself: after `--seconds`, or once
`--executions` executions (and `--min-crashes`/`--min-takeovers`) are reached, whichever is first.

Then the history is checked against the twin (harness/stress/history.py), the effect logs physically
(dispatch under a live lease; finalizers act only on their live claim; effect intervals per Session),
and every admitted input is accounted for. Exit 0 if no violation and no lost input, 1 otherwise (each
violating Session saved as a replayable trace under --out, with the `claimcheck replay` command), 2 for
bad usage.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from impl.db import Database
from impl.history import ENVIRONMENT, HistoryRecorder
from impl.inputs import InputStore
from impl.context import Context
from impl.clock import SystemClock
from spec import names as N

from harness.stress import history as H
from harness.stress import node as stress_node
from harness.traces import trace as T
from harness.stress.node import STOP_FILE

LOOPBACK = ("localhost", "127.0.0.1", "::1", "")


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
    effect_ms: float = 10.0  # the longest simulated provider call (uniform): time for interrupts to land
    max_prompts: int = 1_000_000
    keep: bool = False
    progress: bool = True


@dataclass
class StressResult:
    run_dir: Path
    url: str
    elapsed: float = 0.0
    counts: Counter = field(default_factory=Counter)
    crashes: int = 0
    unexpected_exits: list[str] = field(default_factory=list)
    checker: H.Checker | None = None
    effect_violations: list[str] = field(default_factory=list)
    effect_breaches: Counter = field(default_factory=Counter)
    effects: Counter = field(default_factory=Counter)
    traces: list[tuple[Path, str | None]] = field(default_factory=list)
    check_seconds: float = 0.0

    @property
    def executions(self) -> int:
        return self.counts["Acquire"] + self.counts["PromoteContinuation"]

    @property
    def violations(self) -> int:
        n = self.checker.report.counts["violations"] if self.checker else 0
        return n + len(self.effect_violations) + len(self.unexpected_exits)

    @property
    def lost(self) -> int:
        return self.checker.report.inputs.get("lost", 0) if self.checker else 0

    @property
    def ok(self) -> bool:
        return self.violations == 0 and self.lost == 0


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


class Supervisor:
    def __init__(self, opts: StressOptions):
        self.o = opts
        self.rng = random.Random(f"{opts.seed}:parent")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.out = Path(opts.out)
        self.run_dir = self.out / f"stress-{stamp}-{os.getpid()}"
        self.run_dir.mkdir(parents=True, exist_ok=False)
        self.url = opts.db or f"sqlite:///{(self.run_dir / 'stress.db').absolute()}"
        check_url(self.url)
        self.lease_ticks = max(1, round(opts.lease / opts.tick))
        self.node_ids = [f"n{k}" for k in range(1, opts.nodes + 1)]
        self.worker_ids = [f"r{k}" for k in range(1, opts.nodes + 1)]
        self.sessions = [f"s{k}" for k in range(1, opts.sessions + 1)]
        self.procs: dict = {}  # owner id -> multiprocessing.Process
        self.incarnation: Counter = Counter()
        self.res = StressResult(self.run_dir, self.url)
        self.prompt_no: Counter = Counter()
        self.seen_seq = 0

    # ------------------------------------------------------------------ set-up

    def setup(self) -> None:
        self.db = Database(self.url, busy_timeout_s=30.0)
        self.db.create_schema()
        meta = {"sessions": self.sessions, "nodes": self.node_ids, "workers": self.worker_ids,
                "lease_ticks": self.lease_ticks, "tick_seconds": self.o.tick, "scan_bound": 100,
                "defects": sorted(self.o.defects), "seed": self.o.seed, "source": "stress"}
        self.recorder = HistoryRecorder.install(self.db, ENVIRONMENT, meta=meta)
        self.clock = SystemClock(self.o.tick)
        self.inputs = InputStore(Context(self.db, self.clock))
        for s in self.sessions:
            self.admit(s)
            self.admit(s)

    def admit(self, s: str) -> None:
        self.prompt_no[s] += 1
        k = self.prompt_no[s]
        with self.recorder.step(ENVIRONMENT, H.ADMIT, {"s": s, "k": k}, {}, self.clock.now()):
            self.inputs.admit_prompt(s, k)

    def node_cmd(self, k: int) -> list[str]:
        o = self.o
        n, r = self.node_ids[k], self.worker_ids[k]
        cmd = ["node", "--db", self.url, "--run-dir", str(self.run_dir),
               "--owner", n, "--worker", r, "--incarnation", str(self.incarnation[n]), "--seed", str(o.seed),
               "--tick", str(o.tick), "--lease-ticks", str(self.lease_ticks), "--fail-rate", str(o.fail_rate),
               "--effect-ms", str(o.effect_ms)]
        for d in o.defects:
            cmd += ["--defect", d]
        return cmd

    def spawn(self, argv: list[str], log: str):
        proc = self.ctx.Process(target=stress_node.child, args=(argv, str(self.run_dir / log)), daemon=True)
        proc.start()
        return proc

    def start(self, k: int) -> None:
        n = self.node_ids[k]
        self.procs[n] = self.spawn(self.node_cmd(k), f"{n}.log")

    def ready(self, n: str) -> bool:
        return (self.run_dir / f"ready-{n}-{self.incarnation[n]}").exists()

    def start_caller(self) -> None:
        o = self.o
        self.caller = self.spawn(["caller", "--db", self.url, "--run-dir", str(self.run_dir), "--seed", str(o.seed),
                                  "--tick", str(o.tick), "--cancel-every", str(o.cancel_every),
                                  "--nodes", *self.node_ids], "caller.log")

    # ------------------------------------------------------------------ crashes

    def crash(self, n: str, *, unexpected: str | None = None) -> None:
        """SIGKILL (unless already dead), wait, record the twin's Crash of the node and its worker, restart."""
        proc = self.procs[n]
        if proc.exitcode is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        k = self.node_ids.index(n)
        now = self.clock.now()
        for who in (n, self.worker_ids[k]):
            with self.recorder.step(ENVIRONMENT, "Crash", {"n": who}, {}, now):
                with self.db.transaction():
                    pass
        if unexpected is None:
            self.res.crashes += 1
        else:
            self.res.unexpected_exits.append(unexpected)
        self.incarnation[n] += 1
        self.start(k)

    def victim(self) -> str:
        """A node to kill: usually one that owns a live claim (so its work must be recovered)."""
        if self.rng.random() < 0.8:
            now = self.clock.now()
            with self.db.read() as conn:
                owners = [r[0] for r in conn.exec_driver_sql(
                    f"SELECT owner_id FROM execution_claim WHERE lease_expires_at > {int(now)}")]
            owners = [x for x in owners if x in self.procs and self.ready(x)]
            if owners:
                return self.rng.choice(sorted(owners))
        up = [n for n in self.node_ids if self.ready(n)]
        return self.rng.choice(up) if up else None

    # ------------------------------------------------------------------ the run

    def poll_counts(self) -> None:
        with self.db.read() as conn:
            rows = conn.exec_driver_sql(
                f"SELECT action, count(*), max(seq) FROM commit_history WHERE seq > {self.seen_seq} AND changed "
                "GROUP BY action").all()
            top = conn.exec_driver_sql("SELECT max(seq) FROM commit_history").scalar_one() or 0
        for action, n, _ in rows:
            self.res.counts[action] += n
        self.res.counts["commits"] = top
        self.seen_seq = top

    def pending(self) -> dict[str, int]:
        with self.db.read() as conn:
            rows = conn.exec_driver_sql("SELECT session_id, count(*) FROM session_input WHERE state = 'pending' "
                                        "AND kind = 'prompt' GROUP BY session_id").all()
        return dict(rows)

    def progress_line(self, t: float) -> str:
        c = self.res.counts
        return (f"stress {t:5.1f}s  executions {self.res.executions:,}  cancels {c['CancelRequest']:,}  "
                f"crashes {self.res.crashes}  takeovers {c['RecoveryTakeover']:,}  "
                f"quarantines {c['RecoveryQuarantine']:,}  continuations {c['RecoveryConvert']:,}  "
                f"commits {c['commits']:,}")

    def done(self, t: float) -> bool:
        o = self.o
        if t >= o.seconds:
            return True
        if o.executions is None:
            return False
        return (self.res.executions >= o.executions and self.res.crashes >= o.min_crashes
                and self.res.counts["RecoveryTakeover"] >= o.min_takeovers)

    def run(self) -> StressResult:
        o = self.o
        self.setup()
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload(["harness.stress.node"])  # a restart forks a warm interpreter
        for k in range(o.nodes):
            self.start(k)
        self.start_caller()
        deadline = time.monotonic() + 120
        while not all(self.ready(n) for n in self.node_ids) and time.monotonic() < deadline:
            time.sleep(0.02)
        t0 = time.monotonic()
        tty = sys.stderr.isatty()
        next_print = next_admit = 0.0
        next_crash = self._next_crash_time(0.0)
        next_crash_seq = self._next_crash_seq(0)
        try:
            while True:
                time.sleep(0.02)
                t = time.monotonic() - t0
                for n, proc in list(self.procs.items()):
                    code = proc.exitcode
                    if code is not None:
                        tail = (self.run_dir / f"{n}.log").read_text(errors="replace").strip().splitlines()[-3:]
                        self.crash(n, unexpected=f"{n} exited by itself with code {code}: {' | '.join(tail)}")
                if self.caller.exitcode is not None:
                    self.res.unexpected_exits.append(f"the caller exited by itself with code {self.caller.exitcode}")
                    self.start_caller()
                if t >= next_admit:
                    next_admit = t + 0.05
                    pend = self.pending()
                    for s in self.sessions:
                        if pend.get(s, 0) < 1 and sum(self.prompt_no.values()) < o.max_prompts:
                            self.admit(s)
                if t >= next_print:
                    next_print = t + 1.0
                    self.poll_counts()
                    if o.progress:
                        line = self.progress_line(t)
                        print(("\r" + line) if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)
                crash_now = (t >= next_crash if o.crash_every_commits is None
                             else self.res.counts["commits"] >= next_crash_seq)
                victim = self.victim() if crash_now else None
                if victim is not None:
                    self.crash(victim)
                    next_crash = self._next_crash_time(t)
                    self.poll_counts()
                    next_crash_seq = self._next_crash_seq(self.res.counts["commits"])
                if self.done(t):
                    break
        finally:
            self.stop()
        self.res.elapsed = time.monotonic() - t0
        self.poll_counts()
        if o.progress:
            print(("\r" if tty else "") + self.progress_line(self.res.elapsed), file=sys.stderr, flush=True)
        return self.res

    def _next_crash_time(self, t: float) -> float:
        if self.o.crash_every_commits is not None or self.o.crash_every <= 0:
            return float("inf")
        return t + self.rng.expovariate(1.0 / self.o.crash_every)

    def _next_crash_seq(self, seq: int) -> int | float:
        c = self.o.crash_every_commits
        return float("inf") if c is None else seq + self.rng.randint(max(1, c // 2), max(1, c + c // 2))

    def stop(self) -> None:
        (self.run_dir / STOP_FILE).touch()
        deadline = time.monotonic() + 15
        for proc in [*self.procs.values(), getattr(self, "caller", None)]:
            if proc is None:
                continue
            proc.join(timeout=max(0.1, deadline - time.monotonic()))
            if proc.exitcode is None:
                proc.kill()
                proc.join()
        for n, proc in self.procs.items():
            if proc.exitcode not in (0, -signal.SIGKILL):
                tail = (self.run_dir / f"{n}.log").read_text(errors="replace").strip().splitlines()[-3:]
                self.res.unexpected_exits.append(f"{n} ended with code {proc.exitcode}: {' | '.join(tail)}")

    # ------------------------------------------------------------------ afterwards

    def check(self) -> StressResult:
        t = time.monotonic()
        checker = H.check_db(self.db)
        self.res.checker = checker
        self.check_effects(checker)
        self.res.check_seconds = time.monotonic() - t
        for s in sorted(checker.first_bad, key=checker.first_bad.get)[:3]:
            tr, why = H.session_trace(checker, s, self.o.defects, title=f"stress run violation in Session {s}")
            path = T.save(tr, T.found_path(self.out, f"stress-{s}"))
            self.res.traces.append((path, why))
        self.db.dispose()
        return self.res

    def check_effects(self, checker: H.Checker) -> None:
        """Physical checks on the effect logs: NoPhysicalReplay (a dispatch under the live lease its own
        renewal set), supervision (a finalizer step only on its own live claim), and effect intervals per
        Session (an overlap of two owners' effects is a pause: the environment broke an assumption)."""
        res = self.res
        lease = self.lease_ticks
        intervals = defaultdict(list)  # session -> (t0, t1, execution, owner, kind)
        for path in sorted(self.run_dir.glob("effects-*.jsonl")):
            for line in path.read_text().splitlines():
                try:
                    e = json.loads(line)
                except ValueError:
                    continue  # a line cut by SIGKILL mid-write
                res.effects[e["k"]] += 1
                if e["k"] == "dispatch":
                    if e.get("renewed") is None:
                        res.effect_violations.append(f"NoPhysicalReplay: {e['o']} dispatched execution {e['e']} of "
                                                     f"{e['s']} with no renewal of its own")
                    elif e["now"] >= e["renewed"] + lease:
                        res.effect_breaches["TimelyDispatch"] += 1  # a pause between renewal and dispatch
                    intervals[e["s"]].append((e["t0"], e["t1"], e["e"], e["o"], "dispatch"))
                elif e["k"] == "fin":
                    seen = e.get("seen")
                    exact = seen is not None and seen[0] == e["e"] and seen[1] == e["o"]
                    if exact and e["now"] >= seen[2] and e.get("ok"):
                        res.effect_violations.append(
                            f"NoOverlappingEffects: finalizer of {e['o']} committed {e['action']} for execution "
                            f"{e['e']} of {e['s']} at clock {e['now']}, its lease expired at {seen[2]}")
                    elif exact and e["now"] >= seen[2]:
                        res.effect_breaches["finalizer step on an expired lease (fenced)"] += 1
                    elif not exact:
                        res.effect_breaches["finalizer resumed after losing its claim (pause)"] += 1
                    intervals[e["s"]].append((e["t0"], e["t1"], e["e"], e["o"], "finalizer"))
        for s, e, r, t0, t1 in checker.recovery_intervals:
            intervals[s].append((t0, t1, e, r, "recovery"))
        overlaps = 0
        for s, items in intervals.items():
            items.sort()
            for k, a in enumerate(items):
                for b in items[k + 1:]:
                    if b[0] >= a[1]:
                        break
                    if (a[2], a[3]) != (b[2], b[3]):
                        overlaps += 1
        if overlaps:
            res.effect_breaches["effect intervals of two owners overlapped on a Session (pause)"] += overlaps


def render(res: StressResult, opts: StressOptions) -> str:
    ch = res.checker
    rep = ch.report if ch else None
    c = res.counts
    backend = sa.engine.make_url(res.url).get_backend_name()
    lines = [f"claimcheck stress: {opts.nodes} nodes, {opts.sessions} sessions, {backend}, lease {opts.lease:g} s "
             f"({round(opts.lease / opts.tick)} ticks of {opts.tick * 1000:g} ms), {res.elapsed:.1f} s, "
             f"defects: {', '.join(opts.defects) or 'none'}",
             f"  executions    {res.executions:,}  (acquired {c['Acquire']:,}, continuations promoted "
             f"{c['PromoteContinuation']:,})",
             f"  steps         Step.Started {c['PublishStepStarted']:,}, Step.Ended {c['PublishStepEnded']:,}, "
             f"Step.Failed {c['PublishStepFailed']:,}, provider dispatches {res.effects['dispatch']:,}",
             f"  cancels       {c['CancelRequest']:,} (finalizer settles {c['FinalizerSettle']:,}, clears "
             f"{c['FinalizerClear']:,})",
             f"  crashes       {res.crashes} injected (SIGKILL)" + (f", {len(res.unexpected_exits)} unexpected exits"
                                                                  if res.unexpected_exits else ""),
             f"  takeovers     {c['RecoveryTakeover']:,}  continuations {c['RecoveryConvert']:,}  quarantines "
             f"{c['RecoveryQuarantine']:,}",
             f"  commits       {c['commits']:,} recorded ({c['commits'] / max(res.elapsed, 1e-9):,.0f}/s)"]
    if rep is not None:
        lines.append(f"  history check {res.check_seconds:.1f} s:")
        lines += ["  " + x for x in H.render(ch).splitlines()]
    lines.append(f"  effects       {res.effects['dispatch']:,} dispatches, {res.effects['fin']:,} finalizer steps "
                 "checked physically")
    for v in res.effect_violations[:10]:
        lines.append(f"    - violation: {v}")
    for k, v in res.effect_breaches.items():
        lines.append(f"    - environment breach ({k}): {v}")
    for u in res.unexpected_exits[:5]:
        lines.append(f"    - {u}")
    lines.append(f"  invariant violations: {res.violations}    inputs lost: {res.lost}")
    for path, why in res.traces:
        lines.append(f"  trace: {path}" + (f"  ({why})" if why else ""))
        lines.append(f"    claimcheck replay {path}")
    lines.append(f"  verdict: {'OK' if res.ok else 'FAIL'}")
    return "\n".join(lines)


def run(opts: StressOptions) -> tuple[int, StressResult | None]:
    """Run, check, print the summary; returns (exit code, result)."""
    for d in opts.defects:
        if d not in N.DEFECTS:
            raise StressUsage(f"unknown defect {d!r}; known: {', '.join(N.DEFECTS)}")
    if opts.nodes < 1 or opts.seconds <= 0 or opts.sessions < 1 or opts.lease <= 0 or opts.tick <= 0:
        raise StressUsage("--nodes, --seconds, --sessions, --lease must be positive")
    if opts.lease < 3 * opts.tick:
        raise StressUsage("--lease must be at least three clock ticks")
    if opts.db is not None:
        check_url(opts.db)
    sup = Supervisor(opts)
    res = sup.run()
    sup.check()
    print(render(res, opts))
    if res.ok and not opts.keep:
        import shutil
        shutil.rmtree(sup.run_dir, ignore_errors=True)
    return (0 if res.ok else 1), res
