"""Trace format v1: engine counterexamples round-trip through files and replay on the twin."""

import json

import pytest

from harness.traces import trace as T
from harness.engines.check import run_python, run_tlc
from spec import configs


def test_explorer_counterexample_round_trips_and_replays(out_dir):
    cfg = configs.get("ci", defects=["step-failed-duplicate-interrupt"])
    o = run_python(cfg, "ci", liveness=False, out_dir=out_dir)
    tr = T.load(o.trace_path)
    assert tr.meta.invariants == ["AtMostOneTerminal"] and tr.config.defects == ["step-failed-duplicate-interrupt"]
    _cfg, states = T.replay_twin(tr)
    assert len(states) == len(tr.steps) + 1 == 11


def test_tlc_counterexample_is_written_in_the_same_format(out_dir, tlc_or_skip):
    cfg = configs.get("rows", defects=["cross-session-recovery-collision"])
    o = run_tlc(cfg, "rows", liveness=False, out_dir=out_dir)
    tr = T.load(o.trace_path)
    assert tr.meta.source == "tlc" and "RecoveryRowsIsolated" in tr.meta.invariants
    T.replay_twin(tr)


def test_liveness_lasso_returns_to_its_loop_state(out_dir):
    cfg = configs.get("ci", defects=["step-started-window"])
    o = run_python(cfg, "ci", liveness=True, out_dir=out_dir)
    tr = T.load(o.trace_path)
    _cfg, states = T.replay_twin(tr)
    assert tr.loop is not None and states[-1] == states[tr.loop]


def test_replaying_without_the_defect_is_refused(out_dir):
    o = run_python(configs.get("ci", defects=["renew-after-expiry"]), "ci", liveness=False, out_dir=out_dir)
    with pytest.raises(T.TraceError, match="not enabled in the twin|differs"):
        T.replay_twin(T.load(o.trace_path), defects=[])


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("steps"), "steps"),
    (lambda d: d["steps"][0].update(action="Teleport"), "action"),
    (lambda d: d["config"].update(defects=["nope"]), "config.defects"),
    (lambda d: d.update(version=2), "version"),
    (lambda d: d["steps"][0]["params"].update(n=3), "params.n"),
])
def test_malformed_traces_name_the_field(mutate, field, out_dir, tmp_path):
    o = run_python(configs.get("ci", defects=["memory-before-publish"]), "ci", liveness=False, out_dir=out_dir)
    data = json.loads(o.trace_path.read_text())
    mutate(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(T.TraceError, match=field.replace(".", r"\.")):
        T.replay_twin(T.load(bad), name=str(bad))


def test_not_json_is_a_trace_error(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{nope")
    with pytest.raises(T.TraceError, match="not JSON"):
        T.load(bad)
