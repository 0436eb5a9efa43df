"""The exhaustive walk through a driver, both servers side by side: `conform` through `python -m
binding.driver` and through `examples/typescript/driver`, with N workers each (a driver process per worker),
on the `ci` configuration whole (issue 33 item 5's figure: 95,651 states, 360,098 edges) or, with
`--profile`, on the `ci` profile's twelve small configurations (27,234 edges: a quick comparison).

Not a test: run `python ci/bench_driver_walk.py [--workers 2] [--rounds 1] [--profile] [--cpu] [NAME=CMD ...]`
(NAME=CMD adds a server, e.g. an older checkout's driver to compare with; the servers take turns each
round, and each reports its best round). Per server it prints the edges/s of the
whole profile, the restores per edge (each edge but a state's first starts from a restored savepoint;
issue 33 item 5) and the milliseconds a restore takes, and its share of the walk's time. `--cpu` (Linux: it
reads the driver's /proc/PID/stat) walks with one worker and prints what a shared machine's wall clock
hides: the requests per edge, and the CPU milliseconds per edge of claimcheck's process and of the driver's
(each round's least). Every walk must be complete with no failure, or the bench stops.
"""

from __future__ import annotations

import os
import shlex
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from harness.conformance import conform as C  # noqa: E402
from harness.conformance import exhaustive as X  # noqa: E402
from harness.driver.client import Sut  # noqa: E402

SERVERS = {"bundled (python -m binding.driver)": shlex.join([sys.executable, "-m", "binding.driver"]),
           "TypeScript (examples/typescript/driver)": os.path.join(ROOT, "examples", "typescript", "driver")}


def driver_cpu(sut: Sut) -> float:
    """CPU seconds the driver process has used (user and system; Linux's /proc)."""
    fields = open(f"/proc/{sut.conn.transport.proc.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def profile(command: str, graphs: dict, workers: int, cpu: bool = False) -> dict:
    """One walk of the ci profile through `command`: edges, restores, seconds, restore seconds; with `cpu`
    (one worker), the requests and the CPU seconds of claimcheck's process and of the driver's."""
    sut = Sut(command)
    out = {"edges": 0, "restores": 0, "seconds": 0.0, "restore": 0.0, "probes": 0, "requests": 0, "cpu": 0.0,
           "driver_cpu": 0.0}
    try:
        for label, (cfg, graph) in graphs.items():
            if cpu:
                sut.connect()
                used, driver_before, sent = time.process_time(), driver_cpu(sut), sut.conn.next_id
            rep = C.walk(cfg, server=sut, graph=graph, workers=workers)
            if cpu:
                out["cpu"] += time.process_time() - used
                out["driver_cpu"] += driver_cpu(sut) - driver_before
                out["requests"] += sut.conn.next_id - sent
            if not rep.complete:
                raise SystemExit(f"{command}: {label}: {X.summary(rep)}: "
                                 f"{rep.failure.message if rep.failure else 'incomplete'}")
            out["edges"] += rep.edges
            out["probes"] += rep.probes
            out["restores"] += rep.restores
            out["seconds"] += rep.seconds
            out["restore"] += rep.timing["restore"] / max(workers, 1)  # the workers' sum, as wall time
    finally:
        sut.close()
    return out


def main() -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="the ci profile's twelve small configurations")
    ap.add_argument("--cpu", action="store_true", help="one worker; requests and CPU ms per edge of each process")
    ap.add_argument("servers", nargs="*", metavar="NAME=CMD")
    args = ap.parse_args()
    workers, rounds = (1 if args.cpu else args.workers), args.rounds
    SERVERS.update(arg.split("=", 1) for arg in args.servers)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    graphs = {}
    for label in X.PROFILES["ci"] if args.profile else ["ci"]:
        cfg, _ = X.resolve(label)
        graphs[label] = (cfg, C.graph_of(cfg))
    best: dict[str, dict] = {}
    began = time.perf_counter()
    for _ in range(rounds):
        for name, command in SERVERS.items():
            r = profile(command, graphs, workers, args.cpu)
            if name not in best or r["seconds"] < best[name]["seconds"]:
                best[name] = {**r, **{k: best[name][k] for k in ("cpu", "driver_cpu") if name in best}}
            for k in ("cpu", "driver_cpu"):  # each its least over the rounds
                best[name][k] = min(best[name][k], r[k])
    print(f"conform, {'the ci profile' if args.profile else 'configuration ci'} whole ({len(graphs)} configurations, "
          f"{sum(len(g.states) for _, g in graphs.values()):,} states), {workers} workers, best of {rounds} "
          f"(bench {time.perf_counter() - began:.0f} s; load average {os.getloadavg()[0]:.1f})")
    print(f"  {'server':42s} {'edges':>7s} {'edges/s':>8s} {'restores/edge':>14s} {'ms/restore':>11s} {'restore share':>14s}")
    for name, r in best.items():
        print(f"  {name:42s} {r['edges']:7,d} {r['edges'] / r['seconds']:8,.0f} {r['restores'] / r['edges']:14.2f} "
              f"{1e3 * r['restore'] * workers / max(r['restores'], 1):11.2f} {100 * r['restore'] / r['seconds']:13.0f}%")
    if args.cpu:
        print(f"  {'server':42s} {'requests/edge':>14s} {'CPU ms/edge: claimcheck':>24s} {'driver':>7s} {'sum':>6s}")
        for name, r in best.items():
            e = r["edges"]
            print(f"  {name:42s} {r['requests'] / e:14.2f} {1e3 * r['cpu'] / e:24.3f} {1e3 * r['driver_cpu'] / e:7.3f} "
                  f"{1e3 * (r['cpu'] + r['driver_cpu']) / e:6.3f}")


if __name__ == "__main__":
    main()
