"""Refusal probes the protocol requires, and those it permits as a stutter (issue 33 item 3): which is which
is derived from the twin's own action (spec.refusals: each refusal conjunct relaxed in turn), and a server
that accepts a permitted one without an observable change passes the walk, while one that accepts a
required one, even changing nothing, fails it naming the probe."""

from __future__ import annotations

import pytest

from binding.server import Bundled
from harness.conformance import conform as C
from harness.conformance import exhaustive as X
from harness.conformance import probes
from spec import model as M
from spec import names as N
from spec import refusals as SR

LABEL = "steer/no-faults"  # Lease 1: every owned, live lease is fresh; 485 states, 3,434 probes


@pytest.fixture(scope="module")
def small():
    cfg, _ = X.resolve(LABEL)
    return cfg, C.graph_of(cfg)


def _fresh(cfg, graph) -> M.State:
    """A state where n1's runner works on s1's claim and its lease is fresh (ttl = Lease)."""
    return next(st for st in graph.states if st.claim[0].phase == "running" and st.claim[0].ttl == cfg.lease
                and st.claim[0].owner == cfg.nodes[0] and M.active_on(st, 0, st.claim[0].exec))


def test_every_attempt_is_split_into_its_refusal_conjuncts():
    for name in N.ATTEMPTS:
        assert SR.variants(name), name
    assert "c.ttl < cfg.lease" in [src for src, _ in SR.variants("Heartbeat")]


def test_a_heartbeat_on_a_fresh_lease_is_a_stutter_and_a_stranger_s_is_required(small):
    cfg, graph = small
    st = _fresh(cfg, graph)
    own = SR.classify(cfg, st, "Heartbeat", ("n1", "s1"))
    assert not own.required and "c.ttl < cfg.lease" in own.why
    stranger = SR.classify(cfg, st, "Heartbeat", ("r1", "s1"))  # not the owner, and the lease is fresh
    assert stranger.required
    held = next(i for i in sorted(st.inputs) if i.state == "pending") if any(
        i.state == "pending" for i in st.inputs) else M.Input("s1", "prompt", 1, "pending")
    assert SR.classify(cfg, st, "Acquire", ("n1", held)).required  # a second claim: insert-only


def test_a_relaxed_action_that_would_change_the_state_is_required(small, monkeypatch):
    """The derivation can fail: made to lengthen a renewed lease, the relaxed heartbeat would change the
    claim, so the same probe becomes required."""
    cfg, graph = small
    st = _fresh(cfg, graph)
    monkeypatch.setattr(cfg.hooks, "renewed_ttl", lambda cfg, st, c: cfg.lease + 1)
    verdict = SR.classify(cfg, st, "Heartbeat", ("n1", "s1"))
    assert verdict.required and "would change claim" in verdict.why


def test_the_probe_rule_judges_the_answer_only_where_nothing_changed(small):
    cfg, graph = small
    st = _fresh(cfg, graph)
    assert probes.problems(cfg, st, "Heartbeat", ("n1", "s1"), True, st) == []
    assert probes.problems(cfg, st, "Heartbeat", ("r1", "s1"), False, st) == []
    (line,) = probes.problems(cfg, st, "Heartbeat", ("r1", "s1"), True, st)
    assert "requires it to refuse" in line and "owned by n1, not r1" in line


class Accepting(Bundled):
    """The bundled server whose worlds answer "taken" to a refused attempt of `action` where `accepts`
    says so (on the server's own state), changing nothing: a server that acknowledges idempotently."""

    def __init__(self, action: str, accepts):
        super().__init__()
        self.action, self.accepts, self.accepted = action, accepts, 0

    def start(self, cfg, mutant=None):
        world = super().start(cfg, mutant)
        refuse = world.attempt

        def attempt(name, params):
            answer = refuse(name, params)
            if not answer and name == self.action and self.accepts(cfg, world.state(), params):
                self.accepted += 1
                return True
            return answer
        world.attempt = attempt
        return world

    def fresh(self):
        return self


def _owner_with_fresh_lease(cfg, st, params) -> bool:
    n, s = params
    c = st.claim[M.si(cfg, s)]
    return c.owner == n and c.ttl == cfg.lease


def test_a_server_accepting_heartbeats_on_a_fresh_lease_passes(small):
    cfg, graph = small
    server = Accepting("Heartbeat", _owner_with_fresh_lease)
    rep = C.walk(cfg, graph=graph, server=server)
    assert rep.complete and rep.failure is None, rep.failure and rep.failure.message
    assert server.accepted > 0  # it did accept some: the pass is not a server that refuses everything


@pytest.mark.parametrize("action", ["Heartbeat", "Acquire", "CancelRequest"])
def test_a_server_accepting_a_required_refusal_fails_naming_it(small, action):
    cfg, graph = small
    server = Accepting(action, lambda cfg, st, params: True)
    rep = C.walk(cfg, graph=graph, server=server)
    assert rep.failure is not None and rep.failure.probe[0] == action
    assert "requires it to refuse" in rep.failure.message and server.accepted > 0
