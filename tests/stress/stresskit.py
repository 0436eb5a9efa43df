"""Deterministic commit histories for the history check's tests (harness/stress/checker.py).

`RecordingScheduler` drives the implementation through the deterministic scheduler (binding.world) with
the commit recorder on (impl/history.py); `record_trace` records a trace file's schedule, `record_walk` a seeded
random walk of the twin. Each gives a database whose history `checker.check_db` checks.
"""

from __future__ import annotations

import random

from impl.db import Database
from impl.history import ENVIRONMENT, HistoryRecorder, Step, memory_of
from spec import left_claims
from spec import model as M
from spec import names as N

from binding.world import Scheduler
from harness import registry as R
from harness.stress.records import ADMIT, meta_for
from harness.traces import trace as T


class RecordingScheduler:
    """binding.world.Scheduler with the recorder on: the twin (with the configuration's defects)
    chooses, the implementation follows one atomic unit at a time, every commit is recorded with its
    actor, action, clock reading and the actor's memory before the step. Each node and each recovery
    worker is a process of its own here (a Crash(k) resets exactly what the twin's Crash(k) resets).

    It lives with the tests because only tests use it: it makes deterministic histories, with defects on
    or off, to test the history checker (harness/stress/checker.py) against; no command records a
    history this way (`claimcheck stress` records real processes, harness/stress/supervisor.py)."""

    def __init__(self, cfg: M.Config, db=None):
        self.cfg = cfg
        self.db = db or Database.memory()
        self.recorder = HistoryRecorder.install(self.db, "scheduler", meta=meta_for(cfg, source="scheduler"))
        self.recorder.current = Step(ENVIRONMENT, ADMIT, {}, {}, 0)  # the World admits the prompts
        self.sched = Scheduler(left_claims.empty_start(cfg) if cfg.left_claims else cfg, db=self.db)
        self.recorder.current = None
        self.twin = M.init(cfg)
        if cfg.left_claims:  # the seed's commits, recorded as the restart's steps from the empty start
            self.cfg, self.twin = self.sched.cfg, M.init(self.sched.cfg)
            for name, params in left_claims.restart(cfg):
                self.apply(name, params)
            assert self.twin._replace(faults=frozenset()) == M.init(cfg), "the restart did not reach the seeded Init"
            self.cfg, self.twin = cfg, M.init(cfg)
            self.sched.cfg, self.sched.faults = cfg, frozenset()  # the seeded Init: no fault has happened

    @property
    def world(self):
        return self.sched.world

    def _memory(self, who: str) -> dict:
        w = self.world
        return memory_of(nodes=[w.node(who)]) if who in w.nodes else memory_of(workers=[w.worker(who)])

    def apply(self, name: str, params: tuple, twin_next: M.State | None = None) -> None:
        w = self.world
        now = w.clock.now()
        twin_next = twin_next if twin_next is not None else M.apply(self.cfg, self.twin, name, params)
        if twin_next is None:
            raise ValueError(f"{name}{params} is not enabled in the twin")
        pj = T.params_to_json(name, params)
        if name == R.TICK:
            self.sched.apply(name, params, twin_next)
        elif name == R.CRASH:
            self.sched.apply(name, params, twin_next)
            self.recorder.process = f"crash:{params[0]}"
            with self.recorder.step(ENVIRONMENT, name, pj, {}, now):
                with self.db.transaction():
                    pass
        elif name == R.RECOVERY_SCAN:
            self.sched.apply(name, params, twin_next)  # a read: no commit records it (as in `claimcheck stress`)
        elif name in (R.WAKE_READ, R.WAKE_RESERVE):  # waker k: its plan is its memory
            k = params[0]
            self.recorder.process = f"waker{k}"
            with self.recorder.step(ENVIRONMENT, name, pj, memory_of(wakers={k: w.wakers[k - 1]}), now):
                self.sched.apply(name, params, twin_next)
        elif N.ACTIONS[name].actor in ("caller", "waker") or name in (R.WAKE_ARRIVE, R.WAKE_LOST):
            self.recorder.process = "callers"  # the caller and the waker remember nothing: no memory recorded
            with self.recorder.step(ENVIRONMENT, name, pj, {}, now):
                self.sched.apply(name, params, twin_next)
        elif name in (R.CORRUPT_RECOVERY_ROW, R.FORGE_CONTINUATION):
            with self.recorder.step(ENVIRONMENT, name, pj, {}, now):
                self.sched.apply(name, params, twin_next)
        else:
            who = params[0]
            self.recorder.process = who
            with self.recorder.step(who, name, pj, self._memory(who), now):
                self.sched.apply(name, params, twin_next)
        self.twin = twin_next

    def run(self, steps) -> "RecordingScheduler":
        for name, params in steps:
            self.apply(name, params)
        return self


def record_trace(path, defects=None, db=None) -> RecordingScheduler:
    """Record a trace file's schedule (its defects, or `defects`) with the recorder on."""
    tr = T.load(path)
    cfg = T.trace_to_config(tr.config, defects)
    rs = RecordingScheduler(cfg, db)
    for k, step in enumerate(tr.steps):
        params = T.params_from_json(step.action, step.params, f"steps[{k}]")
        nxt = M.apply(cfg, rs.twin, step.action, params)
        if step.refused and nxt is None:
            continue  # a refusal probe commits nothing (a defect may enable it: then it is a step)
        if nxt is None:
            break  # with other switches the schedule can leave the twin (as replay stops there too)
        rs.apply(step.action, params, nxt)
    return rs


def record_walk(cfg: M.Config, seed: int, steps: int, db=None, choose=None) -> RecordingScheduler:
    """A random twin walk (seeded, deterministic), recorded."""
    rng = random.Random(seed)
    rs = RecordingScheduler(cfg, db)
    for _ in range(steps):
        options = list(M.successors(cfg, rs.twin))
        if not options:
            break
        name, params, nxt = (choose or rng.choice)(options)
        rs.apply(name, params, nxt)
    return rs
