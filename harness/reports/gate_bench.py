"""`claimcheck bench --gate`: the whole gate in the layout before issue 34 and in today's, one after the
other in one run, nothing reused, with each stage's time side by side.

Why a bench and not a timed test: a gate's time depends on the machine, so the figure that means
something is the ratio of two layouts measured in the same conditions. `beside`: a CPU-bound process
runs beside both gates, as a second job on a busy CI runner would (issue 34: at most 300 s so; 150 s idle).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.progress import Reporter

IDLE_TARGET = 150
BESIDE_TARGET = 300


def bench_gate(server, *, beside: bool = False) -> int:
    from harness.reports import gate
    layouts = (("before", True), ("now", False))
    print("claimcheck bench --gate: the gate before issue 34 (each TLC check in its stage's turn, two TLC "
          "workers, twin = TLC exploring the twin again, the whole kill matrix) and now (TLC in the background, "
          "two checks at a time, one worker each), --no-reuse"
          + (", a CPU-bound process running beside both" if beside else ""), flush=True)
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if beside else None
    results = {}
    try:
        for label, serial in layouts:
            print(f"\n== {label}", flush=True)
            with tempfile.TemporaryDirectory(prefix="claimcheck-bench-gate-") as out, Reporter() as progress:
                g = gate.Gate(Path(out), server=server, serial=serial, progress=progress)
                t0 = time.perf_counter()
                try:
                    rs = gate.run_gate(g)
                finally:
                    g.tlc.close()
                results[label] = (rs, time.perf_counter() - t0)
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    print(table(results))
    target = BESIDE_TARGET if beside else IDLE_TARGET
    now = results["now"][1]
    print(f"gate now: {now:.1f} s, target {target} s {'with a CPU-bound job beside it' if beside else 'idle'}: "
          f"{'met' if now <= target else 'missed'}")
    failed = [f"{label}: {r.name}" for label, (rs, _t) in results.items() for r in rs if r.status == gate.FAIL]
    if failed:
        print("bench --gate: failed stages: " + ", ".join(failed))
    return 1 if failed else 0


def table(results) -> str:
    """Each stage's seconds in both layouts, the totals and their ratio."""
    names = [r.name for r in results["now"][0]]
    by = {label: {r.name: r.seconds for r in rs} for label, (rs, _t) in results.items()}
    width = max(len(n) for n in names + ["total"])
    lines = ["", f"{'stage':<{width}}  {'before':>8}  {'now':>8}", "-" * (width + 20)]
    for n in names:
        lines.append(f"{n:<{width}}  {by['before'].get(n, 0):7.1f}s  {by['now'].get(n, 0):7.1f}s")
    before, now = results["before"][1], results["now"][1]
    lines += ["-" * (width + 20), f"{'total':<{width}}  {before:7.1f}s  {now:7.1f}s   now/before {now / before:.2f}"]
    return "\n".join(lines)
