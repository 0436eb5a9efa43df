"""`claimcheck bench`: the twin explorer and TLC on the same configuration, measured side by side.

Both check safety only (every state and action invariant; liveness off), so the figures compare like
with like. The explorer runs on `procs` worker processes (harness.engines.shards: fingerprints sharded
across them), TLC with `-workers N`. Prints distinct states per second for each, their ratio against
the target (TARGET_RATIO: claimcheck issue 17, the explorer at 1.5x TLC -workers 2), and each engine's
peak memory against the explorer's target (TARGET_MIB): the explorer's is the sum of its processes' peak
RSS, TLC's the JVM's own (wait4's rusage of that child).
"""

from __future__ import annotations

import time

from spec import configs

from harness.engines import tlc
from harness.engines.shards import explore_sharded
from harness.progress import Reporter

TARGET_RATIO = 1.5
TARGET_MIB = 2048


def bench_explorer_vs_tlc(config_name: str, *, workers: int = 2, procs: int = 2, cfg=None,
                          progress: Reporter | None = None, symmetry: str | None = None,
                          depth: int | None = None) -> int:
    """`cfg` (a configuration file's) or else the registered configuration `config_name`; `symmetry` (a
    scope of spec.symmetry): both engines count orbits (TLC's SYMMETRY); `depth`: both engines stop
    after the states that many steps from Init (TLC by a state constraint on its level), so that a
    configuration too big to walk whole in the time at hand is still compared like with like."""
    cfg = cfg or configs.get(config_name)
    with progress or Reporter() as rep:
        return _bench(cfg, config_name, workers, procs, rep, symmetry, depth)


def verdict(met: bool) -> str:
    return "met" if met else "missed"


def _bench(cfg, config_name: str, workers: int, procs: int, rep: Reporter, symmetry: str | None,
           depth: int | None) -> int:
    print(f"claimcheck bench: config={config_name}, safety only, explorer on {procs} process"
          f"{'es' if procs > 1 else ''}, TLC -workers {workers}"
          + (f", symmetry over {'Nodes and Sessions' if symmetry == 'sessions' else 'Nodes'} (orbits)" if symmetry else "")
          + (f", the states at most {depth} steps from Init" if depth is not None else ", whole"))
    t0 = time.perf_counter()
    with rep.task(f"explorer {config_name}") as task:
        res = explore_sharded(cfg, workers=procs, progress=task, symmetry=symmetry, max_depth=depth)
    py_s = time.perf_counter() - t0
    print(f"  explorer: {res.distinct:>10,} distinct ({res.generated:,} generated) in {py_s:7.1f} s = {res.distinct / py_s:>10,.0f} states/s "
          f"(peak RSS {res.peak_rss_mib:,.0f} MiB, its {procs + 1} processes summed)", flush=True)
    try:
        with rep.task(f"TLC {config_name}") as task:
            t = tlc.run(cfg, liveness=False, workers=workers, progress=task, symmetry=symmetry, depth=depth)
    except tlc.TlcUnavailable as exc:
        print(f"  TLC: skipped ({exc})")
        return 2
    print(f"  TLC 2.15: {t.distinct:>10,} distinct ({t.generated:,} generated) in {t.seconds:7.1f} s = {t.distinct / t.seconds:>10,.0f} states/s "
          f"(wall time, JVM start included; peak RSS {t.peak_rss_mib:,.0f} MiB)")
    if depth is not None and workers > 1 and t.distinct < res.distinct:
        short = res.distinct - t.distinct
        print(f"  note: TLC counted {short:,} state{'s' if short != 1 else ''} fewer: with more than one worker its search "
              f"is not strictly breadth-first, so a state first reached by a longer path gets that path's level "
              f"and the depth bound cuts it (with -workers 1 the counts are equal)")
    elif t.distinct != res.distinct:
        print(f"  WARNING: the engines disagree on the number of distinct states ({res.distinct} vs {t.distinct})")
        return 1
    ratio = (res.distinct / py_s) / (t.distinct / t.seconds)
    print(f"  ratio explorer/TLC: {ratio:.2f}x (target {TARGET_RATIO}x TLC -workers 2 or better: "
          f"{verdict(ratio >= TARGET_RATIO)}{'' if workers == 2 else f'; this run used -workers {workers}'}"
          f"{'' if depth is None else f'; on the first {depth} levels only, the target is for the whole configuration'})")
    print(f"  peak memory: explorer {res.peak_rss_mib:,.0f} MiB (target under {TARGET_MIB:,} MiB: "
          f"{verdict(res.peak_rss_mib < TARGET_MIB)}), TLC {t.peak_rss_mib:,.0f} MiB")
    return 0
