"""Shared helpers of the impl tests. The world and the twin driver live in binding.world (the bundled
server's world and its deterministic scheduler); `World` here builds one from the few constants a test
names, the rest the bundled world's defaults."""

from __future__ import annotations

import random

import sqlalchemy as sa

from binding.world import Scheduler as TwinDriver  # noqa: F401
from binding.world import World as BindingWorld
from binding.world import input_id  # noqa: F401
from impl.boundaries import Boundaries
from impl.clock import ManualClock
from impl.db import Database
from impl.results import NotEnabled
from impl.schema import wake_row_t
from spec import model as M


def World(nodes=("n1", "n2"), workers=("r1",), *, defects=(), lease=1, scan_bound=1, sessions=("s1",), prompts=1,
          db=None, grace=0, max_tries=2, max_steps=1, wake_batch=2, fresh_share=1, max_wake_tries=2,
          admission=False, tools=0, fragments=0, steer_prompts=(), hosted=0) -> BindingWorld:
    """binding.world.World of a configuration with these constants (Grace 0, not the spec's default 1);
    `steer_prompts`: delivery kinds, these prompts admitted steer (DeliveryKinds, SteerPrompts)."""
    cfg = M.Config(sessions=tuple(sessions), nodes=tuple(nodes), recoverers=tuple(workers), prompts=prompts,
                   lease=lease, scan_bound=scan_bound, grace=grace, max_tries=max_tries, max_steps=max_steps,
                   wake_batch=wake_batch, fresh_share=fresh_share, max_wake_tries=max_wake_tries,
                   admission=admission, tools=tools, fragments=fragments, hosted=hosted, defects=frozenset(defects),
                   delivery_kinds=bool(steer_prompts), steer_prompts=frozenset(steer_prompts))
    return BindingWorld(cfg, db=db)


def acquire_next(node, session_id: str):
    """Acquire the input ordinary selection picks next for a Session, as a caller's drain after Resume and the
    stress node's `take` do (the twin's Acquire names its input: the server has no such call of its own)."""
    with node.ctx.db.read() as conn:
        picked = node.inputs.select_ordinary(conn, session_id)
    return node.acquire(picked[0].id) if picked else NotEnabled(f"no ordinary input for {session_id}")


def wake_rows(queue, conn) -> dict[str, tuple[int, str]]:
    """{item: (attempts, reserved slot or "")} of a wake queue's kind, read in `conn`."""
    t = wake_row_t
    return {r.item: (r.attempts, r.reserved or "")
            for r in conn.execute(sa.select(t.c.item, t.c.attempts, t.c.reserved).where(t.c.kind == queue.kind))}


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
