"""The driver protocol's cost per replayed step: every committed trace replayed in process (the
Scheduler), through the protocol in process (impl.driver.Driver without a pipe: JSON and validation
only), and through `python -m impl.driver` as a subprocess (plus the pipe and the process switch).

Not a test: run `python ci/bench_driver.py [ROUNDS]`. The three take turns, one pass over the traces
each per round, and each reports its best and median pass (a busy machine slows single passes). Each
step is two requests (the step, then an observe that maps the whole state); the driver process is
started once and its start-up is left out.
"""

from __future__ import annotations

import functools
import os
import shlex
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.conformance import replay as R  # noqa: E402
from harness.driver.client import Connection, SutScheduler  # noqa: E402
from harness.driver.transport import InProcess  # noqa: E402
from impl.driver import Driver  # noqa: E402


def one_pass(sut) -> tuple[float, int]:
    steps, start = 0, time.perf_counter()
    for p in R.committed_traces():
        res = R.replay_file(p, sut=sut)
        assert res.ok, res.problems
        steps += res.consumed
    return time.perf_counter() - start, steps


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    began = time.perf_counter()
    process = Connection.spawn(shlex.join([sys.executable, "-m", "impl.driver"]))
    print(f"driver start-up (to hello's reply): {(time.perf_counter() - began) * 1e3:,.0f} ms")
    modes = {"in process (Scheduler)": None,
             "protocol, in process": functools.partial(SutScheduler, Connection(InProcess(Driver()))),
             "protocol, subprocess": functools.partial(SutScheduler, process)}
    for sut in modes.values():  # warm the twin's caches and the driver's imports
        one_pass(sut)
    per = {label: [] for label in modes}
    for _ in range(rounds):
        for label, sut in modes.items():
            seconds, steps = one_pass(sut)
            per[label].append(seconds / steps * 1e6)
    base = min(per["in process (Scheduler)"])
    print(f"{steps} steps a pass, {rounds} passes each; µs per step, best and median:")
    for label, times in per.items():
        extra = f"  (best +{min(times) - base:,.0f} µs)" if label != "in process (Scheduler)" else ""
        print(f"  {label:26s} {min(times):7,.0f}  {statistics.median(times):7,.0f}{extra}")
    process.close()


if __name__ == "__main__":
    main()
