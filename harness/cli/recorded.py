"""The commands on recorded histories: `claimcheck stress` (real node processes record one, and it is
checked) and `claimcheck validate` (a recorded history, a stress run's or a server's own log)."""

from __future__ import annotations

from harness.cli import arguments as A
from harness.cli.arguments import UsageError


def cmd_stress(args) -> int:
    from binding.history import read_database
    from binding.stress import BUNDLED
    from harness.stress.simulation import simulate
    from harness.stress.supervisor import StressOptions, StressUsage, run
    from harness.validation.command import Growing, check_database
    try:
        code, _ = (simulate if args.simulate else run)(StressOptions(
            nodes=args.nodes, seconds=args.seconds, db=args.db, sessions=args.sessions, lease=args.lease,
            seed=args.seed, defects=tuple(args.defect or ()), out=args.out, executions=args.executions,
            crash_every=args.crash_every, crash_every_commits=args.crash_every_commits, keep=args.keep, steps=args.steps,
            until_violation=args.until_violation, max_executions=args.max_executions, max_crashes=args.max_crashes,
            input_rate=args.input_rate, steer_rate=args.steer_rate, wake_rate=args.wake_rate,
            wake_batch=args.wake_batch, fresh_share=args.fresh_share, pause_every=args.pause_every,
            pause_for=args.pause_for, pause_before_dispatch=args.pause_before_dispatch, skew_ms=args.skew, skew_bound_ms=args.skew_bound,
            drop_every=args.drop_connections_every, busy_storm=args.busy_storm, liveness_bound=args.liveness_bound),
            BUNDLED, validate_history=lambda url: check_database(url, read_database),
            watch_history=lambda url: Growing(url, read_database).poll)
    except StressUsage as exc:
        raise UsageError(f"claimcheck stress: {exc}") from exc
    return code


def cmd_validate(args) -> int:
    from binding.history import read_database
    from harness.validation.command import run
    return run(args, read_database)


def add_validate(sub) -> None:
    from harness.validation import search as S
    v = sub.add_parser("validate", help="trace validation: is a recorded history (one JSON line per commit) a "
                                        "behaviour of the twin? (docs/history.md)")
    v.add_argument("history", metavar="HISTORY", help="a history file (JSON lines), or a stress run's history "
                                                      "database (stress.db, or a database URL)")
    v.add_argument("--config", type=A.config, default=None, metavar="NAME|FILE",
                   help="the twin configuration of the run (default: the history's header's, or the stress run's)")
    v.add_argument("--max-silent", type=A.count(0, 10_000), default=S.Limits.max_silent, metavar="N",
                   help=f"steps the log does not record between two lines, at most (default {S.Limits.max_silent}; "
                        "clock ticks not counted)")
    v.add_argument("--max-states", type=A.count(1, 100_000_000), default=S.Limits.max_states, metavar="N",
                   help=f"states one search between two lines may visit (default {S.Limits.max_states:,})")
    v.add_argument("--max-frontier", type=A.count(1, 100_000_000), default=S.Limits.max_frontier, metavar="N",
                   help=f"states the frontier may hold after a line (default {S.Limits.max_frontier:,}); beyond it "
                        "the search stops, bounded, and does not report valid")
    v.add_argument("--skew-bound", type=A.count(0, 1_000_000), default=S.Limits.skew_bound, metavar="TICKS",
                   help="SynchronizedClocks: how far one process's clock reading may go back below its own "
                        f"earlier one (default {S.Limits.skew_bound}); each line's lease decisions are judged at "
                        "its own process's reading (docs/history.md, \"Real time\")")
    v.add_argument("--mapping", metavar="FILE",
                   help="a JSON file renaming the log's own field, action and event-kind names to the history "
                        "format's (docs/history.md, \"Your server's log\")")
    v.add_argument("--write-lines", type=A.out_file, metavar="FILE",
                   help="write the history as history-format lines (a converted database's, with its header)")
    v.set_defaults(func=cmd_validate)


def add_stress(sub) -> None:
    s = sub.add_parser("stress", help="N node processes on one database with crashes; the commit history checked "
                                      "against the twin")
    s.add_argument("--nodes", type=int, default=2, help="node processes (default 2)")
    s.add_argument("--seconds", type=float, default=10.0, help="stop after this long (or --executions)")
    s.add_argument("--db", type=A.db_url, metavar="URL", help="a sqlite file or a local PostgreSQL (default: a fresh "
                   "sqlite file, WAL, under --out)")
    s.add_argument("--sessions", type=int, default=8, help="Sessions with prompts (default 8)")
    s.add_argument("--lease", type=float, default=0.3, metavar="SECONDS", help="lease length (default 0.3 s)")
    s.add_argument("--seed", default="0", help="seed of the crash schedule and the provider's answers")
    s.add_argument("--simulate", action="store_true", help="every process in this one on simulated time: the same "
                   "run for the same seed, --seconds of simulated time (harness/stress/simulation.py; crashes only)")
    s.add_argument("--defect", action="append", metavar="NAME", help="switch a registry defect on (repeatable)")
    s.add_argument("--out", default="traces/found", help="where the run's files and violation traces go")
    s.add_argument("--executions", type=int, help="stop once this many executions ran")
    s.add_argument("--crash-every", type=float, default=2.0, metavar="SECONDS", help="mean time between crashes")
    s.add_argument("--crash-every-commits", type=int, metavar="C", help="crash every ~C commits instead")
    s.add_argument("--keep", action="store_true", help="keep the run's database and logs when it passes")
    s.add_argument("--steps", type=int, default=1, help="Steps per execution, one assistant each (default 1)")
    s.add_argument("--until-violation", action="store_true", help="check the history while it grows and stop at "
                   "its first violation (or a cap); the verdict names the seed, executions and crashes needed")
    s.add_argument("--max-executions", type=int, metavar="N", help="with --until-violation: stop after N executions")
    s.add_argument("--max-crashes", type=int, metavar="K", help="with --until-violation: stop after K crashes")
    s.add_argument("--input-rate", type=float, default=0.2, metavar="P", help="share of a node's loop turns its "
                   "callers admit a held prompt, retry one exactly or resume a Session (default 0.2)")
    s.add_argument("--steer-rate", type=float, default=0.5, metavar="P",
                   help="share of acquisitions followed by a steer (default 0.5)")
    s.add_argument("--wake-rate", type=float, default=0.2, metavar="P",
                   help="share of a node's loop turns its waker moves (default 0.2)")
    s.add_argument("--wake-batch", type=int, default=2, help="rows one wake scan reserves at most (default 2)")
    s.add_argument("--fresh-share", type=int, default=1, help="slots of a wake batch fresh rows take first (default 1)")
    f = s.add_argument_group("faults (harness/stress/faults.py; each off by default, each seeded)")
    f.add_argument("--pause-every", type=float, metavar="S", help="SIGSTOP a node every ~S seconds")
    f.add_argument("--pause-for", type=float, metavar="S", help="a pause's length (default two leases; > a lease)")
    f.add_argument("--pause-before-dispatch", type=float, default=0.0, metavar="P",
                   help="share of provider calls a node is paused before, after its renewal (default 0)")
    f.add_argument("--skew", type=float, default=0.0, metavar="MS", help="the nodes' clocks disagree by up to MS")
    f.add_argument("--skew-bound", type=float, default=0.0, metavar="MS",
                   help="the disagreement promised (recovery's Grace covers it); beyond it, breaches of the clocks assumption")
    f.add_argument("--drop-connections-every", type=float, metavar="S",
                   help="PostgreSQL: pg_terminate_backend a node's connections every ~S seconds")
    f.add_argument("--busy-storm", action="store_true", help="sqlite: the parent holds the write lock in bursts; "
                   "the nodes' busy timeout is 50 ms (SQLITE_BUSY)")
    f.add_argument("--liveness-bound", type=float, default=50.0, metavar="K",
                   help="leases within which, after the last fault, a Session with pending input is served (50)")
    s.set_defaults(func=cmd_stress)
