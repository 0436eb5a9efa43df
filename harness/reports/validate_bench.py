"""`claimcheck bench --validate`: validation's speed on real stress histories of growing length, side by
side with the time the history took to record (issue 32 item 6).

It records one `claimcheck stress` run of the server (two node processes, the stress defaults: callers,
wakes, SIGKILLs), long enough for the largest size's commit lines, converts its history with the server's
binding and validates its first `size` lines for each size. The prefix of a history is a history, so each
size is measured on one real recording (the time a prefix took to record is the run's, in the share of its
clock readings the prefix spans), and the figures are lines per second, the states the search visited per
line and the largest frontier: a search whose cost grows with the history (a frontier blow-up, a state
that grows with the log) shows as lines/s falling with the size. GOAL_RATE and GOAL_SPREAD are the issue's
goals, judged on lines per second of wall-clock time; the report says met or missed, never more. Lines per
CPU second are printed beside them: on a shared machine the two differ by the load.

A rejected history is never lost: the recording (its `stress.db`) and its converted lines (`history.jsonl`,
a header with the run's configuration first, what `claimcheck validate` reads) are kept, in `--keep DIR`
when given, else in a new directory under the system's temporary one, and the report prints the path (a
valid run's recording is dropped unless `--keep`). `--seed` is the stress run's seed (its callers, faults and
crashes; the processes' timing is the machine's, so a seed does not repeat a history).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
import time
from pathlib import Path

from harness.stress.supervisor import StressOptions, run as run_stress
from harness.validation import history as H
from harness.validation.judge import validate

GOAL_RATE = 5_000  # lines/s on 2 cores
GOAL_SPREAD = 1.5  # lines/s at the smallest size over lines/s at the largest, at most
LINES_PER_EXECUTION = 6  # a stress run commits ~7 lines per execution: the run is asked for a few more


def record(server, size: int, sessions: int, out: str, seed: str = "1") -> tuple[float, str]:
    """(seconds, database) of a stress run of `server` long enough for `size` lines."""
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the run's own summary: not the bench's
        code, res = run_stress(StressOptions(nodes=2, sessions=sessions, seconds=max(60.0, size / 20), seed=seed,
                                             executions=max(2, size // LINES_PER_EXECUTION), keep=True,
                                             progress=False, out=out), server)
    if res is None:
        raise RuntimeError(f"the stress run for {size} lines did not run (exit {code})")
    return time.perf_counter() - t0, str(res.run_dir / "stress.db")


def _span(lines) -> int:
    """The clock readings' span of `lines` (ticks from the first reading to the last)."""
    readings = [x.now for x in lines if x.now is not None]
    return max(readings) - min(readings) if readings else 0


def bench_validate(sizes, server, read_database, *, sessions: int = 16, seed: str = "1", keep: str | None = None,
                   out=print) -> int:
    """Record one history, then validate its prefix of each size; print one row each and the goals. Exit 0
    when every prefix validated (the goals are reported, not enforced: the machine's load decides them). A
    rejected history is kept (in `keep`, else a new temporary directory) and its path printed."""
    rows = []
    where = Path(keep) if keep is not None else Path(tempfile.mkdtemp(prefix="claimcheck-bench-"))
    where.mkdir(parents=True, exist_ok=True)
    try:
        run_s, db = record(server, max(sizes), sessions, str(where), seed)
        # the prefix the sizes need (a longer run may admit more prompts than a twin configuration bounds)
        conv = read_database(db, limit=max(sizes) + max(sizes) // 50 + 100)
        kept = where / "history.jsonl"
        kept.write_text(conv.text())
        every = H.typed(conv.cfg, list(enumerate(conv.commits, start=2)), db)
        for size in sizes:
            lines = every[:size]
            rec_s = run_s * _span(lines) / max(1, _span(every))
            cpu0 = time.process_time()
            res = validate(conv.cfg, lines)
            cpu = time.process_time() - cpu0
            rate = len(lines) / res.seconds if res.seconds > 0 else 0.0
            verdict = "valid" if res.ok else f"NOT VALID at line {res.failure.line.number}"
            if res.bounded:
                verdict += " (a search bound was hit)"
            rows.append((size, len(lines), rec_s, res.seconds, rate, res.states / max(1, res.matched),
                         res.max_frontier, verdict, res.ok, len(lines) / cpu if cpu > 0 else 0.0))
    finally:
        rejected = not rows or not all(r[8] for r in rows)
        if keep is None and not rejected:
            shutil.rmtree(where, ignore_errors=True)
    out(f"claimcheck bench --validate: stress histories of 2 node processes, {sessions} Sessions (sqlite), "
        f"seed {seed}")
    out(f"  {'lines':>8}  {'recorded in':>11}  {'validated in':>12}  {'lines/s':>8}  {'per CPU s':>9}  "
        f"{'states/line':>11}  {'frontier':>8}  verdict")
    for _size, n, rec_s, val_s, rate, per, front, verdict, _ok, cpu_rate in rows:
        out(f"  {n:>8,}  {rec_s:>10.1f}s  {val_s:>11.1f}s  {rate:>8,.0f}  {cpu_rate:>9,.0f}  {per:>11.1f}  {front:>8,}  "
            f"{verdict}")
    rates = [r[4] for r in rows if r[4] > 0]
    if rates:
        spread = max(rates) / min(rates)
        out(f"  goal >= {GOAL_RATE:,} lines/s: {'met' if min(rates) >= GOAL_RATE else 'missed'} (slowest "
            f"{min(rates):,.0f}); goal within {GOAL_SPREAD}x from the smallest to the largest: "
            f"{'met' if spread <= GOAL_SPREAD else 'missed'} ({spread:.2f}x)")
    if rejected or keep is not None:
        out(f"  the history {'rejected, ' if rejected else ''}kept: {kept if rows else where} (its recording: {db})")
    return 0 if all(r[8] for r in rows) else 1
