"""Real time in validation (docs/history.md, "Real time"): each line's lease decisions are judged at its own
process's clock reading, which may be older than the commits ordered before it.

The fixture is the first 989 commits of a real `claimcheck stress --nodes 2 --seconds 20 --keep` run of the
bundled server (sqlite; its header's twin the reference, no defect), converted with `claimcheck validate
stress.db --write-lines`: 35 of its lines read the clock before a commit ordered ahead of them (line 322: n1's
heartbeat of s1 at a reading 6 ticks old; line 181: an acquisition 3 ticks old; line 442: n2's acquisition
at a reading 66 ticks old, its process stalled after it read its clock). With one clock for the twin (the
readings raised to the latest, as the converter once did) such a history fails on `ttl` at its first stale
lease write (an earlier fixture failed so at its line 44)."""

from __future__ import annotations

import json
from pathlib import Path

from test_validate import _validate, _write

HERE = Path(__file__).resolve().parent
TWO_NODES = HERE / "stress-2node.history.jsonl"


def _lines() -> list[str]:
    return TWO_NODES.read_text().splitlines()


def _edit(lines: list[str], number: int, fn) -> list[str]:
    row = json.loads(lines[number - 1])
    fn(row)
    out = list(lines)
    out[number - 1] = json.dumps(row)
    return out


def test_the_fixture_reads_clocks_out_of_commit_order():
    latest, stale = None, []
    for k, text in enumerate(_lines()[1:], start=2):
        now = json.loads(text).get("now")
        if now is not None:
            if latest is not None and now < latest:
                stale.append(k)
            latest = now if latest is None else max(latest, now)
    assert 322 in stale and 181 in stale and 442 in stale and len(stale) == 35


def test_two_node_processes_history_validates():
    code, out = _validate(TWO_NODES)
    assert code == 0, "\n".join(out)


def test_a_lease_longer_than_the_lease_from_its_reading_fails(tmp_path):
    """heartbeat-extends-lease's class: the stale heartbeat's lease one tick longer than Lease from its own
    reading is no twin step, though it is shorter than a full lease from the latest reading."""
    lines = _edit(_lines()[:323], 322, lambda r: r["writes"]["claim"]["s1"].update(ttl=31))
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1 and "NOT VALID at line 322" in text, text
    assert "writes.claim.s1.ttl: the twin writes 30, the line 31" in text, text


def test_a_takeover_no_reading_justifies_fails(tmp_path):
    """A takeover read at a reading at which the former owner's lease is still live (r1's takeover of s3 from
    n2, exec 104, read ...364: read 15 ticks earlier, ...349, n2's lease runs 14 more ticks) is rejected,
    although the lines before it read up to ...364, at which it is eligible: a decision is judged at its own
    reading, never at a later one. (`--skew-bound 20` lets the worker's clock go back that far; without it,
    that is the failure, the next test.) Without the line's memory the report names the guard: the scan the
    takeover needs has no state at which the claim was eligible."""
    def early(row):
        row["now"] = row["now"] - 15
        row.pop("memory")
    assert json.loads(_lines()[964])["action"] == "RecoveryTakeover"
    lines = _edit(_lines()[:965], 965, early)
    code, out = _validate(_write(tmp_path, lines), "--skew-bound", "20")
    text = "\n".join(out)
    assert code == 1 and "NOT VALID at line 965" in text, text
    assert "not enabled: recovery worker r1 has not scanned" in text, text
    # the frontier report: the closest candidate state, s3's claim there (its lease still live at the reading)
    assert "the closest candidate state" in text and "claim s3: {exec 104, owner 'n2', ttl 14, phase 'running'" in text
    code, out = _validate(_write(tmp_path, _lines()[:965]), "--skew-bound", "20")
    assert code == 0, out


def test_a_process_clock_going_back_beyond_the_skew_bound_fails(tmp_path):
    def back(row):
        row["now"] = row["now"] - 40
    lines = _edit(_lines()[:182], 181, back)
    code, out = _validate(_write(tmp_path, lines))
    text = "\n".join(out)
    assert code == 1 and "NOT VALID at line 181" in text and "goes back" in text and "skew bound (0 ticks)" in text, text


def test_the_leanest_two_node_log_validates(tmp_path):
    """Without memory, seq and the commits that wrote nothing (what any server can log): a line seen from
    its later reading takes its actor's own steps only (no process named: the actor is the process)."""
    lines = _lines()[:250]
    lean = [lines[0]] + [json.dumps({k: v for k, v in json.loads(x).items() if k not in ("memory", "seq", "process")})
                         for x in lines[1:] if json.loads(x).get("writes")]
    code, out = _validate(_write(tmp_path, lean))
    assert code == 0, "\n".join(out)


def test_a_frontier_beyond_its_bound_stops_the_search_and_never_reports_valid(tmp_path):
    code, out = _validate(_write(tmp_path, _lines()[:305]), "--max-frontier", "1")  # the lazy search keeps 2
    text = "\n".join(out)
    assert code == 1 and "NOT VALID at line" in text and "beyond --max-frontier 1: not validated past it" in text
    assert "a search bound was hit" in text and "OK" not in text, text


def test_a_stress_runs_validation_under_a_hit_bound_says_not_validated():
    from types import SimpleNamespace
    from harness.traces import trace as T
    from harness.validation import history as H
    from harness.validation import search as S
    from harness.validation.command import check_database

    def read(url):
        header, commits = H.read(TWO_NODES)
        return SimpleNamespace(cfg=T.trace_to_config(header.config), commits=[c for _, c in commits][:300])
    v = check_database("stress.db", read, S.Limits(max_frontier=1))
    assert v.state == "not validated" and not v.ok and "NOT VALIDATED (a search bound was hit)" in v.report[0], v
    assert v.reason == "a search bound was hit"
    v = check_database("stress.db", read)
    assert v.ok and "OK, 300 lines" in v.report[0], v
