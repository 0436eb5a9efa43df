"""Sharded runs on the command line: `--shard K/N` and `--json` of conform, replay and `check --profile`
(each writes a shard file, harness/reports/shardfile.py), and `claimcheck merge` that combines them.

Why a module of its own: the commands keep their own output and exit codes; what sharding adds to each is
the same (a plan of its units, this shard's share of them, a result per check with what it covered), and
so is the merge. A new command (`mutate-spec`) takes the option the same way: `add_shard`, a Plan of its
units (harness/shard.py), `plan.mine(shard)`, a Result per check, `write`.
"""

from __future__ import annotations

import time
from pathlib import Path

from harness import shard as S
from harness.cli import arguments as A
from harness.cli.arguments import OK, USAGE, VIOLATION, UsageError


def add_shard(p, what: str) -> None:
    p.add_argument("--shard", type=A.shard, metavar="K/N",
                   help=f"run only shard K of N of the {what} (deterministic, disjoint; all N together run all of "
                        "them): a CI matrix job each, then `claimcheck merge` their --json files")


def write(args, command: str, plan: S.Plan, results) -> None:
    """The shard file of this run, when --json was given."""
    from harness.reports import shardfile
    if getattr(args, "json", None):
        shardfile.write(Path(args.json), command, args.shard or S.WHOLE, plan, results)


# ---------------------------------------------------------------- conform

def check_conform(args) -> None:
    if args.shard and (args.mutant or args.kill_matrix):
        raise UsageError("claimcheck conform: --shard splits the walk of the implementation as it is; a --mutant or "
                         "--kill-matrix run is one verdict per defect: run it whole")


def conform_results(args, record: dict) -> None:
    """The walks `exhaustive.conform` recorded, as the shard file's results (one per configuration)."""
    from harness.conformance.exhaustive import summary
    from harness.reports.results import FAIL, PASS
    from harness.reports.shardfile import Result
    plan = record["plan"] or S.plan(_conform_run(args), "edges", [(base, rep.edges_total)
                                                                  for base, rep, *_ in record["walks"]], 1)
    results = []
    for base, rep, trace, units, expected in record["walks"]:
        whole = rep.failure is None and rep.edges == expected
        detail = summary(rep) if rep.failure is None else f"{rep.failure.kind} {', '.join(rep.failure.invariants)}: " \
                                                          f"trace {trace}"
        results.append(Result(f"conform {base}", units, PASS if whole else FAIL, detail, round(rep.seconds, 3),
                              rep.edges, {"states": rep.states, "edges": rep.edges, "probes": rep.probes,
                                          "actions": dict(rep.actions), "boundaries": dict(rep.boundaries)},
                              {"states": rep.states_total, "edges": rep.edges_total},
                              kind="" if whole else "Divergence" if rep.failure else "Incomplete",
                              file=str(trace) if trace else None))
    write(args, "conform", plan, results)


def _conform_run(args) -> str:
    return "conform " + (" ".join(f"--config {c}" for c in args.config) if args.config else f"--profile {args.profile or 'ci'}")


# ---------------------------------------------------------------- replay

def replay_plan(args, paths: list) -> tuple[S.Plan, list]:
    """The traces as units (named as given, relative to here when inside it) and this shard's paths."""
    from harness.reports.locate import relpath
    units = [(relpath(p), 1) for p in paths]
    plan = S.plan("replay " + " ".join(args.traces or ["traces/"]) + "".join(f" --defect {d}" for d in args.defect or ()),
                  "traces", list(dict.fromkeys(units)), (args.shard or S.WHOLE).n)
    mine = {plan.units[i] for i in plan.mine(args.shard or S.WHOLE)}
    return plan, [p for p in paths if relpath(p) in mine]


def replay_result(path, res=None, seconds: float = 0.0, error: str = ""):
    """One trace's Result: replayed (passed or not), or not readable (`error`)."""
    from harness.reports.locate import relpath
    from harness.reports.results import FAIL, PASS
    from harness.reports.shardfile import Result
    unit = relpath(path)
    if res is None:
        return Result(f"replay {unit}", [unit], FAIL, error, round(seconds, 3), 1, kind="ReplayFailure")
    ok = res.ok
    return Result(f"replay {unit}", [unit], PASS if ok else FAIL, "" if ok else "; ".join(res.problems[:3]),
                  round(seconds, 3), 1, {"steps": res.consumed}, kind="" if ok else "ReplayFailure")


# ---------------------------------------------------------------- check --profile

def cmd_check_profile(args) -> int:
    """`check --profile P`: every configuration of the profile (or this shard's) on one engine, a line each."""
    from spec import configs
    from harness.engines.check import profile_runs, run_python, run_tlc
    from harness.progress import Reporter
    from harness.reports.results import FAIL, PASS, SKIP
    from harness.reports.shardfile import Result
    if args.config or args.defect or args.assume_off or args.distributed:
        raise UsageError("claimcheck check: --profile checks the profile's configurations as they are: drop --config, "
                         "--defect, --assume-off and --distributed")
    runs = dict(profile_runs(args.profile, args.engine))
    label = "explorer" if args.engine == "python" else "TLC"
    shard = args.shard or S.WHOLE
    plan = S.plan(f"check --engine {args.engine} --profile {args.profile}", "configurations",
                  [(name, 1) for name in runs], shard.n)
    mine = [plan.units[i] for i in plan.mine(shard)]
    print(f"claimcheck check: engine={args.engine} profile={args.profile}"
          + (f" shard {shard}: {', '.join(mine) or 'no configuration'}" if args.shard else ""))
    run = run_python if args.engine == "python" else run_tlc
    extra = {} if args.engine == "python" else {"workers": args.workers or 2}
    results = []
    with Reporter() as progress:
        for name in mine:
            with progress.task(f"{label} {name}") as task:
                t0 = time.perf_counter()
                o = run(configs.get(name), name, liveness=runs[name], out_dir=Path(args.out), progress=task, **extra)
            status = {"ok": PASS, "skipped": SKIP}.get(o.verdict, FAIL)
            detail = (f"{o.distinct:,} states" + ("" if o.liveness else ", safety") if status == PASS
                      else o.reason.splitlines()[0] if o.reason else f"VIOLATION of {', '.join(o.violated)}"
                      + (f" (trace {o.trace_path})" if o.trace_path else ""))
            print(f"  {name}: {status.upper()} {detail} in {time.perf_counter() - t0:.1f} s")
            results.append(Result(f"{label} {name}", [name], status, detail, round(o.seconds, 3), 1,
                                  {"states": o.distinct}, kind="" if status != FAIL else "InvariantViolation"
                                  if o.verdict == "violation" else "EngineError",
                                  file=str(o.trace_path) if o.trace_path else None))
    write(args, "check", plan, results)
    statuses = {r.status for r in results}
    return VIOLATION if FAIL in statuses else USAGE if SKIP in statuses else OK  # a skip is never a pass


# ---------------------------------------------------------------- merge

def add_merge(sub, func) -> None:
    m = sub.add_parser("merge", help="combine shard files (--json of conform, replay, check --profile with --shard K/N) "
                                     "into one report, one JUnit file and one coverage figure per run")
    m.add_argument("shards", nargs="+", type=A.existing_file, metavar="SHARD.json", help="the shards' --json files")
    m.add_argument("--json", type=A.report_file, metavar="PATH", help="write the merged report as JSON")
    m.add_argument("--junit", type=A.report_file, metavar="PATH", help="write the merged report as JUnit XML")
    m.set_defaults(func=func)


def cmd_merge(args) -> int:
    """0 when every run has all its shards, every check passed and the coverage is 100%; 1 otherwise (a
    missing shard is named); 2 for a file that is no shard file, or shards of one run that disagree."""
    import json
    from harness.reports import merge, shardfile
    from harness.reports.junit import write_junit
    runs = merge.merge([shardfile.read(p) for p in args.shards])
    for line in merge.lines(runs):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(merge.report(runs), indent=2) + "\n")
    if args.junit:
        write_junit([m.stage for m in runs], Path(args.junit), name="claimcheck merge")
    return OK if runs and all(m.ok for m in runs) else VIOLATION
