"""The input actions and wake scans a stress node takes (binding/stress/node.py), each commit recorded.

A node process hosts, besides its runner, finalizer and recovery worker, callers and a waker of its own:

- **callers** (`Callers.turn`): now and then one of Admit (the Session's next prompt, held), ExactRetry
  (of one of the Session's latest prompts, held, pending or already taken: the identity check decides) and
  Resume (of a Session with held prompts: the durable request, then the drain it forces, an Acquire);
  a caller remembers nothing, so its commits record no memory;
- **steering** (`Callers.steer`): at a Step's start the runner sometimes steers a pending input of its
  Session into its execution, a continuation as readily as a prompt (steer selection must refuse a
  recovery-owned one);
- **the waker** (`Waker.turn`): the ordinary wake queue (impl/wakes.py `WakeQueue`, the Session of index
  k as the twin's row k): a Session with ordinary work waiting arrives (WakeArrive), a bounded scan with
  the fresh share reserves a batch, each woken Session is redriven by this node's runner (an Acquire), and
  its row served when the work is gone (WakeServe) or released as a retry (WakeLost); a reservation older
  than two leases lost its redrive to a crash and is released too. With one node the scan is one
  transaction (`WakeQueue.scan`, the twin's WakeScan); with several, each node's waker is the twin's waker
  k (`--waker`, of `--wakers`, Wakers > 1) and scans as the reviewed code's two units, racing the others:
  its read (WakeRead(k): the window and its plan, kept in the waker's memory, `impl.wakes.Waker`) in one
  turn, its reservation (WakeReserve(k): the plan's compare-and-sets, a row another waker took or whose
  counter moved lost to it) in a later one, each commit recorded with the plan as the waker's memory
  before it. From the read's commit to the reservation's the file `waking-<owner>` says a plan is held:
  the supervisor crashes no node then (the model's wakers do not crash; a lost plan is not modelled).

The rates are per turn of the node's loop (`--input-rate`, `--steer-rate`, `--wake-rate`), from the
node's seeded random stream.
"""

from __future__ import annotations

import sqlalchemy as sa

from impl.schema import input_t
from impl.history import memory_of
from impl.wakes import ORDINARY, WakeQueue, Waker as PlanningWaker
from spec import names as N

from harness import registry as R

NO_MEMORY: dict = {"run": {}, "fin": {}, "rec": {}}  # a caller's or the waker's: they remember nothing


def twin_input(row) -> dict:
    """A recorded input parameter (the registry's `i`) of an input row."""
    return {"sess": row.session_id, "kind": "cont" if row.kind == "continuation" else "prompt", "src": row.src,
            "state": "pending"}


class Callers:
    def __init__(self, proc):
        self.p = proc
        self.sessions = list(proc.args.sessions or ())

    def turn(self) -> bool:
        p = self.p
        if not self.sessions or p.rng.random() >= p.args.input_rate:
            return False
        s = p.rng.choice(self.sessions)
        return p.rng.choice((self.admit, self.exact_retry, self.resume))(s)

    def admit(self, s: str) -> bool:
        inputs = self.p.node.inputs
        return self.p.step(self.p.args.owner, R.ADMIT, {"s": s}, lambda: inputs.admit_next(s, requested=False),
                           memory=NO_MEMORY) is not None

    def exact_retry(self, s: str) -> bool:
        p = self.p
        with p.db.read() as conn:  # one of its three latest prompts
            latest = conn.execute(sa.select(input_t).where(input_t.c.session_id == s, input_t.c.kind == "prompt")
                                  .order_by(input_t.c.admitted_seq.desc()).limit(3)).all()
        if not latest:
            return False
        row = p.rng.choice(latest)
        return p.step(p.args.owner, R.EXACT_RETRY, {"s": s, "i": twin_input(row), "d": N.ADMITTED},
                      lambda: p.node.inputs.exact_retry(s, row.id), memory=NO_MEMORY) is not None

    def resume(self, s: str) -> bool:
        """Resume on this node: the durable request (its own commit), then the drain it forces."""
        p = self.p
        with p.db.read() as conn:
            if p.node.inputs.oldest_held(conn, s) is None:
                return False
        owner = p.args.owner
        if p.step(owner, R.RESUME, {"n": owner, "s": s}, lambda: p.node.resume(s)) is None:
            return False
        if p.node.runner.pc == "idle":
            p.take(s)
        return True

    def steer(self) -> bool:
        """At a Step's start (the runner just acquired), steer one pending input of its Session."""
        p = self.p
        runner = p.node.runner
        if runner.pc != "acquired" or p.rng.random() >= p.args.steer_rate:
            return False
        with p.db.read() as conn:
            rows = conn.execute(sa.select(input_t).where(input_t.c.session_id == runner.session_id,
                                                         input_t.c.state == "pending")
                                .order_by(input_t.c.admitted_seq).limit(4)).all()
        if not rows:
            return False
        row = p.rng.choice(rows)
        owner = p.args.owner
        return p.step(owner, R.STEER, {"n": owner, "i": twin_input(row)}, lambda: runner.steer(row.id)) is not None


class Waker:
    def __init__(self, proc):
        self.p = proc
        a = proc.args
        self.sessions = list(a.sessions or ())
        self.rank = {s: k for k, s in enumerate(self.sessions, 1)}  # the twin's row of each Session
        self.queue = WakeQueue(proc.node.ctx, ORDINARY, bound=a.wake_batch, fresh_share=a.fresh_share,
                               max_tries=a.max_wake_tries, waker=a.owner)
        self.k = a.waker if a.wakers > 1 else 0  # the twin's waker k (0: one waker, the scan in one transaction)
        self.racer = PlanningWaker(self.queue, f"waker{self.k}") if self.k else None
        self.marker = proc.run_dir / f"waking-{a.owner}"
        self.marker.unlink(missing_ok=True)  # a new incarnation holds no plan
        # a reserved batch whose redrive waits for a later turn (half the batches): a crash meanwhile leaves
        # its rows reserved, for a later scan's lapsed release (impl/wakes.py WakeQueue.lapsed)
        self.woken: list | None = None

    def holding(self) -> bool:
        """Whether this waker holds a plan it has not reserved (between its read and its reservation)."""
        return bool(self.racer and self.racer.plan)

    def turn(self) -> bool:
        p = self.p
        if not self.sessions or p.rng.random() >= p.args.wake_rate:
            return False
        if self.woken is not None:
            batch, self.woken = self.woken, None
            self.redrive(batch)
            return True
        if self.holding():
            return self.reserve()
        return p.rng.choice((self.arrive, self.read if self.racer else self.scan, self.release_lapsed))()

    def _step(self, action: str, params: dict, fn):
        return self.p.step(self.p.args.owner, action, params, fn, memory=NO_MEMORY)

    def arrive(self) -> bool:
        """WakeArrive: a Session with a prompt waiting, claimed or not (work arrives whatever the Session is
        doing), gets its fresh row (one there already: refused)."""
        with self.p.db.read() as conn:
            waiting = [r[0] for r in conn.execute(sa.select(input_t.c.session_id).distinct().where(
                input_t.c.state == "pending", input_t.c.kind == "prompt"))]
        if not waiting:
            return False
        s = self.p.rng.choice(waiting)
        return self._step(R.WAKE_ARRIVE, {"w": self.rank[s]}, lambda: self.queue.arrive(s, self.rank[s])) is not None

    def scan(self) -> bool:
        """WakeScan, then each woken Session's redrive by this node's runner and its row's fate."""
        out = {}
        if self._step(R.WAKE_SCAN, {}, lambda: out.setdefault("batch", self.queue.scan())) is None:
            return False
        batch = out.get("batch")
        self.redrive_later(batch.value if batch else ())
        return True

    def read(self) -> bool:
        """WakeRead(k): the window and its plan, one transaction; the plan is this waker's memory."""
        k = self.k
        self.marker.touch()  # before the read's commit: from then on until the reservation a plan may be held
        ran = self.p.step(self.p.args.owner, R.WAKE_READ, {"k": k}, self.racer.read,
                          memory=memory_of(wakers={k: self.racer}))
        if not self.holding():
            self.marker.unlink(missing_ok=True)
        return ran is not None

    def reserve(self) -> bool:
        """WakeReserve(k): the plan's compare-and-sets, one transaction (the plan spent whatever it won; kept
        when the transaction failed), then each won row's redrive, as `scan` does."""
        k = self.k
        if self.p.step(self.p.args.owner, R.WAKE_RESERVE, {"k": k}, self.racer.reserve,
                       memory=memory_of(wakers={k: self.racer})) is None:
            return False
        self.marker.unlink(missing_ok=True)
        won = self.p.result
        self.redrive_later(won.value if won else ())
        return True

    def redrive_later(self, batch) -> None:
        """The reserved batch's redrive now, or (half the time) in this waker's next turn."""
        if batch and self.p.rng.random() < 0.5:
            self.woken = list(batch)
        else:
            self.redrive(batch)

    def redrive(self, batch) -> None:
        """Each woken Session's redrive by this node's runner, and its row's fate (WakeServe or WakeLost)."""
        for s, _slot in batch:
            took = self.p.node.runner.pc == "idle" and self.p.take(s)
            if not took:
                with self.p.db.read() as conn:  # its work is gone (another node took it): served
                    took = not self.p.node.inputs.select_ordinary(conn, s)
            w = {"w": self.rank[s]}
            if took:
                self._step(R.WAKE_SERVE, w, lambda: self.queue.serve(s))
            else:
                self._step(R.WAKE_LOST, w, lambda: self.queue.release(s))

    def release_lapsed(self) -> bool:
        """WakeLost for a reservation whose redrive died with its process (two leases old)."""
        p = self.p
        p.pin()
        with p.db.read() as conn:
            stuck = self.queue.lapsed(conn, 2 * p.args.lease_ticks)
        for s in stuck:
            self._step(R.WAKE_LOST, {"w": self.rank[s]}, lambda: self.queue.release(s))
        return bool(stuck)
