"""The gate's TLC runs (harness/reports/tlcruns.py): one TLC run per configuration, whose graph the twin = TLC
stage compares and whose outcome the TLC stage reports; a comparison that still fails under a change on either
side; and outcomes reused between gate runs by content, which an edited module misses. On `hosted` (2,002
states: TLC's check with liveness 9 s, `heartbeat`'s 17) as the only configuration, so each TLC run takes seconds."""

import pytest

import tlckit
from serverkit import BUNDLED
from harness.engines import check, tlc
from harness.reports import gate, tlcruns
from spec import configs
from spec import model as M


SMALL, STATES = "hosted", "2,002"
# a defect that breaks SMALL on both engines (UnknownNeverReexecuted, 10 steps)
DEFECT, BROKEN = "reconciliation-skips-hosted-call", "UnknownNeverReexecuted"


@pytest.fixture
def small(monkeypatch):
    """The gate's TLC stages on SMALL alone; returns the list of configurations TLC actually ran."""
    monkeypatch.setattr(configs, "GATE_CONFIGS", (SMALL,))
    monkeypatch.setattr(configs, "FEATURE_CONFIGS", ())
    monkeypatch.setattr(tlcruns, "GRAPH_CONFIGS", (SMALL,))
    ran = []
    real = check.run_tlc

    def counted(cfg, name, **kw):
        ran.append((name, kw.get("graph") is not None))
        return real(cfg, name, **kw)
    monkeypatch.setattr(check, "run_tlc", counted)
    return ran


def stages(tmp_path, reuse=None):
    g = gate.Gate(tmp_path / "found", server=BUNDLED, reuse=reuse)
    return gate.run_gate(g, [s for s in gate.STAGES if s.name in ("twin = TLC", "TLC")])


def test_one_tlc_run_per_configuration_serves_both_stages(tlc_or_skip, small, tmp_path):
    eq, tl = stages(tmp_path)
    assert eq.status == gate.PASS and f"{SMALL}: {STATES} states" in eq.detail, eq
    assert tl.status == gate.PASS and "run by twin = TLC" in tl.detail, tl
    assert small == [(SMALL, True)]  # one run, the graph written by the check itself
    assert not eq.reused and not tl.reused


def test_the_gate_comparison_fails_when_the_twin_is_altered(tlc_or_skip, small, tmp_path, monkeypatch):
    steps = tuple((n, tlckit.renew_without_lease_check if n == "Renew" else f) for n, f in M.RUNNER_STEPS)
    monkeypatch.setattr(M, "RUNNER_STEPS", steps)
    eq, tl = stages(tmp_path)
    assert eq.status == gate.FAIL and eq.kind == "GraphsDiffer", eq
    assert tl.status == gate.PASS  # TLC's own check holds: only the twin changed


def test_the_gate_comparison_fails_when_tlc_is_altered(tlc_or_skip, small, tmp_path, monkeypatch):
    """TLC's check meets a renewal the twin has no step for in its counterexample, before the graphs are compared
    (tests/engines/test_equivalence.py compares the altered graphs themselves)."""
    monkeypatch.setattr(tlc, "MODULES", tlckit.altered_modules(tmp_path))
    eq, tl = stages(tmp_path)
    assert eq.status == tl.status == gate.FAIL and "the spec and the twin disagree" in eq.detail, eq
    assert small == [(SMALL, True)]  # the failed run is not run again for the TLC stage


def test_a_violation_in_the_shared_run_fails_both_stages(tlc_or_skip, small, tmp_path, monkeypatch):
    """A graph cut short by a violation is never compared: twin = TLC says why, TLC reports the violation."""
    real = configs.get
    monkeypatch.setattr(configs, "get", lambda name, **kw: real(name, **kw) if kw or name != SMALL
                        else real(name, defects=[DEFECT]))
    eq, tl = stages(tmp_path)
    assert eq.status == gate.FAIL and eq.kind == "GraphUnavailable" and "VIOLATION" in eq.detail, eq
    assert tl.status == gate.FAIL and BROKEN in tl.detail
    assert small == [(SMALL, True)]


def test_outcomes_are_reused_by_content_and_an_edited_module_misses(tlc_or_skip, small, tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    copies = tmp_path / "spec"
    copies.mkdir()
    modules = []
    for m in tlc.MODULES:
        (copies / m.name).write_text(m.read_text())
        modules.append(copies / m.name)
    monkeypatch.setattr(tlc, "MODULES", tuple(modules))
    first = stages(tmp_path, reuse=store)
    assert len(small) == 1 and not any(r.reused for r in first)
    again = stages(tmp_path, reuse=store)
    assert len(small) == 1, "the second gate run ran TLC again"
    assert all(r.status == gate.PASS and r.reused for r in again), again
    assert "TLC's side reused" in again[0].detail and f"{SMALL}: {STATES} states" in again[0].detail
    text = gate.summary(again)
    assert "gate: reused from an earlier gate run" in text and "TLC (reused)" in text and "twin = TLC (TLC's side reused)" in text
    modules[0].write_text(modules[0].read_text() + "\n\\* edited\n")
    edited = stages(tmp_path, reuse=store)
    assert len(small) == 2 and not any(r.reused for r in edited), "an edited module was served a stored outcome"
    assert stages(tmp_path)[1].status == gate.PASS and len(small) == 3  # no store (--no-reuse): run again


def test_a_violation_is_never_stored(tlc_or_skip, small, tmp_path, monkeypatch):
    real = configs.get
    monkeypatch.setattr(configs, "get", lambda name, **kw: real(name, **kw) if kw or name != SMALL
                        else real(name, defects=[DEFECT]))
    stages(tmp_path, reuse=tmp_path / "store")
    stages(tmp_path, reuse=tmp_path / "store")
    assert len(small) == 2 and not list((tmp_path / "store").glob("*.json"))


def test_no_reuse_reaches_the_gate(monkeypatch, tmp_path):
    from harness import cli
    seen = []
    monkeypatch.setattr(gate, "STAGES", [gate.Stage("x", lambda g: seen.append(g.tlc.store) or gate.StageResult("x", gate.PASS))])
    monkeypatch.setenv("CLAIMCHECK_TLC_CACHE", str(tmp_path / "kept"))
    assert cli.main(["gate", "--out", str(tmp_path)]) == 0
    assert cli.main(["gate", "--out", str(tmp_path), "--no-reuse"]) == 0
    assert seen == [tmp_path / "kept", None]


def test_the_summary_prints_every_stage_time_on_one_line():
    rs = [gate.StageResult("parse", gate.PASS, seconds=2.25), gate.StageResult("TLC", gate.PASS, seconds=61.0),
          gate.StageResult("Apalache", gate.SKIP, "not chosen (--stage)", kind="NotChosen")]
    line = gate.summary(rs).splitlines()[-1]
    assert line == "gate: stage times: parse 2.2 s, TLC 61.0 s; total 63.2 s"


def test_tlc_checks_run_in_the_background_while_the_explorer_runs(tlc_or_skip, small, tmp_path, monkeypatch):
    """run_gate queues the TLC checks first: the explorer stage here does not return until TLC's check has
    started on its own thread, which a gate running TLC in its turn (after the explorer) would never do."""
    import threading
    started, threads = threading.Event(), []
    real_tlc, real_python = check.run_tlc, check.run_python

    def tlc_started(cfg, name, **kw):
        threads.append(threading.current_thread().name)
        started.set()
        return real_tlc(cfg, name, **kw)

    def python_after_tlc(cfg, name, **kw):
        assert started.wait(300), "TLC's check did not start while the explorer stage ran"
        return real_python(cfg, name, **kw)
    monkeypatch.setattr(check, "run_tlc", tlc_started)
    monkeypatch.setattr(check, "run_python", python_after_tlc)
    g = gate.Gate(tmp_path / "found", server=BUNDLED)
    try:
        rs = gate.run_gate(g, [s for s in gate.STAGES if s.name in ("explorer", "twin = TLC", "TLC")])
    finally:
        g.tlc.close()
    assert [r.status for r in rs[1:]] == [gate.PASS] * 2, rs  # (the explorer's fence branches need more configurations)
    assert threads and all(t.startswith("tlc") for t in threads), threads


def test_twin_side_is_the_explorer_stages_graph_and_still_fails_when_altered(tlc_or_skip, small, tmp_path,
                                                                            monkeypatch):
    """After the explorer stage held on a configuration twin = TLC compares, its graph is the twin's side
    (the twin is not explored a second time); a one-sided change to the twin still makes the graphs differ."""
    from harness.engines import equivalence
    explored = []
    real = equivalence.twin_graph
    monkeypatch.setattr(equivalence, "twin_graph", lambda *a, **kw: explored.append(a) or real(*a, **kw))
    chosen = [s for s in gate.STAGES if s.name in ("explorer", "twin = TLC")]
    eq = gate.run_gate(gate.Gate(tmp_path / "a", server=BUNDLED), chosen)[1]
    assert eq.status == gate.PASS and "explorer stage's graph" in eq.detail and not explored, eq
    steps = tuple((n, tlckit.renew_without_lease_check if n == "Renew" else f) for n, f in M.RUNNER_STEPS)
    monkeypatch.setattr(M, "RUNNER_STEPS", steps)
    eq = gate.run_gate(gate.Gate(tmp_path / "b", server=BUNDLED), chosen)[1]
    assert eq.status == gate.FAIL and eq.kind == "GraphsDiffer", eq
