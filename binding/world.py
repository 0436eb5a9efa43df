"""The bundled server's world and its deterministic scheduler: the server's actors (runners, finalizers,
recovery workers, the clock) on one shared database, moved one at a time, each exactly one atomic unit
(one twin action) up to its next named boundary, in the order a trace, the explorer or Hypothesis
chooses. `Scheduler` is the port's World (harness.port): what replay, lockstep and the exhaustive walk
drive, in this process (binding.server) or behind the driver protocol (binding.driver).

The actors' `step()` methods are the production code paths (a production loop calls them back to back,
with boundaries as no-ops); the scheduler only chooses who moves next.
"""

from __future__ import annotations

import sqlalchemy as sa

from impl import ids
from impl import registry as IR
from impl.boundaries import Boundaries, Recorder
from impl.clock import ManualClock
from impl.db import Database
from impl.node import Node
from impl.provider import ScriptedProvider
from impl.recovery import RecoveryWorker
from impl.context import Context
from impl.wakes import Waker, WakeQueue
from impl.schema import input_t
from impl.snapshot import snapshot
from spec import model as M
from spec import names as N

from harness import registry as R
from harness.port import DivergenceError

from binding.actions import ATTEMPT, IMPL, MOVE, STEP, input_id  # noqa: F401  (input_id: for callers)
from binding.mapping import _ISSUED, _ISSUED_PG, twin_state

# the Session's admitted prompts, counted (the twin's Prompts bound on Admit: the adapter's read, not the server's)
_PROMPT_COUNT = sa.select(sa.func.count()).select_from(input_t).where(
    input_t.c.session_id == sa.bindparam("session"), input_t.c.kind == "prompt")

STEPPED_BY_FINALIZER = tuple(a for a in R.FINALIZER_ACTIONS if a not in N.ATTEMPTS)


class World:
    """The configuration's nodes and recovery workers sharing one database, one clock, one provider."""

    def __init__(self, cfg: M.Config, *, defects=None, db=None, admitted: bool = False):
        """`defects`: the ones the server runs with (default `cfg.defects`); `db`: the database (default a
        new one in memory); `admitted`: it already holds the prompts (a restored seed), so none is
        admitted. With `cfg.admission` prompts are admitted by `admit` (the twin's Admit), held, not at
        the start."""
        defects = cfg.defects if defects is None else defects
        self.db = db or Database.memory()
        self.clock = ManualClock()
        self.recorder = Recorder()
        self.boundaries = Boundaries(self.recorder)
        self.provider = ScriptedProvider(steps=cfg.max_steps, tools=cfg.tools, fragments=cfg.fragments,
                                         hosted=cfg.hosted)
        common = dict(defects=defects, boundaries=self.boundaries, lease_ticks=cfg.lease, grace_ticks=cfg.eff_grace)
        self.nodes = {n: Node(self.db, self.clock, n, provider=self.provider, delivery_kinds=cfg.delivery_kinds, **common)
                      for n in cfg.nodes}
        self.workers = {r: RecoveryWorker(self.db, self.clock, r, scan_bound=cfg.scan_bound, max_tries=cfg.max_tries,
                                          fresh_share=cfg.fresh_share, **common)
                        for r in cfg.recoverers}
        for worker in self.workers.values():
            worker.provider = self.provider
        # the wake rows (ordinary wakes): the twin's rows 1..WakeRows (binding.actions.wake_item)
        self.wakes = WakeQueue(Context(self.db, self.clock, self.boundaries, frozenset(defects)), "ordinary",
                               bound=cfg.wake_batch, fresh_share=cfg.fresh_share, max_tries=cfg.max_wake_tries)
        # tied wake rows (WakesTied): row 1 the one Session's ordinary wake (the queue above), row 2 its recovery
        # wake (a queue of its own), each keyed by the Session as the code keys them
        self.recovery_wakes = WakeQueue(self.wakes.ctx, "recovery", bound=cfg.wake_batch, fresh_share=cfg.fresh_share,
                                        max_tries=cfg.max_wake_tries) if cfg.wakes_tied else None
        self.tied_session = cfg.sessions[0] if cfg.wakes_tied else None
        self.max_exec = cfg.max_exec
        # the twin's wakers 1..Wakers when several race (each one's plan is its memory); none with one waker
        self.wakers = [Waker(self.wakes, f"waker{k}") for k in M.waker_ids(cfg)]
        self.any_node = any_node = next(iter(self.nodes.values()))
        self.prompts = cfg.prompts
        self.steer_prompts = cfg.steer_prompts
        admit = (lambda s, k: ids.prompt_id(s, k)) if admitted else \
            (lambda s, k: any_node.inputs.admit_prompt(s, k, delivery=self.delivery(k)))
        self.prompt = {} if cfg.admission else {(s, k): admit(s, k) for s in cfg.sessions
                                                for k in range(1, cfg.prompts + 1)}
        if cfg.left_claims and admitted:  # a restored seed holds the left rows: the clock stands where they left it
            self.tick(2 * (cfg.lease + cfg.eff_grace))
        elif cfg.left_claims:
            self.leave_claims(cfg)

    def leave_claims(self, cfg: M.Config) -> None:
        """LeftClaims (spec/README.md, decision 16): the rows earlier processes left on the shared database,
        written by the code paths that leave them, as the twin's Init has them. Each left Session's prompt 1
        is acquired (executions 1.., in the order of `cfg.sessions`) by a node that dies; once the leases
        and the grace have run out the recovery worker takes each over (one attempt, phase recovering) and
        dies too; then its lease and the grace run out. The clock stands at the end of that, 2 (Lease + Grace):
        a row's lease expired past the grace (the twin's ttl -Grace). Nothing of it is kept in the boundary
        record."""
        left = [s for s in cfg.sessions if s in cfg.left_claims]
        node, (worker,) = self.any_node, self.workers.values()
        for s in left:
            taken = node.acquire(self.prompt[(s, 1)])
            assert taken, f"left_claims: {s}'s prompt 1 was not acquired: {taken}"
            node.crash()
        self.tick(cfg.lease + cfg.eff_grace)
        for s in left:
            taken = worker.takeover(s)
            assert taken, f"left_claims: {s}'s claim was not taken over: {taken}"
            worker.crash()
        self.tick(cfg.lease + cfg.eff_grace)
        self.recorder.hits.clear()

    # ------------------------------------------------------------------ tied wake rows (WakesTied)

    def tied_queue(self, row: int):
        """The queue of tied row `row` (1: ordinary wakes, 2: recovery wakes)."""
        return self.wakes if row == 1 else self.recovery_wakes

    def _tied_work(self, row: int) -> bool:
        """The syncer's read: the Session is unclaimed and work of the row's kind waits (sessions_to_wake)."""
        inputs = self.any_node.inputs
        with self.db.read() as conn:
            return self.tied_session in inputs.sessions_to_wake(conn, 1_000, recovery=row == 2)

    def wake_sync(self, row: int):
        """WakeSync: the syncer inserts the row of a kind with work waiting (WakeQueue.refresh)."""
        if not self._tied_work(row):
            return None
        return self.tied_queue(row).refresh([self.tied_session], {self.tied_session: 1})

    def wake_take(self, node: str, row: int, want: int, input_id: str):
        """WakeAcquire (want 1) or WakePromote (want 2): the woken row's redrive, its row removed in the
        acquisition's transaction."""
        if row != want:
            return None
        take = self.node(node).acquire if row == 1 else self.node(node).promote
        return take(input_id, self.tied_queue(row))

    def wake_lost(self, row: int):
        """WakeLost of a tied row: the woken redrive found nothing to take (its release); refused while
        an idle node's redrive would take the work (within the model's execution ids, MaxExec)."""
        return None if self._takeable(row) else self.tied_queue(row).release(self.tied_session)

    def _issued(self, conn) -> int:
        return conn.exec_driver_sql(_ISSUED_PG if self.db.is_postgresql else _ISSUED).scalar() or 0

    def _takeable(self, row: int) -> bool:
        node = next((n for n in self.nodes.values() if n.runner.pc == "idle"), None)
        if node is None:
            return False
        s, inputs = self.tied_session, node.inputs
        with self.db.read() as conn:
            if node.claims.occupied(conn, s, self.clock.now()) or self._issued(conn) >= self.max_exec:
                return False
            if row == 2:
                return inputs.pending_continuation(conn, s) is not None
            regardless = node.has(IR.WAKE_SERVES_REGARDLESS)
            return bool(inputs.pending_any(conn, s) if regardless else inputs.select_ordinary(conn, s))

    def admit(self, session: str):
        """The twin's Admit: a caller admits the Session's next prompt, its execution not yet requested, by
        the production admission (InputStore.admit_next numbers it itself, so the mapped state checks its
        numbering); the callers of this world admit at most `prompts` per Session, as the twin's Prompts
        bounds them (the count is this adapter's read)."""
        with self.db.read() as conn:
            k = conn.execute(_PROMPT_COUNT, {"session": session}).scalar_one() + 1
        if k > self.prompts:
            return None
        self.prompt[(session, k)] = self.any_node.inputs.admit_next(session, delivery=self.delivery(k),
                                                                    requested=False)
        return self.prompt[(session, k)]

    def delivery(self, k: int) -> str:
        """The delivery the caller chooses for prompt k: steer for the configuration's SteerPrompts."""
        return "steer" if k in self.steer_prompts else "queue"

    def node(self, name="n1") -> Node:
        return self.nodes[name]

    def worker(self, name="r1") -> RecoveryWorker:
        return self.workers[name]

    def snap(self):
        return snapshot(self.db)

    def supervise(self) -> None:
        """Every node's Supervise (a production supervisor's pass after the clock moved)."""
        for node in self.nodes.values():
            node.supervise()

    def tick(self, ticks=1):
        """The twin's Tick: the clock moves (supervision is the nodes' own step, Supervise)."""
        for _ in range(ticks):
            self.clock.advance(1)


class Scheduler:
    """The port's World for the bundled server: twin action instances applied to a `World` (one actor,
    one atomic unit each); `state()` maps it back (binding.mapping)."""

    def __init__(self, cfg: M.Config, db: Database | None = None, admitted: bool = False, mutant=None,
                 reader=None):
        """`mutant`: the defects the server runs with, when they differ from the twin's;
        `reader`: how `state()` reads `db` (binding.reads.Reader), else one read transaction."""
        self.cfg = cfg
        self.reader = reader
        self.world = World(cfg, defects=mutant, db=db, admitted=admitted)
        self.faults = frozenset()

    def take(self, name: str, params: tuple) -> tuple[str | None, object]:
        """Make the implementation take the twin's action instance, through the action table: the action
        it took (`name`, another, or None when it took none or refused) and the call's own answer."""
        kind, call = IMPL[name]
        got = call(self.world, params)
        if kind == ATTEMPT:
            return (name if got else None), got
        if kind == STEP:
            return (got if isinstance(got, str) else None), got
        return name, got

    def apply(self, name: str, params: tuple, twin_next: M.State) -> None:
        """`take`, which must take the twin's action instance (a DivergenceError otherwise)."""
        took, got = self.take(name, params)
        if took != name:
            raise DivergenceError(f"the implementation did not take {name}{tuple(params)}: {got}")
        self.faults = twin_next.faults  # history flags: the environment's, not the implementation's

    @property
    def hits(self) -> list:
        """The named boundaries hit so far, as (name, context), in order (replay's view of the recorder)."""
        return self.world.recorder.hits

    @property
    def names(self) -> list[str]:
        """The named boundaries hit so far, in order."""
        return self.world.recorder.names

    def attempt(self, name: str, params: tuple):
        """An action whose parameters the caller chooses (names.ATTEMPTS): the implementation's answer."""
        kind, call = IMPL[name]
        if kind != ATTEMPT:
            raise KeyError(name)
        return call(self.world, params)

    def move(self, action: str, who: str) -> str | None:
        """Ask the actor that takes `action` (its kind, names.ACTIONS[action].actor) named `who` for its next
        step, without naming one: the name of the action it took, None when it took none."""
        return MOVE[N.ACTIONS[action].actor](self.world, who)

    def state(self) -> M.State:
        return twin_state(self.cfg, self.world, self.faults, self.reader)

    def enabled_actors_agree(self, st: M.State) -> None:
        """Each actor's `enabled()` names a twin action that is enabled (or nothing, when none is)."""
        twin = {}
        for name, params, _ in M.successors(self.cfg, st):
            twin.setdefault((name, params[0] if params else None), True)
        for n in self.cfg.nodes:
            for actor, names in ((self.world.node(n).runner, dict(M.RUNNER_STEPS)),
                                 (self.world.node(n).finalizer, STEPPED_BY_FINALIZER)):
                mine = actor.enabled()
                theirs = {a for (a, who) in twin if who == n and a in names}
                if mine is None:
                    assert not theirs, (n, theirs)
                else:
                    assert mine in theirs, (n, mine, theirs)


