"""spec/guards.py explains the twin's guards: for an instance the twin does not enable, the first failing
conjunct of its TLA+ guard in the protocol's words; None exactly when spec.model enables the instance
(checked on sampled reachable states of several configurations, defects and assumptions included)."""

import random

import pytest

from spec import configs
from spec import guards as G
from spec import model as M
from spec import names as N

CI = configs.get("ci")


def _instances(cfg, st):
    """Every instance of every action over the configuration's names (and inputs near the queued ones)."""
    inputs = {x._replace(state=s) for x in st.inputs for s in N.INPUT_STATES}
    inputs |= {M.Input(s, "cont", e, "pending") for s in cfg.sessions for e in range(1, cfg.max_exec + 1)}
    inputs |= {M.Input(cfg.sessions[0], "prompt", cfg.prompts + 1, "pending")}
    inputs |= {x._replace(flaw=f) for x in inputs if x.kind == "cont" for f in N.CONTINUATION_FLAWS[:2]}
    domain = {"r": cfg.recoverers, "s": cfg.sessions, "i": sorted(inputs), "e": range(0, cfg.max_exec + 2),
              "w": range(0, cfg.wake_rows + 2), "k": range(0, cfg.wakers + 2), "d": N.DIGESTS,
              "f": N.CONTINUATION_FLAWS}
    for name, action in N.ACTIONS.items():
        actors = cfg.nodes + cfg.recoverers if action.actor in ("node", "fault") else cfg.nodes
        combos = [()]
        for letter in action.params:
            combos = [c + (v,) for c in combos for v in (actors if letter == "n" else domain[letter])]
        yield from ((name, c) for c in combos)


def _walks(cfg, seed, walks=60, depth=40):
    rnd = random.Random(seed)
    seen = {}
    for _ in range(walks):
        st = M.init(cfg)
        for _ in range(depth):
            seen.setdefault(st, None)
            nxt = list(M.successors(cfg, st))
            if not nxt:
                break
            st = rnd.choice(nxt)[2]
    return list(seen)


CASES = [("ci", configs.get("ci")), ("sessions", configs.get("sessions")),
         ("ci-defects", configs.get("ci", defects=["acquire-overwrites-expired", "renew-after-expiry",
                                                   "recovery-input-in-ordinary-queue"])),
         ("sessions-defects", configs.get("sessions", defects=["renew-after-expiry", "cross-session-recovery-collision"])),
         ("ci-assumptions-off", configs.get("ci", assumptions_off=list(configs.ASSUMPTION_FIELDS))),
         ("wakes", configs.get("wakes")), ("wakes-share-zero", configs.get("wakes", defects=["wake-fresh-share-zero"])),
         ("wakes2", configs.get("wakes2")), ("wakes2-no-cas", configs.get("wakes2", defects=["wake-reserve-without-cas"])),
         ("forged", configs.get("forged")), ("forged-ignores-id", configs.get("forged", defects=["promotion-ignores-id"]))]


@pytest.mark.parametrize("cfg", [c for _, c in CASES], ids=[n for n, _ in CASES])
def test_why_not_is_none_exactly_when_the_twin_enables_the_instance(cfg):
    checked = 0
    for st in _walks(cfg, seed=16):
        on = {(a, p) for a, p, _ in M.successors(cfg, st)}
        for name, params in _instances(cfg, st):
            why = G.why_not(cfg, st, name, params)
            assert (why is None) == ((name, params) in on), (G.label(name, params), why, st)
            checked += 1
    assert checked > 10_000


def _after(cfg, *labels):
    st = M.init(cfg)
    for want in labels:
        st = next(nx for a, p, nx in M.successors(cfg, st) if G.label(a, p) == want)
    return st


P1 = M.Input("s1", "prompt", 1, "pending")


def test_runner_family():
    st = _after(CI, "Acquire(n1, s1/prompt#1)", "Renew(n1)")
    assert G.why_not(CI, st, "PublishStepStarted", ("n1",)) == "runner n1 is not at streaming (it is at renewed)"
    assert G.why_not(CI, st, "Acquire", ("n2", P1)) == "input s1/prompt#1 is not queued as pending (it is ordinary)"
    assert G.why_not(CI, st, "Acquire", ("n2", P1._replace(state="ordinary"))) == (
        "input s1/prompt#1 is not pending (it is ordinary)")
    p2 = M.Input("s1", "prompt", 2, "pending")
    assert G.why_not(CI, st, "Acquire", ("n2", p2)) == "input s1/prompt#2 is not queued as pending (there is no such input)"
    two = configs.get("prompts")
    st = _after(two, "Acquire(n1, s1/prompt#1)", "Renew(n1)")
    assert G.why_not(two, st, "Acquire", ("n2", p2)).startswith("the claim for s1 is not free (running, execution 1, "
                                                               "owner n1")
    assert G.why_not(two, st, "Acquire", ("n1", p2)) == "runner n1 is not idle (it is at renewed)"
    assert G.why_not(two, st, "RunnerStop", ("n1",)) == "runner n1 has not been interrupted"
    assert G.why_not(two, st, "PromoteContinuation", ("n2", p2)) == "input s1/prompt#2 is a prompt, not a continuation"


def test_cancellation_family():
    st = _after(CI, "Acquire(n1, s1/prompt#1)")
    assert G.why_not(CI, st, "CancelRequest", ("n2", "s1")) == (
        "the claim for s1 is owned by n1, not n2 (ProcessLocalRouting: an interrupt reaches its owner)")
    assert G.why_not(CI, M.init(CI), "CancelRequest", ("n1", "s1")) == "there is no claim for s1"
    st = _after(CI, "Acquire(n1, s1/prompt#1)", "CancelRequest(n1, s1)")
    assert G.why_not(CI, st, "FinalizerReconcile", ("n1",)) == (
        "runner n1 still works on execution 1 (at acquired): the finalizer waits for it to stop")
    assert G.why_not(CI, st, "FinalizerSettle", ("n1",)) == "finalizer n1 has not reconciled (it is settle)"
    assert G.why_not(CI, st, "FinalizerClear", ("n1",)) == "finalizer n1 is not at clear (it is settle)"
    assert G.why_not(CI, st, "Renew", ("n1",)) == "runner n1 has been interrupted (it can only stop)"


def test_lease_and_time_family():
    cfg = configs.get("heartbeat")
    st = _after(cfg, "Acquire(n1, s1/prompt#1)")
    assert G.why_not(cfg, st, "Heartbeat", ("n1", "s1")) == "the lease of the claim for s1 is fresh (ttl 2, Lease 2)"
    assert G.why_not(cfg, st, "Heartbeat", ("r1", "s1")) == "the claim for s1 is owned by n1, not r1"
    assert G.why_not(cfg, M.init(cfg), "Tick", ()) == "no claim has a live lease or a grace tick left (Grace 1)"
    st = _after(CI, "Acquire(n1, s1/prompt#1)", "Renew(n1)")
    assert G.why_not(CI, st, "Tick", ()) == ("runner n1 is between its renewal and the provider dispatch, and the "
                                             "lease of s1 would expire (TimelyDispatch)")


def test_recovery_family():
    st = _after(CI, "Acquire(n1, s1/prompt#1)")
    assert G.why_not(CI, st, "RecoveryScan", ("r1", "s1")) == "the lease of the claim for s1 has not expired (ttl 1)"
    assert G.why_not(CI, st, "RecoveryTakeover", ("r1",)) == "recovery worker r1 has not scanned (it is idle)"
    assert G.why_not(CI, st, "RecoveryConvert", ("r1",)) == "recovery worker r1 has not reconciled (it is idle)"
    assert G.why_not(CI, st, "RecoveryReconcile", ("r1",)) == "recovery worker r1 has not taken a claim over (it is idle)"
    st = _after(CI, "Acquire(n1, s1/prompt#1)", "Renew(n1)", "Dispatch(n1)", "Tick()", "Supervise(n1)", "Tick()",
                "RecoveryScan(r1, s1)")
    assert G.why_not(CI, st, "RecoveryTakeover", ("r1",)) is None
    assert G.why_not(CI, st, "RecoveryScan", ("r1", "s1")) == "recovery worker r1 is busy (scanned execution 1 of s1)"
    st = _after(CI, "Acquire(n1, s1/prompt#1)", "Renew(n1)", "Dispatch(n1)", "Tick()", "Supervise(n1)", "Tick()",
                "RecoveryScan(r1, s1)", "RecoveryTakeover(r1)")
    assert G.why_not(CI, st, "RecoveryScan", ("r1", "s1")) == "recovery worker r1 is busy (converting execution 1 of s1)"
    assert G.why_not(CI, st, "RecoveryQuarantine", ("r1",)) == "recovery worker r1 is not quarantining (it is converting)"


def test_fault_family():
    assert G.why_not(CI, M.init(CI), "Crash", ("n1",)) == "node n1 has no runner or finalizer at work"
    assert G.why_not(CI, M.init(CI), "Crash", ("r1",)) == "recovery worker r1 is idle"
    cfg = configs.get("sessions")
    assert G.why_not(cfg, M.init(cfg), "Crash", ("n1",)) == "crash is not among the faults of this configuration"
    assert G.why_not(CI, M.init(CI), "CorruptRecoveryRow", ("s1", 1)) == "no other Session's claim holds execution 1"


def test_explain_names_the_conjunct_and_lists_what_is_enabled():
    line = G.explain(CI, M.init(CI), "ClearClaim", ("n1",))
    assert line.startswith("ClearClaim(n1) is not enabled in the twin: runner n1 is not at done (it is at idle); enabled here: ")
    assert "Acquire(n1, s1/prompt#1)" in line and "\n" not in line


def test_a_long_list_of_enabled_instances_is_cut():
    from dataclasses import replace
    cfg = replace(CI, nodes=tuple(f"n{k}" for k in range(1, 21)))
    line = G.explain(cfg, M.init(cfg), "Renew", ("n1",))
    assert line.endswith(f", … {CI.prompts * 20 - G.MAX_LISTED} more") and line.count("Acquire(") == G.MAX_LISTED
