"""Every invariant check can fail. The registry's defects break all of them (test_defect_table;
tests/reports/test_reviewer.py fails on an invariant none breaks); the invariants an assumption protects
are shown violated by the explorer with that assumption switched off; and the invariants no defect broke
before issue 12, item 6 keep a mutant twin each (one action changed), a second way to show the explorer
catching the violation."""

import pytest

from harness.engines.check import run_python
from harness.engines.explore import explore
from spec import configs
from spec import invariants as I
from spec import model as M
from spec import names as N

CFG = configs.get("ci")


def _restart_assistant(cfg, st, n):
    """Mutant: the finalizer's second Step.Started is accepted instead of rejected."""
    f, r = st.fin[n], st.run[n]
    if f.pc == "reconciling" and r.pc == "stopped" and r.exec == f.exec and st.claim[0].asst and r.mem == 0:
        ev = M.Event(f.sess, "Started", f.exec, f.owner)
        return st._replace(log=st.log + (ev,), fin=M._put(st.fin, n, M.FIN_IDLE))
    return ORIG["FinalizerSettle"](cfg, st, n)


def _interrupt_unstarted(cfg, st, r):
    """Mutant: recovery settles an execution that never started with Step.Interrupted."""
    nxt = ORIG["RecoveryConvert"](cfg, st, r)
    w = st.rec[r]
    if nxt is not None and w.pc == "reconciled" and nxt.rec[r] == M.REC_IDLE and st.claim[0].asst == 0:
        return nxt._replace(log=nxt.log + (M.Event(w.sess, "Interrupted", w.exec, cfg.recoverers[r]),))
    return nxt


def _convert_cancellations(cfg, st, r):
    """Mutant: recovery converts cancellation-owned work instead of quarantining it."""
    w = st.rec[r]
    c = st.claim[0]
    if w.pc == "reconciled" and c.phase in ("cancelling", "cancelled"):
        st = st._replace(claim=M._put(st.claim, 0, c._replace(phase="recovering")))
        nxt = ORIG["RecoveryConvert"](cfg, st, r)
        return nxt._replace(cancelled=nxt.cancelled | {M.RecRow(w.exec, w.sess)})
    return ORIG["RecoveryConvert"](cfg, st, r)


def _bad_phase(cfg, st, n):
    nxt = ORIG["Dispatch"](cfg, st, n)
    if nxt is None:
        return None
    return nxt._replace(claim=M._put(nxt.claim, 0, nxt.claim[0]._replace(phase="bogus")))


ORIG = {name: getattr(M, name) for name in ("FinalizerSettle", "RecoveryConvert", "Dispatch")}

MUTANTS = {
    "AtMostOneStart": ("FinalizerSettle", _restart_assistant),
    "InterruptOnlyAfterStart": ("RecoveryConvert", _interrupt_unstarted),
    "CancelLeavesNoRecovery": ("RecoveryConvert", _convert_cancellations),
    "TypeOK": ("Dispatch", _bad_phase),
}


@pytest.mark.parametrize("invariant", sorted(MUTANTS))
def test_mutant_is_caught(invariant, monkeypatch):
    action, mutant = MUTANTS[invariant]
    monkeypatch.setattr(M, action, mutant)
    monkeypatch.setattr(M, "RUNNER_STEPS", tuple((n, mutant if n == action else f) for n, f in M.RUNNER_STEPS))
    res = explore(CFG, liveness=False)
    assert res.violation is not None and invariant in res.violation.invariants


@pytest.fixture(scope="module")
def assumption_runs(tmp_path_factory):
    """Each registry assumption switched off, on its configuration: what the explorer found violated."""
    out = tmp_path_factory.mktemp("assumptions")
    runs = {}
    for name, a in N.ASSUMPTIONS.items():
        o = run_python(configs.get(a.config, assumptions_off=[name]), a.config, liveness=False, out_dir=out)
        runs[name] = o.violated if o.verdict == "violation" else []
    return runs


@pytest.mark.parametrize("assumption", sorted(N.ASSUMPTIONS))
def test_switching_an_assumption_off_shows_what_it_protects_violated(assumption, assumption_runs):
    assert assumption_runs[assumption], f"{assumption} off: the explorer found no violation"
    assert set(N.ASSUMPTIONS[assumption].protects) <= set(assumption_runs[assumption])


def test_every_invariant_is_killed_by_a_defect_an_assumption_off_or_a_mutant(assumption_runs):
    by_defects = {inv for d in N.DEFECTS.values() for inv in d.violates}  # each run in test_defect_table
    by_assumptions = {inv for violated in assumption_runs.values() for inv in violated}  # run above
    by_refinement = {N.REFINEMENT} if N.REFINEMENT_BROKEN_BY else set()  # TLC: tests/engines/test_refinement.py
    assert set(N.INVARIANTS) == by_defects | by_assumptions | by_refinement | set(MUTANTS)


def test_unmutated_twin_holds():
    """The mutants' control: the whole of `ci` holds every invariant (tests/spec/test_twin.py explores it in
    every run: 48 s of a loaded worker twice); here, the initial state each mutant's exploration starts from."""
    assert I.check_state(CFG, M.init(CFG)) == []


def _claim(**kw):
    base = dict(exec=1, owner="n1", ttl=1, phase="running", asst=1, quar=False)
    base.update(kw)
    return M.Claim(**base)


@pytest.mark.parametrize("before, after, why", [
    (_claim(phase="cancelling"), _claim(phase="running"), "cancelling -> running"),
    (_claim(phase="cancelled"), _claim(phase="running"), "cancelled -> running"),
    (_claim(phase="cancelling"), M.NO_CLAIM, "deleting a live cancelling claim"),
    (_claim(), _claim(asst=0), "dropping the assistant id"),
    (_claim(), _claim(quar=True), "quarantine of a node's live claim"),
    (_claim(owner="r1", phase="recovering"), _claim(owner="r1", phase="running"), "recovering -> running"),
])
def test_fenced_mutation_refuses_what_it_once_accepted(before, after, why):
    """Issue 12, item 5: FencedMutation is tightened to match PhaseMonotonic, ClearOnlySettled and
    QuarantineOnlyByRecovery."""
    st = M.init(CFG)
    a, b = st._replace(claim=(before,)), st._replace(claim=(after,))
    assert not I.FencedMutation(CFG, a, b), why


def test_fenced_mutation_still_accepts_the_protocols_own_moves():
    st = M.init(CFG)
    moves = [(_claim(asst=0), _claim()), (_claim(), _claim(phase="cancelling")),
             (_claim(phase="cancelling"), _claim(phase="cancelled")), (_claim(phase="cancelled"), M.NO_CLAIM),
             (_claim(), M.NO_CLAIM), (_claim(owner="r1", phase="recovering", ttl=0),
                                      _claim(owner="r1", phase="recovering", ttl=0, quar=True))]
    for before, after in moves:
        assert I.FencedMutation(CFG, st._replace(claim=(before,)), st._replace(claim=(after,))), (before, after)
