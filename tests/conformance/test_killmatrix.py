"""Every defect is killed by a replay against the implementation. Counterexamples close the loop: the
explorer's for each defect, and TLC's for each safety defect, written as traces, reproduce their violation
on the implementation and not on the correct one (tests/engines/test_defect_table.py, where the engines
find them, so each search runs once in a test run)."""

import pytest

from serverkit import BUNDLED
from harness.conformance import killmatrix as K
from harness.conformance import replay as R
from spec import names as N


RACES = ("step-started-window", "step-failed-duplicate-interrupt", "cross-session-recovery-collision",
         "unsupervised-cancel-heartbeat", "silent-quarantine-noop", "memory-before-publish")


def test_every_defect_is_killed_and_the_correct_implementation_passes_every_trace():
    """The gate's form in every run: each defect's replays stop at its first detecting trace (its own first);
    the whole table (every defect against every trace, 149 s of a loaded CI worker) is the deep test below."""
    first = K.rows(server=BUNDLED, first=True)
    assert K.undetected(first) == [] and {r.defect for r in first} == set(N.DEFECTS)
    assert "SURVIVES" not in K.render(first)
    own = {r.defect: r.trace for r in first if r.detected}
    assert own["silent-quarantine-noop"].endswith("/silent-quarantine-noop.json")
    races = K.rows(defects=RACES, server=BUNDLED)  # each reported race's own trace breaks its headline
    for race in RACES:
        row = next(r for r in races if r.defect == race and r.trace.endswith(f"/{race}.json"))
        assert row.detected and N.DEFECTS[race].violates[0] in row.violated
    assert K.correct_failures(server=BUNDLED) == []


@pytest.mark.deep
def test_the_whole_table_kills_every_defect_as_its_first_form_does():
    table = K.rows(server=BUNDLED)
    assert K.undetected(table) == [] and {r.defect for r in table} == set(N.DEFECTS)
    assert "SURVIVES" not in K.render(table)
    first = K.rows(server=BUNDLED, first=True)
    assert {r.defect for r in first if r.detected} == {r.defect for r in table if r.detected}
    assert len(first) < len(table) / 4, (len(first), len(table))  # four defects only the explorer detects


def test_the_first_detection_form_still_reports_a_survivor(tmp_path):
    """`first` stops at a detection only: a defect no trace detects is replayed against every trace, then
    the explorer's counterexample, as in the whole table."""
    for name in ("memory-before-publish", "silent-quarantine-noop"):
        (tmp_path / f"{name}.json").write_text((R.TRACES / f"{name}.json").read_text())
    table = K.rows(tmp_path, defects=["step-failed-duplicate-interrupt"], server=BUNDLED, first=True)
    assert [r.trace.split("/")[-1] for r in table] == ["memory-before-publish.json", "silent-quarantine-noop.json",
                                                       K.EXPLORER.split("/")[-1]]


def test_a_defect_no_trace_catches_is_reported_as_surviving(tmp_path):
    (tmp_path / "memory-before-publish.json").write_text((R.TRACES / "memory-before-publish.json").read_text())
    table = K.rows(tmp_path, defects=["memory-before-publish", "step-failed-duplicate-interrupt"], server=BUNDLED)
    explorer = [r for r in table if r.trace == K.EXPLORER]
    assert [r.defect for r in explorer] == ["step-failed-duplicate-interrupt"] and explorer[0].detected
    assert K.undetected(table) == []
    # with the fallback unable to help, the matrix must say so
    assert not K.detects("memory-before-publish", R.replay_file(tmp_path / "memory-before-publish.json", server=BUNDLED))
