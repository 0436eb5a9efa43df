"""A listener that does not return (issue 30 item 2; Residual R2, spec/README.md decision 24): the fault
`hang` leaves a runner at its listener gate for good while its node's heartbeat keeps the lease live. The
residual can be seen to matter (dropped, SessionsEventuallyAvailable fails on `listeners` with the hang's
lasso), it ends with the process's life (a pause past the lease: recovery takes the claim over and the
Session is available again), and the goal it widens excuses only a behaviour that stays hung."""

import functools

from harness.engines.explore import explore
from harness.engines.liveness import check_leads_to
from spec import configs
from spec import invariants as I
from spec import model as M
from spec import names as N

NAME = "listeners"
GATES = ("started", "failed", "ended", "done")
R2 = ("SessionsEventuallyAvailable", "PendingInputsEventuallyServed", "ContinuationsEventuallyPromoted")


@functools.lru_cache(maxsize=1)
def _graph():
    return explore(configs.get(NAME), liveness=False, keep_edges=True, stop_on_violation=False, check=False).graph


def _hung(st) -> bool:
    return any(r.pc == "hung" for r in st.run)


def _take(cfg, st, name, params=None):
    """The one successor of `st` by action `name` (and `params`, when given)."""
    nxt = [w for a, p, w in M.successors(cfg, st) if a == name and (params is None or p == params)]
    assert len(nxt) == 1, (name, params, [(a, p) for a, p, _w in M.successors(cfg, st)])
    return nxt[0]


def test_the_hang_only_where_its_fault_is_named():
    """`hang` is a named fault: the twin's default and ALL_FAULTS leave it off, so no other configuration
    reaches a hung runner (their state counts are unchanged: the gate's tests pin them)."""
    assert N.HANG in N.NAMED_FAULTS and N.HANG not in configs.ALL_FAULTS
    assert [n for n, c in configs.CONFIGS.items() if N.HANG in c.faults] == [NAME]
    assert "ListenerHangs" not in configs.possible_actions(configs.get("ci"))
    res = explore(configs.get(NAME), keep_edges=True)
    assert res.ok, res.violation
    assert res.liveness_checked == list(N.LIVENESS) and 1_000 < res.distinct < 10_000
    print(f"\n{NAME}: {res.distinct} states, every invariant and liveness property holds")
    labels = {a for out in res.graph.succ for a, _p, _w in out}
    assert {"ListenerHangs", "Heartbeat"} <= labels and any(_hung(st) for st in res.graph.states)


def test_without_r2_the_hung_session_is_lost(monkeypatch):
    """The stand-in drops the residual (no hung Session is exempt): SessionsEventuallyAvailable fails with
    the hang's lasso, whose cycle is the node's heartbeat renewing the hung runner's lease; with R2 it holds."""
    cfg, graph = configs.get(NAME), _graph()
    assert all(check_leads_to(cfg, graph, p) is None for p in R2)
    monkeypatch.setattr(I, "listener_hung", lambda cfg, st, s: False)
    v = check_leads_to(cfg, graph, "SessionsEventuallyAvailable")
    assert v is not None and v.invariants == ["SessionsEventuallyAvailable"] and v.loop is not None
    actions = [s.action for s in v.steps[1:]]
    print(f"\nlasso ({len(actions)} steps, cycle from step {v.loop}): {', '.join(actions)}")
    assert "ListenerHangs" in actions[:v.loop] and "Heartbeat" in actions[v.loop:]
    assert all(_hung(s.state) and s.state.claim[0].ttl > 0 for s in v.steps[v.loop:])
    assert check_leads_to(cfg, graph, "PendingInputsEventuallyServed") is not None


def test_a_cancelled_hung_session_stays_cancelling_until_a_pause_past_the_lease():
    """The cancellation of a hung Session: its finalizer waits for its own runner, which never stops, and
    the heartbeat brings the claim back to the same state (a cycle). A pause past the lease ends it: the
    supervisor stops the runner and the finalizer, recovery takes the claim over and finishes the
    cancellation, and the Session is available."""
    cfg = configs.get(NAME)
    st = M.init(cfg)
    st = _take(cfg, st, "Acquire")
    for name in ("Renew", "Dispatch", "PublishStepStarted", "ListenerHangs"):
        st = _take(cfg, st, name)
    st = _take(cfg, st, "CancelRequest")
    hung = st
    assert st.claim[0].phase == "cancelling" and st.run[0].pc == "hung" and st.run[0].intr
    enabled = {a for a, _p, _w in M.successors(cfg, st)}
    assert not enabled & {"FinalizerReconcile", "RunnerStop", "StepStartedReturn"}, enabled
    st = _take(cfg, _take(cfg, st, "Tick"), "Heartbeat")  # a calm tick, the lease renewed: the same state
    assert st == hung
    st = _take(cfg, _take(cfg, st, "Tick"), "Tick")  # the second tick expires a working actor's lease: a pause
    assert "pause" in st.faults and st.claim[0].ttl == 0
    st = _take(cfg, st, "Supervise")
    assert st.run[0].pc == "stopped" and st.fin[0].pc == "idle"
    for name in ("RunnerExit", "Tick", "RecoveryScan", "RecoveryTakeover", "RecoveryReconcile", "RecoveryConvert"):
        st = _take(cfg, st, name)
    assert st.claim[0].phase == "none" and M.RecRow(1, "s1") in st.cancelled
    assert [e.kind for e in st.log] == ["Started", "Interrupted"]  # the open assistant settled once


def test_every_hang_ends_only_with_the_process_and_leads_back_to_an_available_session():
    """In the graph: only ListenerHangs makes a runner hung and only Supervise (or a crash) ends it, so on a
    cycle where faults cease a hang is constant (the widened goal excuses a behaviour only if it stays
    hung); and from every hung state a state where the Session has no claim is reachable."""
    graph = _graph()
    states = graph.states
    for v, out in enumerate(graph.succ):
        for a, _p, w in out:
            if not _hung(states[v]) and _hung(states[w]):
                assert a == "ListenerHangs"
            if _hung(states[v]) and not _hung(states[w]):
                assert a in ("Supervise", "Crash")
    free = {v for v, st in enumerate(states) if st.claim[0].phase == "none"}
    reach = set(free)
    pred = [[] for _ in states]
    for v, out in enumerate(graph.succ):
        for _a, _p, w in out:
            pred[w].append(v)
    todo = list(free)
    while todo:
        for v in pred[todo.pop()]:
            if v not in reach:
                reach.add(v)
                todo.append(v)
    hung = [v for v, st in enumerate(states) if _hung(st)]
    assert hung and all(v in reach for v in hung)


def test_the_state_a_hang_ends_in_is_reached_without_the_hang():
    """Why widening the goal hides no bug class: the supervisor's stop of a hung runner gives the state its
    stop of the same runner still at its gate gives (the fault's history aside), and that state is reachable
    with no hang; so any violation after a hang ends has a hang-free twin the checker reports."""
    cfg, graph = configs.get(NAME), _graph()
    plain = lambda st: st._replace(faults=st.faults - {N.HANG})
    seen = {plain(st) for st in graph.states if not _hung(st)}
    ends = 0
    for v, out in enumerate(graph.succ):
        st = graph.states[v]
        if not _hung(st):
            continue
        for a, p, w in out:
            if a != "Supervise":
                continue
            r = st.run[0]
            twins = [st._replace(run=(r._replace(pc=g),)) for g in GATES]
            assert any(plain(t) in seen and plain(M.apply(cfg, t, a, p)) == plain(graph.states[w]) for t in twins)
            ends += 1
    assert ends > 0
