"""A production pass's later row (issue 32 item 4; docs/history.md, "The production pass's window").

The code's recovery pass (`RecoveryWorker.run_once`) reads its scan window once and tries the rows in turn;
the twin's worker remembers one row (spec/README.md decision 6). An 8-node stress history failed at r7's
lost race on the second row of its window (s7, execution 287, read while n2's lease had run out), recorded
after r7 had taken over and converted the first row (s1) and n2's finalizer had cleared s7's claim: no twin
scan reads that row any more. Here the same shape on the scheduler: r1 reads the window [s1, s2], r2 takes
s2 over, r1 takes s1 over and converts it, then r1's compare-and-swap on its old read of s2 loses.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from spec import configs, left_claims
from impl.history import memory_of, read_meta, read_rows
from binding import history as C
from harness import registry as R
from harness.validation import history as H
from harness.validation.judge import validate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stress"))
from stresskit import RecordingScheduler  # noqa: E402


def pass_history(r2_takes_over: bool = True) -> C.Converted:
    """`leftclaims`'s restart (s1's and s2's poison rows, expired) with a second worker, then r1's pass."""
    base = configs.get("leftclaims")
    cfg = replace(left_claims.empty_start(base), recoverers=("r1", "r2"))
    rs = RecordingScheduler(cfg)
    rs.run(left_claims.restart(base))
    r1 = rs.world.worker("r1")
    window = r1.window()  # the pass's one read: both rows
    assert [(row.session_id, row.execution_id) for row in window] == [("s1", 1), ("s2", 2)]
    steps = [(R.RECOVERY_SCAN, ("r2", "s2")), (R.RECOVERY_TAKEOVER, ("r2",))] if r2_takes_over else []
    rs.run(steps + [(R.RECOVERY_SCAN, ("r1", "s1")), (R.RECOVERY_TAKEOVER, ("r1",)),
                    (R.RECOVERY_RECONCILE, ("r1",)), (R.RECOVERY_CONVERT, ("r1",))])
    assert rs.twin.rec[0].pc == "idle"
    r1.remember(window[1])  # the pass's next row, as it read it
    rs.recorder.process = "r1"
    with rs.recorder.step("r1", R.RECOVERY_TAKEOVER, {"r": "r1"}, memory_of(workers=[r1]), rs.world.clock.now()):
        took = r1.take()
    assert bool(took) is not r2_takes_over
    return C.convert_rows(read_meta(rs.db), read_rows(rs.db), cfg)


def lines_of(conv: C.Converted, commits=None):
    return H.typed(conv.cfg, list(enumerate(conv.commits if commits is None else commits, start=2)), "history")


def test_a_lost_race_on_the_pass_s_earlier_read_validates():
    conv = pass_history()
    last = conv.commits[-1]
    assert last.action == R.RECOVERY_TAKEOVER and not last.writes.claim and last.memory.rec["r1"].sess == "s2"
    res = validate(conv.cfg, lines_of(conv))
    assert res.ok, res.failure.reasons


def test_without_the_window_read_the_line_fails(monkeypatch):
    """The test fails before the fix: the recorded scan of s2 (execution 2, former owner r1) is in no state."""
    monkeypatch.setattr(H, "window_reads", lambda cfg, lines: None)
    conv = pass_history()
    res = validate(conv.cfg, lines_of(conv))
    assert not res.ok and res.failure.line.commit is conv.commits[-1]
    assert any("memory.rec.r1.pc: recorded 'scanned', the twin has 'idle'" in r for r in res.failure.reasons)


def test_a_lost_race_the_twin_s_compare_and_swap_wins_fails():
    """Without r2's takeover the row is still the claim, expired: the twin's compare-and-swap takes it over,
    so a line that wrote nothing is no twin step (the impl's CAS won; its written claim is left out here)."""
    conv = pass_history(r2_takes_over=False)
    last = conv.commits[-1]
    assert last.writes.claim  # the implementation won the race
    lost = last.model_copy(update={"writes": H.Writes()})
    res = validate(conv.cfg, lines_of(conv, conv.commits[:-1] + [lost]))
    assert not res.ok and res.failure.line.commit is lost


def test_a_lost_race_on_a_row_no_line_wrote_fails():
    """The recorded row must be a claim identity the history wrote: execution 3 was never s2's."""
    conv = pass_history()
    last = conv.commits[-1]
    raw = last.model_dump()
    raw["memory"]["rec"]["r1"]["exec"] = 3
    forged = H.Commit.model_validate(raw)
    lines = lines_of(conv, conv.commits[:-1] + [forged])
    assert lines[-1].window_read is None
    res = validate(conv.cfg, lines)
    assert not res.ok and res.failure.line.commit is forged


def test_a_lost_race_without_an_earlier_scan_of_its_process_fails():
    """The pass's earlier row is what dates the read: the same line from another process (no `scanned` of r1
    recorded there before it) is a scan no reading of its own justifies, and fails as before."""
    conv = pass_history()
    last = conv.commits[-1]
    other = last.model_copy(update={"process": "r1#other"})
    lines = lines_of(conv, conv.commits[:-1] + [other])
    assert lines[-1].window_read is None and lines_of(conv)[-1].window_read is not None
    res = validate(conv.cfg, lines)
    assert not res.ok and res.failure.line.commit is other
