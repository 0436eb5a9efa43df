"""Shared helpers of the impl tests: building a world, and a driver that applies twin actions to the
implementation and maps the database plus actor memory back to the twin's State."""

from __future__ import annotations

import random

import sqlalchemy as sa

from impl import faults, ids
from impl.boundaries import Boundaries, Recorder
from impl.clock import ManualClock
from impl.db import Database
from impl.node import Node
from impl.provider import ScriptedProvider
from impl.recovery import RecoveryWorker
from impl.schema import sequence_t
from impl.snapshot import snapshot
from spec import model as M


class World:
    """Nodes and recovery workers sharing one in-memory database, one clock, one provider."""

    def __init__(self, nodes=("n1", "n2"), workers=("r1",), *, defects=(), lease=1, scan_bound=1,
                 sessions=("s1",), prompts=1, db=None):
        self.db = db or Database.memory()
        self.clock = ManualClock()
        self.recorder = Recorder()
        self.boundaries = Boundaries(self.recorder)
        self.provider = ScriptedProvider()
        common = dict(defects=defects, boundaries=self.boundaries, lease_ticks=lease)
        self.nodes = {n: Node(self.db, self.clock, n, provider=self.provider, **common) for n in nodes}
        self.workers = {r: RecoveryWorker(self.db, self.clock, r, scan_bound=scan_bound, **common)
                        for r in workers}
        any_node = next(iter(self.nodes.values()))
        self.prompt = {(s, k): any_node.inputs.admit_prompt(s, k) for s in sessions for k in range(1, prompts + 1)}

    def node(self, name="n1") -> Node:
        return self.nodes[name]

    def worker(self, name="r1") -> RecoveryWorker:
        return self.workers[name]

    def snap(self):
        return snapshot(self.db)

    def tick(self, ticks=1):
        """The twin's Tick: the clock moves, supervised finalizers observe it."""
        for _ in range(ticks):
            self.clock.advance(1)
            for node in self.nodes.values():
                node.supervise()


def input_id(i: M.Input) -> str:
    return ids.prompt_id(i.sess, i.src) if i.kind == "prompt" else ids.continuation_id(i.sess, i.src)


def _asst(aid):
    return 0 if aid is None else ids.assistant_execution(aid)


class TwinDriver:
    """Apply a twin action instance to a World; `state()` maps the World to a twin State."""

    def __init__(self, cfg: M.Config):
        self.cfg = cfg
        self.world = World(cfg.nodes, cfg.recoverers, defects=cfg.defects, lease=cfg.lease,
                           scan_bound=cfg.scan_bound, sessions=cfg.sessions, prompts=cfg.prompts)
        self.faults = frozenset()

    def apply(self, name: str, params: tuple, twin_next: M.State) -> None:
        w = self.world
        if name in ("Acquire", "PromoteContinuation"):
            node, i = params
            op = w.node(node).acquire if name == "Acquire" else w.node(node).promote
            result = op(input_id(i))
            assert result, (name, params, result)
        elif name in dict(M.RUNNER_STEPS):
            runner = w.node(params[0]).runner
            if name in ("PublishStepFailed", "PublishStepEnded"):
                w.provider.decide(runner.execution_id, "fail" if name == "PublishStepFailed" else "end")
            ran = runner.step()
            assert ran == name, (name, params, ran)
        elif name == "CancelRequest":
            result = w.node(params[0]).cancel(params[1])
            assert result, (name, params, result)
        elif name in ("FinalizerSettle", "FinalizerClear"):
            ran = w.node(params[0]).finalizer.step()
            assert ran == name, (name, params, ran)
        elif name == "Heartbeat":
            who, s = params
            result = w.node(who).heartbeat(s) if who in w.nodes else w.worker(who).heartbeat()
            assert result, (name, params, result)
        elif name == "Tick":
            w.tick()
        elif name == "RecoveryTakeover":
            result = w.worker(params[0]).takeover(params[1])
            assert result, (name, params, result)
        elif name in ("RecoveryConvert", "RecoveryQuarantine"):
            ran = w.worker(params[0]).step()
            assert ran == name, (name, params, ran)
        elif name == "Crash":
            (who,) = params
            (w.node(who) if who in w.nodes else w.worker(who)).crash()
        elif name == "CorruptRecoveryRow":
            faults.corrupt_recovery_row(w.db, *params)
        else:
            raise KeyError(name)
        self.faults = twin_next.faults  # history flags: the environment's, not the implementation's

    def state(self) -> M.State:
        cfg, w = self.cfg, self.world
        snap = w.snap()
        now = w.clock.now()
        claim = []
        for s in cfg.sessions:
            c = snap.claims.get(s)
            claim.append(M.NO_CLAIM if c is None else
                         M.Claim(c.execution, c.owner, c.ttl(now), c.phase, _asst(c.assistant), c.quarantined))
        with w.db.read() as conn:
            issued = conn.execute(sa.select(sequence_t.c.value).where(sequence_t.c.name == "execution")).scalar_one()
        run, fin = [], []
        for n in cfg.nodes:
            node = w.node(n)
            r, f = node.runner, node.finalizer
            run.append(M.Runner(r.pc, r.session_id or "", r.execution_id or 0, _asst(r.mem), r.active, r.intr))
            fin.append(M.Fin(f.pc, f.session_id or "", f.execution_id or 0, f.owner_id or ""))
        rec = [M.Rec(x.pc, x.session_id or "", x.execution_id or 0) for x in (w.worker(r) for r in cfg.recoverers)]
        return M.State(
            claim=tuple(claim), nextExec=issued + 1,
            log=tuple(M.Event(e.session, e.kind, e.execution, e.writer) for e in snap.events),
            recovery=frozenset(M.RecRow(e, s) for e, s in snap.recovery),
            inputs=frozenset(M.Input(i.session, i.kind, i.src, i.state) for i in snap.inputs),
            run=tuple(run), fin=tuple(fin), rec=tuple(rec),
            cancelled=frozenset(M.RecRow(e, s) for e, s in snap.cancelled),
            faults=self.faults)

    def enabled_actors_agree(self, st: M.State) -> None:
        """Each actor's `enabled()` names a twin action that is enabled (or nothing, when none is)."""
        twin = {}
        for name, params, _ in M.successors(self.cfg, st):
            twin.setdefault((name, params[0] if params else None), True)
        for n in self.cfg.nodes:
            for actor, names in ((self.world.node(n).runner, dict(M.RUNNER_STEPS)),
                                 (self.world.node(n).finalizer, ("FinalizerSettle", "FinalizerClear"))):
                mine = actor.enabled()
                theirs = {a for (a, who) in twin if who == n and a in names}
                if mine is None:
                    assert not theirs, (n, theirs)
                else:
                    assert mine in theirs, (n, mine, theirs)


def random_walk(cfg: M.Config, seed: int, steps: int) -> list[tuple[str, tuple]]:
    """Walk the twin at random, applying each action to the implementation and comparing states."""
    rng = random.Random(seed)
    driver = TwinDriver(cfg)
    st = M.init(cfg)
    assert driver.state() == st
    trace = []
    for _ in range(steps):
        options = list(M.successors(cfg, st))
        if not options:
            break
        name, params, nxt = rng.choice(options)
        trace.append((name, params))
        driver.apply(name, params, nxt)
        got = driver.state()
        if got != nxt:
            raise AssertionError(f"after {trace}:\n twin {nxt}\n impl {got}")
        st = nxt
        driver.enabled_actors_agree(st)
    return trace


# ---------------------------------------------------------------- a bare claim store for fence tables

class ClaimBench:
    """One in-memory database with a ClaimStore and a claim (s1, execution 1, n1) live until tick 2."""

    def __init__(self, defects=(), lease=2):
        from impl.claims import ClaimStore, Ident
        from impl.context import Context
        from impl.events import Publisher
        self.db = Database.memory()
        self.clock = ManualClock()
        self.ctx = Context(self.db, self.clock, Boundaries(), frozenset(defects), lease)
        self.claims = ClaimStore(self.ctx)
        self.publisher = Publisher(self.ctx, self.claims)
        self.ident = Ident("s1", 1, "n1")
        assert self.run(lambda c: self.claims.acquire(c, self.ident, self.clock.now(), 1))

    def run(self, fn):
        return self.db.atomic(fn)

    def claim(self, session="s1"):
        with self.db.read() as conn:
            return self.claims.get(conn, session)
