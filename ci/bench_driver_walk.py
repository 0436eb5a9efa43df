"""The exhaustive walk through a driver, both servers side by side: `conform` through `python -m
binding.driver` and through `examples/typescript/driver`, with N workers each (a driver process per worker),
on the `ci` configuration whole (issue 33 item 5's figure: 57,201 states, 201,984 edges) or, with
`--profile`, on the `ci` profile's seven small configurations (12,306 edges: a quick comparison).

Not a test: run `python ci/bench_driver_walk.py [--workers 2] [--rounds 1] [--profile] [NAME=CMD ...]`
(NAME=CMD adds a server, e.g. an older checkout's driver to compare with; the servers take turns each
round, and each reports its best round). Per server it prints the edges/s of the
whole profile, the restores per edge (each edge but a state's first starts from a restored savepoint;
issue 33 item 5) and the milliseconds a restore takes, and its share of the walk's time. Every walk must
be complete with no failure, or the bench stops.
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


def profile(command: str, graphs: dict, workers: int) -> dict:
    """One walk of the ci profile through `command`: edges, restores, seconds, restore seconds."""
    sut = Sut(command)
    out = {"edges": 0, "restores": 0, "seconds": 0.0, "restore": 0.0, "probes": 0}
    try:
        for label, (cfg, graph) in graphs.items():
            rep = C.walk(cfg, server=sut, graph=graph, workers=workers)
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
    ap.add_argument("--profile", action="store_true", help="the ci profile's seven small configurations")
    ap.add_argument("servers", nargs="*", metavar="NAME=CMD")
    args = ap.parse_args()
    workers, rounds = args.workers, args.rounds
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
            r = profile(command, graphs, workers)
            if name not in best or r["seconds"] < best[name]["seconds"]:
                best[name] = r
    print(f"conform, {'the ci profile' if args.profile else 'configuration ci'} whole ({len(graphs)} configurations, "
          f"{sum(len(g.states) for _, g in graphs.values()):,} states), {workers} workers, best of {rounds} "
          f"(bench {time.perf_counter() - began:.0f} s; load average {os.getloadavg()[0]:.1f})")
    print(f"  {'server':42s} {'edges':>7s} {'edges/s':>8s} {'restores/edge':>14s} {'ms/restore':>11s} {'restore share':>14s}")
    for name, r in best.items():
        print(f"  {name:42s} {r['edges']:7,d} {r['edges'] / r['seconds']:8,.0f} {r['restores'] / r['edges']:14.2f} "
              f"{1e3 * r['restore'] * workers / max(r['restores'], 1):11.2f} {100 * r['restore'] / r['seconds']:13.0f}%")


if __name__ == "__main__":
    main()
