"""The defect table of spec/README.md: each defect on (or assumption off) is a violation of its expected
invariant for the twin and for TLC; with none on, both engines pass the gate configurations."""

import pytest

from harness.engines.check import run_python, run_tlc, witness_config, witnesses
from spec import configs
from spec import names as N

WITNESSES = {w.name: w for w in witnesses()}


@pytest.mark.parametrize("name", sorted(WITNESSES))
def test_explorer_detects(name, out_dir):
    w = WITNESSES[name]
    o = run_python(witness_config(w), w.config_name, liveness=True, out_dir=out_dir)
    w.outcomes["python"] = o
    assert w.detected("python"), (o.verdict, o.violated, w.expected)
    assert o.trace_path is not None and o.trace_path.exists()


@pytest.mark.parametrize("name", sorted(WITNESSES))
def test_tlc_detects_with_the_same_counterexample_length(name, out_dir, tlc_or_skip):
    w = WITNESSES[name]
    cfg = witness_config(w)
    o = run_tlc(cfg, w.config_name, liveness=True, out_dir=out_dir)
    w.outcomes["tlc"] = o
    assert w.detected("tlc"), (o.verdict, o.violated, w.expected, o.reason)
    py = run_python(cfg, w.config_name, liveness=True, out_dir=None)
    if w.expected[0] not in ("SessionsEventuallyAvailable", "ExpiredClaimsEventuallyHandled"):
        assert o.length == py.length  # both search breadth-first: shortest safety counterexamples


@pytest.mark.parametrize("name", configs.GATE_CONFIGS)
def test_tlc_passes_the_correct_spec_with_the_twins_state_count(name, tlc_or_skip):
    cfg = configs.get(name)
    o = run_tlc(cfg, name, liveness=True, out_dir=None)
    assert o.verdict == "ok", o.reason
    assert o.distinct == run_python(cfg, name, liveness=False, out_dir=None).distinct


STRONGER_SAFETY = ("PhaseMonotonic", "ClearOnlySettled", "QuarantineOnlyByRecovery")
# issue 12, item 6: the invariants no registry defect broke before (NoPhysicalReplay only TimelyDispatch off)
ONCE_UNBROKEN = ("TypeOK", "AtMostOneStart", "InterruptOnlyAfterStart", "NoPhysicalReplay", "CancelLeavesNoRecovery")


@pytest.mark.parametrize("invariant", STRONGER_SAFETY + ONCE_UNBROKEN)
def test_each_stronger_safety_invariant_is_broken_by_a_defect_on_both_engines(invariant, tlc_or_skip):
    """Issue 12, items 5 and 6: no invariant is true by construction. TLC stops at the first action
    property a step breaks, so the defect's counterexample must name this one on both engines."""
    breakers = [d for d in N.DEFECTS.values() if d.violates[0] == invariant]
    assert breakers, f"no registry defect has {invariant} as its headline"
    for d in breakers:
        cfg = configs.get(d.config, defects=[d.name])
        py = run_python(cfg, d.config, liveness=False, out_dir=None)
        tlc = run_tlc(cfg, d.config, liveness=False, out_dir=None, workers=1)
        assert invariant in py.violated, (d.name, py.violated)
        assert invariant in tlc.violated, (d.name, tlc.violated, tlc.reason)
        assert py.length == tlc.length
