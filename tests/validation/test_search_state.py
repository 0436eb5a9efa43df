"""The search's logs (harness/validation/search_state.py): a step's log is a SharedLog (its prefix shared,
its hash kept), made once per line, so a state's cost does not grow with the history's length."""

from __future__ import annotations

from spec import model as M
from spec.indexed import SharedLog
from harness.validation.search_state import Indexed


def _ev(k: int) -> M.Event:
    return M.Event("s1", "Started", k, "n1")


def test_an_append_is_the_same_log_made_once():
    logs = Indexed()
    first = logs.log((), (_ev(1),))
    assert type(first) is SharedLog and first == (_ev(1),)
    again = logs.log(first, first + (_ev(2),))
    assert again == (_ev(1), _ev(2)) and logs.log(first, first + (_ev(2),)) is again
    other = logs.log(first, first + (_ev(3),))
    assert other != again and other is not again
    assert logs.log(again, again) is again  # a step that appends nothing keeps the object


def test_equal_logs_made_apart_are_equal_states():
    logs = Indexed()
    a = logs.log((), (_ev(1), _ev(2)))
    logs.clear()
    b = logs.log(logs.log((), (_ev(1),)), logs.log((), (_ev(1),)) + (_ev(2),))
    assert a == b and hash(a) == hash(b) and a is not b  # made apart: hashed alike
    logs.clear()
    assert logs.log((), (_ev(1), _ev(2))) is not a  # cleared between lines: nothing kept past one


def test_kept_view_closures_change_no_successor(monkeypatch):
    """search.view_closure (a process's view computed once for the states that differ only in the other
    actors' memory) gives every line the states and the successors the plain closure gives: the first 700
    lines of the 4-node fixture, each line's states and held-back successors compared as sets."""
    from collections import defaultdict
    from pathlib import Path

    from harness.validation import command as Cmd
    from harness.validation import judge as GR
    from harness.validation import history as H
    from harness.validation import search as S
    path = str(Path(__file__).resolve().parent / "stress-4node.history.jsonl")
    cfg, _h, commits, _n = Cmd.load(path, None)
    lines = H.typed(cfg, commits, path)[:700]

    def run():
        out, cur, step, held = defaultdict(set), [0], S.Search.step, GR.held_back

        def stepped(self, st, line):
            cur[0] = line.number
            out[-line.number].add(st)  # the states the line could have run in
            return step(self, st, line)

        def kept(*a):
            out[cur[0]].add(held(*a))
            return held(*a)
        monkeypatch.setattr(S.Search, "step", stepped)
        monkeypatch.setattr(GR, "held_back", kept)
        res = GR.validate(cfg, lines)
        monkeypatch.setattr(S.Search, "step", step)
        monkeypatch.setattr(GR, "held_back", held)
        return res, out
    kept_res, kept_out = run()
    monkeypatch.setattr(S.Search, "view_closure", lambda self, w, ticks, view: self.closure({w}, ticks, view))
    plain_res, plain_out = run()
    assert kept_res.ok and plain_res.ok and kept_res.states < plain_res.states
    assert kept_out == plain_out and len(kept_out) > 100


def test_validate_gives_the_cycle_collector_back(monkeypatch):
    """validate pauses Python's cycle collector for its search and resumes it after, also when it raises."""
    import gc

    import pytest

    from harness.validation import judge as S
    from spec import configs
    assert gc.isenabled()
    assert S.validate(configs.get("ci"), []).ok and gc.isenabled()

    def broken(*_a):
        assert not gc.isenabled()
        raise RuntimeError("stop")
    monkeypatch.setattr(S, "_search", broken)
    with pytest.raises(RuntimeError):
        S.validate(configs.get("ci"), [])
    assert gc.isenabled()
