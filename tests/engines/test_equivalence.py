"""Twin equivalence: TLC's full state graph (written by TLC as it runs: harness/engines/tlcgraph.py) equals the
twin's, for every gate and feature configuration (the correct protocol; `ci` and `leftclaims` nightly) and for
each defect (in every run those that break only liveness properties); and the comparison fails when one guard is
weakened on one side only, the twin's or TLC's."""

import pytest

import smallest
import tlckit
from harness.engines import tlc
from harness.engines.equivalence import compare, twin_graph
from harness.engines.explore import explore
from harness.reports import tlcruns
from spec import configs
from spec import model as M
from spec import names as N


def _graphs_are_equal_and_tlc_passes(name: str, at_least: int, liveness: bool = True) -> None:
    """As the gate does it (harness/reports/tlcruns.py): TLC's one check of the configuration (every invariant,
    the refinement, the liveness properties when `liveness`) writes the graph the twin's is compared with, so
    the suite pays for TLC on each configuration once (tlckit.shared_runs)."""
    runs = tlckit.shared_runs()
    c = compare(configs.get(name), tlc_graph=runs.start(name, liveness=liveness))
    assert c.equal, c
    assert c.twin_states == c.tlc_states > at_least and c.twin_edges == c.tlc_edges
    o = runs.get(name, liveness=liveness).outcome
    assert o.verdict == "ok" and o.liveness == liveness and o.distinct == c.twin_states, (o.verdict, o.reason)


# The whole configurations are the gate's (the README's first command compares `ci`'s graphs and checks it on
# TLC, liveness too) and the deep profile's: `ci` (95,651 states; 278 to 397 s of a loaded CI worker, the
# suite's longest test) and `leftclaims` (57 s) nightly (spec/README.md, "the test suite's budget, part 2").
@pytest.mark.deep
@pytest.mark.parametrize("name", sorted(tlckit.WHOLE))
def test_the_whole_configurations_graphs_are_equal_and_tlc_passes_them(name, tlc_or_skip):
    _graphs_are_equal_and_tlc_passes(name, tlckit.WHOLE[name])


# TLC checks the liveness properties in every run on two gate configurations, `rows` (two Sessions) and
# `heartbeat` (renewals); on the others it checks every invariant and the refinement in every run (its
# liveness check costs 2-3x: steer 47 s against 17 s, inputs 27 against 13, listeners 23 against 9, measured
# side by side; steps 51 s against about 20; wakes' per-row RetryAdvances 85 s) and the liveness properties
# nightly; the explorer checks every liveness property on them in every run (tests/spec/test_twin.py), and each
# liveness property is broken on TLC in every run (tests/engines/test_defect_table.py). `sessions` (156,295
# states): its graph and its check are nightly.
TLC_LIVENESS = ("rows", "heartbeat")
EVERY_RUN = tlckit.COMPARED_EVERY_RUN


@pytest.mark.parametrize("name", EVERY_RUN)
def test_graphs_are_equal_and_tlc_passes_on_each_configuration(name, tlc_or_skip):
    # (the smallest, `delivery`, has 705 states)
    _graphs_are_equal_and_tlc_passes(name, 500, liveness=name in TLC_LIVENESS)


@pytest.mark.deep
@pytest.mark.parametrize("name", [c for c in EVERY_RUN if c not in TLC_LIVENESS])
def test_tlc_checks_the_liveness_properties_on_each_feature_configuration(name, tlc_or_skip):
    _graphs_are_equal_and_tlc_passes(name, 500)


@pytest.mark.deep
def test_graphs_are_equal_on_sessions(tlc_or_skip):
    c = compare(configs.get("sessions"))
    assert c.equal, c
    assert c.twin_states == c.tlc_states > 100_000 and c.twin_edges == c.tlc_edges


# A defect's graphs are compared on the smallest gate or feature configuration where the defect changes the
# twin's graph (its hooks are reached there, on both sides), not on its witness configuration whole: 17 of
# the 32 witnesses are `ci` (95,651 states) or `sessions` (156,295), and TLC writing each one's graph was
# the test suite's largest cost. Which one is tests/smallest.json's answer (searched again nightly); the
# test checks the defect does change the graph there. The witness configurations whole run in the deep
# profile (nightly).
# a defect no small configuration reaches, whose witness has millions of states (configs.SAFETY_ONLY), and
# scan-window-ignores-fresh-share, whose graph on `leftclaims` (three Sessions, a window of two: the largest
# small configuration) TLC wrote in 154 s of a loaded run: nightly (its 4-step counterexample on both engines
# stays in every run; `leftclaims`' own graph is nightly too since part 2)
DEEP_GRAPHS = ("scan-window-ignores-fresh-share",)
# Each defect's TLC override runs in every run once (spec/README.md, "the test suite's budget, part 2"): a
# defect whose witness breaks a safety invariant in test_defect_table's TLC counterexample, whose graph here
# (5 to 40 s each, 302 s for all) is nightly; a defect that breaks only liveness properties in its graph here,
# since TLC breaks each liveness property in every run with one defect only.
EVERY_RUN_GRAPHS = {d for d, x in N.DEFECTS.items() if all(v in N.LIVENESS for v in x.violates)} - set(DEEP_GRAPHS)


@pytest.mark.parametrize("defect", [d if d in EVERY_RUN_GRAPHS and N.DEFECTS[d].config not in configs.SAFETY_ONLY
                                    else pytest.param(d, marks=pytest.mark.deep) for d in sorted(N.DEFECTS)])
def test_graphs_are_equal_with_each_defect(defect, tlc_or_skip):
    """The twin's graph with the defect is built once, for both questions (it changes the graph; TLC's equals
    it), and first, so that TLC writes a small one on the JVM's first compiler alone (tlc.QUICK_JIT_STATES)."""
    name = smallest.equivalence_config(defect)
    cfg = configs.get(name, defects=[defect])
    twin = twin_graph(cfg)
    assert smallest.key_edges(twin) != smallest.edges(name), f"{defect} does not change {name}'s graph: python tests/smallest.py"
    c = compare(cfg, twin=twin, tlc_graph=tlc.start_state_graph(cfg, quick_jit=len(twin[1]) <= tlc.QUICK_JIT_STATES))
    assert c.equal, (name, c)


@pytest.mark.deep
@pytest.mark.parametrize("defect", sorted(d for d in N.DEFECTS if N.DEFECTS[d].config in ("ci", "sessions")))
def test_graphs_are_equal_with_each_defect_on_its_witness_configuration(defect, tlc_or_skip):
    d = N.DEFECTS[defect]
    c = compare(configs.get(d.config, defects=[defect]))
    assert c.equal, c


def test_a_hook_that_reads_a_hook_reads_it_switched(tlc_or_skip):
    """Protocol!SteerSelects is OrdinarySelects, which TLC overrides inside the instance too: with
    recovery-input-in-ordinary-queue, steer selection takes recovery-owned continuations as the queue does
    (spec.hooks.steer_selects reads cfg.hooks.ordinary_selects; before the hook table the twin's Steer
    excluded them, 24,372 states to TLC's 26,352)."""
    c = compare(configs.get("steer", defects=["recovery-input-in-ordinary-queue"]))
    assert c.equal, c
    assert c.twin_states == c.tlc_states > explore(configs.get("steer"), liveness=False, keep_edges=False).distinct


def test_comparison_fails_when_the_twin_is_altered(tlc_or_skip, monkeypatch):
    steps = tuple((n, tlckit.renew_without_lease_check if n == "Renew" else f) for n, f in M.RUNNER_STEPS)
    monkeypatch.setattr(M, "RUNNER_STEPS", steps)
    c = compare(configs.get("heartbeat"))
    assert not c.equal and c.twin_states > c.tlc_states
    assert "Renew" in c.only_twin_labels  # the weakened guard's own edges are the first difference


def test_comparison_fails_when_tlc_is_altered(tlc_or_skip, monkeypatch, tmp_path):
    """The other side: TLC's spec with Renew's lease predicate dropped, the twin as it is."""
    monkeypatch.setattr(tlc, "MODULES", tlckit.altered_modules(tmp_path))
    c = compare(configs.get("heartbeat"))
    assert not c.equal and c.tlc_states > c.twin_states and c.only_tlc_states and not c.only_twin_states
    assert "Renew" in c.only_tlc_labels  # renewals of an expired lease, which the twin refuses


@pytest.mark.parametrize("name,scope", [("rows", "sessions"), ("prompts", "nodes")])
def test_quotient_graphs_are_equal_under_symmetry(name, scope, tlc_or_skip):
    """TLC's SYMMETRY and the twin's canonical form (spec/symmetry.py): the same orbits and the same edges
    between them, and fewer orbits than states."""
    c = compare(configs.get(name), symmetry=scope)
    assert c.equal, c
    assert c.twin_states == c.tlc_states < explore(configs.get(name), liveness=False, keep_edges=False).distinct


def test_quotient_comparison_fails_when_the_twin_is_altered(tlc_or_skip, monkeypatch):
    steps = tuple((n, tlckit.renew_without_lease_check if n == "Renew" else f) for n, f in M.RUNNER_STEPS)
    monkeypatch.setattr(M, "RUNNER_STEPS", steps)
    c = compare(configs.get("rows"), symmetry="sessions")
    assert not c.equal and "Renew" in c.only_twin_labels
