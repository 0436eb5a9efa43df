"""The `claimcheck` command line.

Exit codes, for every subcommand: 0 all holds, 1 a violation (or a divergence), 2 bad usage or bad
input (one line naming what is wrong, never a traceback).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from spec import configs
from spec import names as N

OK, VIOLATION, USAGE = 0, 1, 2


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def _progress(prefix: str):
    state = {"last": 0.0}

    def show(res_or_line):
        now = time.monotonic()
        if now - state["last"] < 2.0:
            return
        state["last"] = now
        if isinstance(res_or_line, str):
            print(f"  {prefix} {res_or_line}", file=sys.stderr, flush=True)
        else:
            print(f"  {prefix} … {res_or_line.distinct:,} states, depth {res_or_line.depth}, "
                  f"{res_or_line.seconds:.0f} s", file=sys.stderr, flush=True)
    return show


def _describe(cfg) -> str:
    parts = [f"Sessions={{{','.join(cfg.sessions)}}}", f"Nodes={{{','.join(cfg.nodes)}}}",
             f"Recoverers={{{','.join(cfg.recoverers)}}}", f"Prompts={cfg.prompts}", f"MaxExec={cfg.max_exec}",
             f"Lease={cfg.lease}", f"ScanBound={cfg.scan_bound}", f"Faults={{{','.join(sorted(cfg.faults))}}}"]
    off = [a for a, f in configs.ASSUMPTION_FIELDS.items() if not getattr(cfg, f)]
    return " ".join(parts) + (f" assumptions-off={','.join(off)}" if off else "")


def cmd_check(args) -> int:
    from .check import run_python, run_tlc
    cfg = configs.get(args.config, args.defect or (), args.assume_off or ())
    liveness = args.liveness if args.liveness is not None else args.config != "deep"
    out_dir = Path(args.out)
    print(f"claimcheck check: engine={args.engine} config={args.config}")
    print(f"  constants: {_describe(cfg)}")
    print(f"  defects:   {', '.join(sorted(cfg.defects)) or 'none'}")
    run = run_python if args.engine == "python" else run_tlc
    o = run(cfg, args.config, liveness=liveness, out_dir=out_dir, progress=_progress(args.engine))
    print(f"  checked:   {', '.join(o.invariants)}" + ("" if liveness else "  (liveness off)"))
    if o.verdict == "skipped":
        print(f"  SKIPPED: {o.reason}")
        return USAGE
    if o.verdict == "error":
        print(f"  ERROR: {o.reason}")
        return USAGE
    print(f"  states:    {o.distinct:,} distinct, {o.generated:,} generated, depth {o.depth}")
    print(f"  time:      {o.seconds:.1f} s")
    if o.verdict == "ok":
        print("  verdict:   OK, every invariant and property holds")
        return OK
    print(f"  verdict:   VIOLATION of {', '.join(o.violated)} ({o.length} steps)")
    if o.trace_path:
        print(f"  trace:     {o.trace_path}")
    return VIOLATION


def cmd_replay(args) -> int:
    from .replay import committed_traces, render, replay_file
    from .trace import TraceError
    code = OK
    paths = [p for arg in args.traces for p in (committed_traces(arg) if Path(arg).is_dir() else [arg])]
    for path in paths:
        try:
            res = replay_file(path, args.defect)
        except TraceError as exc:
            print(f"claimcheck replay: {exc}", file=sys.stderr)
            code = USAGE
            continue
        print(render(res))
        if not res.ok and code == OK:
            code = VIOLATION
    return code


def cmd_explain(args) -> int:
    from .explain import explain_file
    print(explain_file(args.trace, args.format, args.defect))
    return OK


def cmd_itf(args) -> int:
    from . import itf
    if args.direction == "export":
        out = itf.export_file(args.src, args.out)
    else:
        out = itf.import_file(args.src, args.out, config=args.config, defects=args.defect or ())
    print(f"claimcheck itf: wrote {out}")
    return OK


def cmd_bench(args) -> int:
    from .bench import bench_explorer_vs_tlc
    return bench_explorer_vs_tlc(args.config, workers=args.workers)


def cmd_gate(args) -> int:
    from .gate import main_gate
    return main_gate(args)


def cmd_invariants(args) -> int:
    from .reviewer import render
    print(render(args.names or None, args.format))
    return OK


def cmd_fuzz(args) -> int:
    from .fuzz import fuzz
    return fuzz(profile=args.profile, config=args.config, defects=args.defect, db_url=args.db, out_dir=args.out)


def cmd_stress(args) -> int:
    from .stress import StressOptions, StressUsage, run
    try:
        code, _ = run(StressOptions(
            nodes=args.nodes, seconds=args.seconds, db=args.db, sessions=args.sessions, lease=args.lease,
            seed=args.seed, defects=tuple(args.defect or ()), out=args.out, executions=args.executions,
            crash_every=args.crash_every, crash_every_commits=args.crash_every_commits, keep=args.keep))
    except StressUsage as exc:
        raise UsageError(f"claimcheck stress: {exc}") from exc
    return code


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="claimcheck", description="Model-checked reference spec and conformance harness "
                                               "for durable agent-session execution claims.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("check", help="model-check the spec on one configuration with one engine")
    c.add_argument("--engine", choices=["python", "tlc"], default="python")
    c.add_argument("--config", choices=sorted(configs.CONFIGS), default="ci")
    c.add_argument("--defect", action="append", metavar="NAME", help="switch a registry defect on (repeatable)")
    c.add_argument("--assume-off", action="append", metavar="NAME",
                   help=f"switch an assumption off: {', '.join(N.ASSUMPTIONS)}")
    live = c.add_mutually_exclusive_group()
    live.add_argument("--liveness", dest="liveness", action="store_true", default=None,
                      help="check the liveness properties (default except for deep)")
    live.add_argument("--no-liveness", dest="liveness", action="store_false")
    c.add_argument("--out", default="traces/found", help="where counterexample traces are written")
    c.set_defaults(func=cmd_check)

    r = sub.add_parser("replay", help="replay traces against the implementation in lockstep with the twin")
    r.add_argument("traces", nargs="+", metavar="TRACE", help="trace files, or a folder (its *.json traces)")
    r.add_argument("--defect", action="append", metavar="NAME",
                   help="switch a registry defect on, overriding the trace's recorded defects (repeatable)")
    r.set_defaults(func=cmd_replay)

    e = sub.add_parser("explain", help="a trace as a per-actor timeline (text) or a mermaid sequence diagram")
    e.add_argument("trace", metavar="TRACE")
    e.add_argument("--format", choices=["text", "mermaid"], default="text")
    e.add_argument("--defect", action="append", metavar="NAME", help="explain the run with this defect on")
    e.set_defaults(func=cmd_explain)

    t = sub.add_parser("itf", help="convert a trace to ITF (export) or an Apalache ITF file to a trace (import)")
    t.add_argument("direction", choices=["export", "import"])
    t.add_argument("src", metavar="FILE")
    t.add_argument("--out", required=True, metavar="FILE")
    t.add_argument("--config", choices=sorted(configs.CONFIGS), default=None,
                   help="import: the configuration the ITF states belong to (default: from its #meta)")
    t.add_argument("--defect", action="append", metavar="NAME", help="import: defects of the run")
    t.set_defaults(func=cmd_itf)

    g = sub.add_parser("gate", help="every check in order: the CI conformance gate")
    g.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    g.add_argument("--json", metavar="PATH", help="write a JSON report")
    g.add_argument("--out", default="traces/found", help="where counterexample traces are written")
    g.add_argument("--apalache", metavar="PATH", help="the apalache-mc executable (else APALACHE_HOME, PATH)")
    g.add_argument("--strict", action="store_true", help="a skipped stage fails the gate")
    g.set_defaults(func=cmd_gate)

    v = sub.add_parser("invariants", help="the reviewer's map: each invariant in TLA+ and Python, "
                                          "its checks and the defects that break it")
    v.add_argument("names", nargs="*", metavar="NAME")
    v.add_argument("--format", choices=["text", "markdown"], default="text")
    v.set_defaults(func=cmd_invariants)

    b = sub.add_parser("bench", help="the explorer's and TLC's distinct states per second, side by side")
    b.add_argument("--config", choices=sorted(configs.CONFIGS), default="deep")
    b.add_argument("--workers", type=int, default=2)
    b.set_defaults(func=cmd_bench)

    f = sub.add_parser("fuzz", help="Hypothesis lockstep: the twin drives the SQL implementation")
    f.add_argument("--profile", choices=["ci", "deep"], default="ci")
    f.add_argument("--config", choices=sorted(configs.CONFIGS),
                   help="default: each defect's witness configuration, else " + ", ".join(configs.GATE_CONFIGS))
    f.add_argument("--defect", action="append", metavar="NAME", help="switch a registry defect on (repeatable)")
    f.add_argument("--db", metavar="URL", help="default: a fresh sqlite file per example; sqlite:// for memory; a "
                   "postgresql+psycopg2:// URL (e.g. from `python -m harness.pgserver start DIR`) is emptied first")
    f.add_argument("--out", default="traces/found", help="where failure traces are written")
    f.set_defaults(func=cmd_fuzz)

    s = sub.add_parser("stress", help="N node processes on one database with crashes; the commit history checked "
                                      "against the twin")
    s.add_argument("--nodes", type=int, default=2)
    s.add_argument("--seconds", type=float, default=10.0, help="stop after this long (or --executions)")
    s.add_argument("--db", metavar="URL", help="a sqlite file or a PostgreSQL on this machine (default: a fresh "
                   "sqlite file, WAL, under --out)")
    s.add_argument("--sessions", type=int, default=8)
    s.add_argument("--lease", type=float, default=0.3, metavar="SECONDS")
    s.add_argument("--seed", default="0")
    s.add_argument("--defect", action="append", metavar="NAME", help="switch a registry defect on (repeatable)")
    s.add_argument("--out", default="traces/found", help="where the run's files and violation traces go")
    s.add_argument("--executions", type=int, help="stop once this many executions ran")
    s.add_argument("--crash-every", type=float, default=2.0, metavar="SECONDS", help="mean time between crashes")
    s.add_argument("--crash-every-commits", type=int, metavar="C", help="crash every ~C commits instead")
    s.add_argument("--keep", action="store_true", help="keep the run's database and logs when it passes")
    s.set_defaults(func=cmd_stress)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return USAGE
    except ValueError as exc:  # unknown defect / assumption / configuration, malformed input
        print(f"claimcheck: {exc}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        print("claimcheck: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
