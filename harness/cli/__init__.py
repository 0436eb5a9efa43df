"""The `claimcheck` command line.

Exit codes, for every subcommand: 0 all holds, 1 a violation (or a divergence), 2 bad usage or bad
input (one line naming what is wrong, never a traceback), 3 an internal error (a bug in claimcheck: the
traceback is printed), 4 a defect was switched on and the run did not detect it (check, fuzz, stress:
never "OK"), 5 stress: every check held but validation could not decide on the history (NOT VALIDATED,
never "OK"), 130 interrupted, 141 stdout closed early. See harness/README.md ("Bad input").
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from spec import configs
from spec import names as N

from harness.cli import arguments as A
from harness.cli.arguments import INTERNAL, NOT_DETECTED, OK, USAGE, VIOLATION  # noqa: F401 - the exit codes
from harness.cli.arguments import UsageError, witness_config
from harness.cli import recorded
from harness.cli.drive import cmd_conform, cmd_fuzz, cmd_replay
from harness.cli.sharded import cmd_merge
from harness.traces.inputfile import InputError


def _describe(cfg) -> str:
    parts = [f"Sessions={{{','.join(cfg.sessions)}}}", f"Nodes={{{','.join(cfg.nodes)}}}",
             f"Recoverers={{{','.join(cfg.recoverers)}}}", f"Prompts={cfg.prompts}", f"MaxExec={cfg.max_exec}",
             f"Lease={cfg.lease}", f"ScanBound={cfg.scan_bound}", f"Grace={cfg.eff_grace}",
             f"SupervisionLag={cfg.supervision_lag}", f"Faults={{{','.join(sorted(cfg.faults))}}}"]
    if cfg.wake_rows:  # the wake scans, where they are modelled
        parts += [f"WakeRows={cfg.wake_rows}", f"WakeBatch={cfg.wake_batch}", f"FreshShare={cfg.fresh_share}",
                  f"MaxWakeTries={cfg.max_wake_tries}"] + ([f"Wakers={cfg.wakers}"] if cfg.wakers > 1 else []) \
            + (["WakesTied=TRUE"] if cfg.wakes_tied else [])
    off = [a for a, f in configs.ASSUMPTION_FIELDS.items() if not getattr(cfg, f)]
    return " ".join(parts) + (f" assumptions-off={','.join(off)}" if off else "")


def cmd_check(args) -> int:
    from harness.engines.check import run_python, run_tlc
    from harness.traces.configfile import resolve
    if args.profile:
        from harness.cli.sharded import cmd_check_profile
        return cmd_check_profile(args)
    if args.shard:
        raise UsageError("claimcheck check: --shard splits a profile's configurations: give --profile ci or deep")
    if args.engine == "python" and args.workers not in (None, 1):
        raise UsageError("claimcheck check: --workers is for --engine tlc; the explorer runs in one process")
    if args.distributed and args.engine != "tlc":
        raise UsageError("claimcheck check: --distributed is TLC's distributed mode, for --engine tlc only; "
                         "the explorer is the one-machine engine")
    if args.distributed and args.liveness:
        raise UsageError("claimcheck check: --distributed checks safety only (TLC's distributed mode checks no "
                         "liveness); drop --liveness, or check liveness without --distributed")
    args.config, note = witness_config(args.config, args.defect, args.assume_off)
    chosen = resolve(args.config, args.defect or (), args.assume_off or ())
    cfg = chosen.cfg
    liveness = args.liveness if args.liveness is not None else args.config != "deep"
    out_dir = Path(args.out)
    print(f"claimcheck check: engine={args.engine} config={args.config}")
    if args.distributed:
        print(f"  mode:      TLC's distributed mode: a TLCServer and {args.workers or 2} TLCWorker processes "
              "over RMI on 127.0.0.1")
    if note:
        print(f"  note:      {note}")
    print(f"  constants: {_describe(cfg)}")
    print(f"  defects:   {', '.join(sorted(cfg.defects)) or 'none'}")
    extra = {} if args.engine == "python" else {"workers": args.workers or 2, "distributed": args.distributed}
    run = run_python if args.engine == "python" else run_tlc
    from harness.progress import Reporter
    name = "explorer" if args.engine == "python" else "TLC (distributed)" if args.distributed else "TLC"
    with Reporter() as progress, progress.task(f"{name} {chosen.label}") as task:
        o = run(cfg, chosen.label, liveness=liveness, out_dir=out_dir, progress=task, **extra)
    if args.json:
        _write_check_json(o, args.json)
    print(f"  checked:   {', '.join(o.invariants)}" + ("" if o.liveness or o.not_checked else "  (liveness off)"))
    if o.not_checked:
        print(f"  {o.not_checked}")
    if o.verdict == "skipped":
        print(f"  SKIPPED: {o.reason}")
        return USAGE
    if o.verdict == "error":
        print(f"  ERROR: {o.reason}")
        return USAGE
    print(f"  states:    {o.distinct:,} distinct, {o.generated:,} generated, depth {o.depth}")
    print(f"  time:      {o.seconds:.1f} s")
    if o.verdict == "ok" and cfg.defects:
        print(f"  verdict:   NOT DETECTED: {', '.join(sorted(cfg.defects))} switched on, and every invariant "
              "and property held")
        return NOT_DETECTED
    if o.verdict == "ok":
        print("  verdict:   OK, every invariant and property holds")
        return OK
    print(f"  verdict:   VIOLATION of {', '.join(o.violated)} ({o.length} steps)")
    if o.trace_path:
        print(f"  trace:     {o.trace_path}")
    return VIOLATION


def _write_check_json(o, path: str) -> None:
    import json
    doc = {"engine": o.engine, "config": o.config_name, "defects": sorted(o.cfg.defects), "verdict": o.verdict,
           "distinct": o.distinct, "generated": o.generated, "depth": o.depth, "seconds": round(o.seconds, 3),
           "checked": o.invariants, "liveness": o.liveness, "violated": o.violated, "length": o.length,
           "trace": str(o.trace_path) if o.trace_path else None, "reason": o.reason or None,
           "distributed": o.distributed, "not_checked": o.not_checked or None}
    Path(path).write_text(json.dumps(doc, indent=2) + "\n")


def cmd_explain(args) -> int:
    from binding.server import Bundled
    from harness.reports.explain import explain_file
    print(explain_file(args.trace, args.format, args.defect, server=Bundled()))
    return OK


def cmd_itf(args) -> int:
    from harness.traces import itf
    if args.direction == "export":
        out = itf.export_file(args.src, args.out)
    else:
        out = itf.import_file(args.src, args.out, config=args.config, defects=args.defect or ())
    print(f"claimcheck itf: wrote {out}")
    return OK


def cmd_bench(args) -> int:
    if args.beside and not args.gate:
        raise UsageError("claimcheck bench: --beside is for --gate (a CPU-bound job beside the two gates)")
    if args.gate:
        from binding.server import Bundled
        from harness.reports.gate_bench import bench_gate
        return bench_gate(Bundled(None), beside=args.beside)
    if args.validate is not None:
        from binding.history import read_database
        from binding.stress import BUNDLED
        from harness.reports.validate_bench import bench_validate
        return bench_validate(args.validate, BUNDLED, read_database, seed=args.seed, keep=args.keep)
    from harness.reports.bench import bench_explorer_vs_tlc
    from harness.traces.configfile import resolve
    chosen = resolve(args.config)
    return bench_explorer_vs_tlc(chosen.label, workers=args.workers, procs=args.procs, cfg=chosen.cfg,
                                symmetry=args.symmetry, depth=args.depth)


def cmd_gate(args) -> int:
    from harness.cli.drive import open_server
    from harness.reports.gate import main_gate
    server = open_server(args, "gate")
    try:
        return main_gate(args, server)
    finally:
        server.close()


def cmd_invariants(args) -> int:
    from harness.reports.reviewer import render
    print(render(args.names or None, args.format))
    return OK


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("claimcheck")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    p = A.Parser(prog="claimcheck", description="Model-checked reference spec and conformance harness "
                                               "for durable agent-session execution claims.",
                epilog="exit codes: 0 holds, 1 violation or divergence, 2 bad usage or input, 3 internal error, "
                       "4 a switched-on defect not detected, 5 stress: every check held but validate could not decide "
                       "on the run's history (NOT VALIDATED)")
    p.add_argument("--version", action="version", version=f"claimcheck {_version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=A.Parser)
    _add_check(sub)
    _add_replay(sub)
    _add_explain(sub)
    _add_itf(sub)
    _add_gate(sub)
    _add_invariants(sub)
    _add_bench(sub)
    _add_fuzz(sub)
    _add_conform(sub)
    recorded.add_stress(sub)
    recorded.add_validate(sub)  # the command's logic is harness/validation/command.py
    from harness.cli.sharded import add_merge
    add_merge(sub, cmd_merge)
    from harness.cli.driverkit import add_driver_kit
    add_driver_kit(sub, _add_sut)
    from harness.cli.mutate import add_mutate, cmd_mutate
    add_mutate(sub, cmd_mutate)
    return p


def _add_check(sub) -> None:
    c = sub.add_parser("check", help="model-check the spec on one configuration with one engine")
    c.add_argument("--engine", choices=["python", "tlc"], default="python",
                   help="python: the twin's explorer; tlc: TLC 2.15 on the TLA+ spec (default: python)")
    c.add_argument("--config", type=A.config, default=None, metavar="NAME|FILE",
                   help=f"a registered configuration ({', '.join(sorted(configs.CONFIGS))}) or a JSON configuration "
                        "file (README: configuration files); default: the witness configuration of --defect/"
                        "--assume-off, else ci")
    c.add_argument("--defect", action="append", type=A.defect, metavar="NAME",
                   help="switch a registry defect on (repeatable)")
    c.add_argument("--assume-off", action="append", type=A.assumption, metavar="NAME",
                   help=f"switch an assumption off: {', '.join(N.ASSUMPTIONS)}")
    live = c.add_mutually_exclusive_group()
    live.add_argument("--liveness", dest="liveness", action="store_true", default=None,
                      help="check the liveness properties (default except for deep)")
    live.add_argument("--no-liveness", dest="liveness", action="store_false", help="safety only")
    c.add_argument("--workers", type=A.count(1, 1024), default=None, metavar="N",
                   help="TLC worker threads (--engine tlc; default 2); with --distributed, TLCWorker processes")
    c.add_argument("--distributed", action="store_true",
                   help="TLC's own distributed mode (--engine tlc): a TLCServer and --workers TLCWorker processes "
                        "over RMI on loopback; safety only (liveness not checked); README: when to use it")
    from harness.cli.sharded import add_shard
    from harness.engines.check import CHECK_PROFILES
    c.add_argument("--profile", choices=CHECK_PROFILES,
                   help="check every configuration of a profile, one line each (ci: the gate's ten; deep: every "
                        "registered one but deep, liveness on all but scans); with --json, a shard file for claimcheck merge")
    add_shard(c, "profile's configurations")
    c.add_argument("--json", type=A.report_file, metavar="PATH", help="also write the verdict as JSON")
    c.add_argument("--out", type=A.out_dir, default="traces/found", help="where counterexample traces are written")
    c.set_defaults(func=cmd_check)


def _add_replay(sub) -> None:
    r = sub.add_parser("replay", help="replay traces against the implementation in lockstep with the twin")
    r.add_argument("traces", nargs="*", metavar="TRACE",
                   help="trace files, or a folder (its *.json traces); default: the protocol's committed race traces")
    r.add_argument("--defect", action="append", type=A.defect, metavar="NAME",
                   help="switch a registry defect on, overriding the trace's recorded defects (repeatable)")
    from harness.cli.sharded import add_shard
    add_shard(r, "traces")
    r.add_argument("--json", type=A.report_file, metavar="PATH", help="write each trace's result as a shard file "
                                                                       "(claimcheck merge reads it)")
    _add_sut(r, "replay")
    r.set_defaults(func=cmd_replay)


def _add_sut(p, what: str) -> None:
    p.add_argument("--sut", metavar="CMD",
                   help=f"{what} against the server behind this driver command instead of the bundled implementation "
                        "(docs/driver.md; e.g. --sut 'python -m binding.driver')")
    p.add_argument("--sut-timeout", type=A.seconds, default=30.0, metavar="SECONDS",
                   help="how long the driver may take to answer one request (default 30; its start and hello may "
                        "take 30 whatever this is)")


def _add_explain(sub) -> None:
    e = sub.add_parser("explain", help="a trace as a per-actor timeline, a mermaid sequence diagram or an HTML page")
    e.add_argument("trace", metavar="TRACE", help="a trace file")
    e.add_argument("--format", choices=["text", "mermaid", "html"], default="text",
                   help="text: a timeline per actor; mermaid: a sequence diagram; html: a self-contained page")
    e.add_argument("--defect", action="append", type=A.defect, metavar="NAME",
                   help="explain the run with this defect on")
    e.set_defaults(func=cmd_explain)


def _add_itf(sub) -> None:
    t = sub.add_parser("itf", help="convert a trace to ITF (export) or an Apalache ITF file to a trace (import)")
    t.add_argument("direction", choices=["export", "import"], help="export: trace to ITF; import: ITF to trace")
    t.add_argument("src", metavar="FILE", help="the file to convert")
    t.add_argument("--out", required=True, type=A.out_file, metavar="FILE", help="the file to write")
    t.add_argument("--config", type=A.config, default=None, metavar="NAME|FILE",
                   help="import: the configuration the ITF states belong to (default: from its #meta)")
    t.add_argument("--defect", action="append", type=A.defect, metavar="NAME", help="import: defects of the run")
    t.set_defaults(func=cmd_itf)


def _add_gate(sub) -> None:
    g = sub.add_parser("gate", help="every check in order: the CI conformance gate")
    g.add_argument("--junit", type=A.report_file, metavar="PATH", help="write a JUnit XML report")
    g.add_argument("--json", type=A.report_file, metavar="PATH", help="write a JSON report")
    g.add_argument("--out", type=A.out_dir, default="traces/found", help="where counterexample traces are written")
    g.add_argument("--apalache", type=A.existing_file, metavar="PATH", help="the apalache-mc executable (else APALACHE_HOME, PATH)")
    g.add_argument("--strict", action="store_true", help="a skipped stage fails the gate")
    g.add_argument("--allow-skip", action="append", type=A.gate_stage, metavar="STAGE",
                   help="with --strict: this stage may be skipped (reported as skipped by name); repeatable")
    g.add_argument("--stage", action="append", type=A.gate_stage, metavar="STAGE",
                   help="run only this stage (repeatable; the others are reported as skipped, not chosen), e.g. "
                        "--stage traces --stage 'kill matrix' for a server's own CI")
    g.add_argument("--no-reuse", action="store_true",
                   help="run every TLC check now; by default a passing check whose inputs (the spec's modules, the "
                        "configuration, TLC's pin, Java, the options) are unchanged is reused from an earlier gate "
                        "run, kept in $CLAIMCHECK_TLC_CACHE or ~/.cache/claimcheck/tlc, and the report says so")
    _add_sut(g, "the traces, lockstep, conformance and kill matrix stages run")
    g.set_defaults(func=cmd_gate)


def _add_invariants(sub) -> None:
    v = sub.add_parser("invariants", help="the reviewer's map: each invariant in TLA+ and Python, "
                                          "its checks and the defects that break it")
    v.add_argument("names", nargs="*", type=A.invariant, metavar="NAME", help="invariants to show (default: all)")
    v.add_argument("--format", choices=["text", "markdown"], default="text", help="default: text")
    v.set_defaults(func=cmd_invariants)


def _add_bench(sub) -> None:
    b = sub.add_parser("bench", help="the explorer's and TLC's distinct states per second, side by side")
    b.add_argument("--config", type=A.config, default="deep", metavar="NAME|FILE", help="default: deep")
    b.add_argument("--workers", type=A.count(1, 1024), default=2, help="TLC worker threads (default 2)")
    b.add_argument("--procs", type=A.count(1, 64), default=2, help="explorer worker processes (default 2)")
    b.add_argument("--symmetry", choices=["nodes", "sessions"],
                   help="count orbits in both engines: under permutations of Nodes, or of Nodes and Sessions "
                        "(TLC's SYMMETRY; spec/README.md, decision on symmetry)")
    b.add_argument("--depth", type=A.count(1, 10_000), metavar="D",
                   help="both engines only as far as D steps from Init (default: the whole configuration); exact counts "
                        "need --workers 1: TLC with more workers is not strictly breadth-first")
    b.add_argument("--validate", nargs="?", const=[1_000, 10_000, 100_000], type=A.sizes, metavar="N,N,...",
                   help="instead: record stress histories of the bundled server of these many lines (default "
                        "1000,10000,100000) and print validation's lines/s beside the time each took to record")
    b.add_argument("--gate", action="store_true",
                   help="instead: the whole gate in the layout before issue 34 and in today's, one after the other, "
                        "nothing reused, each stage's time side by side")
    b.add_argument("--beside", action="store_true", help="with --gate: a CPU-bound process runs beside both gates")
    b.add_argument("--seed", default="1", help="with --validate: the stress run's seed (default 1)")
    b.add_argument("--keep", metavar="DIR", help="with --validate: keep the recording and its lines "
                   "(history.jsonl) in DIR; a rejected history is always kept, and its path printed")
    b.set_defaults(func=cmd_bench)


def _add_fuzz(sub) -> None:
    f = sub.add_parser("fuzz", help="Hypothesis lockstep: the twin drives the SQL implementation")
    f.add_argument("--profile", choices=["ci", "deep"], default="ci",
                   help="ci: derandomized, 450 examples; deep: random seeds, 3,000 longer examples")
    f.add_argument("--config", type=A.config, metavar="NAME|FILE",
                   help="default: each defect's witness configuration, else " + ", ".join(configs.GATE_CONFIGS))
    f.add_argument("--defect", action="append", type=A.defect, metavar="NAME",
                   help="switch a registry defect on (repeatable)")
    f.add_argument("--db", type=A.db_url, metavar="URL", help="default: one sqlite file per campaign (WAL), restored between runs; sqlite:// for memory; a "
                   "postgresql+psycopg2:// URL (e.g. from `python -m binding.pgserver start DIR`) is emptied first")
    f.add_argument("--mutant", action="append", type=A.defect, metavar="NAME",
                   help="switch a registry defect on in the implementation only: the twin stays correct and must "
                        "catch it (mutation testing; repeatable)")
    f.add_argument("--seed", type=A.count(0, 2**63 - 1), metavar="N",
                   help="Hypothesis's seed (random search from this seed instead of the profile's derandomized one)")
    f.add_argument("--max-examples", type=A.count(1, 10_000_000), metavar="N",
                   help="examples per configuration (default: the profile's)")
    f.add_argument("--out", type=A.out_dir, default="traces/found", help="where failure traces are written")
    _add_sut(f, "fuzz")
    f.set_defaults(func=cmd_fuzz)


def _add_conform(sub) -> None:
    from harness.conformance.exhaustive import PROFILES
    c = sub.add_parser("conform", help="exhaustive conformance: the implementation driven along every edge of "
                                       "the twin's reachable graph, every refusal probed")
    c.add_argument("--config", action="append", type=A.config, metavar="NAME|FILE",
                   help="a configuration to walk whole (repeatable; default: the ci profile's)")
    c.add_argument("--profile", choices=sorted(PROFILES),
                   help="; ".join(f"{k}: {', '.join(v)}" for k, v in PROFILES.items()))
    c.add_argument("--mutant", action="append", type=A.defect, metavar="NAME",
                   help="switch a registry defect on in the implementation only: the walk must catch it (repeatable)")
    c.add_argument("--db", type=A.db_url, default="sqlite://", metavar="URL",
                   help="default sqlite:// (in memory, saved by serialize); a sqlite file or a postgresql+psycopg2:// "
                        "URL is emptied first and saved by its rows")
    c.add_argument("--workers", type=A.count(1, 64), default=1, help="processes (default 1; each its own database, or with --sut its own driver process)")
    c.add_argument("--out", type=A.out_dir, default="traces/found", help="where failure traces are written")
    c.add_argument("--kill-matrix", action="store_true",
                   help="each registry defect (or each --mutant) as a code-only mutant on its own configuration: "
                        "the edge that catches it; exit 4 if one survives")
    from harness.cli.sharded import add_shard
    add_shard(c, "configurations' walks (each cut into parts of the reachable graph)")
    c.add_argument("--json", type=A.report_file, metavar="PATH", help="write each configuration's coverage as a shard "
                                                                       "file (claimcheck merge reads it)")
    _add_sut(c, "walk")
    c.set_defaults(func=cmd_conform)


_say = A.say


def main(argv=None) -> int:
    """Every error a user can cause (bad arguments, a bad file, a file system refusal) is one line on
    stderr and exit 2; anything else is a bug in claimcheck: "internal error", the traceback, exit 3."""
    where = "claimcheck"
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        if not argv:  # bare `claimcheck`: what it can do, not a one-line complaint
            build_parser().print_help(sys.stderr)
            return USAGE
        args, extra = build_parser().parse_known_args(argv)
        where = f"claimcheck {args.command}"
        if extra:
            raise UsageError(f"{where}: unrecognized arguments: {' '.join(extra)}")
        return args.func(args)
    except UsageError as exc:
        _say(str(exc))
        return USAGE
    except (InputError, N.UnknownName) as exc:  # a bad file or field; a name the registry does not have
        _say(f"{where}: {exc}")
        return USAGE
    except KeyboardInterrupt:
        _say(f"{where}: interrupted")
        return 130
    except BrokenPipeError:  # `claimcheck explain x | head`: the reader went away, as a shell reports it
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the exit flush does not fail again
        except OSError:
            pass
        return 141
    except OSError as exc:  # the file system refused: a missing folder, no permission, a full disk
        _say(f"{where}: {exc.filename}: {exc.strerror}" if exc.filename else f"{where}: {exc}")
        return USAGE
    except Exception as exc:  # noqa: BLE001 - not the user's fault: say so, and show where
        _say(f"{where}: internal error (a bug in claimcheck, not in your input): {type(exc).__name__}: {exc}")
        traceback.print_exc(file=sys.stderr)
        return INTERNAL


if __name__ == "__main__":
    sys.exit(main())
