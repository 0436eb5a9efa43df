"""The driver protocol's optional fast paths (issue 33 item 5; docs/driver.md, "Capabilities"): hello's
`observes` (a step, attempt or move reply carries the observation after it, asked by `observe: true`) and
`attempts` (a state's refusal probes in one request). A driver with them and one without cover the same
walk and catch the same defect by the same probe; each path, broken, fails the walk: a reply that carries
the observation from before the request, an `attempts` reply short of a result or of a state, an attempt
that fails inside the request (named as that probe)."""

import pytest

from harness.conformance import conform as C
from harness.conformance import exhaustive as X
from harness.driver.client import Connection, Sut
from harness.driver.transport import InProcess
from binding.driver import Driver
from serverkit import BUNDLED

from test_sut_replay import importable  # noqa: F401 - the fixture puts the clone on the path

LABEL = "steer/no-faults"  # 485 states, 524 edges, 3,434 probes: probes at most states
PROBED = ("inputs/prompts=1", "exact-retry-ignores-content")  # caught by a refusal probe taken, two steps in


class Counted:
    """A Sut over an in-process bundled driver that keeps its connections (to count their requests)."""

    def __init__(self, **kw):
        self.conns = []

        def opener():
            self.conns.append(Connection(InProcess(Driver(**kw))))
            return self.conns[-1]
        self.sut = Sut("in process", opener=opener)

    @property
    def requests(self) -> int:
        return sum(c.next_id for c in self.conns)


@pytest.fixture(scope="module")
def small():
    cfg, _ = X.resolve(LABEL)
    return cfg, C.graph_of(cfg)


def walk(small, sut, **kw):
    cfg, graph = small
    return C.walk(cfg, graph=graph, server=sut, **kw)


def covered(rep):
    return rep.complete, rep.states, rep.edges, rep.probes, dict(rep.actions), dict(rep.boundaries)


def test_with_and_without_the_fast_paths_the_walk_covers_the_same_in_fewer_requests(small):
    fast, plain = Counted(), Counted(observes=False)
    assert fast.conns == [] and fast.sut.connect().hello.observes and fast.sut.conn.hello.attempts
    assert not plain.sut.connect().hello.observes and not plain.sut.conn.hello.attempts
    a, b = walk(small, fast.sut), walk(small, plain.sut)
    assert a.failure is None and b.failure is None
    assert covered(a) == covered(b) == covered(walk(small, BUNDLED))
    # without: step + observe per edge, attempt + observe per probe; with: one per edge, one per state probed
    assert plain.requests > a.edges + 2 * a.probes and fast.requests < a.edges + a.states + a.restores + a.states


@pytest.mark.parametrize("observes", [True, False])
def test_a_probe_taken_is_caught_as_the_same_probe_either_way(observes):
    label, defect = PROBED
    cfg, _ = X.resolve(label)
    graph = C.graph_of(cfg)
    rep = C.walk(cfg, graph=graph, server=Counted(observes=observes).sut, mutant=[defect])
    direct = C.walk(cfg, graph=graph, server=BUNDLED, mutant=[defect])
    assert direct.failure.probe is not None
    assert rep.failure is not None and rep.failure.probe == direct.failure.probe
    assert [s.action for s in rep.failure.steps] == [s.action for s in direct.failure.steps]


def test_replies_carrying_the_observation_from_before_the_request_fail_the_walk(small, monkeypatch):
    """A driver that observes before it acts (each reply's observation one request late)."""
    real = Driver._observe

    def late(self, req):
        before, self.seen = getattr(self, "seen", None), real(self, req)
        return self.seen if getattr(req, "op", "attempt") == "observe" or before is None else before
    monkeypatch.setattr(Driver, "_observe", late)
    rep = walk(small, Counted().sut)
    assert rep.failure is not None and rep.failure.kind == "divergence"
    assert walk(small, Counted(observes=False).sut).failure is None  # observe requests alone: not late


def test_a_reply_without_the_observation_asked_for_fails_naming_the_request(small, monkeypatch):
    real = Driver._observe
    monkeypatch.setattr(Driver, "_observe", lambda self, req: {} if getattr(req, "op", "attempt") == "step"
                        else real(self, req))
    rep = walk(small, Counted().sut)
    assert rep.failure is not None and rep.failure.kind == "error"
    assert "(step " in rep.failure.message and "a malformed reply: its hello declares observes" in rep.failure.message
    assert "carries no state" in rep.failure.message


@pytest.mark.parametrize("broken, message", [
    (lambda results: results[:-1], "results for"),
    (lambda results: results[:-1] + [{**results[-1], "state": None}], "carries no state"),
])
def test_an_attempts_reply_short_of_a_result_or_a_state_fails_the_walk(small, monkeypatch, broken, message):
    real = Driver._attempts
    monkeypatch.setattr(Driver, "_attempts", lambda self, req: {"results": broken(real(self, req)["results"])})
    rep = walk(small, Counted().sut)
    assert rep.failure is not None and rep.failure.kind == "error" and rep.failure.probe is not None
    assert "a malformed reply" in rep.failure.message and message in rep.failure.message


def test_an_attempt_that_fails_inside_attempts_is_named_as_that_probe(small, monkeypatch):
    real = Driver._attempt
    failing = []

    def second_fails(self, req):
        failing.append((req.action, req.params))
        if len(failing) == 2:
            raise RuntimeError("the server's own failure")
        return real(self, req)
    monkeypatch.setattr(Driver, "_attempt", second_fails)
    rep = walk(small, Counted().sut)
    assert rep.failure is not None and rep.failure.kind == "error"
    assert rep.failure.probe[0] == failing[1][0]
    assert "failed: the implementation raised RuntimeError: the server's own failure" in rep.failure.message
