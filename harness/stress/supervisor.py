"""`claimcheck stress`: N real node processes on one database, crashes by SIGKILL, then the history check.

    claimcheck stress --nodes N --seconds S [--db URL] [--sessions K] [--lease SECONDS] [--seed X]
                      [--defect NAME ...] [--out DIR] [--executions N] [--crash-every SECONDS | --crash-every-commits C]
                      [--until-violation [--max-executions N] [--max-crashes K]]
                      [--input-rate P] [--steer-rate P] [--wake-rate P] [--wake-batch B] [--fresh-share F]
                      [--pause-every S [--pause-for S]] [--pause-before-dispatch P] [--skew MS [--skew-bound MS]]
                      [--drop-connections-every S | --busy-storm] [--liveness-bound K]

The parent (this module: process control) has the server create its run database with the commit
history on (harness.port.history: `StressServer.open`; the bundled server's, binding.stress, on a
database that must be a sqlite file (WAL) or a local PostgreSQL server, loopback or a Unix socket),
admits prompts (an environment step), starts N node processes and one cancel caller (the server's node
entry point, binding/stress/node.py for the bundled server: real OS processes), and injects crashes
(harness/stress/crashes.py: at random moments, or every C commits for a deterministic count, it SIGKILLs
a node process, preferring one that owns a claim so recovery has work, records the twin's Crash of the
node and of its recovery worker, and starts a new process with the same owner ids and empty memory: the
twin's Crash, the node comes back as itself). Leases are short (default 0.3 s, in 10 ms clock ticks) so expiry and recovery are frequent. A
progress line on stderr is refreshed about once a second. The run stops by itself: after `--seconds`, or
once `--executions` executions (and `--min-crashes`/`--min-takeovers`) are reached, whichever is first.
With `--until-violation` the history is checked while it grows (harness/stress/watch.py: validate's search,
or the per-Session checker on a per-Session history) and the run
stops at its first violation, or at `--max-executions` executions or `--max-crashes` crashes (or
`--seconds`); the verdict line names the seed and the executions and crashes the run needed.

Then the history is checked against the twin (harness/stress/checker.py, and validate's search on the whole
history when harness.cli gives it), the effect logs physically (harness/stress/effects.py), and every
admitted input is accounted for. Exit 0 if no violation and no lost input, 1 otherwise (each violating
Session, and validate's first unexplained commit, saved as a replayable trace under --out, with the
`claimcheck replay` command: harness/stress/counterexample.py), 2 for bad usage, 4 a defect not detected,
5 NOT VALIDATED (every check held, and validate could not decide on the history: never OK).

Real faults beyond crashes (pauses, clock skew, dropped connections, BUSY storms) are injected by
harness/stress/faults.py and logged; before stopping, the run settles with no new fault, and
harness/stress/breaches.py reports the breaches by assumption name and the bounded liveness after the
last fault (harness/stress/liveness.py): a Session stranded past the bound fails the run (exit 1).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path

from harness import registry as R
from harness.port.history import StressServer
from harness.stress.breaches import check_faults
from harness.stress.checker import check_db
from harness.stress.counterexample import save_traces, validation_trace
from harness.stress.crashes import CrashPlan
from harness.stress.effects import check_effects
from harness.stress.faults import STORM_BUSY_TIMEOUT, FaultInjector, grace_ticks
from harness.stress.options import NOT_VALID, NOT_VALIDATED, STOP_FILE, StressOptions, StressResult, StressUsage, check_url, validate
from harness.stress.render import render_stress
from harness.stress.watch import Watch

__all__ = ["StressOptions", "StressResult", "StressUsage", "Supervisor", "check_url", "run"]

WATCH_EVERY = 0.25  # seconds between the --until-violation history polls


def _stopped(pid: int) -> bool | None:
    """Whether the process is stopped (Linux /proc; None: unknown)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t", "Z", "X")
    except (OSError, IndexError):
        return None


def _wait_stopped(pid: int, tries: int = 1000) -> None:
    """Until the process's state is stopped (elsewhere than Linux, a moment)."""
    for _ in range(tries):
        if _stopped(pid) is not False:
            return
        time.sleep(0.0005)


class Supervisor:
    """The parent of a stress run: starts, watches, crashes and restarts the node processes and the cancel
    caller, admits prompts, and after the run has the history and the effect logs checked."""

    def __init__(self, opts: StressOptions, server: StressServer, watch_history=None):
        """`server`: what runs (harness.port.history; the bundled server's is binding.stress.BUNDLED);
        `watch_history(url)`: validate's search on the history as it grows, its `poll` (--until-violation)."""
        self.o = opts
        self.watch_history = watch_history
        self.server = server
        self.plan = CrashPlan(opts.seed, opts.crash_every, opts.crash_every_commits)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.out = Path(opts.out)
        self.run_dir = _fresh_dir(self.out, f"stress-{stamp}-{os.getpid()}")
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
        self.watch: Watch | None = None
        self._stranded = False

    # the parent's time: the wall's here; a simulation's (harness/stress/simulation.py) runs the nodes in a sleep
    monotonic = staticmethod(time.monotonic)
    sleep = staticmethod(time.sleep)
    wall_time = staticmethod(time.time)
    source = "stress"

    # ------------------------------------------------------------------ set-up

    def setup(self) -> None:
        meta = self.run_meta()
        self.db = self.open_db(meta)
        self.recorder_meta = meta
        self.faults = FaultInjector(self)
        if self.o.until_violation:
            # validate's search judges the history as it grows (a per-Session one up to its settled seq);
            # no search given: the per-Session checker
            judge = None if self.watch_history is None else self.watch_history(self.url)
            self.watch = Watch(self.db, self.db.meta(), judge=judge)  # as installed (a per-Session history says so)
        for s in self.sessions:
            self.admit(s)
            self.admit(s)

    def run_meta(self) -> dict:
        """The run's constants, stored in the history's header."""
        return {"sessions": self.sessions, "nodes": self.node_ids, "workers": self.worker_ids,
                "lease_ticks": self.lease_ticks, "tick_seconds": self.o.tick, "scan_bound": 100,
                "max_tries": self.server.vocabulary.max_tries,
                "max_steps": self.o.steps, "wake_rows": len(self.sessions), "wake_batch": self.o.wake_batch,
                "fresh_share": self.o.fresh_share, "max_wake_tries": self.o.max_wake_tries,
                "wakers": max(1, len(self.node_ids)),
                "defects": sorted(self.o.defects), "seed": self.o.seed, "source": self.source,
                "grace_ticks": grace_ticks(self.o.skew_bound_ms, self.o.tick)}

    def open_db(self, meta: dict):
        return self.server.open(self.url, meta, pg_lock=self.o.pg_lock, tick=self.o.tick)

    def admit(self, s: str) -> None:
        """The Session's next prompt, its execution requested (the nodes' callers admit held ones too)."""
        self.prompt_no[s] += 1
        self.db.admit(s)

    def admit_idle(self) -> None:
        """A prompt for each Session that has no pending input (up to `max_prompts` in all)."""
        pend = self.pending()
        for s in self.sessions:
            if pend.get(s, 0) < 1 and sum(self.prompt_no.values()) < self.o.max_prompts:
                self.admit(s)

    def node_cmd(self, k: int) -> list[str]:
        o = self.o
        n, r = self.node_ids[k], self.worker_ids[k]
        cmd = ["node", "--db", self.url, "--run-dir", str(self.run_dir),
               "--owner", n, "--worker", r, "--incarnation", str(self.incarnation[n]), "--seed", str(o.seed),
               "--tick", str(o.tick), "--lease-ticks", str(self.lease_ticks), "--fail-rate", str(o.fail_rate),
               "--effect-ms", str(o.effect_ms), "--steps", str(o.steps), "--sessions", *self.sessions,
               "--input-rate", str(o.input_rate), "--steer-rate", str(o.steer_rate), "--wake-rate", str(o.wake_rate),
               "--wake-batch", str(o.wake_batch), "--fresh-share", str(o.fresh_share),
               "--max-wake-tries", str(o.max_wake_tries), "--wakers", str(len(self.node_ids)),
               "--waker", str(k + 1), "--skew-ms", str(self.faults.skew[n]),
               "--grace-ticks", str(grace_ticks(o.skew_bound_ms, o.tick)), "--pg-lock", o.pg_lock]
        if o.busy_storm:
            cmd += ["--busy-timeout", str(STORM_BUSY_TIMEOUT)]
        if not o.recovery:
            cmd.append("--no-recovery")
        if o.pause_before_dispatch:
            cmd += ["--pause-before-dispatch", str(o.pause_before_dispatch)]
        for d in o.defects:
            cmd += ["--defect", d]
        return cmd

    def spawn(self, argv: list[str], log: str):
        proc = self.ctx.Process(target=self.server.node_entry, args=(argv, str(self.run_dir / log)), daemon=True)
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
                                  "--pg-lock", o.pg_lock, "--nodes", *self.node_ids], "caller.log")

    # ------------------------------------------------------------------ crashes

    def crash(self, n: str, *, unexpected: str | None = None) -> None:
        """SIGKILL (unless already dead), wait, record the twin's Crash of the node and its worker, restart."""
        proc = self.procs[n]
        if proc.exitcode is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        k = self.node_ids.index(n)
        seq = self.db.record_crash((n, self.worker_ids[k]))
        self.faults.crashed(n, self.wall_time())
        if unexpected is None:
            self.res.crashes += 1
            if self.watch is not None:
                self.watch.crashed_at(seq)
        else:
            self.res.unexpected_exits.append(unexpected)
        self.incarnation[n] += 1
        self.start(k)

    def victim(self) -> str | None:
        """A node to kill: usually one that owns a live claim (so its work must be recovered); none while
        the one chosen holds a waker's plan (`holds_plan`: tried again at the next turn)."""
        up = {n: self.ready(n) and n not in self.faults.paused for n in self.procs}
        n = self.plan.victim(self.db, self.db.now(), up, self.node_ids)
        return None if n is None or self.holds_plan(n) else n

    def holds_plan(self, n: str) -> bool:
        """Whether node n's waker is between its read and its reservation (binding/stress/callers.py, the file
        `waking-<n>`): the model's wakers do not crash there, so neither is n crashed then. n is stopped
        (SIGSTOP) for the look, so it cannot read meanwhile; stopped it stays for the crash, else it goes on."""
        proc = self.procs[n]
        if proc.exitcode is not None:
            return False
        if _stopped(proc.pid):  # it stopped itself (a pause before a dispatch): left to the pause's resume
            return True
        os.kill(proc.pid, signal.SIGSTOP)
        _wait_stopped(proc.pid)
        if (self.run_dir / f"waking-{n}").exists():
            os.kill(proc.pid, signal.SIGCONT)
            return True
        return False

    # ------------------------------------------------------------------ the run

    def poll_counts(self) -> None:
        """Count the commits recorded since the last poll (a per-Session history: up to its settled seq, as
        its seqs have gaps and commit out of order)."""
        rows = self.db.commit_counts(self.seen_seq, self.db.settled() if self.db.per_session_writers else None)
        for action, n, _, _ in rows:
            self.res.counts[action] += n
        self.res.counts["commits"] += sum(r[2] for r in rows)
        self.seen_seq = max([self.seen_seq] + [r[3] for r in rows])

    def pending(self) -> dict[str, int]:
        return self.db.pending_prompts()

    def stranded(self) -> bool:
        """Every Session's claim is quarantined: held for an operator, so no execution can begin again (the
        stranding of cancellation-owned work whose lease expired, spec/README.md) and a count cap would
        never be reached."""
        return self.db.quarantined() >= len(self.sessions)

    def progress_line(self, t: float) -> str:
        c = self.res.counts
        return (f"stress {t:5.1f}s  executions {self.res.executions:,}  cancels {c[R.CANCEL_REQUEST]:,}  "
                f"crashes {self.res.crashes}  takeovers {c[R.RECOVERY_TAKEOVER]:,}  "
                f"quarantines {c[R.RECOVERY_QUARANTINE]:,}  continuations {c[R.RECOVERY_CONVERT]:,}  "
                f"commits {c['commits']:,}")

    def done(self, t: float) -> str | None:
        """Why the run stops now (None: it goes on)."""
        o = self.o
        if t >= o.seconds:
            return "seconds"
        if o.until_violation:
            if self.res.first_violation is not None:
                return "violation"
            if self._stranded:
                return "stranded"
            if o.max_executions is not None and self.res.executions >= o.max_executions:
                return "max-executions"
            if o.max_crashes is not None and self.res.crashes >= o.max_crashes:
                return "max-crashes"
        if o.executions is None:
            return None
        if (self.res.executions >= o.executions and self.res.crashes >= o.min_crashes
                and self.res.counts[R.RECOVERY_TAKEOVER] >= o.min_takeovers and self.faults.enough(o.min_faults)):
            return "executions"
        return None

    def run(self) -> StressResult:
        o = self.o
        self.setup()
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload([self.server.node_module])  # a restart forks a warm interpreter
        for k in range(o.nodes):
            self.start(k)
        self.start_caller()
        deadline = self.monotonic() + 120
        while not all(self.ready(n) for n in self.node_ids) and self.monotonic() < deadline:
            self.sleep(0.02)
        t0 = self.monotonic()
        self._tty = sys.stderr.isatty()
        self._next_print = self._next_admit = self._next_watch = 0.0
        self.plan.start()
        try:
            while True:
                self.sleep(0.02)
                t = self.monotonic() - t0
                self._step(t)
                why = self.done(t)
                if why is not None:
                    self.res.stopped_by = why
                    break
            if why != "violation":
                self.settle(t0)
        finally:
            self.stop()
        self.res.elapsed = self.monotonic() - t0
        self.poll_counts()
        if o.progress:
            print(("\r" if self._tty else "") + self.progress_line(self.res.elapsed), file=sys.stderr, flush=True)
        return self.res

    def _step(self, t: float) -> None:
        """One turn of the parent's loop at `t` seconds: restart what died, admit, report, watch, crash."""
        o = self.o
        self.faults.turn(t)
        if self.faults.busy():
            return  # the parent, or a paused node, holds the write lock: the parent's own writes wait, or it
            # would wait for a lock only its own SIGCONT releases
        for n, proc in list(self.procs.items()):
            code = proc.exitcode
            if code is not None:
                tail = (self.run_dir / f"{n}.log").read_text(errors="replace").strip().splitlines()[-3:]
                self.crash(n, unexpected=f"{n} exited by itself with code {code}: {' | '.join(tail)}")
        if self.caller.exitcode is not None:
            self.res.unexpected_exits.append(f"the caller exited by itself with code {self.caller.exitcode}")
            self.start_caller()
        if t >= self._next_admit:
            self._next_admit = t + 0.05
            self.admit_idle()
        if t >= self._next_print:
            self._next_print = t + 1.0
            self.poll_counts()
            if o.progress:
                line = self.progress_line(t)
                print(("\r" + line) if self._tty else line, end="" if self._tty else "\n", file=sys.stderr,
                      flush=True)
        if self.watch is not None and t >= self._next_watch:
            self._next_watch = t + WATCH_EVERY
            self.poll_counts()
            self.res.first_violation = self.watch.poll()
            self._stranded = self.stranded()
        due = self.plan.due(t, self.res.counts["commits"]) and not self.faults.quieted
        victim = self.victim() if due else None
        if victim is not None:
            self.crash(victim)
            self.poll_counts()
            self.plan.crashed(t, self.res.counts["commits"])

    def settle(self, t0: float) -> None:
        """The tail liveness is measured on (harness/stress/liveness.py): no new faults or crashes; once those
        under way ended each Session is given pending input if it has none, and the run goes on until every
        Session that then had pending input was served (or quarantined) and no wake row is held reserved, or
        for the liveness bound and one lease more, whichever is first."""
        self.faults.quiet()
        mark, calm = None, None
        while True:
            self.sleep(0.02)
            t = self.monotonic() - t0
            self._step(t)
            if self.faults.busy():
                continue
            if mark is None:
                calm = t
                self.admit_idle()  # each Session waits on something after the last fault, whatever the timing
                mark = self.db.input_mark()
            if t - calm > (self.o.liveness_bound + 1) * self.o.lease or not self._waiting(mark):
                return

    def _waiting(self, mark: int) -> int:
        """Pending inputs already waiting at input sequence `mark`, on Sessions not quarantined."""
        return self.db.waiting(mark)

    def stop(self) -> None:
        (self.run_dir / STOP_FILE).touch()  # first: a node pauses itself only while it is not there
        self.faults.end()
        for proc in self.procs.values():  # one that stopped itself just as it was resumed goes on too
            if proc.exitcode is None:
                os.kill(proc.pid, signal.SIGCONT)
        self.res.faults = list(self.faults.log)
        self.res.ended_wall = self.wall_time()
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
        checker = check_db(self.db)
        self.res.checker = checker
        eff = check_effects(self.run_dir, self.lease_ticks, checker.recovery_intervals)
        self.res.effect_violations.extend(eff.violations)
        self.res.effect_breaches.update(eff.breaches)
        self.res.effects.update(eff.counts)
        self.res.faultcheck = check_faults(self.db, self.recorder_meta, self.res, self.o, self.faults.skew, eff)
        self.res.check_seconds = time.monotonic() - t
        self.res.traces.extend(save_traces(checker, self.o.defects, self.out))
        self.db.dispose()
        return self.res


def _fresh_dir(parent: Path, name: str) -> Path:
    """A new directory `parent/name` (`name-2`, `-3`, ... when a run of the same second and process has it)."""
    parent.mkdir(parents=True, exist_ok=True)
    for k in range(1, 1000):
        path = parent / (name if k == 1 else f"{name}-{k}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(parent / name)


VALIDATED_NODES = 8  # validate's real-time search explains correct histories of this many node processes (docs/history.md)


def run(opts: StressOptions, server: StressServer, validate_history=None, watch_history=None, supervisor=None) \
        -> tuple[int, StressResult | None]:
    """Run `server` (harness.port.history; the bundled server's is binding.stress.BUNDLED), check, print the
    summary; returns (exit code, result). `validate_history(url)`: `claimcheck validate`'s verdict on the
    run's own history (harness.validation.command.Verdict); `watch_history(url)`: the same search on the
    history as it grows, its `poll` (--until-violation). harness.cli gives both: the search is after stress
    in the flow. `supervisor`: the class that runs it (default `Supervisor`, real processes; a simulation's,
    harness/stress/simulation.py `simulate`)."""
    validate(opts, server)
    sup = (supervisor or Supervisor)(opts, server, watch_history)
    res = sup.run()
    sup.check()
    if validate_history is not None:
        v = validate_history(res.url)
        res.validation, res.validation_ok = v.report, v.state != NOT_VALID
        if v.state == NOT_VALIDATED:
            res.not_validated = v.reason
        elif v.state == NOT_VALID and opts.nodes > VALIDATED_NODES:
            # beyond the node counts validate's real-time search is shown to explain (docs/history.md, "Numbers"),
            # its NOT VALID may be the search's limit, not the server's bug: said, and never OK
            res.validation_ok = True
            res.not_validated = f"{opts.nodes} node processes, beyond the {VALIDATED_NODES} validate's search is shown to explain"
            res.validation = [f"NOT VALIDATED: {res.not_validated} (docs/history.md, Numbers); its report:"] \
                + res.validation
        elif v.state == NOT_VALID and v.seq is not None:  # the first unexplained line, as a replayable trace
            res.traces.extend(validation_trace(res.checker, v.seq, opts.defects, sup.out))
        if res.first_violation is not None and res.ok and not res.not_validated:
            # the stop was on a prefix judged from the readings recorded by then (harness/validation/judge.py),
            # and the whole history validates: no violation; said
            res.stopped_by = f"a prefix up to commit {res.first_violation.seq} that the whole history explains"
            res.first_violation = None
    print(render_stress(res, opts))
    if res.ok and not opts.keep:
        import shutil
        shutil.rmtree(sup.run_dir, ignore_errors=True)
    return exit_code(res, opts), res


def exit_code(res: StressResult, opts: StressOptions) -> int:
    """0 holds, 1 a violation or a lost input, 4 a switched-on defect that the run did not detect, 5 every
    check held but validate could not decide on the run's history (NOT VALIDATED: never OK)."""
    if not res.ok:
        return 1
    if opts.defects:
        return 4
    return 5 if res.not_validated else 0
