"""The defect table of spec/README.md: each defect on (or assumption off) is a violation of its expected
invariant for the twin and for TLC; with none on, both engines pass the gate configurations."""

import functools

import pytest

from harness.engines.check import run_python, run_tlc, witness_config, witnesses
from spec import configs
from spec import names as N

WITNESSES = {w.name: w for w in witnesses()}
# TLC with liveness on these takes minutes a run (sessions: 156,295 states, its defects' graphs larger):
# marked `deep`, run nightly (`pytest -m deep`); the explorer's own checks of them stay in every run
DEEP = ("sessions",)


def _deep(value, config: str):
    return pytest.param(*value if isinstance(value, tuple) else (value,), marks=pytest.mark.deep) \
        if config in DEEP else value


@pytest.mark.parametrize("name", sorted(WITNESSES))
def test_explorer_detects(name, out_dir):
    w = WITNESSES[name]
    o = run_python(witness_config(w), w.config_name, liveness=True, out_dir=out_dir)
    w.outcomes["python"] = o
    assert w.detected("python"), (o.verdict, o.violated, w.expected)
    assert o.trace_path is not None and o.trace_path.exists()


def _liveness_only(w) -> bool:
    return all(p in N.LIVENESS for p in w.expected)


# A witness that breaks only liveness properties is shown on TLC by the pair test below, one TLC run per
# property it lists (each checked alone: a minute less a run than all of them at once, step-started-window
# on ci); its explorer side stays in test_explorer_detects.
@pytest.mark.parametrize("name", [_deep(n, WITNESSES[n].config_name) for n in sorted(WITNESSES)
                                  if not _liveness_only(WITNESSES[n])])
def test_tlc_detects_with_the_same_counterexample_length(name, out_dir, tlc_or_skip):
    w = WITNESSES[name]
    cfg = witness_config(w)
    safety = w.expected[0] not in N.LIVENESS
    # one TLC worker for a safety headline: with two, TLC's breadth-first order is not strict, and its
    # counterexample may be a step longer than the shortest (seen on takeover-trusts-scan)
    o = run_tlc(cfg, w.config_name, liveness=True, out_dir=out_dir, workers=1 if safety else 2)
    w.outcomes["tlc"] = o
    assert w.detected("tlc"), (o.verdict, o.violated, w.expected, o.reason)
    py = run_python(cfg, w.config_name, liveness=True, out_dir=None)
    if safety:
        assert o.length == py.length  # both search breadth-first: shortest safety counterexamples


# ci: its one TLC check, which also writes the graph, is tests/engines/test_equivalence.py's, as in the gate
@pytest.mark.parametrize("name", [_deep(n, n) for n in configs.GATE_CONFIGS + configs.FEATURE_CONFIGS if n != "ci"])
def test_tlc_passes_the_correct_spec_with_the_twins_state_count(name, tlc_or_skip):
    cfg = configs.get(name)
    o = run_tlc(cfg, name, liveness=True, out_dir=None)
    assert o.verdict == "ok", o.reason
    assert o.distinct == run_python(cfg, name, liveness=False, out_dir=None).distinct


STRONGER_SAFETY = ("PhaseMonotonic", "ClearOnlySettled", "QuarantineOnlyByRecovery")
# issue 12, item 6: the invariants no registry defect broke before (NoPhysicalReplay only TimelyDispatch off)
ONCE_UNBROKEN = ("TypeOK", "AtMostOneStart", "InterruptOnlyAfterStart", "NoPhysicalReplay", "CancelLeavesNoRecovery")


SAFETY = N.STATE_INVARIANTS + N.ACTION_INVARIANTS
PAIRS = [(d.name, inv) for d in N.DEFECTS.values() for inv in d.violates if inv in SAFETY]


@pytest.mark.parametrize("defect,invariant", PAIRS, ids=[f"{d}-{i}" for d, i in PAIRS])
def test_each_safety_invariant_a_defect_lists_is_broken_on_both_engines(defect, invariant, tlc_or_skip):
    """Issue 12, items 5 and 6: no invariant is true by construction. Each safety invariant a defect's
    `violates` lists is broken by that defect, checked alone (both engines stop at the first property a
    state or step breaks, which may be another one the defect lists), with equal counterexample lengths."""
    from harness.engines import tlc as T
    from harness.engines.explore import explore
    d = N.DEFECTS[defect]
    cfg = configs.get(d.config, defects=[defect])
    py = explore(cfg, liveness=False, only={invariant})
    tlc = T.run(cfg, liveness=False, workers=1, only={invariant})
    assert py.violation and invariant in py.violation.invariants, (defect, py.violation)
    assert tlc.verdict == "violation" and invariant in tlc.violated, (defect, tlc.violated, tlc.output[-500:])
    assert len(py.violation.steps) == len(tlc.steps)


@pytest.mark.parametrize("invariant", STRONGER_SAFETY + ONCE_UNBROKEN + ("QuarantineOnlyMalformed",))
def test_each_stronger_safety_invariant_has_a_breaking_defect(invariant):
    assert any(invariant in d.violates for d in N.DEFECTS.values()), invariant


def test_a_defect_reaches_tlc_through_its_hook_override(tlc_or_skip, monkeypatch):
    """Issue 12, item 7: the defect switches are the MC module's MC<Hook>, and TLC applies `Hook <- MCHook`
    to the hooks SessionExecution (an EXTENDed module) defines. Without the override lines the same
    configuration, `Defects` and all, is the correct protocol to TLC: an override that did not apply would
    go unnoticed but for the defect table above."""
    from harness.engines import tlc as T
    cfg = configs.get("ci", defects=["renew-after-expiry"])
    found = T.run(cfg, liveness=False, workers=1, only={"FencedMutation"})
    assert found.verdict == "violation" and found.violated == ["FencedMutation"] and len(found.steps) == 4
    monkeypatch.setattr(configs, "HOOKS", tuple(h for h in configs.HOOKS
                                                if h not in ("RenewAccepts", "HeartbeatAccepts")))
    assert "RenewAccepts <-" not in configs.to_tlc_cfg(cfg) and 'Defects = {"renew-after-expiry"}' in configs.to_tlc_cfg(cfg)
    missed = T.run(cfg, liveness=False, workers=1, only={"FencedMutation"})
    assert missed.verdict == "ok", missed.violated
    assert missed.distinct == T.run(configs.get("ci"), liveness=False, workers=1, only={"FencedMutation"}).distinct


@functools.lru_cache(maxsize=1)
def _defect_graph(defect):
    """The twin's full graph with `defect` on, explored once for that defect's adjacent pairs (check_leads_to
    only reads it); one at a time, to bound the memory."""
    from harness.engines.explore import explore
    cfg = configs.get(N.DEFECTS[defect].config, defects=[defect])
    return explore(cfg, liveness=False, keep_edges=True, stop_on_violation=False, check=False).graph


@pytest.fixture(scope="module", autouse=True)
def _drop_the_defect_graph():
    yield
    _defect_graph.cache_clear()


LIVE_PAIRS = [(d.name, p) for d in N.DEFECTS.values() for p in d.violates if p in N.LIVENESS]


@pytest.mark.parametrize("defect,prop", [_deep(pair, N.DEFECTS[pair[0]].config) for pair in LIVE_PAIRS],
                         ids=[f"{d}-{p}" for d, p in LIVE_PAIRS])
def test_each_liveness_property_a_defect_lists_is_broken_on_both_engines(defect, prop, tlc_or_skip):
    """Issue 12, item 6, for liveness: each property a defect lists, checked alone, has a fair lasso (a
    cycle that takes no fault step its premise says ceases) on the twin's graph and in TLC."""
    from harness.engines import tlc as T
    from harness.engines.liveness import check_leads_to
    d = N.DEFECTS[defect]
    cfg = configs.get(d.config, defects=[defect])
    graph = _defect_graph(defect)
    assert check_leads_to(cfg, graph, prop) is not None, (defect, prop)
    tlc = T.run(cfg, liveness=True, only={prop})
    assert tlc.verdict == "violation" and tlc.loop is not None, (defect, prop, tlc.output[-500:])
    assert prop in T.liveness_names(cfg, tlc)


def test_each_liveness_only_witness_is_shown_on_tlc_by_the_pair_test():
    """What keeps dropping them from test_tlc_detects honest: every property such a witness lists is a pair
    above (a defect's), or a witness of its own there (an assumption: none breaks only liveness today)."""
    only = [w for w in WITNESSES.values() if _liveness_only(w)]
    assert only and all(w.kind == "defect" for w in only), [w.name for w in only if w.kind != "defect"]
    assert {(w.name, p) for w in only for p in w.expected} <= set(LIVE_PAIRS)


def test_the_correct_protocol_satisfies_each_liveness_property_alone_on_the_witnesses():
    """The other half: without the defect, the same property holds on each witness configuration."""
    from harness.engines.explore import explore
    from harness.engines.liveness import check_leads_to
    for name in sorted({N.DEFECTS[d].config for d, _p in LIVE_PAIRS}):
        cfg = configs.get(name)
        graph = explore(cfg, liveness=False, keep_edges=True, stop_on_violation=False, check=False).graph
        for prop in N.LIVENESS:
            assert check_leads_to(cfg, graph, prop) is None, (name, prop)
