"""Four node processes (docs/history.md, "Real time"): a recovery scan (a read, no commit) eligible only at
its own process's later reading, placed before another worker's takeover ordered ahead of its own line.

The fixture is the first 1,740 commits of a real `claimcheck stress --nodes 4 --seconds 15 --keep` run of the
bundled server (sqlite; its header's twin the reference, no defect), converted with `claimcheck validate
stress.db --write-lines`. Its line 133 is r2's lost takeover race (process n2#0, reading ...487, memory
`scanned s8` of exec 2): r1's lease of s8, written at ...439, ran out at ...469; r2's process read its clock
at ...472 to ...485 (lines 112 to 117) and scanned s8 there, before r4's takeover of s8 at line 120 (reading
...488), while n2's own lines held the twin's clock behind those readings. With the scan taken only at the
held clock or in its own line's view, the history fails at line 133 (`memory.rec.r2.pc: recorded 'scanned',
the twin has 'idle'`; the test below)."""

from __future__ import annotations

import json
from pathlib import Path

from test_validate import _validate, _write

HERE = Path(__file__).resolve().parent
FOUR_NODES = HERE / "stress-4node.history.jsonl"


def _lines() -> list[str]:
    return FOUR_NODES.read_text().splitlines()


def test_four_node_processes_history_validates():
    code, out = _validate(FOUR_NODES)
    assert code == 0, "\n".join(out)


def test_a_scan_no_reading_of_its_process_justifies_fails(tmp_path):
    """The same lost race read at ...468 (within a skew bound of 17 of r2's own earlier reading, ...485), one
    tick before r1's lease of s8 runs out: no reading of r2's process up to its line makes the scan eligible,
    so the scan it records has no state, though r4's and later readings would allow it; at ...469 it has."""
    lines = _lines()
    row = json.loads(lines[132])
    assert row["action"] == "RecoveryTakeover" and row["memory"]["rec"]["r2"]["pc"] == "scanned"
    assert not row.get("writes") and row["now"] % 1000 == 487
    row["now"] -= 19
    code, out = _validate(_write(tmp_path, lines[:132] + [json.dumps(row)]), "--skew-bound", "17")
    text = "\n".join(out)
    assert code == 1 and "NOT VALID at line 133" in text, text
    assert "memory.rec.r2.pc: recorded 'scanned', the twin has 'idle'" in text, text
    row["now"] += 1
    code, out = _validate(_write(tmp_path, lines[:132] + [json.dumps(row)]), "--skew-bound", "16")
    assert code == 0, "\n".join(out)


def test_without_the_scan_placed_at_its_own_reading_the_race_fails(monkeypatch):
    """real_time.own_reading_scans is what explains line 133: without it the first 332 lines fail there."""
    from harness.validation import command as Cmd
    from harness.validation import history as H
    from harness.validation import judge as J
    cfg, _h, commits, _n = Cmd.load(str(FOUR_NODES), None)
    lines = H.typed(cfg, commits, str(FOUR_NODES))[:331]
    assert J.validate(cfg, lines).ok
    monkeypatch.setattr(J, "own_reading_scans", lambda search, frontier, held, ahead, lines: (frontier, {}))
    res = J.validate(cfg, lines)
    assert res.failure is not None and res.failure.line.number == 133, res.failure
    assert any("memory.rec.r2.pc: recorded 'scanned', the twin has 'idle'" in r for r in res.failure.reasons)
