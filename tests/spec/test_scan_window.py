"""The claim scan's window of several rows (issue 31 item 2, R003-MUST-FIX-3 with N = ScanBound = 2):
ScanWindowShared holds on the reference window and each of its clauses fails when the window is planned
wrongly (the registry's defects, and a stand-in window for the ordering); the trace "claim 3 behind 2
poison rows" passes on the reference and fails under `scan-window-ignores-fresh-share` (and, since the
poison rows are retried until quarantined, under the other R003-MUST-FIX-3 defects). The explorer's and
TLC's runs on `scans` (millions of states) are the deep profile's: these use the trace's states. The same
window behind claims left at Init (`leftclaims`, 35,666 states) is checked whole on both engines in every
run (tests/engines, tests/spec/test_left_claims.py, traces/left-claims-poison-rows.json)."""

from dataclasses import replace

import pytest

from harness.conformance import replay as RP
from harness.traces import trace as T
from spec import configs
from spec import invariants as I
from spec import model as M
from serverkit import BUNDLED

DEFECT = "scan-window-ignores-fresh-share"
TRACE = RP.TRACES / "scan-window-poison-rows.json"
SCANS = configs.get("scans")


def states(cfg=SCANS):
    """The twin's states along the trace (its steps are enabled on the reference)."""
    st, out = M.init(cfg), []
    for k, step in enumerate(T.load(TRACE).steps):
        st = M.apply(cfg, st, step.action, T.params_from_json(step.action, step.params, f"step {k + 1}"))
        assert st is not None, (k + 1, step.action)
        out.append(st)
    return out


def names(window):
    return sorted(SCANS.sessions[s] for s in window)


def test_the_window_keeps_the_fresh_share_behind_two_poison_rows():
    one_poison, two_poison = states()[17], states()[23]  # after s1's failed conversion; after s2's and a tick
    assert [c.tries for c in two_poison.claim] == [1, 1, 0] and all(M.eligible(SCANS, two_poison, s) for s in range(3))
    assert names(M.scan_window(SCANS, two_poison)) == ["s1", "s3"]  # the fresh slot, then the oldest retry
    assert all(I.ScanWindowShared(SCANS, st) for st in states())
    bad = replace(SCANS, defects=frozenset([DEFECT]))
    assert names(M.scan_window(bad, two_poison)) == ["s1", "s2"] and not I.ScanWindowShared(bad, two_poison)
    assert I.ScanWindowShared(bad, one_poison)  # one poison row: the oldest two still reach the fresh one


@pytest.mark.parametrize("defect,window", [("wake-fresh-share-zero", ["s1", "s2"]),  # fresh capacity
                                            ("wake-fresh-share-full", ["s2", "s3"])])  # a retry advances
def test_each_share_clause_fails_when_the_share_is_wrong(defect, window):
    """Zero: the poison rows fill the window; full (the whole batch): with s1 retried and s2, s3 fresh (a
    tick after s1's failed conversion), no retry advances."""
    bad = replace(SCANS, defects=frozenset([defect]))
    st = states()[23] if defect.endswith("zero") else M.apply(SCANS, states()[17], "Tick", ())
    assert I.ScanWindowShared(SCANS, st)
    assert names(M.scan_window(bad, st)) == window and not I.ScanWindowShared(bad, st)


def test_the_ordering_clause_fails_on_a_window_that_skips_an_older_claim(monkeypatch):
    st = states()[23]
    monkeypatch.setattr(I, "scan_window", lambda cfg, st: {1, 2})  # s2 and s3: s1, an older retry, skipped
    assert not I.ScanWindowShared(SCANS, st)
    monkeypatch.setattr(I, "scan_window", lambda cfg, st: {0})  # fewer rows than the bound and the claims allow
    assert not I.ScanWindowShared(SCANS, st)


@pytest.mark.parametrize("defect,broken", [(DEFECT, "ScanWindowShared"),  # claim 3 never in the window
                                           # the poison rows retried for ever; quarantined by no row
                                           ("recovery-retries-unbounded", "ExpiredClaimsEventuallyHandled"),
                                           ("silent-quarantine-noop", "ExpiredClaimsEventuallyHandled")])
def test_the_poison_rows_trace_fails_under_each_must_fix_3_defect(defect, broken):
    """Durable advance: the reference quarantines each poison row once its attempts are used up."""
    res = RP.replay_file(TRACE, [defect], server=BUNDLED)
    assert not res.ok and broken in res.violated


def test_the_poison_rows_trace_passes_on_the_reference():
    assert RP.replay_file(TRACE, server=BUNDLED).ok
