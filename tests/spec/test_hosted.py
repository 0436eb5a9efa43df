"""Hosted tools (issue 31 item 4, its last part; spec/README.md decision 19): Hosted 0 keeps every graph
(Step.Started names no call), `hosted` holds every invariant and liveness property, the runner publishes
the hosted call's outcome before its local call, recovery records an open hosted call's outcome, and
`step-ended-before-hosted-tool` loses it (the claim is removed with the call open)."""

from harness.engines.explore import explore
from spec import configs
from spec import model as M
from spec import names as N

START = [("Acquire", ("n1", M.Input("s1", "prompt", 1, "pending"))), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
         ("PublishStepStarted", ("n1",)), ("StepStartedReturn", ("n1",))]


def _walk(cfg, plan, st=None):
    st = M.init(cfg) if st is None else st
    for name, params in plan:
        nxt = M.apply(cfg, st, name, params)
        assert nxt is not None, name
        st = nxt
    return st


def test_hosted_is_small_and_holds_everything_with_liveness():
    res = explore(configs.get("hosted"), liveness=True)
    assert res.ok and res.distinct == 2_002
    assert set(res.liveness_checked) == set(N.LIVENESS)
    assert "hosted" in configs.FEATURE_CONFIGS


def test_hosted_zero_names_no_call_in_step_started():
    cfg = configs.get("tools")
    assert cfg.hosted == 0
    st = _walk(cfg, START)
    assert st.run[0].pc == "stepping" and [(e.kind, e.call) for e in st.log] == [("Started", 0)]
    assert not M.open_call(st, 1, 2)


def test_the_runner_publishes_the_hosted_outcome_before_its_local_call():
    cfg = configs.get("hosted")
    st = _walk(cfg, START)
    assert st.run[0].pc == "hosted" and M.open_call(st, 1, 2)
    assert M.apply(cfg, st, "ToolStart", ("n1",)) is None and M.apply(cfg, st, "PublishStepEnded", ("n1",)) is None
    st = _walk(cfg, [("HostedReconcile", ("n1",))], st)
    assert [(e.kind, e.call) for e in st.log] == [("Started", 2), ("ToolSucceeded", 2)]
    assert not M.open_call(st, 1, 2) and st.run[0].pc == "stepping"


def test_recovery_records_an_open_hosted_call_after_a_failed_publication():
    cfg = configs.get("hosted")
    st = _walk(cfg, START + [("HostedReconcileFails", ("n1",)), ("MarkUnknown", ("n1",)), ("RunnerExit", ("n1",)),
                             ("Tick", ()), ("Tick", ()), ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)),
                             ("RecoveryReconcile", ("r1",)), ("RecoveryConvert", ("r1",))])
    assert [(e.kind, e.call) for e in st.log] == [("Started", 2), ("ToolFailed", 2), ("Interrupted", 0)]
    assert not any(e.kind == "tool" for e in st.effects)  # the provider ran it: the runner never does


def test_step_ended_before_hosted_tool_loses_the_outcome():
    d = N.DEFECTS["step-ended-before-hosted-tool"]
    assert d.config == "hosted" and d.violates == ("UnknownNeverReexecuted",)
    res = explore(configs.get("hosted", defects=[d.name]), liveness=False)
    assert res.violation and res.violation.invariants == ["UnknownNeverReexecuted"]
    last = res.violation.steps[-1]
    assert last.action == "ClearClaim" and M.open_call(last.state, 1, 2)


def test_reconciliation_skips_hosted_call_leaves_it_open():
    d = N.DEFECTS["reconciliation-skips-hosted-call"]
    res = explore(configs.get("hosted", defects=[d.name]), liveness=False)
    assert d.config == "hosted" and res.violation and res.violation.invariants == ["UnknownNeverReexecuted"]
    assert M.open_call(res.violation.steps[-1].state, 1, 2)


def test_the_trace_passes_on_the_reference_and_fails_under_its_defect():
    from harness.conformance import replay as R
    from serverkit import BUNDLED
    path = R.TRACES / "step-ended-before-hosted-tool.json"
    ok = R.replay_file(path, server=BUNDLED)
    assert not ok.problems and ok.consumed == len(ok.trace.steps)
    assert R.replay_file(path, ["step-ended-before-hosted-tool"], server=BUNDLED).problems
