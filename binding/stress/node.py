"""One process of a stress run of the bundled server (`claimcheck stress`, harness/stress/supervisor.py,
which starts it through binding.stress's node entry point): a node or the cancel caller.

    python -m binding.stress.node node   --db URL --run-dir DIR --owner n1 --worker r1 [--incarnation K] ...
    python -m binding.stress.node caller --db URL --run-dir DIR ...

A **node** is one server process over the shared database: its Node (runner and finalizer, owner id
`--owner`) and a recovery worker (owner id `--worker`: recovery workers have owner ids of their own,
spec/README.md decision 5). It runs the production step machines one atomic unit at a time, as a real
loop would, with every commit recorded (impl/history.py): each step pins the clock (one wall-clock
reading, in ticks, for every lease decision of the step), runs supervision (a finalizer whose lease
expired stops: the twin's Tick), records the process's memory, and runs the step. Work: admitted prompts
and recovery's continuations of unclaimed Sessions; Step.Failed or Step.Ended chosen by a seeded
scripted provider; heartbeats every third of a lease for the claims its actors work on; recovery scans
of expired claims; interrupts delivered to its inbox by the caller; and the input actions and wake scans
of its own callers and waker (binding/stress/callers.py).

The **caller** is an authenticated client: every so often it picks a running execution from the claims
and routes an interrupt naming that execution to its owning node's inbox (`ProcessLocalRouting`).

A node stops when `DIR/stop` exists (after its current step); a crash is the parent's SIGKILL. Effects
that commit nothing are appended to `DIR/effects-<owner>.jsonl` (one unbuffered write per line, so a
SIGKILL loses none that happened): provider dispatches and finalizer steps with their clock readings and
wall-clock intervals, for the physical checks of NoPhysicalReplay and NoOverlappingEffects.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import time
from pathlib import Path

import sqlalchemy as sa

from impl.clock import SystemClock
from impl.db import PG_LOCKS, Database
from impl.history import HistoryRecorder, memory_of
from impl.node import Node
from impl.provider import ScriptedProvider
from impl.recovery import RecoveryWorker
from impl.schema import input_t

from harness import registry as R
from harness.stress.faults import application_name
from harness.stress.options import STOP_FILE

from binding.stress.callers import Callers, Waker, twin_input
from binding.stress.interrupter import Caller

# what a fault makes a unit fail with (harness/stress/faults.py): the unit rolled back whole
DB_FAULTS = (sa.exc.OperationalError, sa.exc.InterfaceError)
# the share of an idle recovery worker's scans that run the production pass (RecoveryWorker.run_once: every row
# of its window taken, reconciled, converted or quarantined in one call); the others take one row a unit a turn
PASS_SHARE = 0.75


def node_url(url: str, owner: str) -> str:
    """The database URL a node connects with: on PostgreSQL its connections name it (`application_name`),
    so a fault can drop exactly its connections."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return url
    return parsed.update_query_dict({"application_name": application_name(owner)}).render_as_string(hide_password=False)


class PinnedClock:
    """Wall time in ticks, read once per step: `pin()` samples the wall clock (never backwards in this
    process); `now()` returns the pinned reading, so every lease decision of a step sees one instant."""

    def __init__(self, tick_seconds: float, skew_ms: float = 0.0, wall=time):
        offset = skew_ms / 1000  # this node's clock skew (harness/stress/faults.py); 0 normally
        self.inner = SystemClock(tick_seconds, source=(lambda: wall.time() + offset) if offset else wall.time)
        self._now = self.inner.now()

    def pin(self) -> int:
        self._now = self.inner.now()
        return self._now

    def now(self) -> int:
        return self._now


class EffectLog:
    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, **record) -> None:
        os.write(self.fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())


class StressProvider(ScriptedProvider):
    """The scripted provider with a seeded outcome per dispatch and a short physical effect (the call),
    logged with its clock reading and wall-clock interval."""

    def __init__(self, rng: random.Random, fail_rate: float, effects: EffectLog, clock: PinnedClock,
                 lease_ticks: int, effect_s: float, steps: int = 1, wall=time):
        super().__init__(steps=steps)
        self.wall = wall
        self.rng, self.fail_rate, self.effects, self.clock = rng, fail_rate, effects, clock
        self.lease_ticks, self.effect_s = lease_ticks, effect_s
        self.renewed_at: dict[int, int] = {}  # execution -> clock reading of its last successful Renew
        self.recorder: HistoryRecorder | None = None
        self.pause_hook = None  # called as the physical call begins (a targeted pause, harness/stress/faults.py)

    def dispatch(self, session_id, execution_id, owner_id, at, step=1):
        if self.pause_hook is not None:
            self.pause_hook()
        t0 = self.wall.time()
        phys = self.clock.inner.now()  # the node's own clock as the call physically begins (TimelyDispatch)
        if self.effect_s:
            self.wall.sleep(self.rng.uniform(0, self.effect_s))
        super().dispatch(session_id, execution_id, owner_id, at, step)
        self.decide(execution_id, "fail" if self.rng.random() < self.fail_rate else "end")
        self.calls.clear()  # the in-memory call list is not needed here and would grow without bound
        self.effects.write(k="dispatch", s=session_id, e=execution_id, o=owner_id, now=at, phys=phys,
                           renewed=self.renewed_at.get(execution_id), t0=t0, t1=self.wall.time(),
                           after=self.recorder.last_seq if self.recorder else 0)


class NodeProcess:
    """One node process: its Node, recovery worker, callers and waker, one atomic unit at a time (`turn`).
    `wall`: where its time comes from (time, or a simulation's, binding/stress/simulation.py)."""

    def __init__(self, args, wall=time):
        self.args = args
        self.wall = wall
        self.rng = random.Random(f"{args.seed}:{args.owner}:{args.incarnation}")
        self.run_dir = Path(args.run_dir)
        self.db = Database(node_url(args.db, args.owner), busy_timeout_s=args.busy_timeout, pg_lock=args.pg_lock,
                           synchronous=args.synchronous)
        self.clock = PinnedClock(args.tick, args.skew_ms, wall)
        self.recorder = HistoryRecorder.attach(self.db, f"{args.owner}#{args.incarnation}@{os.getpid()}")
        self.effects = EffectLog(self.run_dir / f"effects-{args.owner}.jsonl")
        self.provider = StressProvider(self.rng, args.fail_rate, self.effects, self.clock, args.lease_ticks,
                                       args.effect_ms / 1000, args.steps, wall)
        self.provider.recorder = self.recorder
        if args.pause_before_dispatch:
            self.provider.pause_hook = self.pause_before_dispatch
        defects = args.defect or ()
        # delivery kinds off: the history check's configuration has no DeliveryKinds (its callers admit
        # queue prompts and steer any pending one), so the order is left free there too
        self.node = Node(self.db, self.clock, args.owner, defects=defects, lease_ticks=args.lease_ticks,
                         provider=self.provider, grace_ticks=args.grace_ticks, delivery_kinds=False)
        self.worker = RecoveryWorker(self.db, self.clock, args.worker, defects=defects,
                                     lease_ticks=args.lease_ticks, scan_bound=args.scan_bound,
                                     grace_ticks=args.grace_ticks)
        self.worker.unit = self.recovery_unit  # the production pass's units, each recorded as its own step
        self.inbox = self.run_dir / "inbox" / args.owner
        self.inbox.mkdir(parents=True, exist_ok=True)
        self.stop_file = self.run_dir / STOP_FILE
        self.beat_every = max(args.tick, args.lease_ticks * args.tick / 3)
        self.last_beat: dict[str, float] = {}
        self.next_scan = 0.0
        self.next_work = 0.0
        self.db_errors = 0
        self.result = None  # the last step's result
        self.callers = Callers(self)
        self.waker = Waker(self)

    def pause_before_dispatch(self) -> None:
        """A share of provider calls stop this process (SIGSTOP) between the renewal and the physical
        dispatch; the parent sees the mark and resumes it after a pause longer than a lease."""
        if self.rng.random() >= self.args.pause_before_dispatch or self.stop_file.exists():
            return
        (self.run_dir / f"paused-{self.args.owner}-{self.args.incarnation}").touch()
        os.kill(os.getpid(), signal.SIGSTOP)

    # ------------------------------------------------------------------ one step

    def memory(self) -> dict:
        return memory_of(nodes=[self.node], workers=[self.worker])

    def pin(self) -> int:
        now = self.clock.pin()
        self.node.supervise()  # the clock moved: a supervised finalizer whose lease expired stops
        return now

    def step(self, actor: str, action, params: dict, fn, *, repin: bool = True, memory: dict | None = None,
             reraise: bool = False):
        """Pin the clock, supervise, record the memory (`memory`: what the actor remembers, when it is not
        this process's node and worker), run one atomic unit under the recorder's step. `action` is a name,
        or the actor's `enabled` (evaluated after the pin: the name recorded is the step that runs);
        returns the action run, or None; its result is `self.result`. `reraise`: a database fault ends the
        caller too (a production pass: the turn counts it)."""
        now = self.pin() if repin else self.clock.now()
        name = action() if callable(action) else action
        self.result = None
        if name is None:
            return None
        try:
            with self.recorder.step(actor, name, params, self.memory() if memory is None else memory, now):
                self.result = fn()
            return name
        except DB_FAULTS as exc:  # a lock wait timed out, SQLITE_BUSY, a dropped connection: rolled back whole
            if reraise:
                raise
            self.db_errors += 1
            print(f"stress node {self.args.owner}: {action}: {str(exc).splitlines()[0]}", file=sys.stderr)
            return None

    # ------------------------------------------------------------------ the actors

    def cancels(self) -> bool:
        did = False
        try:
            names = sorted(n for n in os.listdir(self.inbox) if n.endswith(".json"))  # not the caller's .tmp
        except FileNotFoundError:
            return False
        for name in names:
            path = self.inbox / name
            try:
                msg = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            finally:
                path.unlink(missing_ok=True)
            if self.node.finalizer.pc != "idle":
                continue  # busy: the caller will ask again
            owner = self.args.owner
            self.step(owner, R.CANCEL_REQUEST, {"n": owner, "s": msg["s"], "_execution": msg["e"]},
                      lambda: self.node.cancel(msg["s"], msg["e"]))
            did = True
        return did

    def runner(self) -> bool:
        runner, owner = self.node.runner, self.args.owner
        did = False
        for _ in range(self.args.burst):  # a runner's steps back to back, as a real loop runs them
            execution = runner.execution_id
            action = self.step(owner, runner.enabled, {"n": owner}, runner.step)
            if action is None:
                break
            if action == R.RENEW and runner.pc == "renewed":
                self.provider.renewed_at[execution] = self.clock.now()
            did = True
            gate = runner.pc in ("started", "failed", "ended") or runner.pc == "done" and runner.active
            if gate and self.args.listener_ms:
                self.wall.sleep(self.rng.uniform(0, self.args.listener_ms / 1000))  # listeners run after the commit
            self.cancels()  # an interrupt can arrive between any two steps (the listener gate included)
        if runner.pc == "idle" and self.wall.monotonic() >= self.next_work:
            did |= self.acquire()
        return did

    def acquire(self) -> bool:
        """Ordinary work or recovery's continuation of an unclaimed Session, chosen at random."""
        with self.db.read() as conn:
            if self.rng.random() < self.args.wake_claimed:
                # a wake for a Session with pending input whatever its claim (a prompt arriving): ordinary
                # acquisition must refuse a claimed Session, live or expired (insert-only)
                ordinary = [r[0] for r in conn.execute(sa.select(input_t.c.session_id).distinct()
                                                       .where(input_t.c.state == "pending"))]
                recovery = set()
            else:
                ordinary = self.node.inputs.sessions_to_wake(conn, 64)
                recovery = set(self.node.inputs.sessions_to_wake(conn, 64, recovery=True))
            sessions = sorted(set(ordinary) | recovery)
            if not sessions:
                self.next_work = self.wall.monotonic() + 0.01
                return False
        s = self.rng.choice(sessions)
        self.take(s, promote=s in recovery)
        return True

    def take(self, s: str, promote: bool = False) -> bool:
        """Begin an execution on Session s: recovery's continuation (`promote`) or the input ordinary selection
        picks; whether it began."""
        with self.db.read() as conn:
            if promote:  # the production recovery wake's choice
                cont = self.node.inputs.pending_continuation(conn, s)
                row = self.node.inputs.get(conn, cont) if cont else None
            else:
                picked = self.node.inputs.select_ordinary(conn, s)
                row = picked[0] if picked else None
        if row is None:
            return False
        owner = self.args.owner
        params = {"n": owner, "i": twin_input(row)}
        if promote:
            self.step(owner, R.PROMOTE_CONTINUATION, params, lambda: self.node.promote(row.id))
        else:
            self.step(owner, R.ACQUIRE, params, lambda: self.node.acquire(row.id))
        began = bool(self.result)
        if began:
            self.callers.steer()  # at the Step's start, before its renewal
        return began

    def finalizer(self) -> bool:
        fin, owner = self.node.finalizer, self.args.owner
        did = False
        for _ in range(min(4, self.args.burst)):
            now = self.pin()
            if fin.enabled() is None:
                break
            with self.db.read() as conn:  # what the finalizer's claim is as its step begins (effect log)
                c = self.node.claims.get(conn, fin.session_id)
            seen = None if c is None else [c.execution_id, c.owner_id, c.lease_expires_at]
            s, e, t0 = fin.session_id, fin.execution_id, self.wall.time()
            action = self.step(owner, fin.enabled, {"n": owner}, fin.step, repin=False)
            if action is None:
                break
            self.effects.write(k="fin", s=s, e=e, o=owner, now=now, action=action, seen=seen,
                               ok=bool(fin.last), t0=t0, t1=self.wall.time(), after=self.recorder.last_seq)
            did = True
        return did

    def recovery(self) -> bool:
        w, wid = self.worker, self.args.worker
        if self.args.no_recovery:
            return False  # the stand-in that strands Sessions (tests of the liveness check)
        if w.pc != "idle":
            self.step(wid, w.enabled, {"r": wid}, w.step)
            return True
        if self.wall.monotonic() < self.next_scan:
            return False
        self.pin()
        if self.rng.random() < PASS_SHARE:  # the production pass over its window (RecoveryWorker.run_once)
            if not w.run_once():
                self.next_scan = self.wall.monotonic() + self.args.scan_every
                return False
            return True
        rows = w.window()
        if not rows:
            self.next_scan = self.wall.monotonic() + self.args.scan_every
            return False
        # RecoveryScan: a read, recorded by no commit (the checker infers it from the memory recorded
        # before the compare-and-swap); then RecoveryTakeover on what it saw
        w.remember(self.rng.choice(rows[:4]))
        self.step(wid, R.RECOVERY_TAKEOVER, {"r": wid}, w.take)
        return True

    def recovery_unit(self, action: str, fn):
        """One unit of the worker's production pass, recorded as its own step as the worker's own steps are
        (its scan inferred from the memory recorded before the compare-and-swap); its result."""
        wid = self.args.worker
        self.step(wid, action, {"r": wid}, fn, reraise=True)
        return self.result

    def heartbeats(self) -> bool:
        did = False
        t = self.wall.monotonic()
        owner = self.args.owner
        busy = {a.session_id for a in (self.node.runner, self.node.finalizer) if a.pc not in ("idle", "stopped")}
        for s in sorted(busy):
            if t - self.last_beat.get(s, 0.0) >= self.beat_every:
                self.last_beat[s] = t
                self.step(owner, R.HEARTBEAT, {"n": owner, "s": s}, lambda: self.node.heartbeat(s))
                did = True
        if self.worker.pc in ("converting", "reconciled") and t - self.last_beat.get("@worker", 0.0) >= self.beat_every:
            self.last_beat["@worker"] = t
            wid = self.args.worker
            self.step(wid, R.HEARTBEAT, {"n": wid, "s": self.worker.session_id},
                      lambda: self.worker.heartbeat(self.worker.session_id))
            did = True
        for s in list(self.last_beat):
            if s not in busy and s != "@worker":
                del self.last_beat[s]
        return did

    def loop(self) -> int:
        idle_sleep = min(0.005, self.args.tick)
        while not self.stop_file.exists():
            if not self.turn():
                time.sleep(idle_sleep)
        self.db.dispose()
        return 0

    def turn(self) -> bool:
        """One turn of the loop: each actor's ready steps; whether any ran."""
        try:
            did = self.cancels()
            did |= self.runner()
            did |= self.finalizer()
            did |= self.recovery()
            did |= self.heartbeats()
            did |= self.callers.turn()
            did |= self.waker.turn()
        except DB_FAULTS as exc:  # a read cut off (a dropped connection): nothing was written; go on
            self.db_errors += 1
            print(f"stress node {self.args.owner}: {str(exc).splitlines()[0]}", file=sys.stderr)
            did = False
        return did


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m binding.stress.node")
    p.add_argument("role", choices=["node", "caller"])
    p.add_argument("--db", required=True)
    p.add_argument("--run-dir", required=True)
    p.add_argument("--owner", default="n1")
    p.add_argument("--worker", default="r1")
    p.add_argument("--nodes", nargs="*", help="caller: the node owner ids it routes to")
    p.add_argument("--incarnation", type=int, default=0)
    p.add_argument("--seed", default="0")
    p.add_argument("--tick", type=float, default=0.01, help="seconds per clock tick")
    p.add_argument("--lease-ticks", type=int, default=30)
    p.add_argument("--scan-bound", type=int, default=100)
    p.add_argument("--scan-every", type=float, default=0.05, help="seconds between empty recovery scans")
    p.add_argument("--fail-rate", type=float, default=0.25)
    p.add_argument("--steps", type=int, default=1, help="Steps per execution (the twin's MaxSteps)")
    p.add_argument("--listener-ms", type=float, default=3.0,
                   help="longest listener delay after a Step event's commit (the listener gate)")
    p.add_argument("--wake-claimed", type=float, default=0.2,
                   help="share of acquisitions tried on any Session with pending input, claimed or not")
    p.add_argument("--effect-ms", type=float, default=1.0, help="longest simulated provider call")
    p.add_argument("--cancel-every", type=float, default=0.2, help="caller: mean seconds between interrupts")
    p.add_argument("--busy-timeout", type=float, default=30.0)
    p.add_argument("--burst", type=int, default=12,
                   help="node: a runner's steps back to back in one turn of its loop (a simulation's 1: a turn a unit)")
    p.add_argument("--synchronous", choices=["OFF", "NORMAL", "FULL"],
                   help="sqlite's PRAGMA synchronous (default sqlite's, FULL; a simulation's OFF: no power is lost there)")
    p.add_argument("--skew-ms", type=float, default=0.0, help="node: this node's clock offset (faults.py)")
    p.add_argument("--grace-ticks", type=int, default=0, help="recovery's Grace past a lease's expiry")
    p.add_argument("--pause-before-dispatch", type=float, default=0.0,
                   help="node: share of provider calls it stops itself (SIGSTOP) before, the parent resumes it")
    p.add_argument("--no-recovery", action="store_true", help="node: never run the recovery worker (a stand-in)")
    p.add_argument("--pg-lock", choices=PG_LOCKS, default="session",
                   help="PostgreSQL's writers: per Session, or the global lock (the benchmark's comparison)")
    p.add_argument("--defect", action="append")
    p.add_argument("--sessions", nargs="*", help="node: the run's Sessions (its callers' and waker's)")
    p.add_argument("--input-rate", type=float, default=0.2,
                   help="share of loop turns a caller admits, retries exactly or resumes")
    p.add_argument("--steer-rate", type=float, default=0.5, help="share of acquisitions followed by a steer")
    p.add_argument("--wake-rate", type=float, default=0.2, help="share of loop turns the waker moves")
    p.add_argument("--wake-batch", type=int, default=2)
    p.add_argument("--fresh-share", type=int, default=1)
    p.add_argument("--max-wake-tries", type=int, default=2)
    p.add_argument("--wakers", type=int, default=1,
                   help="node: the run's racing wakers (one per node; 1: the scan in one transaction)")
    p.add_argument("--waker", type=int, default=1, help="node: its waker's number k (1..--wakers)")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if args.role == "node":
        proc = NodeProcess(args)
        (Path(args.run_dir) / f"ready-{args.owner}-{args.incarnation}").touch()
        return proc.loop()
    return Caller(args).loop()


def simulated(argv: list[str], wall):
    """A node or the caller as a simulation runs it (harness/stress/simulation.py): in this process, its time
    `wall`'s, its loop turned by the simulation (`turn`)."""
    args = build_parser().parse_args(argv)
    return NodeProcess(args, wall) if args.role == "node" else Caller(args, wall)


def child(argv: list[str], log_path: str) -> None:
    """The entry point of a multiprocessing child (forkserver context): output to its log, then main."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    sys.exit(main(argv))


if __name__ == "__main__":
    sys.exit(main())
