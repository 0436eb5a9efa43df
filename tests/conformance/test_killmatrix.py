"""Every defect is killed by a replay against the implementation; counterexamples close the loop: the
explorer's counterexample for each defect, written as a trace, reproduces its violation on the
implementation (TLC's, for each safety defect: tests/engines/test_defect_table.py, where TLC finds it)."""

import pytest

from serverkit import BUNDLED
from harness.conformance import killmatrix as K
from harness.conformance import replay as R
from harness.traces import trace as T
from spec import configs
from spec import names as N

# defects whose witness configuration has millions of states (configs.SAFETY_ONLY: `scans`, where the
# explorer needs 268,584 states and TLC minutes to the violation): nightly (`deep`); their committed trace
# is killed in every run (test_every_defect_is_killed...)
LARGE = [d for d, x in N.DEFECTS.items() if x.config in configs.SAFETY_ONLY]


def _every_run(defects):
    return [pytest.param(d, marks=pytest.mark.deep) if d in LARGE else d for d in defects]


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


def test_a_defect_no_trace_catches_is_reported_as_surviving(tmp_path):
    (tmp_path / "memory-before-publish.json").write_text((R.TRACES / "memory-before-publish.json").read_text())
    table = K.rows(tmp_path, defects=["memory-before-publish", "step-failed-duplicate-interrupt"], server=BUNDLED)
    explorer = [r for r in table if r.trace == K.EXPLORER]
    assert [r.defect for r in explorer] == ["step-failed-duplicate-interrupt"] and explorer[0].detected
    assert K.undetected(table) == []
    # with the fallback unable to help, the matrix must say so
    assert not K.detects("memory-before-publish", R.replay_file(tmp_path / "memory-before-publish.json", server=BUNDLED))


@pytest.fixture(scope="module")
def explorer_counterexamples():
    # the two liveness defects explore whole graphs (~10 s each): do them side by side
    return K.counterexamples([d for d in N.DEFECTS if d not in LARGE])


@pytest.mark.parametrize("defect", _every_run(N.DEFECTS))
def test_explorer_counterexample_reproduces_on_the_implementation(explorer_counterexamples, tmp_path, defect):
    found = explorer_counterexamples[defect] if defect in explorer_counterexamples else K.counterexample(defect)
    path = T.save(found, tmp_path / f"{defect}.json")
    tr = T.load(path)
    res = R.replay(tr, name=str(path), server=BUNDLED)  # recorded defects: the same defect on
    assert res.consumed == len(tr.steps)
    assert set(tr.meta.invariants) <= set(res.violated), res.problems
    off = R.replay(tr, [], name=str(path), server=BUNDLED)  # the correct implementation does not run into the same violation
    assert not set(tr.meta.invariants) & set(off.violated), off.problems
