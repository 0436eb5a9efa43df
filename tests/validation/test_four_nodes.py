"""Four node processes (docs/history.md, "Real time"): a recovery scan (a read, no commit) eligible only at
its own process's later reading, placed before another worker's takeover ordered ahead of its own line.

The fixture is the first 1,740 commits of a real `claimcheck stress --nodes 4 --seconds 15 --keep` run of the
bundled server (sqlite), converted with `claimcheck validate stress.db --write-lines`. Its last line is r2's
lost takeover race (process n2#2, reading ...540, memory `scanned s3` from n3's exec 181): r2 scanned s3
after its own line 1718 (reading ...540) and before r1's takeover of s3 at line 1725 (reading ...543), while
n4's acquisition at line 1728 (reading ...532, a stalled process) held the twin's clock behind s3's expiry
(n3's lease written at ...510 runs to ...540). With the scan taken only at the held clock or in its own line's
view, this history failed at line 1741 (`memory.rec.r2.pc: recorded 'scanned', the twin has 'idle'`).

Recorded before the reconciliation spans (spec v3): the only change since is the memory vocabulary of the
span's end, on the lines that close a span (a FinalizerSettle's finalizer `settle` -> `reconciling`, a
RecoveryConvert's worker `converting` -> `reconciled`), which is what the server now records there.
Recorded before the wake rows' turned column (issue 31 item 3), by a server whose wake scan planned
retried rows oldest first: its header's twin has that plan (defect wake-retry-oldest-first) and its rows'
turned is filled from the recorded rows (tests/validation/fill_turned.py)."""

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
    """The same lost race read one tick earlier (...539, within a skew bound of 1 of r2's own earlier
    reading), at which n3's lease of s3 is still live: no reading of r2's process up to its line makes the
    scan eligible, so the scan it records has no state, though r1's and later readings would allow it."""
    lines = _lines()
    row = json.loads(lines[-1])
    assert row["action"] == "RecoveryTakeover" and row["memory"]["rec"]["r2"]["pc"] == "scanned"
    row["now"] -= 1
    code, out = _validate(_write(tmp_path, lines[:-1] + [json.dumps(row)]), "--skew-bound", "1")
    text = "\n".join(out)
    assert code == 1 and "NOT VALID at line 1741" in text, text
    assert "memory.rec.r2.pc: recorded 'scanned', the twin has 'idle'" in text, text
