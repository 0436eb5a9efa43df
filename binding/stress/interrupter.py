"""The stress run's interrupting client (`python -m binding.stress.node caller`): now and then it picks an
execution running under a live lease and sends its owner an interrupt, through the owner's inbox (the node
routes it to a CancelRequest). Apart from the node process, as a real client is: it reads the claims and
writes a file, and commits nothing itself."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import sqlalchemy as sa

from impl.clock import SystemClock
from impl.db import Database
from impl.recovery import TRANSIENT as DB_FAULTS  # the database errors a unit is rolled back on
from impl.schema import claim_t

from harness.stress.options import STOP_FILE


class Caller:
    """The authenticated client: interrupts of running executions, routed to their owners' inboxes."""

    def __init__(self, args, wall=time):
        self.args = args
        self.wall = wall
        self.rng = random.Random(f"{args.seed}:caller")
        self.run_dir = Path(args.run_dir)
        self.db = Database(args.db, busy_timeout_s=args.busy_timeout, pg_lock=args.pg_lock, synchronous=args.synchronous)
        self.clock = SystemClock(args.tick, source=wall.time)
        self.nodes = set(args.nodes or ())
        self.sent = 0

    def loop(self) -> int:
        stop = self.run_dir / STOP_FILE
        while not stop.exists():
            time.sleep(self.pause())
            self.turn()
        self.db.dispose()
        return 0

    def pause(self) -> float:
        """Seconds until the next interrupt."""
        return self.rng.expovariate(1.0 / self.args.cancel_every)

    def turn(self) -> bool:
        """One interrupt of a running execution with a live lease, if there is one; whether one was sent."""
        now = self.clock.now()
        try:
            with self.db.read() as conn:
                rows = conn.execute(sa.select(claim_t.c.session_id, claim_t.c.execution_id, claim_t.c.owner_id)
                                    .where(claim_t.c.phase == "running", claim_t.c.lease_expires_at > now)).all()
        except DB_FAULTS:
            return False
        rows = [r for r in rows if r.owner_id in self.nodes]
        if not rows:
            return False
        s, e, owner = self.rng.choice(rows)
        box = self.run_dir / "inbox" / owner
        box.mkdir(parents=True, exist_ok=True)
        k, self.sent = self.sent, self.sent + 1
        tmp = box / f".{k}.tmp"
        tmp.write_text(json.dumps({"s": s, "e": e}))
        tmp.rename(box / f"{self.wall.time():.6f}-{k}.json")  # atomic: the node never reads half a message
        return True
