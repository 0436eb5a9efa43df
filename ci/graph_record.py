"""The explorer's graphs, recorded for a reshaping's before-and-after comparison: a tool, not a test.

Run `python ci/graph_record.py [--all] > before.txt` on the untouched code, the same after the change, and
`diff` the two: a reshaping must leave every line as it was. One line per run: the distinct states, the
edges generated, the depth and a digest of the whole graph in breadth-first order (each state, its parent
and the labelled edge that reached it; sets sorted, so the digest does not depend on the process's string
hashing), and with checking on the first violation (invariants, trace length, lasso loop). Recorded: every
registered configuration with no defect (`deep` capped at 150,000 states), every defect on its witness
configuration, every assumption off on its own, combinations of defects that switch one hook, and with
`--all` every defect on every registered configuration but `deep` (about 100 minutes on a loaded machine;
the rest about 20).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness.engines.explore import explore  # noqa: E402
from spec import configs  # noqa: E402
from spec import names as N  # noqa: E402

DEEP_CAP = 150_000
COMBINATIONS = (("cancel-interrupts-unstarted", "cancel-trusts-previous-step-memory"),
                ("wake-fresh-share-zero", "wake-fresh-share-full"), ("recovery-input-in-ordinary-queue",),
                ("renew-after-expiry", "heartbeat-extends-lease"))
COMBINED_ON = ("ci", "steps", "wakes", "steer", "heartbeat")


def _canon(x):
    if isinstance(x, (set, frozenset)):
        return tuple(sorted(_canon(y) for y in x))
    if isinstance(x, tuple):
        return tuple(_canon(y) for y in x)
    return x


def graph(cfg, cap=None) -> str:
    r = explore(cfg, liveness=False, check=False, keep_edges=False, max_states=cap)
    h = hashlib.sha256()
    for st, parent, via in zip(r.graph.states, r.graph.parent, r.graph.via):
        h.update(repr((_canon(tuple(st)), parent, _canon(via))).encode())
    return f"states={r.distinct} edges={r.generated} depth={r.depth} digest={h.hexdigest()[:16]}"


def violation(cfg) -> str:
    r = explore(cfg, liveness=True)
    v = r.violation
    return "none" if v is None else f"{','.join(v.invariants)} len={len(v.steps)} loop={v.loop} at_states={r.distinct}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--all", action="store_true", help="also every defect on every registered configuration")
    args = p.parse_args(argv)
    t0 = time.time()
    names = [n for n in configs.CONFIGS if n != "deep"]
    for n in names:
        cfg = configs.get(n)
        print(f"config {n}: {graph(cfg)} violation={violation(cfg)}", flush=True)
    print(f"config deep (capped {DEEP_CAP}): {graph(configs.get('deep'), DEEP_CAP)}", flush=True)
    for d, defect in N.DEFECTS.items():
        cfg = configs.get(defect.config, defects=[d])
        print(f"defect {d} on {defect.config}: {graph(cfg)} violation={violation(cfg)}", flush=True)
    for a, assumption in N.ASSUMPTIONS.items():
        cfg = configs.get(assumption.config, assumptions_off=[a])
        print(f"assumption-off {a} on {assumption.config}: {graph(cfg)} violation={violation(cfg)}", flush=True)
    for combo in COMBINATIONS:
        for n in COMBINED_ON:
            print(f"combo {'+'.join(combo)} on {n}: {graph(configs.get(n, defects=combo))}", flush=True)
    if args.all:
        for d in N.DEFECTS:
            for n in names:
                print(f"every {d} on {n}: {graph(configs.get(n, defects=[d]))}", flush=True)
    print(f"# {time.time() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
