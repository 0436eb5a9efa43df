"""Exhaustive conformance throughput beside lockstep's: a benchmark, not a test.

Run `python ci/bench_conform.py [--config NAME] [--workers N] [--examples N]`. Prints, in one run on the
same configuration and sqlite in memory: lockstep's twin steps/s (Hypothesis, ci profile's generation,
checks and probes included) and the exhaustive walk's checked edges/s with one worker and with N, and
where the walk's time goes (apply: the implementation's atomic unit; map: reading the state back;
check: comparison and invariants; save/restore: the savepoints; probe: refusal probes, attempt and
mapping). Target (issue 14): 5,000 edges/s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from binding.server import Bundled  # noqa: E402
from harness.conformance import conform as C  # noqa: E402
from harness.conformance import lockstep as L  # noqa: E402
from spec import configs  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="heartbeat", choices=sorted(configs.CONFIGS))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--examples", type=int, default=100, help="lockstep examples (default 100)")
    a = p.parse_args(argv)
    cfg = configs.get(a.config)
    out = L.run(cfg, server=Bundled("sqlite://"), settings_=L.settings(L.PROFILES["ci"], max_examples=a.examples))
    cov = out.coverage
    print(f"lockstep  {a.config}: {cov.steps:,} steps in {out.seconds:.1f} s = {cov.steps / out.seconds:,.0f} steps/s "
          f"(+{sum(cov.probes.values()):,} probes), {len(cov.edges):,} distinct edges")
    t0 = time.perf_counter()
    graph = C.graph_of(cfg)
    print(f"graph     {a.config}: {len(graph.states):,} states, {sum(map(len, graph.succ)):,} edges "
          f"({time.perf_counter() - t0:.2f} s)")
    for workers in sorted({1, a.workers}):
        rep = C.walk(cfg, server=Bundled(), graph=graph, workers=workers)
        total = sum(rep.timing.values()) or 1.0
        where = "  ".join(f"{k} {100 * v / total:.0f}%" for k, v in rep.timing.most_common())
        per = {k: 1e6 * v / max(rep.edges, 1) for k, v in rep.timing.items()}
        print(f"conform   {a.config}, {workers} worker(s): {rep.edges:,} edges, {rep.probes:,} probes in "
              f"{rep.seconds:.2f} s = {rep.edges_per_s:,.0f} edges/s{'' if rep.complete else ' (INCOMPLETE)'}")
        print(f"          per edge (CPU of all workers): {sum(per.values()):.0f} µs: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
