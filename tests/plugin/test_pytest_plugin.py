"""The pytest plugin (harness/pytest_plugin.py, entry point `claimcheck` in pyproject's pytest11):
`pytest --claimcheck-traces DIR` makes each trace in DIR a test item that replays it; a failing item's
message is the replay's first divergence, not a traceback. Run with pytester on a folder of its own: a
trace that passes, the same trace with a defect in the implementation only (`mutant`), and a file that is
not a trace."""

import json

import pytest

from harness.conformance import replay as R
from serverkit import BUNDLED

pytest_plugins = ["pytester"]

GOOD = R.TRACES / "memory-before-publish.json"


@pytest.fixture
def traces(pytester):
    d = pytester.mkdir("races")
    (d / "good.json").write_text(GOOD.read_text())
    raw = json.loads(GOOD.read_text())
    raw["mutant"] = ["memory-before-publish"]  # the implementation sets memory before the commit
    (d / "mutant.json").write_text(json.dumps(raw))
    (d / "notes.txt").write_text("not a trace, not collected")
    (d / "schema").mkdir()
    (d / "schema" / "nested.json").write_text("{}")  # only DIR's own *.json, as `claimcheck replay DIR`
    pytester.makepyfile(test_other="def test_other():\n    pass\n")  # not asked for: not run
    return d


def test_each_trace_is_an_item_and_a_failure_is_the_first_divergence(pytester, traces):
    res = pytester.runpytest("--claimcheck-traces", str(traces), "-p", "no:cacheprovider", "-rf")
    res.assert_outcomes(passed=1, failed=1)
    out = res.stdout.str()
    first = R.replay_file(traces / "mutant.json", server=BUNDLED).problems[0]
    assert first.startswith("step 5 PublishStepStarted(n1)")
    res.stdout.fnmatch_lines(["*_ replay mutant.json _*", f"mutant.json: {first}",
                              "  step 5 PublishStepStarted(n1): divergence: run[[]n1].mem: model 0, implementation 1"])
    res.stdout.fnmatch_lines(["FAILED races/mutant.json::replay - mutant.json: step 5 PublishStepStarted(n1)*"])
    assert "Traceback" not in out and "def runtest" not in out and "raise TraceFailed" not in out
    assert "test_other" not in out and "nested.json" not in out


def test_a_defect_switched_on_in_the_trace_config_fails_it(pytester, traces):
    raw = json.loads(GOOD.read_text())
    raw["config"]["defects"] = ["memory-before-publish"]
    (traces / "good.json").write_text(json.dumps(raw))
    (traces / "mutant.json").unlink()
    res = pytester.runpytest("--claimcheck-traces", str(traces), "-p", "no:cacheprovider")
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["good.json: step 5 PublishStepStarted(n1): MemoryFollowsDurable violated",
                              "(1 more problem(s) after it*"])


def test_a_malformed_trace_fails_with_its_one_line_reason(pytester, traces):
    (traces / "broken.json").write_text("[]")
    res = pytester.runpytest("--claimcheck-traces", str(traces), "-p", "no:cacheprovider")
    res.assert_outcomes(passed=1, failed=2)
    res.stdout.fnmatch_lines(["not a replayable trace: *broken.json: (top): expected a trace object, got list"])
    assert "Traceback" not in res.stdout.str()


def test_with_test_paths_both_run_and_without_the_option_no_trace_is_collected(pytester, traces):
    (traces / "mutant.json").unlink()
    res = pytester.runpytest("test_other.py", "--claimcheck-traces", str(traces), "-p", "no:cacheprovider")
    res.assert_outcomes(passed=2)
    res = pytester.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)  # test_other only: the traces need the option


def test_the_option_names_a_folder(pytester):
    res = pytester.runpytest("--claimcheck-traces", "nowhere", "-p", "no:cacheprovider")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--claimcheck-traces nowhere: not a folder*"])


def test_registered_as_an_entry_point():
    from importlib.metadata import entry_points
    (ep,) = [e for e in entry_points(group="pytest11") if e.name == "claimcheck"]
    assert ep.value == "harness.pytest_plugin"
