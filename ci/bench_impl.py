"""Operations per second of the implementation's atomic units on a file database (sqlite, WAL).

Not a test: run `python ci/bench_impl.py [N]`. Each operation is one committed transaction
(BEGIN IMMEDIATE ... COMMIT): acquire (input check, execution id, insert-only claim, input promotion),
renew (fenced lease extension), publish (Step.Started: projection, fenced claim hook, append). Measured
with synchronous=FULL (sqlite's default, what the implementation uses) and NORMAL (the fsync cost).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from impl import ids  # noqa: E402
from impl.claims import Ident  # noqa: E402
from impl.clock import ManualClock  # noqa: E402
from impl.db import Database  # noqa: E402
from impl.events import Fence, StepEvent  # noqa: E402
from impl.node import Node  # noqa: E402


def timed(label: str, n: int, op) -> None:
    start = time.perf_counter()
    for k in range(n):
        result = op(k)
        if not result:
            raise SystemExit(f"{label} #{k} failed: {result}")
    seconds = time.perf_counter() - start
    print(f"{label:<8} {n / seconds:10.0f} ops/s  ({n} in {seconds:.3f} s)")


def main(n: int) -> None:
    for synchronous in ("FULL", "NORMAL"):
        run(n, synchronous)


def run(n: int, synchronous: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/bench.db", synchronous=synchronous)
        db.create_schema()
        clock = ManualClock()
        nodes = [Node(db, clock, f"n{k}", lease_ticks=10) for k in range(n)]
        prompts = [nodes[0].inputs.admit_prompt(f"s{k}", 1) for k in range(n)]
        idents = [Ident(f"s{k}", k + 1, f"n{k}") for k in range(n)]
        with db.read() as conn:
            mode = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
        print(f"sqlite file database, journal_mode={mode}, synchronous={synchronous}")

        timed("acquire", n, lambda k: nodes[k].acquire(prompts[k]))
        clock.advance(1)
        store = nodes[0].claims
        timed("renew", n, lambda k: db.atomic(lambda conn: store.renew(conn, idents[k], clock.now())))
        pub = nodes[0].publisher
        timed("publish", n, lambda k: pub.publish(
            StepEvent(f"s{k}", k + 1, ids.assistant_id(k + 1), "Started", f"n{k}"), Fence(idents[k], "running")))
        db.dispose()


def parse(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python ci/bench_impl.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=1000, help="operations of each kind (default 1000)")
    n = ap.parse_args(argv).n
    if not 1 <= n <= 1_000_000:
        ap.error(f"n must be from 1 to 1000000, got {n}")
    return n


if __name__ == "__main__":
    main(parse())
