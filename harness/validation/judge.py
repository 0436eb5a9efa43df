"""validate's search over a history's lines in order (`validate`: all of them at once, the search.py module
docstring says how), kept between calls (`Validation`), so that a history can also be judged while it grows: `claimcheck stress --until-violation` stops its run at the first line the search
cannot explain, with the one search `claimcheck validate` runs (harness/validation/search.py), not a checker
of its own.

Real time needs the lines ahead of a line: its frontier is held at the lowest reading of the lines still to
come (real_time.floors) and a recovery scan is placed from its process's next reading. A growing history
has not recorded them yet, so `take(lines, upto)` stops short of the last lines (the caller's lookahead) and
judges each line from the readings recorded so far; a line committed much later from an older reading than
them could make a prefix fail that the whole history passes. So the stop is only a stop: the verdict is the
whole history's validation after the run (`validate`, which takes every line at once).
"""

from __future__ import annotations

import gc
import time

from spec import model as M

from harness import registry as R

from harness.validation.history import Line
from harness.validation.real_time import committers, floors, held_back, held_tick, own_reading_scans, worker_readings
from harness.validation.search import Failure, Limits, Result, Search, explain
from harness.validation.search_state import searched


class Validation:
    def __init__(self, cfg: M.Config, limits: Limits = Limits(), progress=None, *, clocked: bool,
                 crashes_recorded: bool, wakes_recorded: bool = False):
        """`clocked`: the log has clock readings; `crashes_recorded`: it records every crash (a Crash line),
        so the search takes none silently; `wakes_recorded`: it records every racing waker's read and
        reservation (a WakeRead line with the waker's plan, `memory.wake`), so the search takes none
        silently (a log of the commits that wrote rows, the TypeScript example's, records a read only when it
        wrote one). All are the whole log's, known
        before its lines (a stress run records readings, crashes and its wakers' steps)."""
        self.cfg, self.limits, self.progress, self.clocked = cfg, limits, progress, clocked
        self.crashes_recorded, self.wakes_recorded = crashes_recorded, wakes_recorded
        self.lazy = True  # other processes' silent steps deferred (`_line`); False once a line needed them all
        self._start(Result(lines=0))

    def _start(self, res: Result) -> None:
        """The search at the history's first line."""
        self.search = Search(self.cfg, self.limits)
        self.search.silent_crashes = not self.crashes_recorded
        self.search.silent_wakes = not self.wakes_recorded
        if self.clocked:
            self.search.tick = held_tick
        self.res = res
        self.frontier = {searched(M.init(self.cfg))}
        self.held = None  # the clock the frontier is held at (None: before the first reading)
        self.last_read: dict[str, int] = {}  # process -> its latest reading
        self.k = 0  # the lines taken so far

    def widen(self, cfg: M.Config) -> None:
        """The same run's configuration with wider bounds (more executions, more prompts: a growing stress
        history's): every state kept stays one of its states; the kept view closures are dropped."""
        self.cfg = self.search.cfg = cfg
        self.search.views.clear()

    def take(self, lines: list[Line], upto: int) -> Result:
        """Judge `lines[self.k:upto]` (`lines`: the history so far, the same list grown between calls); the
        result so far (a failure: no more lines are taken)."""
        t0 = time.perf_counter()
        self.res.lines = len(lines)
        low, ahead = floors(lines), worker_readings(lines)
        if self.k == 0 and upto > 0 and self.lazy and not any(line.memory is not None for line in lines[:upto]):
            self.lazy = False  # a log without memory: the other actors' memory is unchecked, kept in every combination
        while self.k < upto and self.res.failure is None:
            self._line(lines, self.k, low, ahead)
            if self.res.failure is None:
                self.k += 1
            elif self.lazy:  # the frontier kept was narrowed: the verdict is the whole search's, from the start
                self.lazy = False
                self._start(Result(lines=len(lines), seconds=self.res.seconds))
        search = self.search
        self.res.states, self.res.bounded = search.states, search.bounded
        self.res.seconds += time.perf_counter() - t0
        return self.res

    def _line(self, lines: list[Line], k: int, low: list, ahead: list) -> None:
        """One line, first (`lazy`) with the silent steps of its own process's actors alone, taken after the
        clock's ticks where the clock can move (search.py, `ticks_first`), then at any tick, then after the ticks
        with the steps of the actors that hold the clock where it cannot move (`holders`,
        real_time.clock_holders), then every actor's after the ticks, then, if no state explains it so, every
        actor's at any tick.

        Why (docs/history.md, "Speed"): the states of a closure are mostly the other processes' actors' memory
        steps in every combination (4 node processes: ~100 states a line, 8: thousands; over a stalled process's
        34 ticks, 9,072 states kept after one line of an 8-node history), and a process's
        memory steps are mostly taken just before its own next line. A lazy search keeps a subset of the
        states the whole one keeps (every state it reaches is the twin's, by the twin's steps), so a history it
        explains is valid; a line none of them explains makes `take` search again from the start with every
        actor's steps, whose verdict and report are the ones given."""
        search = self.search
        if self.lazy:
            run, fin, rec = committers(self.cfg, lines[k])
            own = frozenset({self.cfg.nodes[j] for j in run | fin} | {self.cfg.recoverers[j] for j in rec})
            bounded = search.bounded
            for search.only, search.ticks_first, search.holders in ((own, True, False), (own, False, False),
                                                                    (own, True, True), (None, True, False)):
                self._line_from(lines, k, low, ahead)
                search.only, search.ticks_first, search.holders = None, False, False
                if self.res.failure is None:
                    return
                self.res.failure, search.bounded = None, bounded
        self._line_from(lines, k, low, ahead)

    def _line_from(self, lines: list[Line], k: int, low: list, ahead: list) -> None:
        """One line: the closure of the frontier under the silent steps, the line's step from each state.

        Reason for the length: one body holds the three clock cases (no readings at all; a line without
        one; a line whose reading is after the frontier's clock, seen from that reading) and the failures."""
        cfg, limits, search, res, line = self.cfg, self.limits, self.search, self.res, lines[k]
        who, last_read = line.process, self.last_read
        if line.now is not None and who in last_read and line.now < last_read[who] - limits.skew_bound:
            res.failure = Failure(line, k, [f"process {who}'s clock reading goes back from {last_read[who]} to "
                                            f"{line.now}, more than the skew bound ({limits.skew_bound} ticks): a "
                                            "process reads its clock forwards (SynchronizedClocks)"], [], 0, False)
            return
        if not self.clocked:
            ticks, view = None, 0  # a log without clock readings: any number of ticks between any two lines
        elif line.now is None:
            ticks, view = 0, 0  # a step that reads no clock: the ticks up to the next reading come after it
        else:
            ticks = None if self.held is None else low[k] - self.held
            view = line.now - low[k]  # the committing process's reading is this far after the frontier's clock
        bounded_before = search.bounded
        search.bounded = False
        search.indexed.clear()
        search.moves.clear()
        frontier = self.frontier
        if self.clocked and self.held is not None:
            frontier, search.scans_placed = own_reading_scans(search, frontier, self.held, ahead[k], lines)
            search.fails_blocked = frozenset(w for w, (_now, j, _p) in ahead[k].items()
                                             if lines[j].memory.rec[w].pc != "reconverting")
        closed = search.closure(frontier, ticks)
        nxt = set()
        if view == 0:
            for st in closed:
                got = search.step(st, line)
                if got is not None:
                    nxt.add(got)
        else:  # the line seen from its own reading, then held back at the frontier's clock
            seen, mine = set(), committers(cfg, line)
            names = ({cfg.nodes[j] for j in mine[0] | mine[1]} | {cfg.recoverers[j] for j in mine[2]}, mine[0] | mine[1])
            for w in closed:
                for x in search.view_closure(w, view, names):
                    seen.add(x)
                    got = search.step(x, line)
                    if got is not None:
                        nxt.add(held_back(cfg, w, x, got, view, mine))
            closed = seen
        if not nxt:
            res.failure = explain(cfg, line, k, closed, search.bounded)
            search.bounded = search.bounded or bounded_before
            return
        search.bounded = search.bounded or bounded_before
        if len(nxt) > limits.max_frontier:  # a blow-up: stop, and never report valid
            res.failure = Failure(line, k, [f"the frontier grew to {len(nxt):,} states after this line, beyond "
                                            f"--max-frontier {limits.max_frontier:,}: not validated past it"],
                                  [], len(nxt), True)
            search.bounded = True
            return
        self.frontier = nxt
        res.max_frontier = max(res.max_frontier, len(nxt))
        res.matched, res.last = k + 1, line
        if line.now is not None:
            self.held = low[k]
            last_read[who] = max(last_read.get(who, line.now), line.now)
        if self.progress is not None:
            self.progress(done=k + 1, states=search.states, frontier=len(nxt))


def validate(cfg: M.Config, lines: list[Line], limits: Limits = Limits(), progress=None) -> Result:
    """Search for a behaviour of the twin that explains `lines` in order (harness/validation/search.py's docstring), with
    Python's cycle collector paused: the search makes millions of short-lived tuples and no cycles, and each
    collection also walks every object the caller holds (3,160 -> 4,110 lines/s after a stress run)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _search(cfg, lines, limits, progress)
    finally:
        if paused:
            gc.enable()


def _search(cfg: M.Config, lines: list[Line], limits: Limits, progress) -> Result:
    """validate's search: the whole of `lines`, in order."""
    v = Validation(cfg, limits, progress, clocked=any(line.now is not None for line in lines),
                   crashes_recorded=any(line.action == R.CRASH for line in lines),
                   wakes_recorded=any(line.action == R.WAKE_READ and line.plans for line in lines))
    return v.take(lines, len(lines))
