"""Lockstep throughput and time-to-detect: a benchmark, not a test.

Run `python ci/bench_lockstep.py [--seeds N] [--examples N]`. Prints

1. lockstep steps per second on the default file database (sqlite, WAL, restored per run from Init),
   invariant checks and refusal probes included, wall clock and per CPU-second (what one free core
   does: the wall figure depends on what else the machine runs), with where the time goes: the
   implementation's atomic units (SQL commits), the state mapping (snapshot reads), the twin
   (successors, invariants), machine set-up and Hypothesis (the rest);
2. per defect, the median seconds to the first failing example over several seeds (derandomize=False,
   fixed seeds, no shrinking), on the defect's witness configuration: with the defect in the twin and
   the code (the registry's invariant must be the one seen), and in the code only (a mutant).

With `--against DIR` (another checkout of claimcheck, e.g. `git worktree add /tmp/base <commit>`), the
throughput runs instead alternate between this checkout's code and DIR's, each in a process of its own,
`--rounds` times, and print both medians side by side with their ratio: on a machine others share, a
figure measured alone says as much about the load as about the code. Both must take the same steps
through the same states (the run is derandomized), or the comparison says so.

Targets: 2,000 steps/s; each defect under 10 s median.
"""

from __future__ import annotations

import argparse
import os
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hypothesis import settings  # noqa: E402

from binding.server import Bundled  # noqa: E402
from binding.world import Scheduler  # noqa: E402
from harness.conformance import lockstep as L  # noqa: E402
from spec import configs  # noqa: E402
from spec import invariants as I  # noqa: E402
from spec import model as M  # noqa: E402
from spec import names as N  # noqa: E402

BUNDLED = Bundled()


def _timed(owner, attr, bucket, totals):
    real = getattr(owner, attr)

    def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            totals[bucket] += time.perf_counter() - t0
    setattr(owner, attr, wrapper)
    return lambda: setattr(owner, attr, real)


def throughput(examples: int, synchronous: str) -> None:
    totals: dict[str, float] = defaultdict(float)
    undo = [_timed(Scheduler, "apply", "implementation (atomic units, SQL commits)", totals),
            _timed(Scheduler, "state", "mapping (snapshot reads)", totals),
            _timed(M, "successors", "twin (successors)", totals),
            _timed(I, "check_state", "invariants", totals),
            _timed(I, "check_edge", "invariants", totals),
            _timed(L.LockstepMachine, "__init__", "set-up (fresh database + World)", totals)]
    try:
        s = settings(L.PROFILES["ci"], max_examples=examples)
        cpu0 = time.process_time()
        out = L.run(configs.get("ci"), server=Bundled(synchronous=synchronous), settings_=s)
        cpu = time.process_time() - cpu0
    finally:
        for u in undo:
            u()
    # set-up includes its own first mapping; the nested buckets are reported as measured
    steps, secs = out.coverage.steps, out.seconds
    probes = sum(out.coverage.probes.values())
    print(f"lockstep on a file database (synchronous={synchronous}), config ci, {out.coverage.examples} examples: "
          f"{steps} twin steps in {secs:.1f} s = {steps / secs:,.0f} steps/s (target 2,000); "
          f"{cpu:.1f} s of CPU = {steps / cpu:,.0f} steps per CPU-second (what one free core would do)")
    print(f"  with the {probes} refusal probes (an attempt on the code, a mapping, a comparison each): "
          f"{(steps + probes) / secs:,.0f} lockstep checks/s")
    accounted = 0.0
    for bucket, t in sorted(totals.items(), key=lambda kv: -kv[1]):
        accounted += t if not bucket.startswith("set-up") else 0.0
        print(f"  {bucket:<45} {t:6.2f} s  {100 * t / secs:5.1f}%")
    rest = secs - accounted - totals["set-up (fresh database + World)"]
    print(f"  {'Hypothesis and the machine (the rest)':<45} {rest:6.2f} s  {100 * rest / secs:5.1f}%")


# one throughput run of the lockstep code under sys.path[0] (a checkout), as JSON: what --against compares
_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from hypothesis import settings
from harness.conformance import lockstep as L
from spec import configs
s = settings(L.PROFILES["ci"], max_examples=int(sys.argv[2]))
try:  # the port (issue 29): the server is given; before it, lockstep made the bundled one itself
    from binding.server import Bundled
    run = lambda: L.run(configs.get("ci"), server=Bundled(synchronous=sys.argv[3]), settings_=s)
except ImportError:
    run = lambda: L.run(configs.get("ci"), settings_=s, synchronous=sys.argv[3])
cpu0, t0 = time.process_time(), time.perf_counter()
out = run()
cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
c = out.coverage
print(json.dumps(dict(steps=c.steps, cpu=cpu, wall=wall, runs=c.runs, states=len(c.states), edges=len(c.edges),
                      probes=sum(c.probes.values()), found=out.found is not None)))
"""


def against(other: str, examples: int, rounds: int, synchronous: str) -> None:
    """This checkout's lockstep and `other`'s, alternating, each run in a process of its own."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"this checkout": here, "against": os.path.abspath(other)}
    got: dict[str, list[dict]] = {k: [] for k in sides}
    for r in range(rounds):
        for name, root in (sides.items() if r % 2 == 0 else reversed(sides.items())):
            proc = subprocess.run([sys.executable, "-c", _CHILD, root, str(examples), synchronous],
                                  capture_output=True, text=True, cwd=root)
            if proc.returncode:
                sys.exit(f"bench_lockstep: the run in {root} failed: {proc.stderr.strip().splitlines()[-1:]}")
            got[name].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"  round {r + 1}/{rounds} {name:<14} {got[name][-1]}", file=sys.stderr, flush=True)
    print(f"lockstep on a file database (synchronous={synchronous}), config ci, {examples} examples, "
          f"{rounds} alternating runs each (medians)")
    med = {}
    for name, root in sides.items():
        runs = got[name]
        sps = statistics.median(x["steps"] / x["wall"] for x in runs)
        spc = statistics.median(x["steps"] / x["cpu"] for x in runs)
        med[name] = (sps, spc)
        print(f"  {name:<14} {runs[0]['steps']:>6} steps {sps:7,.0f} steps/s {spc:7,.0f} steps per CPU-second   {root}")
    (a_s, a_c), (b_s, b_c) = med["this checkout"], med["against"]
    print(f"  ratio          {a_s / b_s:19.2f}x {a_c / b_c:17.2f}x")
    keys = ("steps", "runs", "states", "edges", "probes", "found")
    same = all({tuple(x[k] for k in keys) for x in got[n]} == {tuple(got["against"][0][k] for k in keys)}
               for n in sides)
    print("  same run on both sides (steps, runs, states, edges, probes, verdict)" if same else
          "  THE RUNS DIFFER: " + "; ".join(f"{n}: {[got[n][0][k] for k in keys]}" for n in sides))


def detection(seeds: int, budget: int, only=()) -> None:
    """Two ways to switch a defect on: in the twin and the implementation together (the run must show
    the invariant the registry says it breaks), and in the implementation only, under a correct twin
    (a mutant: any divergence or violated invariant catches it)."""
    print(f"\ntime to first detection (no shrinking), {seeds} seeds, derandomize=False, up to {budget} examples")
    print(f"  {'':<36} {'':<9} {'defect in twin and code':>25}   {'code-only mutant':>25}")
    print(f"  {'defect':<36} {'config':<9} {'median s':>9} {'max s':>7} {'found':>7}   "
          f"{'median s':>9} {'max s':>7} {'found':>7}")
    s = settings(L.PROFILES["ci"], derandomize=False, max_examples=budget, phases=L.NO_SHRINK)
    for defect, d in N.DEFECTS.items():
        if only and defect not in only:
            continue
        cells = []
        for cfg, mutant in ((configs.get(d.config, [defect]), None), (configs.get(d.config), [defect])):
            times, found = [], 0
            for seed in range(seeds):
                out = L.run(cfg, server=BUNDLED, settings_=s, seed=seed, mutant=mutant)
                times.append(out.seconds)
                if mutant is None:
                    found += out.found is not None and bool(set(out.found.invariants) & set(d.violates))
                else:
                    found += out.found is not None
            cells.append(f"{statistics.median(times):9.1f} {max(times):7.1f} {found:>4}/{seeds}")
        print(f"  {defect:<36} {d.config:<9} {cells[0]}   {cells[1]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--examples", type=int, default=300, help="examples for the throughput run")
    ap.add_argument("--budget", type=int, default=3000, help="example budget per detection run")
    ap.add_argument("--skip-detection", action="store_true")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--defect", action="append", default=[], help="time only these defects (repeatable)")
    ap.add_argument("--against", metavar="DIR", help="compare throughput with another checkout's code, side by side")
    ap.add_argument("--rounds", type=int, default=3, help="alternating runs per side with --against")
    args = ap.parse_args()
    if args.against and not os.path.isfile(os.path.join(args.against, "harness", "conformance", "lockstep.py")):
        print(f"bench_lockstep: --against {args.against}: not a claimcheck checkout", file=sys.stderr)
        sys.exit(2)
    if args.against and not args.skip_throughput:
        for sync in ("NORMAL", "FULL"):
            against(args.against, args.examples, args.rounds, sync)
    elif not args.skip_throughput:
        for sync in ("NORMAL", "FULL"):
            throughput(args.examples, sync)
    if not args.skip_detection:
        detection(args.seeds, args.budget, args.defect)


if __name__ == "__main__":
    main()
