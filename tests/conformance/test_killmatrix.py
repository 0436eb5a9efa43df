"""Every defect is killed by a replay against the implementation. Counterexamples close the loop: the
explorer's for each defect, and TLC's for each safety defect, written as traces, reproduce their violation
on the implementation and not on the correct one (tests/engines/test_defect_table.py, where the engines
find them, so each search runs once in a test run)."""

from serverkit import BUNDLED
from harness.conformance import killmatrix as K
from harness.conformance import replay as R
from spec import names as N


def test_every_defect_is_killed_and_the_correct_implementation_passes_every_trace():
    table = K.rows(server=BUNDLED)
    assert K.undetected(table) == []
    assert {r.defect for r in table} == set(N.DEFECTS)
    for race in ("step-started-window", "step-failed-duplicate-interrupt", "cross-session-recovery-collision",
                 "unsupervised-cancel-heartbeat", "silent-quarantine-noop", "memory-before-publish"):
        row = next(r for r in table if r.defect == race and r.trace.endswith(f"/{race}.json"))
        assert row.detected and N.DEFECTS[race].violates[0] in row.violated
    assert K.correct_failures(server=BUNDLED) == []
    assert "SURVIVES" not in K.render(table)
    # the gate's form: the same verdict per defect, each from its first detecting trace (its own first)
    first = K.rows(server=BUNDLED, first=True)
    assert {r.defect: r.detected for r in first if r.detected} == {d: True for d in N.DEFECTS}
    assert len(first) < len(table) / 4, (len(first), len(table))  # four defects only the explorer detects
    own = {r.defect: r.trace for r in first if r.detected}
    assert own["silent-quarantine-noop"].endswith("/silent-quarantine-noop.json")


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
