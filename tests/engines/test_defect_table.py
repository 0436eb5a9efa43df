"""The defect table of spec/README.md: each defect on (or assumption off) is a violation of its expected
invariant for the twin and for TLC; with none on, both engines pass the gate configurations."""

import pytest

import smallest
from serverkit import BUNDLED

from harness.conformance import replay as R
from harness.engines.check import run_python, run_tlc, witness_config, witnesses
from spec import configs
from spec import names as N

WITNESSES = {w.name: w for w in witnesses()}
# TLC with liveness on these takes minutes a run (sessions: 156,295 states, its defects' graphs larger):
# marked `deep`, run nightly (`pytest -m deep`); the explorer's own checks of them stay in every run, but on
# `scans` (three Sessions, millions of states; the explorer's breadth-first search reaches its defect's
# violation after 268,584 states) those are nightly too: tests/spec/test_scan_window.py checks the window
# on the states of its trace in every run. (No witness is on `scans` since `leftclaims`, issue 31 item 2:
# scan-window-ignores-fresh-share's counterexample there is 4 steps, 48 states, on both engines, every run)
DEEP = ("sessions", "scans")
DEEP_EXPLORER = ("scans",)


def _deep(value, config: str):
    return pytest.param(*value if isinstance(value, tuple) else (value,), marks=pytest.mark.deep) \
        if config in DEEP else value


# the explorer on a witness of `sessions` with liveness is 41 to 46 s of a loaded CI worker: nightly; their
# lassos on the twin stay in every run, on `leftclaims` (the liveness pairs below)
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.deep) if WITNESSES[n].config_name in DEEP
                                  else n for n in sorted(WITNESSES)])
def test_explorer_detects(name, out_dir):
    w = WITNESSES[name]
    o = run_python(witness_config(w), w.config_name, liveness=True, out_dir=out_dir)
    w.outcomes["python"] = o
    assert w.detected("python"), (o.verdict, o.violated, w.expected)
    assert o.trace_path is not None and o.trace_path.exists()
    if w.kind == "defect":
        _reproduces_on_the_implementation(o, off=True)


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
    # a safety headline: one TLC worker (with two, TLC's breadth-first order is not strict, and its counterexample
    # may be a step longer than the shortest: seen on takeover-trusts-scan), no liveness (TLC checks invariants
    # during its search and liveness at its end, so the first violation is the same; on `scans` liveness took
    # 1,024 s to it, 171 s without), the JVM's first compiler alone (tlc.QUICK_JIT: a search of a dozen steps;
    # 5.5 s -> 2.0 s a run, idle)
    o = run_tlc(cfg, w.config_name, liveness=not safety, out_dir=out_dir, workers=1 if safety else 2,
                quick_jit=safety)
    w.outcomes["tlc"] = o
    assert w.detected("tlc"), (o.verdict, o.violated, w.expected, o.reason)
    if safety:  # both search breadth-first: shortest safety counterexamples
        assert o.length == run_python(cfg, w.config_name, liveness=False, out_dir=None).length
    if w.kind == "defect" and all(v not in N.LIVENESS for v in N.DEFECTS[name].violates):
        _reproduces_on_the_implementation(o)


def _reproduces_on_the_implementation(o, off: bool = False):
    """The loop closed (the kill matrix's other half, tests/conformance/test_killmatrix.py): an engine's
    counterexample, written as a trace, replays on the bundled server with its defect on and breaks what
    the engine said it breaks; `off`: and the correct server, replaying the same steps, does not. Here,
    where the engine ran it, so the suite pays for each run once."""
    res = R.replay_file(o.trace_path, server=BUNDLED)
    assert res.consumed == len(res.trace.steps)
    assert set(o.violated) <= set(res.violated), res.problems
    if off:
        correct = R.replay(res.trace, [], name=str(o.trace_path), server=BUNDLED)
        assert not set(o.violated) & set(correct.violated), correct.problems


# each configuration's one TLC check, which also writes its graph, is tests/engines/test_equivalence.py's, as
# in the gate; the deep configurations' checks are here
@pytest.mark.deep
@pytest.mark.parametrize("name", DEEP)
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


# TLC's side of a pair is a JVM's start and a parse for a few steps' search (about 5 s of a loaded CI worker):
# in every run each safety invariant is broken on both engines by one defect (the first pair that lists it, off
# `scans`) and every pair on the twin; every pair on both engines in the deep profile (nightly)
TLC_EVERY_RUN = set({inv: (d, inv) for d, inv in reversed(PAIRS) if N.DEFECTS[d].config not in DEEP_EXPLORER}.values())


def _broken_alone(defect: str, invariant: str):
    """The twin's counterexample for `invariant` checked alone under `defect` on its witness configuration."""
    from harness.engines.explore import explore
    cfg = configs.get(N.DEFECTS[defect].config, defects=[defect])
    py = explore(cfg, liveness=False, only={invariant})
    assert py.violation and invariant in py.violation.invariants, (defect, py.violation)
    return cfg, py.violation


@pytest.mark.parametrize("defect,invariant", [pytest.param(d, i, marks=pytest.mark.deep, id=f"{d}-{i}")
                                              if N.DEFECTS[d].config in DEEP_EXPLORER else
                                              pytest.param(d, i, id=f"{d}-{i}") for d, i in PAIRS])
def test_each_safety_invariant_a_defect_lists_is_broken_by_it_on_the_twin(defect, invariant):
    """Issue 12, items 5 and 6: no invariant is true by construction. Each safety invariant a defect's
    `violates` lists is broken by that defect, checked alone (both engines stop at the first property a
    state or step breaks, which may be another one the defect lists)."""
    _broken_alone(defect, invariant)


@pytest.mark.parametrize("defect,invariant", [pytest.param(d, i, marks=pytest.mark.deep, id=f"{d}-{i}")
                                              if N.DEFECTS[d].config in DEEP_EXPLORER or (d, i) not in TLC_EVERY_RUN
                                              else pytest.param(d, i, id=f"{d}-{i}") for d, i in PAIRS])
def test_each_safety_invariant_a_defect_lists_is_broken_on_both_engines(defect, invariant, tlc_or_skip):
    """The same on TLC, with equal counterexample lengths (the JVM's first compiler alone: a short search)."""
    from harness.engines import tlc as T
    cfg, violation = _broken_alone(defect, invariant)
    tlc = T.run(cfg, liveness=False, workers=1, only={invariant}, quick_jit=True)
    assert tlc.verdict == "violation" and invariant in tlc.violated, (defect, tlc.violated, tlc.output[-500:])
    assert len(violation.steps) == len(tlc.steps)


def test_every_safety_invariant_is_broken_on_tlc_in_every_run():
    assert {i for _d, i in TLC_EVERY_RUN} == set(SAFETY)


@pytest.mark.parametrize("invariant", STRONGER_SAFETY + ONCE_UNBROKEN + ("QuarantineOnlyMalformed",))
def test_each_stronger_safety_invariant_has_a_breaking_defect(invariant):
    assert any(invariant in d.violates for d in N.DEFECTS.values()), invariant


def test_a_defect_reaches_tlc_through_its_hook_override(tlc_or_skip, monkeypatch):
    """Issue 12, item 7: the defect switches are the MC module's MC<Hook>, and TLC applies `Hook <- MCHook`
    to the hooks SessionExecution (an EXTENDed module) defines. Without the override lines the same
    configuration, `Defects` and all, is the correct protocol to TLC: an override that did not apply would
    go unnoticed but for the defect table above."""
    from harness.engines import tlc as T
    cfg = configs.get("rows", defects=["renew-after-expiry"])  # rows: the smallest it changes (3,089 states)
    found = T.run(cfg, liveness=False, workers=1, only={"FencedMutation"})
    assert found.verdict == "violation" and found.violated == ["FencedMutation"] and len(found.steps) == 4
    monkeypatch.setattr(configs, "HOOKS", tuple(h for h in configs.HOOKS
                                                if h not in ("RenewAccepts", "HeartbeatAccepts")))
    assert "RenewAccepts <-" not in configs.to_tlc_cfg(cfg) and 'Defects = {"renew-after-expiry"}' in configs.to_tlc_cfg(cfg)
    missed = T.run(cfg, liveness=False, workers=1, only={"FencedMutation"})
    assert missed.verdict == "ok", missed.violated
    assert missed.distinct == T.run(configs.get("rows"), liveness=False, workers=1, only={"FencedMutation"}).distinct


@pytest.fixture(scope="module", autouse=True)
def _drop_the_defect_graph():
    yield
    smallest.defect_graph.cache_clear()


LIVE_PAIRS = [(d.name, p) for d in N.DEFECTS.values() for p in d.violates if p in N.LIVENESS]


def _broken_on_the_twin(defect, prop, name):
    from harness.engines.liveness import check_leads_to
    cfg = configs.get(name, defects=[defect])
    assert check_leads_to(cfg, smallest.defect_graph(defect, name), prop) is not None, (defect, prop, name)
    return cfg


def _broken_on_both_engines(defect, prop, name):
    from harness.engines import tlc as T
    cfg = _broken_on_the_twin(defect, prop, name)
    tlc = T.run(cfg, liveness=True, only={prop})
    assert tlc.verdict == "violation" and tlc.loop is not None, (defect, prop, name, tlc.output[-500:])
    assert prop in T.liveness_names(cfg, tlc)


# TLC's liveness run of one property on `ci` with a defect costs a minute or more: each pair is checked on the
# smallest gate or feature configuration where the twin finds its lasso (spec/README.md, "the test suite's
# budget"), on its witness configuration whole in the deep profile. In every run every pair on the twin, and
# on TLC each liveness property once, with the first pair that lists it (as the safety invariants above: 8 to
# 50 s a TLC run; spec/README.md, "the test suite's budget, part 2"); every pair on both engines nightly.
# wake-retry-oldest-first's TLC lasso (31 s) and the pairs whose witness is `sessions` are nightly only; their
# twin side stays in every run.
DEEP_PAIRS = ("wake-retry-oldest-first",)
TLC_LIVE_EVERY_RUN = set({p: (d, p) for d, p in reversed(LIVE_PAIRS)
                          if d not in DEEP_PAIRS and N.DEFECTS[d].config not in DEEP}.values())


@pytest.mark.parametrize("defect,prop", LIVE_PAIRS, ids=[f"{d}-{p}" for d, p in LIVE_PAIRS])
def test_each_liveness_property_a_defect_lists_is_broken_by_it_on_the_twin(defect, prop):
    """Issue 12, item 6, for liveness: each property a defect lists, checked alone, has a fair lasso (a
    cycle that takes no fault step its premise says ceases) on the twin's graph."""
    _broken_on_the_twin(defect, prop, smallest.liveness_config(defect, prop))


@pytest.mark.parametrize("defect,prop", [pair if pair in TLC_LIVE_EVERY_RUN else pytest.param(*pair, marks=pytest.mark.deep)
                                         for pair in LIVE_PAIRS],
                         ids=[f"{d}-{p}" for d, p in LIVE_PAIRS])
def test_each_liveness_property_a_defect_lists_is_broken_on_both_engines(defect, prop, tlc_or_skip):
    """The same lasso in TLC."""
    _broken_on_both_engines(defect, prop, smallest.liveness_config(defect, prop))


# listed only by the witnesses on `sessions` (silent-quarantine-noop, recovery-retries-unbounded), whose TLC
# lassos (on `leftclaims`, the smallest with one) are nightly
TLC_NIGHTLY_ONLY = ("ExpiredClaimsEventuallyHandled",)


def test_every_liveness_property_a_defect_lists_is_broken_on_tlc_in_every_run():
    assert {p for _d, p in TLC_LIVE_EVERY_RUN} == {p for _d, p in LIVE_PAIRS} - set(TLC_NIGHTLY_ONLY)


@pytest.mark.deep
@pytest.mark.parametrize("defect,prop", LIVE_PAIRS, ids=[f"{d}-{p}" for d, p in LIVE_PAIRS])
def test_each_liveness_property_a_defect_lists_is_broken_on_its_witness_configuration(defect, prop, tlc_or_skip):
    _broken_on_both_engines(defect, prop, N.DEFECTS[defect].config)


def _satisfied_alone(names):
    from harness.engines.explore import explore
    from harness.engines.liveness import check_leads_to
    for name in sorted(names):
        cfg = configs.get(name)
        graph = explore(cfg, liveness=False, keep_edges=True, stop_on_violation=False, check=False).graph
        for prop in N.LIVENESS:
            assert check_leads_to(cfg, graph, prop) is None, (name, prop)


def test_the_correct_protocol_satisfies_each_liveness_property_alone_where_the_pairs_run():
    """The other half: without the defect, the same property holds on each configuration a pair runs on."""
    _satisfied_alone({smallest.liveness_config(d, p) for d, p in LIVE_PAIRS})


@pytest.mark.deep
def test_the_correct_protocol_satisfies_each_liveness_property_alone_on_the_witnesses():
    _satisfied_alone({N.DEFECTS[d].config for d, _p in LIVE_PAIRS})
