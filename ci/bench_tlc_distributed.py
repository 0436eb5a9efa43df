"""TLC's distributed mode beside local TLC: distinct states per second of each, safety only, in one run.

Not a test: run `python ci/bench_tlc_distributed.py [--config ci] [--workers 2]`. Local TLC with N worker
threads, then TLC's distributed mode with a TLCServer and N TLCWorker processes on loopback
(harness/engines/tlc_distributed.py), one after the other; prints each one's distinct states, seconds and
states/s, the ratio, and the load average before each (the machine's other work changes the ratio: read it
beside the load).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness.engines import tlc, tlc_distributed  # noqa: E402
from spec import configs  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="ci", choices=sorted(configs.CONFIGS), help="a registered configuration")
    p.add_argument("--workers", type=int, default=2, help="local TLC's threads and the distributed mode's "
                                                         "worker processes (default 2)")
    a = p.parse_args(argv)
    cfg = configs.get(a.config)
    rows = []
    for name, run in (("local TLC", lambda: tlc.run(cfg, liveness=False, workers=a.workers)),
                      ("distributed", lambda: tlc_distributed.run(cfg, workers=a.workers))):
        before = load()
        res = run()
        if res.verdict != "ok":
            print(f"{name}: verdict {res.verdict}", file=sys.stderr)
            return 1
        rows.append(res.distinct / res.seconds)
        print(f"{name:<12} {res.distinct:>9,} states {res.seconds:8.1f} s {rows[-1]:9.0f} states/s  "
              f"(load average before: {before})")
    print(f"distributed / local: {rows[1] / rows[0]:.2f} ({a.config}, {a.workers} workers, safety only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
