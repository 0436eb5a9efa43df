"""The twin's actions, guards and invariants, one behaviour at a time."""


import pytest

from harness.engines.explore import explore
from spec import configs
from spec import invariants as I
from spec import model as M
from spec import names as N

CFG = configs.get("ci")


def run(cfg, *steps):
    st = M.init(cfg)
    for name, params in steps:
        nxt = M.apply(cfg, st, name, params)
        assert nxt is not None, f"{name}{params} not enabled"
        st = nxt
    return st


PROMPT1 = M.Input("s1", "prompt", 1, "pending")
PROMPT2 = M.Input("s1", "prompt", 2, "pending")


def test_init_satisfies_every_state_invariant():
    assert I.check_state(CFG, M.init(CFG)) == []


def test_acquire_is_insert_only():
    CFG = configs.get("prompts")  # a second prompt queued
    st = run(CFG, ("Acquire", ("n1", PROMPT1)))
    assert st.claim[0].exec == 1 and st.claim[0].owner == "n1"
    assert M.apply(CFG, st, "Acquire", ("n2", PROMPT2)) is None  # occupied
    expired = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Crash", ("n1",)), ("Tick", ()))
    assert expired.claim[0].ttl == 0
    assert M.apply(CFG, expired, "Acquire", ("n2", PROMPT2)) is None  # expired still occupies


def test_acquire_overwrites_expired_defect_replaces_the_claim():
    cfg = configs.get("prompts", defects=["acquire-overwrites-expired"])  # its witness needs a second prompt
    st = run(cfg, ("Acquire", ("n1", PROMPT1)), ("Crash", ("n1",)), ("Tick", ()), ("Acquire", ("n2", PROMPT2)))
    assert st.claim[0].exec == 2
    prev = run(cfg, ("Acquire", ("n1", PROMPT1)), ("Crash", ("n1",)), ("Tick", ()))
    assert not I.AcquireNeverOverwrites(cfg, prev, st)


def test_renew_rejects_an_expired_lease_and_stops_the_runner():
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Tick", ()), ("Renew", ("n1",)))
    assert st.run[0].pc == "stopped" and st.claim[0].ttl == 0


def test_memory_is_set_only_when_step_started_returns():
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
             ("PublishStepStarted", ("n1",)))
    assert st.claim[0].asst == 1 and st.run[0].mem == 0
    st = M.apply(CFG, st, "StepStartedReturn", ("n1",))
    assert st.run[0].mem == 1 and st.run[0].active


def test_cancel_in_the_step_started_window_interrupts_the_durable_assistant():
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
             ("PublishStepStarted", ("n1",)), ("CancelRequest", ("n1", "s1")), ("RunnerStop", ("n1",)),
             ("FinalizerReconcile", ("n1",)), ("FinalizerSettle", ("n1",)), ("FinalizerClear", ("n1",)))
    assert [(e.kind, e.asst) for e in st.log] == [("Started", 1), ("Interrupted", 1)]
    assert st.claim[0] == M.NO_CLAIM and not st.recovery
    assert M.RecRow(1, "s1") in st.cancelled


def test_step_started_window_defect_strands_the_claim_cancelling():
    cfg = configs.get("ci", defects=["step-started-window"])
    st = run(cfg, ("Acquire", ("n1", PROMPT1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
             ("PublishStepStarted", ("n1",)), ("CancelRequest", ("n1", "s1")), ("RunnerStop", ("n1",)),
             ("FinalizerReconcile", ("n1",)))
    # the rejected restart: the settlement rolls back whole and the finalizer retries under its live
    # heartbeat, in its reconciliation span, the claim cancelling: each attempt changes nothing
    assert st.fin[0].pc == "reconciling" and st.claim[0].phase == "cancelling"
    assert M.apply(cfg, st, "FinalizerSettle", ("n1",)) is None
    assert M.apply(cfg, st, "Tick", ()).faults == {"pause"}  # only a pause lets the lease run out


def test_recovery_finishes_an_expired_cancellation():
    """Issue 12 item 4: a crash between running -> cancelling and Step.Interrupted; recovery publishes
    Step.Interrupted once, records the execution cancelled and clears the claim, with no recovery row."""
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
             ("PublishStepStarted", ("n1",)), ("CancelRequest", ("n1", "s1")), ("Crash", ("n1",)),
             ("Tick", ()), ("Tick", ()), ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)))
    assert st.claim[0].phase == "cancelling" and st.claim[0].owner == "r1" and st.claim[0].tries == 1
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
             ("PublishStepStarted", ("n1",)), ("CancelRequest", ("n1", "s1")), ("Crash", ("n1",)),
             ("Tick", ()), ("Tick", ()), ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)),
             ("RecoveryReconcile", ("r1",)), ("RecoveryConvert", ("r1",)))
    assert [(e.kind, e.asst, e.node) for e in st.log] == [("Started", 1, "n1"), ("Interrupted", 1, "r1")]
    assert st.claim[0] == M.NO_CLAIM and not st.recovery and M.RecRow(1, "s1") in st.cancelled
    assert not any(i.kind == "cont" for i in st.inputs)


def test_a_conversion_that_lost_its_lease_is_retried_then_quarantined():
    """Issue 12 item 4: a pause of the recovery worker releases the claim to a later takeover; only when
    its attempts reach MaxTries is it quarantined (exhausted, a justified quarantine)."""
    cfg = configs.get("ci")
    steps = [("Acquire", ("n1", PROMPT1)), ("Crash", ("n1",)), ("Tick", ()), ("Tick", ())]
    for attempt in range(1, cfg.max_tries + 1):
        steps += [("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)), ("Tick", ()),
                  ("RecoveryReconcile", ("r1",)), ("RecoveryConvert", ("r1",))]
        st = run(cfg, *steps)
        assert st.claim[0].tries == attempt and "pause" in st.faults
        if attempt < cfg.max_tries:
            assert st.rec[0] == M.REC_IDLE and not st.claim[0].quar  # released, not quarantined
            steps += [("Tick", ())]
    assert st.rec[0].pc == "quarantining"
    st = M.apply(cfg, st, "RecoveryQuarantine", ("r1",))
    assert st.claim[0].quar and I.QuarantineOnlyMalformed(cfg, st)


def test_recovery_takes_only_expired_claims_and_converts_with_one_row():
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Renew", ("n1",)), ("Dispatch", ("n1",)),
             ("PublishStepStarted", ("n1",)))
    assert M.apply(CFG, st, "RecoveryScan", ("r1", "s1")) is None  # live
    st = run_from(st, ("Crash", ("n1",)), ("Tick", ()), ("Tick", ()), ("RecoveryScan", ("r1", "s1")),
                  ("RecoveryTakeover", ("r1",)),
                  ("RecoveryReconcile", ("r1",)), ("RecoveryConvert", ("r1",)))
    assert st.recovery == {M.RecRow(1, "s1")}
    assert M.Input("s1", "cont", 1, "pending") in st.inputs
    assert [e.kind for e in st.log] == ["Started", "Interrupted"]


def run_from(st, *steps, cfg=CFG):
    for name, params in steps:
        nxt = M.apply(cfg, st, name, params)
        assert nxt is not None, f"{name}{params} not enabled"
        st = nxt
    return st


def test_continuation_is_not_ordinarily_selectable():
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Crash", ("n1",)), ("Tick", ()), ("Tick", ()),
             ("RecoveryScan", ("r1", "s1")), ("RecoveryTakeover", ("r1",)), ("RecoveryReconcile", ("r1",)), ("RecoveryConvert", ("r1",)))
    cont = M.Input("s1", "cont", 1, "pending")
    assert M.apply(CFG, st, "Acquire", ("n1", cont)) is None
    assert M.apply(CFG, st, "PromoteContinuation", ("n1", cont)) is not None


def test_tick_never_expires_a_lease_between_renewal_and_dispatch_under_timely_dispatch():
    st = run(CFG, ("Acquire", ("n1", PROMPT1)), ("Renew", ("n1",)))
    assert M.apply(CFG, st, "Tick", ()) is None
    off = configs.get("ci", assumptions_off=["TimelyDispatch"])
    assert M.apply(off, st, "Tick", ()) is not None


def test_every_invariant_in_the_registry_has_a_twin_definition():
    assert set(I.STATE_CHECKS) | set(I.ACTION_CHECKS) == {
        n for n, inv in N.INVARIANTS.items() if inv.kind not in ("liveness", "refinement")}
    for name in N.LIVENESS:
        assert I.leads_to(name, configs.get("wakes") if name in N.WAKE_PROPERTIES else CFG)


# the gate's configurations and the feature configurations (whose liveness TLC checks nightly:
# tests/engines/test_equivalence.py); `sessions` (156,295 states) and `ci` (95,651, 50 to 56 s: the gate's
# explorer stage checks it) nightly (spec/README.md, "the test suite's budget, part 2")
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.deep) if n in ("sessions", "ci") else n
                                  for n in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS])
def test_correct_model_holds_every_invariant_and_every_liveness_property(name):
    res = explore(configs.get(name), liveness=True)
    assert res.violation is None
    assert res.liveness_checked == list(N.LIVENESS)
    assert res.distinct > 500


def test_explorer_counterexample_is_shortest():
    # memory-before-publish needs: acquire, renew, dispatch, an expiry, and the failed publication
    cfg = configs.get("ci", defects=["memory-before-publish"])
    res = explore(cfg, liveness=False)
    assert res.violation.invariants == ["MemoryFollowsDurable"]
    assert [s.action for s in res.violation.steps[1:]] == ["Acquire", "Renew", "Dispatch", "Tick",
                                                         "PublishStepStarted"]


