"""The driver protocol's cost per replayed step: every committed trace replayed in process (the
Scheduler), through the protocol in process (impl.driver.Driver without a pipe: JSON and validation
only), and through `python -m impl.driver` as a subprocess (plus the pipe and the process switch).

Not a test: run `python ci/bench_driver.py [ROUNDS]`. Each step is two requests (the step, then an
observe that maps the whole state); the driver process is started once and its start-up is left out.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.conformance import replay as R  # noqa: E402
from harness.driver.client import Connection, SutScheduler  # noqa: E402
from harness.driver.transport import InProcess  # noqa: E402
from impl.driver import Driver  # noqa: E402


def timed(label: str, rounds: int, sut, base: float | None = None) -> float:
    paths = R.committed_traces()
    steps, start = 0, time.perf_counter()
    for _ in range(rounds):
        for p in paths:
            res = R.replay_file(p, sut=sut)
            assert res.ok, res.problems
            steps += res.consumed
    per = (time.perf_counter() - start) / steps * 1e6
    extra = f"  (+{per - base:,.0f} µs over in process)" if base is not None else ""
    print(f"{label:28s} {steps:6d} steps  {per:8,.0f} µs/step{extra}")
    return per


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    for p in R.committed_traces():  # warm the twin's caches, so the first column is not charged for them
        R.replay_file(p)
    base = timed("in process (Scheduler)", rounds, None)
    conn = Connection(InProcess(Driver()))
    timed("protocol, in process", rounds, functools.partial(SutScheduler, conn), base)
    began = time.perf_counter()
    conn = Connection.spawn(shlex.join([sys.executable, "-m", "impl.driver"]))
    print(f"{'driver start-up (hello)':28s} {(time.perf_counter() - began) * 1e3:,.0f} ms")
    timed("protocol, subprocess", rounds, functools.partial(SutScheduler, conn), base)
    conn.close()


if __name__ == "__main__":
    main()
