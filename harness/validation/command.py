"""`claimcheck validate HISTORY`: trace validation of a recorded history against the twin.

HISTORY is a history file (JSON lines, docs/history.md) or the bundled implementation's history
database (a `claimcheck stress --keep` run's `stress.db`, or a database URL), which the server's binding
converts first (`read_database`, given by harness.cli: binding/history.py; `--write-lines FILE` keeps the
converted lines). The configuration is
`--config NAME|FILE`, else the history's header's, else (a database) the run's own. Exit 0: the twin
explains every line; 1: it does not (the report names the first line it cannot explain and why); 2: bad
input (one line on stderr naming the file and line; raised as an InputError for harness.cli to report).
harness/cli/recorded.py declares the arguments (`add_validate`) and calls `run` with the binding's `read_database`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from harness.stress import options as V
from harness.traces import trace as T
from harness.traces.inputfile import InputError
from harness.validation import history as H
from harness.validation.judge import Validation, validate
from harness.validation import search as S

OK, NOT_VALID = 0, 1
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_database(text: str) -> bool:
    if "://" in text:
        return True
    try:
        with open(text, "rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def load(history: str, config: str | None, read_database=None, mapping: str | None = None):
    """(twin configuration, header, numbered commit lines, notes) of HISTORY; InputError on bad input.
    `read_database(history, cfg)`: a history database read as lines (binding.history.read_database: its
    `header`, `commits`, `cfg` and `skipped`), HistoryError when it is none."""
    from harness.traces.configfile import resolve
    chosen = resolve(config).cfg if config is not None else None
    notes = []
    if is_database(history):
        if read_database is None:
            raise H.HistoryError(f"{history}: a database, and no server's binding to read it with")
        conv = read_database(history, chosen)
        notes += [f"left out {n} row(s): {why}" for why, n in conv.skipped.items()]
        header, commits = conv.header, [(k, c) for k, c in enumerate(conv.commits, start=2)]
        cfg = conv.cfg
    else:
        from harness.validation.mapping import load as load_mapping
        header, commits = H.read(history, load_mapping(mapping) if mapping else None)
        if chosen is not None:
            cfg = chosen
        elif header is not None and header.config is not None:
            cfg = T.trace_to_config(header.config, prefix=f"{history}: line 1: config.")
        else:
            raise InputError(f"{history}: no configuration: give --config NAME|FILE (or a header line with one)")
    return cfg, header, commits, notes


def run(args, read_database=None) -> int:
    from harness.progress import Reporter
    cfg, header, commits, notes = load(args.history, args.config, read_database, getattr(args, "mapping", None))
    lines = H.typed(cfg, commits, args.history)
    if args.write_lines:
        out = [H.dumps(header)] if header is not None else []
        Path(args.write_lines).write_text("".join(x + "\n" for x in out + [H.dumps(c) for _, c in commits]))
    print(f"claimcheck validate: {args.history}: {len(lines)} lines, configuration "
          f"{args.config or ('header' if header is not None and header.config is not None else 'of the run')}")
    for n in notes:
        print(f"  note: {n}")
    limits = S.Limits(max_silent=args.max_silent, max_states=args.max_states, skew_bound=args.skew_bound,
                      max_frontier=args.max_frontier)
    with Reporter() as progress, progress.task("validate", unit="lines", key="done", total=len(lines)) as task:
        res = validate(cfg, lines, limits, progress=task)
    print("\n".join(S.render(res, args.history)))
    return OK if res.ok else NOT_VALID


@dataclass
class Verdict:
    """validate's verdict on a stress run's own history: `state` VALID, NOT_VALID or NOT_VALIDATED (a search
    bound hit, a per-Session history no serial order explains: neither shown valid nor invalid, and
    never OK); `report` its lines; `seq` the first unexplained line's commit (NOT VALID), which the stress
    run rebuilds as a replayable trace (harness/stress/counterexample.py); `reason` why NOT VALIDATED."""
    state: str
    report: list[str]
    seq: int | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.state == V.VALID


def check_database(url: str, read_database, limits: S.Limits = S.Limits()) -> Verdict:
    """validate's verdict on a stress run's own history database (`claimcheck stress` validates what it
    recorded with this search). A history the converter cannot read is not valid, and says why, except a
    per-Session history (PostgreSQL's concurrent writers) that no serial order explains, NOT VALIDATED;
    a search that hit a bound (a frontier blow-up on many nodes) is NOT VALIDATED too."""
    try:
        conv = read_database(url)
        lines = H.typed(conv.cfg, list(enumerate(conv.commits, start=2)), url)
    except InputError as exc:
        if type(exc).__name__ == "PerSessionHistory":
            return Verdict(V.NOT_VALIDATED, [f"claimcheck validate: the run's history: NOT VALIDATED: {exc}"],
                           reason="a per-Session history no serial order explains")
        return Verdict(V.NOT_VALID, [f"claimcheck validate: the run's history: NOT VALID: {exc}"])
    res = validate(conv.cfg, lines, limits)
    report = S.render(res, "the run's history")
    if res.ok:
        return Verdict(V.VALID, report)
    if res.failure.bounded:  # a bound cut the search: neither valid nor shown invalid
        return Verdict(V.NOT_VALIDATED, [report[0].replace("NOT VALID", "NOT VALIDATED (a search bound was hit)")]
                       + report[1:], reason="a search bound was hit")
    return Verdict(V.NOT_VALID, report, seq=res.failure.line.commit.seq)


LOOKAHEAD = 256  # lines a growing history's last judged line stays behind its newest (judge.py: the readings ahead;
# 89 were needed once in a 2-node run: a commit's reading 1 tick older than one 89 lines before it)


class Growing:
    """validate's search on a stress run's history while it grows (`claimcheck stress --until-violation`):
    `poll()` converts the history recorded so far and judges the lines not yet judged but the last
    `lookahead` (harness/validation/judge.py). A line it cannot explain is a suspicion, judged from the
    readings recorded by then (or under a search bound): once `2 * lookahead` more lines are in, the
    search runs again from the start up to it, the lowest readings from every line recorded then; the line
    is reported (its commit and why) only if that fails too and under no bound, else that search goes on.
    A failure under a bound stops nothing (NOT VALIDATED is decided after the run). The twin configuration grows with the run (its execution and
    prompt bounds): the search takes the wider one, which keeps every state it has."""

    def __init__(self, url: str, read_database, limits: S.Limits = S.Limits(), lookahead: int = LOOKAHEAD):
        self.url, self.read_database, self.limits, self.lookahead = url, read_database, limits, lookahead
        self.validation = None
        self.next_at = 0.0  # monotonic time before which a poll returns at once (pacing, not a verdict)

    def poll(self) -> tuple[int, str] | None:
        """Each poll converts the whole history so far, so polls are paced: the next waits for four times
        this one's cost (the run's own loop, admissions and crashes, keeps at least 4/5 of its time)."""
        if time.monotonic() < self.next_at:
            return None
        t0 = time.monotonic()
        try:
            return self._poll()
        finally:
            self.next_at = time.monotonic() + 4 * (time.monotonic() - t0)

    def _poll(self) -> tuple[int, str] | None:
        conv = self.read_database(self.url)
        lines = H.typed(conv.cfg, list(enumerate(conv.commits, start=2)), self.url)
        v = self.validation
        if v is None:
            v = self.validation = self._fresh(conv.cfg)
        elif v.cfg != conv.cfg:
            v.widen(conv.cfg)
        f = v.take(lines, max(0, len(lines) - self.lookahead)).failure
        if f is None or v.confirmed or len(lines) < f.prefix + 1 + 2 * self.lookahead:
            return None
        again = self._fresh(conv.cfg)
        g = again.take(lines, f.prefix + 1).failure
        if g is None:
            self.validation = again  # explained, from the readings recorded since: go on from there
            return None
        v.confirmed = True  # no more lines are taken; under a bound, it stops nothing (NOT VALIDATED after the run)
        if g.bounded or g.line.commit.seq is None:
            return None
        return g.line.commit.seq, f"validate: {S.describe(g.line)}: " + (g.reasons[0] if g.reasons else "unexplained")

    def _fresh(self, cfg):
        v = Validation(cfg, self.limits, clocked=True, crashes_recorded=True, wakes_recorded=True)
        v.confirmed = False  # its failure was judged again with the readings recorded since
        return v
