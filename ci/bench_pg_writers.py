"""Commits per second of `claimcheck stress` on PostgreSQL: per-Session writers against the global lock.

Not a test: run `python ci/bench_pg_writers.py [--nodes 8] [--seconds 30] [--rounds 1] [--sessions 8]`.
It starts a throwaway PostgreSQL server (binding/pgserver.py, Debian's binaries, loopback
only), then runs the same stress run (same nodes, Sessions, seed, crash schedule, history recording and
check) once per mode and round on a fresh database each, alternating the modes so load on the machine
falls on both: `global` (every write transaction takes one advisory lock first: the former
single-writer store, kept only for this comparison) and `session` (impl/db.py's default: one lock per
Session, compare-and-swap across Sessions). A run's commits/s is the commits the history check walked
divided by the run's length; the ratio is session over global, of the rounds' totals. Each run must also
hold: 0 violations and 0 lost inputs (else the script says so and exits 1).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from binding import pgserver  # noqa: E402
from binding.stress import BUNDLED  # noqa: E402
from harness.stress.supervisor import StressOptions, run  # noqa: E402

MODES = ("global", "session")


def one(server, mode: str, args, out: str) -> tuple[int, float, int, int, int]:
    """(commits walked, seconds, violations, lost inputs, executions begun) of one stress run in `mode`."""
    url = server.fresh_database(prefix=f"bench_{mode}")
    with contextlib.redirect_stdout(io.StringIO()):  # the run's own report: only its figures are printed here
        _code, res = run(StressOptions(nodes=args.nodes, seconds=args.seconds, sessions=args.sessions, db=url,
                                       seed=args.seed, out=out, progress=False, pg_lock=mode), BUNDLED)
    rep = res.checker.report
    return rep.commits, res.elapsed, res.violations, res.lost, res.executions


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=8)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--seed", default="0")
    args = p.parse_args(argv)
    if args.nodes < 1 or args.seconds <= 0 or args.rounds < 1 or args.sessions < 1:
        print("bench_pg_writers: --nodes, --seconds, --rounds and --sessions must be positive", file=sys.stderr)
        return 2
    totals = {m: [0, 0.0] for m in MODES}
    bad = []
    with tempfile.TemporaryDirectory(prefix="bench-pg-") as tmp:
        os.chmod(tmp, 0o755)  # PostgreSQL may run as the OS user `postgres`, which must reach its directory
        try:
            server = pgserver.start(os.path.join(tmp, "pg"))
        except pgserver.PgUnavailable as exc:
            print(f"bench_pg_writers: {exc}", file=sys.stderr)
            return 2
        try:
            for r in range(args.rounds):
                for mode in (MODES if r % 2 == 0 else MODES[::-1]):
                    print(f"bench_pg_writers: round {r + 1}/{args.rounds}, {mode}, {args.nodes} nodes, "
                          f"{args.seconds:g} s ...", file=sys.stderr)
                    commits, seconds, violations, lost, began = one(server, mode, args, os.path.join(tmp, "out"))
                    totals[mode][0] += commits
                    totals[mode][1] += seconds
                    print(f"{mode:<8} round {r + 1}: {commits / seconds:8.1f} commits/s  ({commits} commits in "
                          f"{seconds:.1f} s, {began} executions; violations {violations}, lost inputs {lost})")
                    if violations or lost:
                        bad.append(f"{mode} round {r + 1}: {violations} violations, {lost} lost inputs")
        finally:
            server.stop()
    rate = {m: c / s for m, (c, s) in totals.items()}
    print(f"global lock   {rate['global']:8.1f} commits/s  ({args.nodes} nodes, {args.sessions} Sessions)")
    print(f"per Session   {rate['session']:8.1f} commits/s  ({args.nodes} nodes, {args.sessions} Sessions)")
    print(f"ratio         {rate['session'] / rate['global']:8.2f}x  (per Session / global lock)")
    for line in bad:
        print(f"NOT OK: {line}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
