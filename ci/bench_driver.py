"""The driver protocol's cost per replayed step: every committed trace replayed in process (the
Scheduler, binding.server.Bundled), through the protocol in process (binding.driver.Driver without a pipe:
JSON and validation only), and through `python -m binding.driver` as a subprocess (plus the pipe and the
process switch).

Not a test: run `python ci/bench_driver.py [ROUNDS]`. The three take turns, one pass over the traces
each per round, and each reports its best and median pass (a busy machine slows single passes). Each
step is two requests (the step, then an observe that maps the whole state); the driver process is
started once and its start-up is left out. Then the exhaustive walk (`conform`, configuration
`steer/no-faults`) in process, through the subprocess driver with save and restore, and through it with
`--no-save` (each restore replays the path from Init), the three taking turns: edges/s, best of the rounds.
"""

from __future__ import annotations

import os
import shlex
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.conformance import replay as R  # noqa: E402
from harness.driver.client import Connection, Sut  # noqa: E402
from harness.driver.transport import InProcess  # noqa: E402
from binding.driver import Driver  # noqa: E402
from binding.server import Bundled  # noqa: E402


def one_pass(sut) -> tuple[float, int]:
    steps, start = 0, time.perf_counter()
    for p in R.committed_traces():
        res = R.replay_file(p, server=sut)
        assert res.ok, res.problems
        steps += res.consumed
    return time.perf_counter() - start, steps


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    began = time.perf_counter()
    process = Connection.spawn(shlex.join([sys.executable, "-m", "binding.driver"]))
    print(f"driver start-up (to hello's reply): {(time.perf_counter() - began) * 1e3:,.0f} ms")
    in_process = Connection(InProcess(Driver()))
    modes = {"in process (Scheduler)": Bundled(),
             "protocol, in process": Sut("in process", opener=lambda: in_process),
             "protocol, subprocess": Sut("subprocess", opener=lambda: process)}
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
    walks(max(1, rounds // 5))


def walks(rounds: int, label: str = "steer/no-faults") -> None:
    from harness.conformance import conform as C
    from harness.conformance import exhaustive as X
    from harness.driver.client import Sut
    cfg, _ = X.resolve(label)
    graph = C.graph_of(cfg)
    command = shlex.join([sys.executable, "-m", "binding.driver"])
    suts = {"in process (Scheduler)": Bundled(), "subprocess, save": Sut(command),
            "subprocess, --no-save": Sut(command + " --no-save")}
    best = {k: 0.0 for k in suts}
    for _ in range(rounds):
        for k, sut in suts.items():
            rep = C.walk(cfg, server=sut, graph=graph)
            assert rep.complete, rep.failure
            best[k] = max(best[k], rep.edges_per_s)
    print(f"conform {label}: {rep.edges:,} edges, {rep.probes:,} probes a walk, best of {rounds}; edges/s:")
    for k, v in best.items():
        ratio = f"  ({best['in process (Scheduler)'] / v:.1f}x slower)" if k != "in process (Scheduler)" else ""
        print(f"  {k:26s} {v:7,.0f}{ratio}")
    for sut in suts.values():
        sut.close()


if __name__ == "__main__":
    main()
