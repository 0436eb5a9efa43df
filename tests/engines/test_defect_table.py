"""The defect table of spec/README.md: each defect on (or assumption off) is a violation of its expected
invariant for the twin and for TLC; with none on, both engines pass the gate configurations."""

import pytest

from harness.engines.check import run_python, run_tlc, witness_config, witnesses
from spec import configs

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
