"""Trace validation of a commit history against the twin (`claimcheck validate`), as TLC-based trace
validation does it for CCF and etcd: the log records only commits, so between two logged commits the
twin may take steps the log does not show, and the check is a search for a behaviour of the twin that
explains every line.

The search keeps the *frontier*: every twin state consistent with the lines matched so far (deduplicated;
the history variables no guard reads are dropped: `effects`, and of `faults` every kind but `corrupt`, which
`CorruptRecoveryRow` reads: at most once a behaviour). For the next line it first closes the frontier
under the *silent* steps (silent.py): every twin step that changes no durable variable (claim, nextExec,
log, recovery, inputs, cancelled, wakes), that is the actors' memory-only steps (Dispatch, the listener
returns, RunnerStop/Exit, Supervise, a recovery scan, a crash, a fenced step that failed), and the clock's
Tick. Real time (docs/history.md, "Real time"): each line is judged at its own process's clock reading.
The frontier is held at the lowest reading of the lines still to come (`floors`), so the twin's clock only
moves forwards; a line read later than it is seen from its reading (the ticks taken, with the silent steps
they allow), and its successor held back at the frontier's clock (`held_back`). A line without a reading
(a step that reads no clock) takes no tick; in a log with no reading at all any number may pass between
any two lines. A log that records crashes (a Crash line) shows every crash: none is taken silently. Then it
keeps the states where the recorded memory matches (when the line has memory) and applies the line's action
with its parameters: its successor must write exactly the line's durable rows. A line that wrote
nothing may also be a refused step (the twin does not enable it; the state stays). The successors that
match are the next frontier. A line no state explains is the failure: the longest matched prefix is
the lines before it, and the report says, for the line's action at the states it could have run in,
which guard conjunct failed (spec.guards.why_not) or which written row differs from the twin's.

Cost (docs/history.md, "Speed"): a step's log shares its prefix and keeps its hash (search_state.py), a line's view from its
process's reading is computed once for the states that differ only in other actors' memory (`view_closure`),
and each state's silent steps are taken once per line; none of them changes a state searched. A lazy search
(judge.py) first takes only the committing process's actors' silent steps (`only`), the ticks first where the
clock can move (`ticks_first`): a subset of the states, then the whole search when it explains nothing.

Bounds (`Limits`): silent steps between two lines (`max_silent`, Ticks not counted) and states one
closure may visit (`max_states`); a search that hits one says so (a failure under a bound is reported as
such, not as a violation proven).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from spec import guards as G
from spec import model as M
from spec.actions import apply_direct
from spec.state import _ticking

from harness import registry as R
from harness.validation.history import Line
from harness.validation.search_state import DURABLE, Indexed
from harness.validation.real_time import clock_holders, committers, view_tick
from harness.validation.silent import silent_successors


@dataclass(frozen=True)
class Limits:
    max_silent: int = 24  # silent steps (Ticks not counted) between two lines
    max_states: int = 200_000  # states one closure may visit
    tick_cap: int | None = None  # Ticks between two lines beyond which all leases have run down (None: derived)
    skew_bound: int = 0  # SynchronizedClocks: ticks a process's clock reading may lag its own earlier one
    max_frontier: int = 5_000  # states the frontier may hold after a line; beyond it the search stops, bounded


@dataclass
class Failure:
    line: Line
    prefix: int  # lines matched before it
    reasons: list[str]  # one line each: why the line's action does not match at the states it could run in
    candidates: list[str]  # twin actions that write something at those states
    closure: int  # states the line could have run in
    bounded: bool  # a bound cut the search: the failure may be the bound's
    closest: list[str] | None = None  # the candidate state with the fewest differences, and what differs there


@dataclass
class Result:
    lines: int
    matched: int = 0
    last: Line | None = None
    failure: Failure | None = None
    states: int = 0  # states visited in all closures
    max_frontier: int = 0
    seconds: float = 0.0
    bounded: bool = False

    @property
    def ok(self) -> bool:
        return self.failure is None


def durable(st: M.State) -> tuple:
    return tuple(getattr(st, v) for v in DURABLE)


# the fault kinds a guard reads (spec/guards.py: CorruptRecoveryRow, ForgeContinuation, each once a behaviour)
READ_FAULTS = frozenset({"corrupt", "forge"})


def _strip(st: M.State) -> M.State:
    """`st` without what no guard reads: states that differ only there have the same successors, and a
    frontier keeping both kept every line's search twice (a pause taken or not: a 2-node stress history's
    frontier differed in `faults` most often)."""
    if st.effects or not st.faults <= READ_FAULTS:
        return st._replace(effects=frozenset(), faults=st.faults & READ_FAULTS)
    return st


MAX_VIEWS = 2_000  # view closures kept (then all are dropped: a memory bound, not a search bound; a closure is
# mostly found again within its line: 500 kept and 20,000 validated 10^5 lines alike, in 1.0 and 1.8 GB)


def _only(st: M.State, nodes, recs) -> M.State:
    """`st` with the memory of every actor but these nodes and recovery workers idle."""
    return st._replace(run=tuple(r if k in nodes else M.RUNNER_IDLE for k, r in enumerate(st.run)),
                       fin=tuple(f if k in nodes else M.FIN_IDLE for k, f in enumerate(st.fin)),
                       rec=tuple(w if k in recs else M.REC_IDLE for k, w in enumerate(st.rec)))


def _back(x: M.State, w: M.State, nodes, recs) -> M.State:
    """`x` (a state of `_only(w, ...)`'s closure) with the other actors' memory taken back from `w`."""
    return x._replace(run=tuple(r if k in nodes else a for k, (r, a) in enumerate(zip(x.run, w.run))),
                      fin=tuple(f if k in nodes else a for k, (f, a) in enumerate(zip(x.fin, w.fin))),
                      rec=tuple(v if k in recs else a for k, (v, a) in enumerate(zip(x.rec, w.rec))))


# ---------------------------------------------------------------- the silent closure

class Search:
    def __init__(self, cfg: M.Config, limits: Limits = Limits()):
        self.cfg = cfg
        self.limits = limits
        self.tick_cap = limits.tick_cap if limits.tick_cap is not None else 2 * cfg.lease + cfg.eff_grace + 2
        self.states = 0
        self.bounded = False
        self.silent_crashes = True  # a log that records crashes (a Crash line) shows every crash
        self.silent_wakes = True  # a log that records a racing waker's read (a WakeRead line) shows every read and reservation
        self.tick = M.Tick  # a log with readings: held_tick (real_time.py)
        self.scans_placed: dict = {}  # worker -> the Session its recorded scan reads (None: none), real_time.py
        # workers whose nearest recorded memory ahead is not `reconverting`: in the lazy rounds (`restricted`) they
        # take no silent RecoveryConvertFails (judge.py; a not-committed conversion leaves its worker
        # reconverting until a recorded RecoveryReconvert or crash: 4-node stress histories, 61 -> 37 states a line)
        self.fails_blocked: frozenset = frozenset()
        self.indexed = Indexed()  # the logs and inputs the line's steps make, each once (search_state.py)
        self.views: dict = {}  # view_closure's closures, by the state without the other actors' memory
        self.moves: dict = {}  # the silent steps from each state of this line's search (cleared between lines)
        self.only = None  # the actors whose silent steps `closure` takes without a view (None: all; judge.py, lazy)
        self.ticks_first = False  # the ticks a closure takes before its silent steps, where it can (judge.py, lazy)
        self.holders = False  # with `only`: also the steps of the actors that hold the clock (judge.py, lazy)

    def _only(self, st: M.State):
        """The actors whose silent steps a closure takes from `st` (None: all): `only`, and with `holders` the
        actors holding the held clock's next tick there (real_time.clock_holders)."""
        if self.holders and self.only is not None:
            return self.only | clock_holders(self.cfg, st)
        return self.only

    def restricted(self) -> bool:
        """A lazy round (judge.py): a subset of the states, the whole search after it if it explains nothing."""
        return self.only is not None or self.ticks_first

    def silent_moves(self, st: M.State, ticks: int | None, view=None):
        """(next state, ticks still to take) for each silent step from `st`. `view` (the committing process's
        actor names and node indexes): only its own steps, and the clock held back only by its own actors
        (a line seen from its process's later reading: the others' memory is not kept, `held_back`)."""
        cfg = self.cfg
        if self.ticks_first and ticks is not None and ticks > 0:
            # lazy (judge.py): the ticks first, a step before the last only where the clock cannot move; the
            # ticks up to there taken at once (the states between, where only the clock moves, not kept)
            cur = st
            while ticks > 0:
                nxt = (self.tick(cfg, cur) if view is None else view_tick(cfg, cur, view[1]))
                if nxt is None or nxt == cur:
                    break
                cur, ticks = nxt, ticks - 1
            if cur is not st:
                yield _strip(cur), ticks
                return
        key = (st, None if view is None else view[1])
        steps = self.moves.get(key)
        if steps is None:
            steps = self.moves[key] = [_strip(nxt if nxt.log is st.log else nxt._replace(log=st.log))
                                       for _name, params, nxt in silent_successors(cfg, st, self.silent_crashes,
                                                                                   self._only(st) if view is None else view[0],
                                                                                   self.silent_wakes)
                                       if not (_name == R.RECOVERY_SCAN
                                               and self.scans_placed.get(params[0], params[1]) != params[1])
                                       and not (_name == R.RECOVERY_CONVERT_FAILS and self.restricted()
                                                and params[0] in self.fails_blocked)]
        for nxt in steps:  # a silent step leaves the log as it was: the same object (its hash kept)
            yield nxt, ticks
        if ticks is None or ticks > 0:
            nxt = (self.tick(cfg, st) if view is None else view_tick(cfg, st, view[1]))
            if nxt is not None and nxt != st:
                yield _strip(nxt), None if ticks is None else ticks - 1
            elif ticks is not None and not any(_ticking(cfg, c) for c in st.claim):
                yield st, 0  # no lease runs down: the clock moves and the twin's state does not

    def closure(self, frontier, ticks: int | None, view=None) -> set[M.State]:
        """The states reachable from `frontier` by silent steps that take exactly `ticks` Ticks (any
        number, None); `view`: see silent_moves."""
        if ticks is not None and ticks > self.tick_cap:  # a lease held back from a later reading runs longer
            ticks = min(ticks, self.tick_cap + max((max(0, c.ttl - self.cfg.lease) for st in frontier  # (held_back)
                                                    for c in st.claim), default=0))
        start = {(st, ticks) for st in frontier}
        seen = set(start)
        out = {st for st, r in start if r is None or r == 0}
        level = list(start)
        depth = self.limits.max_silent + (ticks or 0)
        for _ in range(depth):  # level k: the states k silent steps away
            nxt_level = []
            for st, r in level:
                for pair in self.silent_moves(st, r, view):
                    if pair not in seen:
                        seen.add(pair)
                        nxt_level.append(pair)
                        if pair[1] is None or pair[1] == 0:
                            out.add(pair[0])
                if len(seen) > self.limits.max_states:
                    self.bounded = True
                    break
            level = nxt_level
            if not level or self.bounded:
                break
        else:
            if level:
                self.bounded = True  # the last level's moves are unexplored
        self.states += len(seen)
        return out

    def view_closure(self, w: M.State, ticks: int, view) -> list[M.State]:
        """closure({w}, ticks, view): the states of `w` seen from the committing process's later reading. Those
        moves (its own actors' silent steps, `view_tick`) read and write the durable variables, the clock and
        its own actors' memory only, never another actor's (tests/validation/test_silent.py checks it on the
        registered configurations): so the closure is computed once for `w` with the other actors' memory
        set idle, and each of its states takes that memory back from `w`. The states of one line's closure
        differ mostly in other actors' memory (4 node processes: ~3 in 4 of these closures are found kept)."""
        nodes = view[1]
        recs = frozenset(k for k, r in enumerate(self.cfg.recoverers) if r in view[0])
        key = (_only(w, nodes, recs), ticks, frozenset(view[0]), self.ticks_first,
               tuple(sorted((r, s) for r, s in self.scans_placed.items() if r in view[0])),
               self.restricted() and tuple(sorted(w for w in self.fails_blocked if w in view[0])))
        kept = self.views.get(key)
        if kept is None:
            if len(self.views) > MAX_VIEWS:
                self.views.clear()
            before, self.bounded = self.bounded, False
            kept = self.views[key] = (list(self.closure({key[0]}, ticks, view)), self.bounded)
            self.bounded = before
        self.bounded = self.bounded or kept[1]
        return [_back(x, w, nodes, recs) for x in kept[0]]

    # ---------------------------------------------------------------- one line

    def window_read(self, st: M.State, line: Line) -> M.State | None:
        """A lost race on an earlier read of the worker's window (`line.window_read`, history.window_reads):
        the code's production pass reads the window once and tries its rows in turn, the twin's worker
        remembers one row (spec/README.md decision 6), so the row this compare-and-swap compares on may have
        been read before the worker's own work on the rows ahead of it, when no twin scan can read it now.
        Explained from a state where the worker is idle, its process's other recorded memory matches, and the
        twin's compare-and-swap on the recorded row loses (`TakeoverMatches` false: the claim is no longer that
        identity, or not expired for Grace): the lost race changes nothing, the worker idle again (`st`). A row
        the compare-and-swap would win still fails (the twin's takeover writes the claim; the line wrote
        nothing). docs/history.md, "The production pass's window", says what it gives up."""
        r, s, e, seen, others = line.window_read
        if st.rec[r].pc != "idle":
            return None
        for kind, who, f, v in others:
            if st[kind][who][f] != v:
                return None
        if self.cfg.hooks.takeover_matches(self.cfg, st, st.claim[s], M.Rec("scanned", self.cfg.sessions[s], e, seen)):
            return None  # the twin's compare-and-swap on that row wins: a lost race there is no twin step
        return st

    def step(self, st: M.State, line: Line) -> M.State | None:
        """The twin's state after `line` from `st`, or None when it does not match there."""
        for kind, who, f, v in line.checks:  # the recorded memory (memory_differences, compared by position)
            if st[kind][who][f] != v:
                return None if line.window_read is None else self.window_read(st, line)
        for k, plan in line.plans:  # a racing waker's recorded plan
            if st.waker[k] != plan:
                return None
        nxt = apply_direct(self.cfg, st, line.action, line.params)
        if nxt is None or nxt == st:
            return st if line.wrote_nothing() else None  # a refused step committed nothing
        if write_differences(self.cfg, st, nxt, line, first=True):
            return None
        return _strip(nxt._replace(log=self.indexed.log(st.log, nxt.log),
                                   inputs=self.indexed.inputs(st.inputs, nxt.inputs),
                                   recovery=self.indexed.recovery(st.recovery, nxt.recovery)))


# ---------------------------------------------------------------- comparing a line with the twin

def _fields(kind: str):
    return {"run": M.Runner._fields, "fin": M.Fin._fields, "rec": M.Rec._fields}[kind]


def memory_differences(cfg: M.Config, st: M.State, memory, first: bool = False) -> list[str]:
    out = []
    for kind, names in (("run", cfg.nodes), ("fin", cfg.nodes), ("rec", cfg.recoverers)):
        for who, rec in getattr(memory, kind).items():
            twin = getattr(st, kind)[names.index(who)]
            for f in _fields(kind):
                v = getattr(rec, f, None)
                if v is not None and v != getattr(twin, f):
                    out.append(f"memory.{kind}.{who}.{f}: recorded {v!r}, the twin has {getattr(twin, f)!r}")
                    if first:
                        return out
    for k, plan in memory.wake.items():
        recorded = frozenset(M.Plan(p.row, p.tries, p.slot) for p in plan)
        if recorded != st.waker[int(k) - 1]:
            out.append(f"memory.wake.{k}: recorded {sorted(recorded)}, the twin has {sorted(st.waker[int(k) - 1])}")
            if first:
                return out
    return out


def _show(v) -> str:
    if isinstance(v, M.Claim):
        return "no claim" if v == M.NO_CLAIM else "{" + ", ".join(f"{k} {x!r}" for k, x in v._asdict().items()) + "}"
    return repr(tuple(v)) if isinstance(v, (M.Event, M.RecRow, M.Input, M.Wake)) else repr(v)


def _rows(name: str, twin, line) -> list[str]:
    twin, line = sorted(twin), sorted(line)
    if twin == line:
        return []
    return [f"writes.{name}: the twin writes [{', '.join(map(_show, twin))}], the line [{', '.join(map(_show, line))}]"]


def _new(after: frozenset, before: frozenset) -> frozenset:
    """The rows a step added (none when it left the table as it was: no pass over a table that grows)."""
    return frozenset() if after is before else after - before


def write_differences(cfg: M.Config, st: M.State, nxt: M.State, line: Line, first: bool = False) -> list[str]:
    """Each recorded row (and field) that differs from what the twin's step from `st` to `nxt` writes."""
    out = []
    for k, s in enumerate(cfg.sessions):
        before, after = st.claim[k], nxt.claim[k]
        if s in line.claims:
            got = line.claims[s]
            if got != after:
                if M.NO_CLAIM in (got, after):
                    out.append(f"writes.claim.{s}: the twin writes {_show(after)}, the line {_show(got)}")
                else:
                    out += [f"writes.claim.{s}.{f}: the twin writes {getattr(after, f)!r}, the line {getattr(got, f)!r}"
                            for f in M.Claim._fields if getattr(after, f) != getattr(got, f)]
        elif before != after:
            out.append(f"writes.claim.{s}: the twin writes {_show(after)}, the line does not write this claim")
        if first and out:
            return out
    want = line.commit.writes.nextExec
    if want is not None and want != nxt.nextExec:
        out.append(f"writes.nextExec: the twin has {nxt.nextExec}, the line {want}")
    appended = nxt.log[len(st.log):]
    if appended != line.log:
        for j in range(max(len(appended), len(line.log))):
            a = appended[j] if j < len(appended) else None
            b = line.log[j] if j < len(line.log) else None
            if a is None or b is None:
                out.append(f"writes.log[{j}]: the twin appends {_show(a) if a else 'nothing'}, the line "
                           f"{_show(b) if b else 'nothing'}")
            elif a != b:
                out += [f"writes.log[{j}].{f}: the twin writes {getattr(a, f)!r}, the line {getattr(b, f)!r}"
                        for f in M.Event._fields if getattr(a, f) != getattr(b, f)]
    out += _rows("recovery", _new(nxt.recovery, st.recovery), line.recovery)
    out += _rows("inputs", _new(nxt.inputs, st.inputs), line.inputs)
    out += _rows("cancelled", _new(nxt.cancelled, st.cancelled), line.cancelled)
    wakes = st.wakes if line.wakes is None else line.wakes
    if wakes != nxt.wakes:
        for w, (a, b) in enumerate(zip(nxt.wakes, wakes), start=1):
            if a != b:
                what = "the line" if line.wakes is not None else "the line does not write the wake rows; before"
                out.append(f"writes.wakes[{w}]: the twin writes {_show(a)}, {what} {_show(b)}")
    return out


# ---------------------------------------------------------------- the failure

MAX_REASONS = 12
MAX_EXAMINED = 2_000


def explain(cfg: M.Config, line: Line, prefix: int, closed: set, bounded: bool) -> Failure:
    """Why no state of `closed` explains `line`: the line's action at each state (grouped by reason)."""
    reasons: Counter = Counter()  # at the states where the recorded memory matches (or none is recorded)
    memory_only: Counter = Counter()  # the states where it does not
    candidates: Counter = Counter()
    examined = sorted(closed, key=repr)[:MAX_EXAMINED]
    best = None  # (differences, state, what differs)
    for st in examined:
        here = durable(st)
        for name, params, nxt in M.successors(cfg, st):
            if name != R.TICK and durable(nxt) != here:  # the clock moves leases, it commits nothing
                candidates[G.label(name, params)] += 1
        if line.memory is not None:
            mem = memory_differences(cfg, st, line.memory)
            if mem:
                memory_only["; ".join(mem[:3])] += 1
                best = min(best, (100 + len(mem), st, mem), key=_first) if best else (100 + len(mem), st, mem)
                continue
        nxt = apply_direct(cfg, st, line.action, line.params)
        if nxt is None or nxt == st:
            why = G.why_not(cfg, st, line.action, line.params)
            text = f"not enabled: {why}" if why else ("enabled, but it changes nothing here (a stuttering step), "
                                                      "yet the line writes rows")
            reasons[text] += 1
            got = (50, st, [text])
        else:
            diffs = write_differences(cfg, st, nxt, line)
            reasons["; ".join(diffs[:6]) or "?"] += 1
            got = (len(diffs), st, diffs)
        best = min(best, got, key=_first) if best else got
    shown = [f"{text} (in {n} of {len(examined)} states)" if len(examined) > 1 else text
             for text, n in (reasons.most_common() + memory_only.most_common())[:MAX_REASONS]]
    if not closed:
        shown = ["no twin state is consistent with the lines before it and the clock reading (the silent steps "
                 "between the lines cannot take the Ticks the clock readings say passed)"]
    return Failure(line, prefix, shown, [c for c, _ in candidates.most_common(MAX_REASONS)], len(closed), bounded,
                   None if best is None else closest(cfg, line, best[1], best[2]))


def _first(t):
    return t[0]


def closest(cfg: M.Config, line: Line, st: M.State, diffs: list[str]) -> list[str]:
    """The closest candidate state, as far as the line concerns it: the claims of the Sessions it names or
    writes, the memory of its process's actors, then the fields that differ there."""
    sessions = sorted(set(line.claims) | {v for v in line.params if isinstance(v, str) and v in cfg.sessions}
                      | {i.sess for i in line.params if isinstance(i, M.Input)})
    out = [f"claim {s}: {_show(st.claim[cfg.sessions.index(s)])}" for s in sessions]
    run, fin, rec = committers(cfg, line)
    out += [f"run {cfg.nodes[k]}: {tuple(st.run[k])}" for k in sorted(run)]
    out += [f"fin {cfg.nodes[k]}: {tuple(st.fin[k])}" for k in sorted(fin) if st.fin[k].pc != "idle"]
    out += [f"rec {cfg.recoverers[k]}: {tuple(st.rec[k])}" for k in sorted(rec)]
    return out + [f"differs: {d}" for d in diffs[:6]]


def describe(line: Line) -> str:
    c = line.commit
    params = G.label(c.action, line.params)
    clock = f" at now={c.now}" if c.now is not None else ""
    return f"line {line.number}: {c.actor} {params}{clock}"


def render(res: Result, name: str) -> list[str]:
    """The report lines of a validation (the command prints them)."""
    rate = res.matched / res.seconds if res.seconds > 0 else 0.0
    stats = f"{res.states:,} states searched, frontier at most {res.max_frontier:,}, {res.seconds:.2f} s ({rate:,.0f} lines/s)"
    if res.ok:
        return [f"claimcheck validate: {name}: OK, {res.lines} lines explained by the twin", f"  {stats}"]
    f = res.failure
    out = [f"claimcheck validate: {name}: NOT VALID at line {f.line.number}",
           f"  matched prefix: {f.prefix} of {res.lines} commits"
           + (f", the last {describe(res.last)}" if res.last is not None else " (none)"),
           f"  first unmatched: {describe(f.line)}; the twin could have run it in {f.closure:,} states"]
    out += [f"    - {r}" for r in f.reasons]
    if f.closest:
        out.append("  the closest candidate state (the fewest differences):")
        out += [f"    {x}" for x in f.closest]
    if f.candidates:
        out.append(f"  the twin's writing steps there: {', '.join(f.candidates)}")
    if f.bounded or res.bounded:
        out.append("  note: a search bound was hit (--max-silent, --max-states, --max-frontier): the failure may be "
                   "the bound's")
    out.append(f"  {stats}")
    return out
