"""Publication faults of Step.Started and Step.Ended (issue 31 item 4; spec/README.md decision 26): under
`memory-before-publish` a failed Step.Started breaks MemoryFollowsDurable under a live lease, on the
explorer and on TLC with the same counterexample; a failed Step.Ended takes the same error path (the claim
goes unknown) and recovery settles the started assistant; no configuration without the fault takes them."""

from harness.engines import tlc
from harness.engines.explore import explore
from spec import configs
from spec import model as M

FAULTS = ("StepStartedFails", "StepEndedFails")


def _memory_counterexample():
    res = explore(configs.get("tools", defects=["memory-before-publish"]), liveness=False,
                  only=["MemoryFollowsDurable"])
    assert res.violation and res.violation.invariants == ["MemoryFollowsDurable"]
    return res.violation.steps


def test_memory_before_publish_breaks_through_the_fault_under_a_live_lease():
    steps = _memory_counterexample()
    assert [s.action for s in steps[1:]] == ["Acquire", "Renew", "Dispatch", "StepStartedFails"]
    last = steps[-1].state
    assert last.claim[0].ttl > 0 and last.claim[0].phase == "running" and last.run[0].mem == 1 and not last.log


def test_tlc_finds_the_same_counterexample(tlc_or_skip):
    o = tlc.run(configs.get("tools", defects=["memory-before-publish"]), liveness=False, workers=1)
    assert o.verdict == "violation" and o.violated == ["MemoryFollowsDurable"]
    assert [s.action for s in o.steps] == [None] + [s.action for s in _memory_counterexample()[1:]]


def test_a_failed_step_ended_leaves_an_unknown_claim_that_recovery_interrupts():
    cfg = configs.get("tools")
    st = M.init(cfg)
    plan = [("Acquire", ("n1", M.Input("s1", "prompt", 1, "pending"))), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
            ("PublishStepStarted", ("n1",)), ("StepStartedReturn", ("n1",)), ("ToolStart", ("n1",)),
            ("ToolRun", ("n1",)), ("PublishToolSuccess", ("n1",))]
    for name, params in plan:
        st = M.apply(cfg, st, name, params)
    assert M.apply(cfg, st, "StepEndedFails", ("n1",)) is not None
    for name, params in [("StepEndedFails", ("n1",)), ("MarkUnknown", ("n1",)), ("RunnerExit", ("n1",)),
                         ("Tick", ()), ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)),
                         ("RecoveryReconcile", ("r1",)), ("RecoveryConvert", ("r1",))]:
        nxt = M.apply(cfg, st, name, params)
        assert nxt is not None, name
        st = nxt
        if name == "MarkUnknown":
            assert st.claim[0].phase == "unknown" and st.run[0].pc == "stopped"
    assert [e.kind for e in st.log] == ["Started", "ToolStarted", "ToolSucceeded", "Interrupted"]
    assert len([e for e in st.effects if e.kind == "dispatch"]) == 1


def test_only_configurations_with_the_publication_fault_take_them():
    for name in configs.CONFIGS:
        cfg = configs.get(name)
        possible = set(configs.possible_actions(cfg))
        assert (set(FAULTS) <= possible) == ("publication" in cfg.faults), name
