"""The lazy search (harness/validation/judge.py, `Validation._line`): a line is first searched with the silent
steps of its own process's actors alone, then with every actor's, and a line neither explains makes the
search start again with every actor's steps throughout, whose verdict and report are the ones given."""

from __future__ import annotations

from pathlib import Path

from harness.validation import command as Cmd
from harness.validation import history as H
from harness.validation import judge as J
from harness.validation.search import render

TWO_NODES = Path(__file__).resolve().parent / "stress-2node.history.jsonl"


def _fixture(n: int):
    cfg, _h, commits, _n = Cmd.load(str(TWO_NODES), None)
    return cfg, H.typed(cfg, commits, str(TWO_NODES))[:n]


def _validation(cfg, cls=J.Validation, lazy=True):
    v = cls(cfg, clocked=True, crashes_recorded=True)
    v.lazy = lazy
    return v


class OwnStepsOnly(J.Validation):
    """A stand-in whose lines take only their own process's silent steps, with no second search."""

    def _line(self, lines, k, low, ahead):
        run, fin, rec = J.committers(self.cfg, lines[k])
        self.search.only = frozenset({self.cfg.nodes[j] for j in run | fin} | {self.cfg.recoverers[j] for j in rec})
        self._line_from(lines, k, low, ahead)


def test_a_line_the_own_steps_cannot_explain_is_searched_with_every_actors():
    """Line 136 of the 2-node fixture (r1's takeover of s1 from n2) needs another process's silent steps before
    it (the ticks its reading says passed cannot be taken with n1's own): without the second search it fails;
    with it, the first 140 lines validate, with fewer states than the whole search."""
    cfg, lines = _fixture(140)
    bare = _validation(cfg, OwnStepsOnly).take(lines, len(lines))
    assert bare.failure is not None and bare.failure.line.number == 136, render(bare, "bare")
    lazy, whole = _validation(cfg), _validation(cfg, lazy=False)
    got, want = lazy.take(lines, len(lines)), whole.take(lines, len(lines))
    assert got.ok and want.ok and lazy.lazy and got.states < want.states


def test_a_rejected_history_is_reported_as_the_whole_search_reports_it(tmp_path):
    """A lease one tick longer than the twin's at line 322 (test_real_time's edit): the lazy search starts
    again with every actor's steps and gives the whole search's report, line for line but the figures."""
    import json
    raw = TWO_NODES.read_text().splitlines()[:323]
    row = json.loads(raw[321])
    row["writes"]["claim"]["s1"]["ttl"] = 31
    raw[321] = json.dumps(row)
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(raw) + "\n")
    cfg, _h, commits, _n = Cmd.load(str(path), None)
    lines = H.typed(cfg, commits, str(path))
    lazy, whole = _validation(cfg), _validation(cfg, lazy=False)
    got, want = lazy.take(lines, len(lines)), whole.take(lines, len(lines))
    assert not lazy.lazy and got.failure is not None
    assert render(got, "h")[:-1] == render(want, "h")[:-1]
    assert "writes.claim.s1.ttl: the twin writes 30, the line 31" in "\n".join(render(got, "h"))
