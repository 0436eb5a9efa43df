"""The search's two restrictions are each able to fail (issue 32 item 4; docs/history.md, "Speed").

- `fails_blocked` (search.py): in the lazy rounds a worker takes no silent RecoveryConvertFails (the
  conversion whose COMMIT was lost) unless its nearest recorded memory ahead is `reconverting`.
- `worker_readings` (real_time.py): a recovery scan is placed from each worker's nearest recorded memory
  ahead, and the search takes no other scan of those workers (`scans_placed`).

Each is shown with two stand-ins: one that prunes too much makes a known-valid history invalid, one that
prunes nothing still validates it with more states searched (the counters show the work it saves).
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.validation import command as Cmd
from harness.validation import history as H
from harness.validation import judge as J
from harness.validation import real_time
from harness.validation import search as S
from harness.validation.search import render

HERE = Path(__file__).resolve().parent
FOUR_NODES = HERE / "stress-4node.history.jsonl"
sys.path.insert(0, str(HERE))
from test_validate import recorded  # noqa: E402


class LazyOnly(J.Validation):
    """The lazy rounds alone (judge.py `_line` without its last round and without the whole search after it):
    where the restrictions apply, with nothing behind them to catch what they prune."""

    def _line(self, lines, k, low, ahead):
        run, fin, rec = J.committers(self.cfg, lines[k])
        own = frozenset({self.cfg.nodes[j] for j in run | fin} | {self.cfg.recoverers[j] for j in rec})
        search = self.search
        for search.only, search.ticks_first in ((own, True), (own, False), (None, True)):
            self.res.failure = None
            self._line_from(lines, k, low, ahead)
            search.only, search.ticks_first = None, False
            if self.res.failure is None:
                return


def _blocking(which):
    """A Search whose `fails_blocked` is `which(cfg)` whatever the line's memory ahead says."""
    class Blocking(S.Search):
        fails_blocked = property(lambda self: which(self.cfg), lambda self, value: None)
    return Blocking


def _run(cfg, lines, cls=J.Validation):
    v = cls(cfg, clocked=True, crashes_recorded=True)
    return v, v.take(lines, len(lines))


def _reconvert():
    """A scheduler-recorded history whose last line is r1's RecoveryReconvert (memory `reconverting`): its
    conversion's COMMIT was lost silently (RecoveryConvertFails) between the takeover and that line."""
    conv = recorded("reconvert-replay-leaves-assistant-open.json")
    lines = H.typed(conv.cfg, list(enumerate(conv.commits, start=2)), "history")
    assert lines[-1].action == "RecoveryReconvert" and lines[-1].memory.rec["r1"].pc == "reconverting"
    return conv.cfg, lines


def _four_nodes(n: int):
    cfg, _h, commits, _n = Cmd.load(str(FOUR_NODES), None)
    return cfg, H.typed(cfg, commits, str(FOUR_NODES))[:n]


# ---------------------------------------------------------------- fails_blocked

def test_fails_blocked_that_blocks_every_worker_fails_a_valid_history(monkeypatch):
    cfg, lines = _reconvert()
    _v, res = _run(cfg, lines, LazyOnly)
    assert res.ok, render(res, "history")  # the restriction keeps the worker whose memory ahead is reconverting
    monkeypatch.setattr(J, "Search", _blocking(lambda cfg: frozenset(cfg.recoverers)))
    _v, res = _run(cfg, lines, LazyOnly)
    assert not res.ok and res.failure.line is lines[-1], render(res, "history")
    assert any("memory.rec.r1.pc: recorded 'reconverting'" in r for r in res.failure.reasons), res.failure.reasons
    _v, res = _run(cfg, lines)  # the validation itself: its last round (every actor's steps, unrestricted) does
    assert res.ok


def test_fails_blocked_that_blocks_nothing_validates_with_more_states(monkeypatch):
    cfg, lines = _four_nodes(500)
    _v, kept = _run(cfg, lines)
    monkeypatch.setattr(J, "Search", _blocking(lambda cfg: frozenset()))
    _v, every = _run(cfg, lines)
    assert kept.ok and every.ok
    assert every.states > kept.states, (every.states, kept.states)


# ---------------------------------------------------------------- worker_readings

def _next_but_one(lines):
    """worker_readings with each worker's nearest recorded memory ahead replaced by the one after it: the
    nearest line's scan is never placed (a restriction that prunes too much)."""
    near = real_time.worker_readings(lines)
    out = []
    for k in range(len(lines)):
        got = {}
        for w, (_now, j, _p) in near[k].items():
            later = near[j + 1].get(w) if j + 1 < len(lines) else None
            if later is not None:
                got[w] = later
        out.append(got)
    return out


def test_worker_readings_past_the_nearest_line_fails_a_valid_history(monkeypatch):
    """With each worker's scan placed from its next-but-one recorded memory, the first 331 lines of the 4-node
    fixture fail at the first lost race or takeover whose scan only its own line's memory places (line 66,
    r1's scan of s8; line 133 with own_reading_scans gone, test_four_nodes.py)."""
    cfg, lines = _four_nodes(331)
    assert _run(cfg, lines)[1].ok
    monkeypatch.setattr(J, "worker_readings", _next_but_one)
    res = _run(cfg, lines)[1]
    assert res.failure is not None and res.failure.line.number == 66, render(res, "four")
    assert any("memory.rec.r1.pc: recorded 'scanned', the twin has 'idle'" in r for r in res.failure.reasons)


def test_worker_readings_that_keeps_every_scan_validates_with_more_states(monkeypatch):
    """Without `scans_placed` (every other scan of a worker whose memory ahead is recorded taken too), the
    same lines validate with more states searched."""
    cfg, lines = _four_nodes(500)
    _v, kept = _run(cfg, lines)
    placed = J.own_reading_scans
    monkeypatch.setattr(J, "own_reading_scans", lambda *a: (placed(*a)[0], {}))
    _v, every = _run(cfg, lines)
    assert kept.ok and every.ok
    assert every.states > kept.states, (every.states, kept.states)


# ---------------------------------------------------------------- wakes_recorded

def _wake_walk():
    """A recorded twin walk on `wakes2` (two racing wakers): every WakeRead and WakeReserve is a line."""
    sys.path.insert(0, str(HERE.parent / "stress"))
    from stresskit import record_walk
    from binding import history as C
    from impl.history import read_meta, read_rows
    from spec import configs
    cfg = configs.get("wakes2")
    rs = record_walk(cfg, 1, 120)
    conv = C.convert_rows(read_meta(rs.db), read_rows(rs.db), cfg)
    return conv.cfg, H.typed(conv.cfg, list(enumerate(conv.commits, start=2)), "history")


def test_a_log_that_records_the_wakers_reads_takes_none_silently():
    """`wakes_recorded` (a WakeRead line in the log: every racing waker's read and reservation is recorded, as
    `crashes_recorded` for crashes) keeps the wakers' reads out of the closures: an 8-node stress history's
    frontier was every combination of eight wakers' plans (12,660 states at one line, 448 without them). It
    can fail: the walk with its first WakeRead line left out is rejected, where the search that takes the
    reads silently explains the plan its reservation records."""
    cfg, lines = _wake_walk()
    reads = [line for line in lines if line.action == "WakeRead"]
    assert reads and J.validate(cfg, lines).ok
    cut = [line for line in lines if line is not reads[0]]
    v = J.Validation(cfg, clocked=True, crashes_recorded=True, wakes_recorded=True)
    res = v.take(cut, len(cut))
    assert res.failure is not None, render(res, "history")
    v = J.Validation(cfg, clocked=True, crashes_recorded=True, wakes_recorded=False)
    assert v.take(cut, len(cut)).ok


# ---------------------------------------------------------------- the clock's holders' round

def test_the_clock_holders_round_keeps_a_subset_of_every_actors_round(monkeypatch):
    """judge.py's third lazy round (the committing process's actors and the clock's holders, after the ticks)
    keeps, line by line on the 4-node fixture's first 300 lines, a subset of what the round with every
    actor's steps after the ticks keeps, and fewer states somewhere; a stand-in whose holders are every actor
    keeps the same as that round."""
    cfg, lines = _four_nodes(300)
    v = J.Validation(cfg, clocked=True, crashes_recorded=True)
    low, ahead = J.floors(lines), J.worker_readings(lines)
    s, fewer = v.search, 0

    def kept(only, holders):  # one round from the line's frontier and held clock
        v.frontier, v.res.failure, v.held, v.last_read = start, None, held, dict(read)
        s.only, s.ticks_first, s.holders = only, True, holders
        v._line_from(lines, v.k, low, ahead)
        s.only, s.ticks_first, s.holders = None, False, False
        return set() if v.res.failure is not None else set(v.frontier)

    everyone = frozenset(cfg.nodes + cfg.recoverers)
    for k in range(len(lines)):
        start, held, read = v.frontier, v.held, dict(v.last_read)
        run, fin, rec = J.committers(cfg, lines[k])
        own = frozenset({cfg.nodes[j] for j in run | fin} | {cfg.recoverers[j] for j in rec})
        mine, every = kept(own, True), kept(None, False)
        assert mine <= every, lines[k].number
        fewer += len(mine) < len(every)
        if k % 50 == 0:
            with monkeypatch.context() as m:
                m.setattr(S, "clock_holders", lambda cfg, st: everyone)
                assert kept(own, True) == every, lines[k].number
        v.frontier, v.res.failure, v.held, v.last_read = start, None, held, read
        v._line(lines, k, low, ahead)
        assert v.res.failure is None
        v.k += 1
    assert fewer > 0
