"""`claimcheck mutate-spec`: is every guard and fence of the protocol needed, and which check notices its loss?

Every conjunct of every action's guard, and every fence predicate, is dropped in turn on the twin
(harness/engines/guard_mutants.py derives them from its code) and the mutant explored on the gate's
configurations (harness/engines/mutate.py). Prints a line per mutant, then `killed K of N guard mutants; U
unexplained`; exit 1 when U > 0 (a survivor that spec/README.md's "Equivalent guard mutants" does not
explain), or when a whole run finds a row there stale. `--shard K/N` runs a share of the mutants, with
`--json` a shard file for `claimcheck merge`; `--write` (a whole run) writes spec/mutants.json.
"""

from __future__ import annotations

import time

from harness import shard as S
from harness.cli import arguments as A
from harness.cli.arguments import OK, VIOLATION, UsageError


def add_mutate(sub, func) -> None:
    from harness.cli.sharded import add_shard
    m = sub.add_parser("mutate-spec", help="guard mutation: drop each conjunct of each action's guard and each fence "
                                           "of the twin in turn; which check notices?")
    m.add_argument("--config", action="append", type=A.config, metavar="NAME",
                   help="a configuration to explore each mutant on (repeatable; default: the gate's)")
    m.add_argument("--action", action="append", metavar="NAME", help="only the mutants of this action (repeatable)")
    m.add_argument("--jobs", type=A.count(1, 64), default=0, metavar="J", help="worker processes (default: the cores)")
    m.add_argument("--list", action="store_true", help="list the mutants (id, where) without running them")
    m.add_argument("--tlc-sample", action="store_true",
                   help="cross-check the sampled mutants (harness/engines/tlc_mutants.py) on TLC: the same conjunct "
                        "dropped in a generated variant of SessionExecution.tla; exit 1 when TLC and the explorer "
                        "disagree on killed or not")
    add_shard(m, "mutants")
    m.add_argument("--json", type=A.report_file, metavar="PATH", help="write each mutant's verdict as a shard file "
                                                                       "(claimcheck merge reads it)")
    m.add_argument("--write", action="store_true", help="write spec/mutants.json, the reviewer's map of which "
                                                        "mutants break which invariant (a whole run only)")
    m.set_defaults(func=func)


def _chosen(args):
    from harness.engines import guard_mutants as G
    from spec import names as N
    for a in args.action or ():
        if a not in N.ACTIONS:
            raise UsageError(f"claimcheck mutate-spec: unknown action {a!r}; known: {', '.join(N.ACTIONS)}")
    return [m for m in G.derive() if not args.action or m.action in args.action]


def cmd_mutate(args) -> int:
    from harness.engines import mutate as X
    from harness.reports import mutation as R
    if args.write and (args.shard or args.action or args.config):
        raise UsageError("claimcheck mutate-spec: --write records a whole run: drop --shard, --action and --config")
    mutants = _chosen(args)
    if args.tlc_sample:
        return _tlc_sample(args, mutants)
    if args.list:
        for m in mutants:
            print(f"{m.id}  ({m.kind}, {m.where})")
        print(f"{len(mutants)} guard mutants")
        return OK
    names = tuple(args.config or X.gate_configs())
    shard = args.shard or S.WHOLE
    plan = S.plan("mutate-spec" + "".join(f" --config {c}" for c in args.config or ())
                  + "".join(f" --action {a}" for a in args.action or ()), "mutants", [(m.id, 1) for m in mutants], shard.n)
    mine = [mutants[i] for i in plan.mine(shard)]
    print(f"claimcheck mutate-spec: {len(mine)} guard mutants" + (f" (shard {shard} of {len(mutants)})" if args.shard else "")
          + f" on {', '.join(names)}", flush=True)
    explained = R.equivalents()
    t0 = time.perf_counter()
    verdicts = X.run(mine, names, jobs=args.jobs, done=lambda v: print("  " + R.describe(v, explained), flush=True))
    summary = R.Summary(verdicts, explained)
    whole = not (args.shard or args.action or args.config)
    stale = summary.stale([m.id for m in mutants] if whole else None)
    for mid in stale:
        print(f"  STALE in spec/README.md: `{mid}` is listed as equivalent but was killed or no longer exists")
    print(summary.line() + f" ({summary.detail()}; {time.perf_counter() - t0:.0f} s)")
    _write_shard(args, plan, verdicts, explained)
    if args.write:
        R.write_map(verdicts, names)
        print(f"wrote {R.MAP.relative_to(R.ROOT)}")
    return VIOLATION if summary.unexplained or stale else OK


def _write_shard(args, plan, verdicts, explained) -> None:
    from harness.cli.sharded import write
    from harness.engines.mutate import KILLED
    from harness.reports import mutation as R
    from harness.reports.results import FAIL, PASS
    from harness.reports.shardfile import Result
    results = []
    for v in verdicts:
        ok = v.verdict == KILLED or v.id in explained
        counts = {"killed": int(v.verdict == KILLED), "equivalent": int(v.verdict != KILLED and ok),
                  "unexplained": int(not ok)}
        results.append(Result(f"mutant {v.id}", [v.id], PASS if ok else FAIL, R.describe(v, explained).split(None, 1)[1],
                              v.seconds, 1, counts, kind="" if ok else "UnexplainedMutant"))
    write(args, "mutate-spec", plan, results)


def _tlc_sample(args, mutants) -> int:
    """Each sampled mutant (of the chosen actions) on its configuration, on both engines: do they agree?"""
    from harness.engines import mutate as X
    from harness.engines import tlc_mutants as T
    from harness.engines.tlc import TlcUnavailable
    by_id = {m.id: m for m in mutants}
    sample = [s for s in T.SAMPLE if s.mutant in by_id]
    agree = 0
    for s in sample:
        twin = X.run_one(by_id[s.mutant], (s.config,))
        try:
            res = T.run(s)
        except (TlcUnavailable, T.StaleSample) as exc:
            raise UsageError(f"claimcheck mutate-spec --tlc-sample: {exc}") from None
        if res.verdict == "error":
            raise UsageError(f"claimcheck mutate-spec --tlc-sample: TLC failed on {s.mutant}: "
                             + " ".join(res.output.strip().splitlines()[-3:]))
        tlc_killed, twin_killed = res.verdict == "violation", twin.verdict == X.KILLED
        agree += tlc_killed == twin_killed
        say = lambda killed, by: f"killed ({', '.join(by)})" if killed else "not killed"
        print(f"  {'agree' if tlc_killed == twin_killed else 'DISAGREE'}  {s.mutant} on {s.config}: "
              f"explorer {say(twin_killed, twin.by)}, TLC {say(tlc_killed, res.violated)} "
              f"({res.distinct:,} states, {res.seconds:.0f} s)", flush=True)
    print(f"TLC agrees with the explorer on {agree} of {len(sample)} sampled guard mutants")
    return OK if agree == len(sample) else VIOLATION
