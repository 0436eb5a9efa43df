"""`claimcheck bench`: the twin explorer and TLC on the same configuration, measured side by side.

Both check safety only (every state and action invariant; liveness off), so the figures compare like
with like. Prints distinct states per second for each and their ratio; the target is the explorer at
0.5x TLC (-workers 2) or better.
"""

from __future__ import annotations

import resource
import time

from spec import configs

from harness.engines import tlc
from harness.engines.explore import explore
from harness.reports.progress import Reporter


def bench_explorer_vs_tlc(config_name: str, *, workers: int = 2, cfg=None, progress: Reporter | None = None) -> int:
    """`cfg` (a configuration file's) or else the registered configuration `config_name`."""
    cfg = cfg or configs.get(config_name)
    with progress or Reporter() as rep:
        return _bench(cfg, config_name, workers, rep)


def _bench(cfg, config_name: str, workers: int, rep: Reporter) -> int:
    print(f"claimcheck bench: config={config_name}, safety only, TLC -workers {workers}")
    t0 = time.perf_counter()
    with rep.task(f"explorer {config_name}") as task:
        res = explore(cfg, liveness=False, keep_edges=False, progress=task)
    py_s = time.perf_counter() - t0
    py_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  explorer: {res.distinct:>10,} distinct in {py_s:7.1f} s = {res.distinct / py_s:>10,.0f} states/s "
          f"(peak RSS {py_rss:,.0f} MiB)", flush=True)
    try:
        with rep.task(f"TLC {config_name}") as task:
            t = tlc.run(cfg, liveness=False, workers=workers, progress=task)
    except tlc.TlcUnavailable as exc:
        print(f"  TLC: skipped ({exc})")
        return 2
    print(f"  TLC 2.15: {t.distinct:>10,} distinct in {t.seconds:7.1f} s = {t.distinct / t.seconds:>10,.0f} states/s "
          f"(wall time, JVM start included)")
    if t.distinct != res.distinct:
        print(f"  WARNING: the engines disagree on the number of distinct states ({res.distinct} vs {t.distinct})")
        return 1
    ratio = (res.distinct / py_s) / (t.distinct / t.seconds)
    print(f"  ratio explorer/TLC: {ratio:.2f}x (target 0.5x or better: {'met' if ratio >= 0.5 else 'not met'})")
    return 0
