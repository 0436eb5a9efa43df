"""A partial stream fragment and the finalizer's flush (issue 30 item 2, R000-v18-flush; spec/README.md
decision 23): the constant changes no other configuration, the defect strands the Session, and its harm is
the live heartbeat (a finalizer that gives up instead lets recovery finish the cancellation)."""

from harness.engines.explore import explore
from harness.engines.liveness import check_leads_to
from spec import configs
from spec import model as M

FLUSH = "flush-without-assistant"


def _graph(cfg):
    return explore(cfg, liveness=False, keep_edges=True, stop_on_violation=False, check=False).graph


def _labels(graph) -> set[str]:
    return {a for out in graph.succ for a, _p, _w in out}


def _fragment_open(st) -> bool:
    """A runner's publisher memory holds an open fragment and names no assistant."""
    return any(r.active and r.mem == 0 for r in st.run)


def test_fragments_only_where_the_constant_is_on():
    """Fragments 0: no OpenFragment edge and no open fragment; Fragments 1: both."""
    off = _graph(configs.get("rows"))
    assert "OpenFragment" not in _labels(off) and not any(_fragment_open(st) for st in off.states)
    on = _graph(configs.get("fragments"))
    assert "OpenFragment" in _labels(on) and any(_fragment_open(st) for st in on.states)


def test_the_flush_defect_strands_the_session_and_the_reference_does_not():
    cfg = configs.get("fragments", defects=[FLUSH])
    graph = _graph(cfg)
    for prop in ("SessionsEventuallyAvailable", "PendingInputsEventuallyServed"):
        assert check_leads_to(cfg, graph, prop) is not None, prop
    assert explore(configs.get("fragments")).ok


def _giving_up(settle):
    """A stand-in FinalizerSettle: where the defect's flush raises, the finalizer gives up (goes idle, its
    heartbeat stops with it) instead of retrying under its live lease."""
    def FinalizerSettle(cfg, st, n):
        f, r = st.fin[n], st.run[n]
        if f.pc == "reconciling":
            s = M.si(cfg, f.sess)
            mine = r.exec == f.exec
            if (M.fenced(st, s, f.exec, f.owner) and st.claim[s].phase == "cancelling"
                    and mine and r.active and r.mem == 0):
                return st._replace(fin=M._put(st.fin, n, M.FIN_IDLE))
        return settle(cfg, st, n)
    return FinalizerSettle


def test_with_the_lease_not_kept_live_recovery_finishes_the_cancellation(monkeypatch):
    """The flush raises as under the defect, but the finalizer gives up: every property holds."""
    cfg = configs.get("fragments")
    reference = explore(cfg, liveness=False).distinct
    monkeypatch.setattr(M, "FinalizerSettle", _giving_up(M.FinalizerSettle))
    res = explore(cfg, keep_edges=True)
    assert res.ok, res.violation
    # not vacuous: the finalizer gave up on a cancelling claim, and recovery then took it over
    gave_up = [st for st in res.graph.states
               if st.claim[0].phase == "cancelling" and st.fin[0].pc == "idle" and _fragment_open(st)]
    assert gave_up and any(st.claim[0].owner == "r1" and st.claim[0].phase == "cancelling"
                           for st in res.graph.states)
    assert res.distinct != reference


def test_the_stand_in_changes_nothing_without_fragments(monkeypatch):
    """The stand-in acts only on an open fragment: where none opens (Fragments 0) its graph is the reference's."""
    cfg = configs.get("rows")
    base = explore(cfg, liveness=False).distinct
    monkeypatch.setattr(M, "FinalizerSettle", _giving_up(M.FinalizerSettle))
    assert explore(cfg, liveness=False).distinct == base
