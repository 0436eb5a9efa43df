"""Local tools and the `unknown` phase (issue 13 item 2): Tools 0 keeps every configuration's graph, the
`tools` configuration holds every invariant and liveness property, each tool defect breaks its invariants
there with a short witness, and the two traces pass on the reference and fail under their defect."""

import pytest

from harness.conformance import replay as R
from harness.engines.explore import explore
from spec import configs
from spec import model as M
from spec import names as N
from serverkit import BUNDLED

TOOL_DEFECTS = ("recovery-reruns-unknown-tool", "tool-settled-before-publication", "retry-tool-after-failed-publication")


def test_tools_is_small_and_holds_everything_with_liveness():
    res = explore(configs.get("tools"), liveness=True)
    assert res.ok and res.distinct == 7_182
    assert set(res.liveness_checked) == set(N.LIVENESS)


@pytest.mark.parametrize("defect", TOOL_DEFECTS)
def test_each_tool_defect_breaks_its_headline_on_tools(defect):
    d = N.DEFECTS[defect]
    assert d.config == "tools"
    res = explore(configs.get("tools", defects=[defect]), liveness=False)
    assert res.violation and d.violates[0] in res.violation.invariants
    assert len(res.violation.steps) - 1 <= 12


def test_the_rerun_also_starts_a_physical_tool_twice():
    res = explore(configs.get("tools", defects=["recovery-reruns-unknown-tool"]), liveness=False,
                  only=["ToolStartsOnce"])
    assert res.violation and res.violation.invariants == ["ToolStartsOnce"]


def test_tools_zero_leaves_the_runner_without_tool_steps():
    cfg = configs.get("ci")
    assert cfg.tools == 0
    st = M.init(cfg)
    for name, params in (("Acquire", ("n1", M.Input("s1", "prompt", 1, "pending"))), ("Renew", ("n1",)),
                         ("Dispatch", ("n1",)), ("PublishStepStarted", ("n1",)), ("StepStartedReturn", ("n1",))):
        st = M.apply(cfg, st, name, params)
    assert M.apply(cfg, st, "ToolStart", ("n1",)) is None
    assert M.apply(cfg, st, "PublishStepEnded", ("n1",)) is not None


@pytest.mark.parametrize("defect", TOOL_DEFECTS)
def test_tool_traces_pass_on_the_reference_and_fail_under_their_defect(defect):
    path = R.TRACES / f"{defect}.json"
    ok = R.replay_file(path, server=BUNDLED)
    assert not ok.problems and ok.consumed == len(ok.trace.steps)
    assert R.replay_file(path, [defect], server=BUNDLED).problems
